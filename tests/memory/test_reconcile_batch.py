"""Concurrent reconciliation in batches, against the fake platform over loopback.

The batch path must be the one-at-a-time path, only faster: the same corpus
of receipts through both ends in the same states with the same transitions,
reads and audit rows. Claims are still fenced by their attempt number, and
the platform limits (reads in flight, reads per second) hold.
"""

from __future__ import annotations

import itertools
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from accounts.models import AuditEvent
from memory.receipts.models.receipts import (
    ReadOutcome,
    Receipt,
    ReceiptState,
    ReceiptTransition,
    ReconciliationRead,
)
from memory.receipts.reconcilers import LookupResult
from memory.receipts.services.receipt_reads import ReconcilePass, receipts_reconcile
from memory.receipts.services.receipt_reads import receipt_read as read_once
from memory.receipts.services.reconciliation import (
    receipts_reconcile_batch,
    receipts_reconcile_claim_batch,
    receipts_reconcile_settle_batch,
)
from reviews.models import ReviewItem
from tests.memory.conftest import http_reconciler

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fast_reconcile")]

S = ReceiptState
# Evidence that differs between two receipts read alike: their keys and timing.
VARYING_EVIDENCE = {
    "url",
    "elapsed_ms",
    "response_sha256",
    "response_bytes",
    "intent_fingerprint",
    "record_fingerprint",
}


# role → (reconciler, how the platform answers for the receipt's key)
def corpus(platform: Any) -> dict[str, tuple[dict[str, Any], str]]:
    return {
        "found": (http_reconciler(platform, proven_by="status_lookup"), "seeded"),
        "found_by_search": (http_reconciler(platform, proven_by="search_by_key"), "seeded"),
        "absent_proven": (http_reconciler(platform, proven_by="status_lookup"), ""),
        "absent_by_search": (http_reconciler(platform, proven_by="search_by_key"), ""),
        "absent_unproven": (http_reconciler(platform), ""),
        "server_error": (http_reconciler(platform, proven_by="status_lookup"), "503"),
        "timeout": (http_reconciler(platform, proven_by="status_lookup"), "stall"),
        "ambiguous": (http_reconciler(platform, proven_by="search_by_key"), "duplicated"),
        "manual": ({"adapter": "manual"}, ""),
        "value_missing": (
            {"adapter": "http", "lookup_url": f"{platform.url}/articles/{{external_id}}"},
            "",
        ),
        "key_forgotten": (
            http_reconciler(platform, proven_by="status_lookup", key_retention_seconds=60),
            "old",
        ),
    }


def make_corpus(prefix: str, platform: Any, make_receipt: Any) -> dict[str, Receipt]:
    receipts = {}
    for role, (reconciler, behaviour) in corpus(platform).items():
        key = f"{prefix}-{role}"
        if behaviour in ("seeded", "duplicated"):
            # As the agent's own write stored it: make_receipt's intent for this key.
            body = {"title": "Receipts before calls", "nonce": key}
            platform.seed(key, article_id=f"art-{role}", body=body)
        if behaviour == "duplicated":
            platform.duplicated_keys.add(key)
        if behaviour == "503":
            platform.failing_keys[key] = 503
        if behaviour == "stall":
            platform.stalled_keys[key] = 1.3  # past the read timeout (1 s, or a test's own)
        receipt = make_receipt(S.OUTCOME_UNKNOWN, idempotency_key=key, reconciler=reconciler)
        if behaviour == "old":
            Receipt.objects.filter(pk=receipt.pk).update(
                submitted_at=timezone.now() - timedelta(hours=1)
            )
        receipts[role] = receipt
    return receipts


def _evidence(evidence: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in evidence.items() if k not in VARYING_EVIDENCE}


def timeline(receipt: Receipt) -> dict[str, Any]:
    receipt.refresh_from_db()
    transitions = ReceiptTransition.objects.filter(receipt=receipt).order_by("at", "id")
    reads = ReconciliationRead.objects.filter(receipt=receipt).order_by("attempt", "id")
    audit = AuditEvent.objects.filter(target_type="receipt", target_id=str(receipt.pk))
    return {
        "state": receipt.state,
        "attempts": receipt.reconcile_attempts,
        "error_code": receipt.error_code,
        "external_id": receipt.external_id,
        "leased": receipt.reconcile_lease_expires_at is not None,
        "due": receipt.next_reconcile_at is not None,
        "transitions": [
            (t.from_state, t.to_state, t.reason, t.attempt, t.actor_label, _evidence(t.evidence))
            for t in transitions
        ],
        "reads": [
            (
                r.attempt,
                r.adapter,
                r.outcome,
                r.error_code,
                r.external_id,
                r.worker,
                _evidence(r.evidence),
            )
            for r in reads
        ],
        "audit": [
            (a.verb, a.actor_label, a.reason, a.data.get("from"), a.data.get("to"))
            for a in audit.order_by("id")
        ],
        "reviews": list(
            ReviewItem.objects.filter(target_type="receipt", target_id=str(receipt.pk)).values_list(
                "queue", "status", "reason_codes"
            )
        ),
    }


