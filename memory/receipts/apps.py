from django.apps import AppConfig


class ReceiptsConfig(AppConfig):
    """Receipts, reconcilers, platforms, checkpoints, recovery, operation policies."""

    name = "memory.receipts"
    label = "memory_receipts"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from common.metrics import register_collector
        from memory.receipts import decisions
        from memory.receipts.metrics import collect_receipt_metrics

        decisions.register()
        register_collector("receipts", collect_receipt_metrics)
