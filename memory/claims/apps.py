from django.apps import AppConfig


class ClaimsConfig(AppConfig):
    """Ledger events, claims, the gate, recall, hot memory, traces, screening, embeddings."""

    name = "memory.claims"
    label = "memory_claims"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        import numpy  # noqa: F401 - loads the BLAS library the limit below applies to
        from threadpoolctl import threadpool_limits

        # numpy's BLAS starts a thread per CPU for every matrix product, and a recall's
        # are small (a subject's vectors against the query and their nearest neighbours):
        # on a busy machine those threads spin waiting for each other. Measured over
        # HTTP while the CPUs were busy: recall p50 79 ms with the default, 33 ms with one.
        threadpool_limits(limits=1, user_api="blas")

        from common.metrics import register_collector
        from memory.claims import decisions
        from memory.claims.metrics import collect_agent_metrics, collect_recall_metrics

        decisions.register()
        register_collector("recall", collect_recall_metrics)
        register_collector("agents", collect_agent_metrics)