def test_the_same_receipts_end_alike_one_at_a_time_and_in_batches(
    platform, make_receipt, actors, settings
):
    settings.RECONCILE_READS_IN_FLIGHT = 3  # several batches per pass
    # The stalled read is waited out five times on each path: half a second each time,
    # not fast_reconcile's 1 s.
    settings.RECONCILE_HTTP_TIMEOUT_SECONDS = 0.5
    one_by_one = make_corpus("one", platform, make_receipt)
    batched = make_corpus("bat", platform, make_receipt)
    reports: dict[str, list[dict]] = {"one": [], "bat": []}
    for _ in range(settings.RECONCILE_MAX_ATTEMPTS + 1):
        one = receipts_reconcile(
            receipt_ids=[r.pk for r in one_by_one.values()], worker=actors.worker
        )
        bat = receipts_reconcile_batch(
            receipt_ids=[r.pk for r in batched.values()], worker=actors.worker
        )
        reports["one"].append(one.as_dict())
        reports["bat"].append(bat.as_dict())
    assert reports["one"] == reports["bat"]
    for role in one_by_one:
        expected = timeline(one_by_one[role])
        assert timeline(batched[role]) == expected, role
        assert platform.reads_by_key[f"bat-{role}"] == platform.reads_by_key[f"one-{role}"], role

    # The corpus covers every way a read ends, so the equality above means something.
    final = {role: timeline(receipt) for role, receipt in batched.items()}
    assert {role: (t["state"], t["transitions"][-1][2]) for role, t in final.items()} == {
        "found": (S.SUCCEEDED, "found"),
        "found_by_search": (S.SUCCEEDED, "found"),
        "absent_proven": (S.SAFE_TO_RETRY, "absence_proven"),
        "absent_by_search": (S.SAFE_TO_RETRY, "absence_proven"),
        "absent_unproven": (S.MANUAL_REVIEW, "attempts_exhausted"),
        "server_error": (S.MANUAL_REVIEW, "attempts_exhausted"),
        "timeout": (S.MANUAL_REVIEW, "attempts_exhausted"),
        "ambiguous": (S.MANUAL_REVIEW, "ambiguous_match"),
        "manual": (S.MANUAL_REVIEW, "manual_reconciler"),
        "value_missing": (S.MANUAL_REVIEW, "lookup_value_missing"),
        "key_forgotten": (S.MANUAL_REVIEW, "key_retention_expired"),
    }
    assert final["found"]["external_id"] == "art-found"
    assert [r[3] for r in final["timeout"]["reads"]] == ["timeout"] * 5
    assert [r[3] for r in final["server_error"]["reads"]] == ["http_503"] * 5
    assert final["manual"]["reviews"] == [("manual_review", "open", ["manual_reconciler"])]
    assert platform.writes_attempted == 0  # reconciliation only ever reads


def test_a_batch_claims_in_one_statement_and_settles_in_one_transaction(
    platform, make_receipt, actors, settings, django_assert_max_num_queries
):
    settings.RECONCILE_READS_IN_FLIGHT = 20
    receipts = [
        make_receipt(
            S.OUTCOME_UNKNOWN, reconciler=http_reconciler(platform, proven_by="status_lookup")
        )
        for _ in range(20)
    ]
    for receipt in receipts[::2]:
        platform.seed(receipt.idempotency_key)
    # Claim: select + receipts + transitions + audit + leases, and the
    # transaction around them — the same for 20 receipts as for 2.
    with django_assert_max_num_queries(8):
        batch = receipts_reconcile_claim_batch(worker=actors.worker, limit=20)
    assert len(batch.claims) == 20
    results = [(claim, read_once(claim)) for claim in batch.claims]
    report = ReconcilePass()
    with django_assert_max_num_queries(9):
        receipts_reconcile_settle_batch(results=results, worker=actors.worker, report=report)
    assert report.states == {S.SUCCEEDED: 10, S.SAFE_TO_RETRY: 10}


