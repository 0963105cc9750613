from django.apps import AppConfig


class AccountsConfig(AppConfig):
    name = "accounts"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from accounts import schema  # noqa: F401 - registers the OpenAPI auth extension
        from accounts.services import audit_moves
        from common.transitions import on_moves

        on_moves(audit_moves)
