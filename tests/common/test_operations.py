import pytest
from django.test import Client, override_settings

pytestmark = pytest.mark.django_db


def test_healthz_reports_database_and_broker(client):
    response = client.get("/healthz")
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "ok" and body["checks"] == {"database": "ok", "broker": "ok"}
    # The embedder is on by default, and numpy computes its similarities.
    assert body["semantic"] == "numpy"


def test_healthz_is_503_when_the_broker_is_down(client):
    with override_settings(CELERY_BROKER_URL="redis://127.0.0.1:1/0"):
        response = client.get("/healthz")
    assert response.status_code == 503
    assert response.json()["checks"]["broker"] != "ok"


def test_metrics_are_prometheus_text(client, agent):
    from tests.memory.helpers import submit

    submit(agent, authority="agent_inferred", basis="inference")
    response = client.get("/metrics")
    assert response.status_code == 200
    body = response.content.decode()
    assert "memdesk_up 1.0" in body
    assert 'memdesk_review_queue_depth{queue="candidates"} 1.0' in body


def test_metrics_with_a_token_set_answer_404_without_it_and_200_with_it(client):
    with override_settings(METRICS_TOKEN="s3cret-scrape"):
        assert client.get("/metrics").status_code == 404
        assert client.get("/metrics", HTTP_AUTHORIZATION="Bearer wrong").status_code == 404
        assert client.get("/metrics", HTTP_AUTHORIZATION="Basic s3cret-scrape").status_code == 404
        ok = client.get("/metrics", HTTP_AUTHORIZATION="Bearer s3cret-scrape")
        assert ok.status_code == 200
        assert "memdesk_up 1.0" in ok.content.decode()


def test_metrics_without_a_token_answer_only_a_direct_loopback_client(settings):
    settings.METRICS_TOKEN = ""
    assert Client(REMOTE_ADDR="127.0.0.1").get("/metrics").status_code == 200
    assert Client(REMOTE_ADDR="::1").get("/metrics").status_code == 200
    assert Client(REMOTE_ADDR="203.0.113.7").get("/metrics").status_code == 404
    assert Client(REMOTE_ADDR="10.0.0.5").get("/metrics").status_code == 404
    # A proxy on the same host connects from loopback on behalf of an outsider.
    proxied = Client(REMOTE_ADDR="127.0.0.1", HTTP_X_FORWARDED_FOR="203.0.113.7")
    assert proxied.get("/metrics").status_code == 404


def test_metrics_refused_look_like_any_unknown_page(settings):
    settings.METRICS_TOKEN = "s3cret-scrape"
    refused = Client().get("/metrics")
    unknown = Client().get("/no-such-page")
    assert refused.status_code == unknown.status_code == 404
    assert "WWW-Authenticate" not in refused
    assert refused["Content-Type"] == unknown["Content-Type"]


def test_openapi_schema_lists_every_endpoint(client):
    response = client.get("/api/schema/?format=json")
    assert response.status_code == 200
    paths = response.json()["paths"]
    for path in [
        "/api/v1/events",
        "/api/v1/events/{event_id}",
        "/api/v1/claims",
        "/api/v1/claims:batch",
        "/api/v1/claims/{claim_id}",
        "/api/v1/claims/{claim_id}/invalidate",
        "/api/v1/claims/{claim_id}/derive",
        "/api/v1/recall",
        "/api/v1/subjects/{subject}/hot-memory",
        "/api/v1/reviews",
        "/api/v1/reviews/{item_id}/decide",
    ]:
        assert path in paths, path
    claims_post = paths["/api/v1/claims"]["post"]
    assert "source_required" in claims_post["description"]
    assert client.get("/api/docs/").status_code == 200
