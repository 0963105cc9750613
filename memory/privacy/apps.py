from django.apps import AppConfig


class PrivacyConfig(AppConfig):
    """Deletion, erasure, tombstones, consolidation, retention, consent, exports, the /me pages."""

    name = "memory.privacy"
    label = "memory_privacy"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from common.metrics import register_collector
        from memory.claims.consent import consent_reader_register
        from memory.privacy import decisions
        from memory.privacy.metrics import collect_lifecycle_metrics
        from memory.privacy.selectors.consent import consented_classes

        decisions.register()
        register_collector("lifecycle", collect_lifecycle_metrics)
        consent_reader_register(consented_classes)
