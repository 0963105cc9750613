from django.apps import AppConfig


class ReviewsConfig(AppConfig):
    name = "reviews"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from common.metrics import register_collector
        from reviews.metrics import collect_review_metrics

        register_collector("reviews", collect_review_metrics)

        from common.transitions import on_moves
        from reviews.services import reviews_close_on_moves

        on_moves(reviews_close_on_moves)
