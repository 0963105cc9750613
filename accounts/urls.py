from django.urls import path

from accounts import views

app_name = "accounts"
urlpatterns = [
    path("", views.tokens, name="tokens"),
    path("<int:token_id>/revoke", views.token_revoke, name="token_revoke"),
]
