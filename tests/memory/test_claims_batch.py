"""`claims:batch` stores exactly what the same candidates sent one by one to `/claims` store.

One labelled corpus goes into two fresh tenants prepared alike: once as single
`POST /claims` calls, once as `claims:batch` requests. The stored claims,
sources, review items, subjects and audit rows of both tenants, with ids and
times replaced by what they name, must be equal, and so must the answers, item
by item.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from accounts.models import AuditEvent
from memory.claims.models import Claim, ClaimSource, Subject
from reviews.models import ReviewItem
from tests.common.plans import executed_plan_nodes
from tests.memory.batch_corpus import (
    Names,
    capped_corpus,
    corpus_item,
    front_corpus,
    new_world,
    stored,
    submit_batch,
    submit_one_by_one,
)
from tests.memory.helpers import candidate, post_event, submit

pytestmark = pytest.mark.django_db


def test_the_batch_stores_and_answers_what_one_by_one_does(make_agent):
    single, batch = new_world("one-by-one", make_agent), new_world("batched", make_agent)
    labels = [label for label, _ in [*front_corpus(single), *capped_corpus(single)]]

    answers_single = submit_one_by_one(single.front, front_corpus(single)) + submit_one_by_one(
        single.capped, capped_corpus(single)
    )
    answers_batch = submit_batch(batch.front, front_corpus(batch)) + submit_batch(
        batch.capped, capped_corpus(batch)
    )

    names_single, names_batch = Names(single), Names(batch)
    for label, one, many in zip(labels, answers_single, answers_batch, strict=True):
        assert names_batch.answer(many) == names_single.answer(one), label
    kept_single, kept_batch = stored(single), stored(batch)
    assert [c["name"] for c in kept_batch["claims"]] == [c["name"] for c in kept_single["claims"]]
    for many, one in zip(kept_batch.pop("claims"), kept_single.pop("claims"), strict=True):
        assert many == one
    assert kept_batch == kept_single

    # The corpus reaches every decision, the intra-batch paths and the per-item errors.
    by_label = dict(zip(labels, answers_batch, strict=True))
    decisions = Counter(a.get("decision", "error") for a in answers_batch)
    assert set(decisions) == {
        "accepted",
        "merged",
        "needs_review",
        "conflict",
        "superseded_previous",
        "quarantined",
        "rejected",
        "error",
    }
    assert by_label["intra-batch: the same again"]["decision"] == "merged"
    assert by_label["intra-batch: contradicted next"]["decision"] == "conflict"
    assert by_label["intra-batch: newer observation supersedes"]["reasons"] == ["newer_observation"]
    assert by_label["user_explicit above the ceiling"]["reasons"][-1] == "authority_capped"
    assert by_label["weaker supersede of a stronger claim"]["reasons"][0] == "supersedes_stronger"
    sensitive = {
        "sensitive without consent": ("rejected", "consent_required", "health", ["health"]),
        "the hint raises the class": ("rejected", "consent_required", "health", ["health"]),
        "the hint cannot lower the class": ("rejected", "consent_required", "health", ["health"]),
        "sensitive with consent": ("needs_review", "unverified_authority", "finance", []),
        "consent is per subject": ("rejected", "consent_required", "finance", ["finance"]),
        "ephemeral one-time code": ("rejected", "ephemeral_value", "normal", []),
    }
    assert {
        label: (
            by_label[label]["decision"],
            by_label[label]["reasons"][0],
            by_label[label]["sensitivity"],
            by_label[label]["consent_required"],
        )
        for label in sensitive
    } == sensitive
    errors = {label: a["error"]["code"] for label, a in by_label.items() if "error" in a}
    assert errors == {
        "no sources": "source_required",
        "unknown event": "source_not_found",
        "source without event or uri": "source_invalid",
        "invalid subject": "subject_invalid",
        "secret in the scope": "secret_detected",
        "empty scope key": "scope_invalid",
        "malformed": "validation_error",
        "a new subject's claim that fails": "source_required",
    }
    # A failed item changes nothing, not even a subject.
    assert "project:ghost" not in stored(batch)["subjects"]


def test_an_error_in_the_batch_names_its_item(agent):
    items = [
        corpus_item("ok", predicate="a", value="x")[1],
        corpus_item("no sources", predicate="b", value="x", sources=[])[1],
        {"subject": "user:alice", "predicate": "c", "value": "x"},
    ]
    results = agent.post("/api/v1/claims:batch", {"items": items}, format="json").json()["results"]

    assert results[0]["decision"] == "needs_review"
    assert results[1] == {
        "error": {
            "type": results[1]["error"]["type"],
            "title": results[1]["error"]["title"],
            "status": 400,
            "detail": "Item 1: A candidate needs at least one source: a ledger event or a uri "
            "with observed_at.",
            "code": "source_required",
            "errors": {"sources": ["Give at least one source."]},
        }
    }
    assert results[2]["error"]["code"] == "validation_error"
    assert results[2]["error"]["detail"] == "Item 2 is not valid; see `errors`."
    assert set(results[2]["error"]["errors"]) == {"kind", "authority", "basis"}


def _benign(n: int) -> list[dict[str, Any]]:
    subjects = ["user:alice", "user:bob", "project:crm"]
    return [
        corpus_item(
            "benign",
            subject=subjects[i % 3],
            predicate=f"fact_{n}_{i}",
            value=f"value {i}",
            text=f"note {i} about the quarterly report",
            sources=[{"uri": f"chat://s{n}/m{i}"}],
        )[1]
        for i in range(n)
    ]


def test_the_queries_of_a_batch_do_not_grow_with_its_size(agent):
    def queries(items: list[dict[str, Any]]) -> int:
        with CaptureQueriesContext(connection) as captured:
            response = agent.post("/api/v1/claims:batch", {"items": items}, format="json")
        assert response.status_code == 200
        assert all(r["decision"] == "needs_review" for r in response.json()["results"])
        return len(captured)

    queries(_benign(3))  # subjects created
    small, large = queries(_benign(10)), queries(_benign(100))

    assert large == small
    assert Claim.objects.count() == 113
    assert ReviewItem.objects.count() == 113
    assert ClaimSource.objects.count() == 113
    assert AuditEvent.objects.filter(verb="claim.needs_review").count() == 113


def test_a_batch_reads_each_identity_by_its_index_however_many_claims_the_subject_has(agent):
    first = agent.post("/api/v1/claims:batch", {"items": _benign(3)}, format="json")
    assert first.status_code == 200
    alice = Subject.objects.get(kind="user", ref="alice")
    # Thousands of other claims of the same subjects: superseded revisions, rejections,
    # other predicates. Reading an identity must not walk them.
    Claim.objects.bulk_create(
        [
            Claim(
                tenant_id=alice.tenant_id,
                subject=alice,
                kind="fact",
                predicate=f"older_{n % 500}",
                revision=n // 500 + 1,
                value=n,
                text=f"older note {n}",
                authority="agent_inferred",
                basis="inference",
                status="superseded",
                available_at=timezone.now(),
            )
            for n in range(3_000)
        ]
    )
    with connection.cursor() as cursor:
        cursor.execute(f"ANALYZE {Claim._meta.db_table}")
    with CaptureQueriesContext(connection) as captured:
        response = agent.post("/api/v1/claims:batch", {"items": _benign(20)}, format="json")
    assert [r["decision"] for r in response.json()["results"]] == ["needs_review"] * 20
    sql = next(q["sql"] for q in captured.captured_queries if "AS newest" in q["sql"])

    plan = executed_plan_nodes(sql)
    reads = [n for n in plan if n.get("Relation Name") == Claim._meta.db_table]
    assert [n["Index Name"] for n in reads] == [
        "claim_identity_revisions",
        "claim_one_active_per_identity",
    ], reads
    # Per identity of the batch, one probe for its newest revision (now the claim the
    # batch wrote) and one for an active claim (none): none of the subject's 3,000 others.
    assert [(n["Actual Loops"], n["Actual Rows"]) for n in reads] == [(20, 1), (20, 0)]


def test_superseding_a_claim_others_derive_from_is_seen_by_later_items(agent):
    parent = submit(agent)
    derived = agent.post(
        f"/api/v1/claims/{parent['id']}/derive",
        candidate(
            predicate="timezone", value="Asia/Shanghai", authority="tool_verified", sources=[]
        ),
        format="json",
    ).json()
    assert derived["decision"] == "accepted"
    moved = post_event(agent, text="I moved to Paris")["id"]

    results = agent.post(
        "/api/v1/claims:batch",
        {
            "items": [
                candidate(moved, value="Paris", basis="reported", supersedes=parent["id"]),
                # The derived claim stopped standing with its parent: nothing to contradict.
                candidate(predicate="timezone", value="Europe/Paris", authority="agent_inferred"),
            ]
        },
        format="json",
    ).json()["results"]

    assert [r["decision"] for r in results] == ["superseded_previous", "needs_review"]
    assert Claim.objects.get(pk=derived["id"]).status == "invalidated"
    assert AuditEvent.objects.filter(verb="claims.derived_invalidated").count() == 1


def test_a_single_submit_reads_each_kind_of_row_once(agent):
    said = post_event(agent)["id"]
    agent.post("/api/v1/claims", candidate(said, predicate="warm_up"), format="json")

    with CaptureQueriesContext(connection) as captured:
        response = agent.post("/api/v1/claims", candidate(said), format="json")

    assert response.json()["decision"] == "accepted"
    statements = [q["sql"].split()[0] for q in captured.captured_queries]
    # Token and the tenant's screen bands; then subject, events with their recorders'
    # ceilings, lock, identity state, the subject's recent claims (an order split across
    # claims); the claim, its sources and its audit row: each once, inside one savepoint.
    assert statements == [
        "SELECT",
        "SELECT",
        "SAVEPOINT",
        "SELECT",
        "SELECT",
        "SELECT",
        "SELECT",
        "SELECT",
        "INSERT",
        "INSERT",
        "INSERT",
        "RELEASE",
    ]
