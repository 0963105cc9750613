from django.apps import AppConfig

from common.fields import refuse_numbers_for_strings


class CommonConfig(AppConfig):
    name = "common"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from common import lookups  # noqa: F401 - registers `field__any`

        refuse_numbers_for_strings()
