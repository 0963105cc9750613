from django.urls import path

from memory.receipts import views

app_name = "platforms"
urlpatterns = [
    path("", views.index, name="index"),
    path("policies/", views.policy_set, name="policy-set"),
    path("absence-proof/", views.absence_proof_set, name="absence-proof-set"),
    path("controls/", views.controls_set, name="controls-set"),
    path("receipts/<uuid:receipt_id>/", views.receipt_page, name="receipt"),
]
