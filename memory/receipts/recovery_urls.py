from django.urls import path

from memory.receipts import recovery_views

app_name = "recovery"
urlpatterns = [
    path("", recovery_views.recovery_index, name="index"),
    path("<int:answer_id>/verdict", recovery_views.recovery_verdict, name="verdict"),
]
