from django.apps import AppConfig


class MemoryConfig(AppConfig):
    """The owner of the `memory` app label and of memory/migrations.

    The domain apps (memory.receipts, memory.claims, memory.privacy) declare their
    models with `app_label = "memory"`, so tables, triggers, content types and the
    migration history stay those of one app (docs/architecture.md, "One label, one
    migration history").
    """

    name = "memory"
    default_auto_field = "django.db.models.BigAutoField"
