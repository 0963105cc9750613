from django.apps import AppConfig


class SkillsConfig(AppConfig):
    name = "skills"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from common.metrics import register_collector
        from skills import decisions
        from skills.metrics import collect_skill_metrics

        decisions.register()
        register_collector("skills", collect_skill_metrics)
