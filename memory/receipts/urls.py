from django.urls import path

from memory.receipts import views as platform_views

app_name = "platforms"
urlpatterns = [
    path("", platform_views.index, name="index"),
    path("policies/", platform_views.policy_set, name="policy-set"),
    path("absence-proof/", platform_views.absence_proof_set, name="absence-proof-set"),
]
