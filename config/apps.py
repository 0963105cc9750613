from django.apps import AppConfig


class ConfigConfig(AppConfig):
    """The project package as an app, for commands that span every domain (demo data)."""

    name = "config"
    label = "memdesk_config"
