from django.apps import AppConfig


class SkillsConfig(AppConfig):
    name = "skills"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from common.metrics import register_collector
        from memory.privacy.signals import claims_forgotten
        from skills import decisions
        from skills.metrics import collect_skill_metrics
        from skills.receivers import on_claims_forgotten

        decisions.register()
        register_collector("skills", collect_skill_metrics)
        claims_forgotten.connect(on_claims_forgotten, dispatch_uid="skills.drafts_flag_sources")
