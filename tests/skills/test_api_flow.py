"""The whole publication path through the API, as the issue's acceptance describes it."""

from __future__ import annotations

import pytest

from skills.models import EvaluationCategory
from tests.skills.conftest import SLUG, api_case, package, package_v2, upload_file

BASE = "/api/v1/skills"

# Real commits, so the resolve cache is invalidated by on_commit as in production.
pytestmark = pytest.mark.django_db(transaction=True)


def evaluate_all(client, number: int, content_hash: str) -> None:
    for category in EvaluationCategory.values:
        response = client.post(
            f"{BASE}/{SLUG}/versions/{number}/evaluations",
            {
                "category": category,
                "passed": True,
                "content_hash": content_hash,
                "details": {"suite": "regression-12"},
                "environment": {"model": "m-1", "tools": {"pdftk": "3.3"}},
                "cases": [api_case(category), api_case(category, tokens=1200)],
            },
            format="json",
        )
        assert response.status_code == 201, response.json()
        assert response.json()["counts"] is True


@pytest.fixture
def ann_api(acme, make_member, session_api):
    return session_api(make_member(acme, "ann", "admin"))


def test_it_walks_upload_publish_rollback_revoke_and_history(
    writer, evaluator, reader, ada_api, abe_api, ann_api, make_ready
):
    assert writer.post(BASE, {"slug": SLUG, "name": "PDF tools"}, format="json").status_code == 201

    # v1: uploaded by an agent, evaluated, submitted, approved and published by admins.
    created = writer.post(
        f"{BASE}/{SLUG}/versions", {"package": upload_file(package())}, format="multipart"
    )
    assert created.status_code == 201, created.json()
    v1 = created.json()
    assert (v1["number"], v1["status"]) == (1, "draft")
    assert v1["manifest"]["name"] == SLUG
    evaluate_all(evaluator, 1, v1["content_hash"])
    assert writer.post(f"{BASE}/{SLUG}/versions/1/submit").json()["status"] == "in_review"
    approved = ada_api.post(f"{BASE}/{SLUG}/versions/1/approve", {"reason": "reads well"})
    assert approved.status_code == 200, approved.json()
    assert approved.json()["approved_by"]["label"] == "ada"
    published = abe_api.post(f"{BASE}/{SLUG}/versions/1/publish", {}, format="json")
    assert published.status_code == 200, published.json()
    make_ready(reader)
    resolved = reader.get(f"{BASE}/{SLUG}/resolve")
    assert resolved.status_code == 200
    assert (resolved.json()["number"], resolved.json()["content_hash"]) == (1, v1["content_hash"])

    # v2 adds the network capability, uploaded by admin ada this time.
    v2 = ada_api.post(
        f"{BASE}/{SLUG}/versions", {"package": upload_file(package_v2())}, format="multipart"
    ).json()
    assert v2["number"] == 2
    assert ada_api.post(f"{BASE}/{SLUG}/versions/2/submit").status_code == 200
    detail = reader.get(f"{BASE}/{SLUG}/versions/2").json()
    assert detail["changes_vs_production"] == [
        {"field": "capabilities", "old": None, "new": "network", "flag": "capability_added"}
    ]

    refused = abe_api.post(f"{BASE}/{SLUG}/versions/2/publish")
    assert refused.status_code == 409
    assert refused.json()["code"] == "illegal_transition"
    assert refused.json()["allowed"] == ["approved", "rejected", "revoked"]

    own = ada_api.post(f"{BASE}/{SLUG}/versions/2/approve")
    assert (own.status_code, own.json()["code"]) == (409, "author_cannot_approve")
    # A new capability: two admins, neither the author, must approve.
    first = abe_api.post(f"{BASE}/{SLUG}/versions/2/approve")
    assert first.status_code == 200, first.json()
    assert (first.json()["status"], first.json()["approvals_required"]) == ("in_review", 2)
    assert [a["label"] for a in first.json()["approvals"]] == ["abe"]
    second = ann_api.post(f"{BASE}/{SLUG}/versions/2/approve")
    assert second.json()["status"] == "approved"
    assert [a["label"] for a in second.json()["approvals"]] == ["abe", "ann"]

    incomplete = abe_api.post(f"{BASE}/{SLUG}/versions/2/publish")
    assert (incomplete.status_code, incomplete.json()["code"]) == (409, "evaluation_incomplete")
    assert incomplete.json()["missing"] == EvaluationCategory.values
    evaluate_all(evaluator, 2, v2["content_hash"])
    assert abe_api.post(f"{BASE}/{SLUG}/versions/2/publish").status_code == 200
    make_ready(reader)
    assert reader.get(f"{BASE}/{SLUG}/resolve?label=production").json()["number"] == 2

    # Roll back to v1: a reason is required and the resolve answer changes at once.
    no_reason = ada_api.post(f"{BASE}/{SLUG}/rollback", {"to": 1}, format="json")
    assert (no_reason.status_code, no_reason.json()["code"]) == (400, "reason_required")
    rolled = ada_api.post(
        f"{BASE}/{SLUG}/rollback", {"to": 1, "reason": "v2 times out on large forms"}, format="json"
    )
    assert rolled.status_code == 200, rolled.json()
    assert (rolled.json()["from_version"], rolled.json()["to_version"]) == (2, 1)
    assert reader.get(f"{BASE}/{SLUG}/resolve").json()["number"] == 1

    # Revoke v2: exact loads of it are gone for good.
    revoked = abe_api.post(
        f"{BASE}/{SLUG}/versions/2/revoke", {"reason": "fetches from an untrusted host"}
    )
    assert revoked.status_code == 200, revoked.json()
    assert revoked.json()["production"] == 1
    gone = reader.get(f"{BASE}/{SLUG}/resolve?version=2")
    assert (gone.status_code, gone.json()["code"]) == (410, "version_revoked")
    assert reader.get(f"{BASE}/{SLUG}/resolve").json()["number"] == 1

    history = reader.get(f"{BASE}/{SLUG}/labels/production/history").json()["results"]
    assert [
        (move["cause"], move["from_version"], move["to_version"], move["actor"]["label"])
        for move in history
    ] == [("rollback", 2, 1, "ada"), ("publish", 1, 2, "abe"), ("publish", None, 1, "abe")]
    assert [move["reason"] for move in history] == [
        "v2 times out on large forms",
        "publish v2",
        "publish v1",
    ]


def test_it_returns_the_existing_version_for_byte_identical_uploads(writer, skill):
    first = writer.post(
        f"{BASE}/{SLUG}/versions", {"package": upload_file(package())}, format="multipart"
    )
    again = writer.post(
        f"{BASE}/{SLUG}/versions", {"package": upload_file(package())}, format="multipart"
    )
    assert (first.status_code, again.status_code) == (201, 200)
    assert again.json()["number"] == first.json()["number"] == 1
    assert again.json()["content_hash"] == first.json()["content_hash"]
