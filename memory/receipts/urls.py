from django.urls import path

from memory.receipts import views

app_name = "platforms"
urlpatterns = [
    path("", views.index, name="index"),
    path("policies/", views.policy_set, name="policy-set"),
    path("absence-proof/", views.absence_proof_set, name="absence-proof-set"),
]