def test_a_stale_batch_is_fenced_off_receipt_by_receipt(platform, make_receipt, actors):
    reconciler = http_reconciler(platform, proven_by="status_lookup")
    retaken, kept = (make_receipt(S.OUTCOME_UNKNOWN, reconciler=reconciler) for _ in range(2))
    platform.seed(retaken.idempotency_key)
    slow, fast = actors.worker, type(actors.worker).system("fast worker")
    now = timezone.now()
    stale = receipts_reconcile_claim_batch(worker=slow, limit=10, now=now)
    assert {c.receipt_id for c in stale.claims} == {retaken.pk, kept.pk}
    # Both are leased: nobody else may claim them before the lease runs out.
    assert receipts_reconcile_claim_batch(worker=fast, limit=10, now=now).claims == []
    later = now + timedelta(seconds=120)
    fresh = receipts_reconcile_claim_batch(
        worker=fast, limit=1, receipt_ids=[retaken.pk], now=later
    )
    assert [(c.receipt_id, c.attempt) for c in fresh.claims] == [(retaken.pk, 2)]

    found = LookupResult(ReadOutcome.FOUND, external_id="art-late")
    absent = LookupResult(ReadOutcome.ABSENT)
    late = ReconcilePass()
    receipts_reconcile_settle_batch(
        results=[
            (claim, found if claim.receipt_id == retaken.pk else absent) for claim in stale.claims
        ],
        worker=slow,
        report=late,
    )
    # The retaken receipt refuses the stale verdict; the other one was never
    # claimed again, so its claim still holds.
    assert late.fenced == 1 and late.states == {S.SAFE_TO_RETRY: 1}
    retaken.refresh_from_db()
    assert retaken.state == S.RECONCILING and retaken.external_id == ""
    assert not ReconciliationRead.objects.filter(receipt=retaken).exists()

    current = ReconcilePass()
    receipts_reconcile_settle_batch(
        results=[(fresh.claims[0], absent)], worker=fast, report=current
    )
    assert current.states == {S.SAFE_TO_RETRY: 1}
    assert list(
        ReconciliationRead.objects.filter(receipt=retaken).values_list("worker", "attempt")
    ) == [("fast worker", 2)]
    again = ReconcilePass()
    receipts_reconcile_settle_batch(
        results=[(c, found) for c in stale.claims], worker=slow, report=again
    )
    assert again.fenced == 2 and not again.states


def test_reads_run_concurrently_within_the_platform_limit(platform, make_receipt, actors, settings):
    settings.RECONCILE_READS_IN_FLIGHT = 8
    platform.read_delay = 0.2
    reconciler = http_reconciler(platform, proven_by="status_lookup")
    receipts = [make_receipt(S.OUTCOME_UNKNOWN, reconciler=reconciler) for _ in range(8)]
    # Reads wait for one another (up to 60 s) until 8 are in flight, however slowly a busy
    # machine starts them; reads sent one after another would never get there.
    platform.hold_reads_after(platform.reads, until_in_flight=8)
    report = receipts_reconcile_batch(receipt_ids=[r.pk for r in receipts], worker=actors.worker)
    assert report.states == {S.SAFE_TO_RETRY: 8}
    assert platform.max_in_flight == 8

    settings.RECONCILE_PLATFORM_READS_IN_FLIGHT = 3
    platform.max_in_flight = 0
    receipts = [make_receipt(S.OUTCOME_UNKNOWN, reconciler=reconciler) for _ in range(8)]
    platform.hold_reads_after(platform.reads, until_in_flight=3)
    report = receipts_reconcile_batch(receipt_ids=[r.pk for r in receipts], worker=actors.worker)
    assert report.states == {S.SAFE_TO_RETRY: 8}
    assert platform.max_in_flight == 3


def test_read_starts_are_paced_per_platform(platform, make_receipt, actors, settings):
    settings.RECONCILE_PLATFORM_READS_PER_SECOND = 10
    reconciler = http_reconciler(platform, proven_by="status_lookup")
    receipts = [make_receipt(S.OUTCOME_UNKNOWN, reconciler=reconciler) for _ in range(5)]
    report = receipts_reconcile_batch(receipt_ids=[r.pk for r in receipts], worker=actors.worker)
    assert report.states == {S.SAFE_TO_RETRY: 5}
    starts = sorted(platform.read_started)
    gaps = [b - a for a, b in itertools.pairwise(starts)]
    # Measured where the platform notes each read's arrival: a read thread that a busy
    # machine wakes late shortens one gap (and lengthens the next). Unpaced reads, or reads
    # held back and released in pairs, arrive within a few ms of each other.
    assert len(starts) == 5 and sum(gap < 0.03 for gap in gaps) <= 1, gaps
    assert starts[-1] - starts[0] > 0.35, gaps


def test_a_read_that_cannot_start_within_the_lease_gives_its_claim_back(
    platform, make_receipt, actors, settings
):
    # A 2 s lease and 1 s reads leave half a second to start each read in;
    # one read per second lets only the first one through.
    settings.RECONCILE_LEASE_SECONDS = 2
    settings.RECONCILE_PLATFORM_READS_PER_SECOND = 1
    settings.RECONCILE_READS_IN_FLIGHT = 3
    reconciler = http_reconciler(platform, proven_by="status_lookup")
    receipts = [make_receipt(S.OUTCOME_UNKNOWN, reconciler=reconciler) for _ in range(3)]
    report = receipts_reconcile_batch(receipt_ids=[r.pk for r in receipts], worker=actors.worker)
    assert report.claimed == 3 and report.states == {S.SAFE_TO_RETRY: 1}
    assert platform.reads == 1
    back = Receipt.objects.filter(pk__in=report.unprocessed)
    assert len(report.unprocessed) == 2
    for receipt in back:
        # Unspent: no read, no attempt used, no lease, due again.
        assert receipt.state == S.RECONCILING
        assert receipt.reconcile_attempts == 0
        assert receipt.reconcile_lease_expires_at is None
        assert receipt.next_reconcile_at <= timezone.now()
        assert not ReconciliationRead.objects.filter(receipt=receipt).exists()
