from django.apps import AppConfig


class MemoryConfig(AppConfig):
    name = "memory"
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
        from memory.decisions import claims as claim_decisions
        from memory.decisions import deletions as deletion_decisions
        from memory.decisions import receipts as receipt_decisions
        from memory.metrics.agents import collect_agent_metrics
        from memory.metrics.lifecycle import collect_lifecycle_metrics
        from memory.metrics.recall import collect_recall_metrics
        from memory.metrics.receipts import collect_receipt_metrics

        claim_decisions.register()
        receipt_decisions.register()
        deletion_decisions.register()
        register_collector("receipts", collect_receipt_metrics)
        register_collector("lifecycle", collect_lifecycle_metrics)
        register_collector("recall", collect_recall_metrics)
        register_collector("agents", collect_agent_metrics)
