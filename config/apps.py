from django.apps import AppConfig


class ConfigConfig(AppConfig):
    """The project package as an app, for commands that span every domain (demo data)."""

    name = "config"
    label = "memdesk_config"

    def ready(self) -> None:
        # The last app in INSTALLED_APPS: every app is loaded by now, in every process
        # (web, Celery worker and beat, commands).
        from common.startup import freeze_loaded_objects

        freeze_loaded_objects()
