"""The claim state machine: every move the table allows works, every other is refused.

The cases are generated from CLAIM_TRANSITIONS itself: exhaustively for each
(status, role, target) through the service guard, as random walks with
hypothesis' stateful testing, and against the database trigger with raw SQL.
"""

from __future__ import annotations

import uuid
from datetime import timedelta

import pytest
from django.db import IntegrityError, connection, transaction
from django.utils import timezone
from hypothesis import HealthCheck
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from accounts.actors import Actor
from accounts.models import AuditEvent, Role
from common.problems import InvalidTransition
from common.transitions import role_gated
from memory.claims.models import (
    CLAIM_TRANSITIONS,
    Claim,
    ClaimRole,
    ClaimStatus,
    allowed_claim_targets,
    claim_sources_for,
)
from memory.claims.services.claim_moves import claim_move
from memory.claims.services.subjects import subject_resolve
from memory.privacy.selectors.probes import LIVE_CLAIM_STATUSES
from memory.privacy.services.consolidation import consolidation_run

pytestmark = pytest.mark.django_db

STATUSES = list(ClaimStatus.values)
ROLES = list(ClaimRole.values)


@pytest.fixture
def actor(editor) -> Actor:
    return Actor.for_user(editor, Role.EDITOR)


@pytest.fixture
def make_claim(acme):
    subject = subject_resolve(tenant=acme, key="user:alice")

    def make(status: str, predicate: str | None = None) -> Claim:
        # Inserted as it stands: only updates are checked, and each claim gets an
        # identity of its own so activating it supersedes nothing.
        return Claim.objects.create(
            tenant=acme,
            subject=subject,
            kind="fact",
            predicate=predicate or f"home.{uuid.uuid4().hex[:12]}",
            value="Shanghai",
            text="Alice lives in Shanghai",
            authority="user_explicit",
            basis="reported",
            available_at=timezone.now(),
            status=status,
            gate_decision="accepted",
        )

    return make


def _moves(claim: Claim) -> list[AuditEvent]:
    return list(
        AuditEvent.objects.filter(target_type="claim", target_id=str(claim.pk)).order_by("id")
    )


def test_the_table_is_the_design_state_machine():
    # docs/design.md, "State machines", plus the moves the table marks as beyond the diagram,
    # written out once more by hand so a silent edit of the table fails here.
    moves = {
        (source, target, role)
        for source, targets in CLAIM_TRANSITIONS.items()
        for target, roles in targets.items()
        for role in roles
    }
    erase = {(s, "erased", "deletion") for s in STATUSES if s != "erased"}
    assert moves - erase == {
        ("candidate", "active", "reviewer"),
        ("candidate", "quarantined", "writer"),
        ("candidate", "rejected", "reviewer"),
        ("candidate", "rejected", "worker"),
        ("candidate", "conflicted", "worker"),
        ("candidate", "superseded", "user"),
        ("candidate", "invalidated", "writer"),
        ("candidate", "invalidated", "worker"),
        ("candidate", "invalidated", "deletion"),
        ("quarantined", "active", "reviewer"),
        ("quarantined", "rejected", "reviewer"),
        ("quarantined", "superseded", "user"),
        ("quarantined", "invalidated", "worker"),
        ("quarantined", "invalidated", "deletion"),
        ("active", "active", "reviewer"),
        ("active", "active", "worker"),
        ("active", "superseded", "writer"),
        ("active", "superseded", "reviewer"),
        ("active", "superseded", "worker"),
        ("active", "superseded", "user"),
        ("active", "conflicted", "writer"),
        ("active", "invalidated", "writer"),
        ("active", "invalidated", "reviewer"),
        ("active", "invalidated", "worker"),
        ("active", "invalidated", "deletion"),
        ("active", "rejected", "reviewer"),
        ("active", "archived", "reviewer"),
        ("archived", "active", "reviewer"),
        ("archived", "superseded", "user"),
        ("conflicted", "active", "reviewer"),
        ("conflicted", "active", "worker"),
        ("conflicted", "superseded", "reviewer"),
        ("conflicted", "superseded", "worker"),
        ("conflicted", "superseded", "user"),
        ("conflicted", "rejected", "reviewer"),
        ("conflicted", "invalidated", "writer"),
        ("conflicted", "invalidated", "worker"),
        ("conflicted", "invalidated", "deletion"),
        # A review decision taken back within its window: the inverse moves only.
        ("active", "candidate", "undo"),
        ("active", "quarantined", "undo"),
        ("active", "conflicted", "undo"),
        ("superseded", "active", "undo"),
        ("superseded", "conflicted", "undo"),
        ("invalidated", "active", "undo"),
        ("rejected", "candidate", "undo"),
        ("rejected", "quarantined", "undo"),
        ("rejected", "active", "undo"),
        ("rejected", "conflicted", "undo"),
    }
    assert erase <= moves
    assert set(CLAIM_TRANSITIONS) == set(STATUSES)


def test_erasure_is_legal_from_every_state_and_nothing_leaves_it():
    assert set(claim_sources_for(ClaimStatus.ERASED)) == set(STATUSES) - {"erased"}
    assert allowed_claim_targets(ClaimStatus.ERASED) == []
    for history in ("superseded", "invalidated", "rejected"):
        # Only an undo of the review decision that ended it (within its window) revives one.
        for role in set(ROLES) - {ClaimRole.UNDO}:
            assert allowed_claim_targets(history, role) == (
                ["erased"] if role == ClaimRole.DELETION else []
            )


def test_set_based_moves_start_where_a_claim_is_still_live():
    # Expiry, lineage and deletion invalidate in SQL from the table's sources;
    # those must be exactly the statuses recall and review still read.
    for role in (ClaimRole.WORKER, ClaimRole.DELETION):
        assert set(claim_sources_for(ClaimStatus.INVALIDATED, role)) == set(LIVE_CLAIM_STATUSES)


@pytest.mark.parametrize("source", STATUSES)
def test_the_invalidate_endpoint_answers_with_the_writers_row_of_the_table(
    source, agent, make_claim
):
    claim = make_claim(source)
    allowed = allowed_claim_targets(source, ClaimRole.WRITER)
    response = agent.post(
        f"/api/v1/claims/{claim.pk}/invalidate", {"reason": "moved away"}, format="json"
    )
    claim.refresh_from_db()
    if ClaimStatus.INVALIDATED in allowed:
        assert response.status_code == 200, response.json()
        assert claim.status == response.json()["status"] == "invalidated"
        [audit] = _moves(claim)
        assert (audit.verb, audit.data["from"], audit.reason) == (
            "claim.invalidated",
            source,
            "moved away",
        )
    else:
        assert response.status_code == 409
        assert response.json()["code"] == "illegal_transition"
        assert response.json()["allowed"] == allowed
        assert claim.status == source
        assert _moves(claim) == []


def test_expiry_in_sql_moves_only_what_the_table_lets_consolidation_move(make_claim):
    claims = {status: make_claim(status) for status in STATUSES}
    Claim.objects.filter(pk__in=[c.pk for c in claims.values()]).update(
        expires_at=timezone.now() - timedelta(minutes=1)
    )
    consolidation_run(tenant=claims["active"].tenant)
    sources = claim_sources_for(ClaimStatus.INVALIDATED, ClaimRole.WORKER)
    for status, claim in claims.items():
        claim.refresh_from_db()
        assert claim.status == ("invalidated" if status in sources else status), status


@pytest.mark.parametrize("source", STATUSES)
@pytest.mark.parametrize("role", ROLES)
def test_every_move_from_every_status_follows_the_table(source, role, make_claim, actor):
    allowed = allowed_claim_targets(source, role)
    claim = make_claim(source)
    for target in STATUSES:
        if target in allowed:
            continue
        with pytest.raises(InvalidTransition) as refused:
            claim_move(tenant=claim.tenant, actor=actor, claim_id=claim.pk, to=target, by=role)
        assert refused.value.status_code == 409
        assert refused.value.code == "illegal_transition"
        assert refused.value.extra["allowed"] == allowed
        claim.refresh_from_db()
        assert claim.status == source
        assert _moves(claim) == []
    for target in allowed:
        claim = make_claim(source)
        moved = claim_move(
            tenant=claim.tenant, actor=actor, claim_id=claim.pk, to=target, by=role, reason="t"
        )
        claim.refresh_from_db()
        assert moved.status == claim.status == target
        [audit] = _moves(claim)
        assert audit.verb == f"claim.{target}"
        assert audit.data == {"from": source, "by": role}
        assert audit.actor_id == actor.id


def test_activation_supersedes_the_standing_claim_as_a_move_of_its_own(make_claim, actor):
    standing = make_claim(ClaimStatus.ACTIVE, predicate="home")
    newer = make_claim(ClaimStatus.CANDIDATE, predicate="home")
    claim_move(
        tenant=newer.tenant,
        actor=actor,
        claim_id=newer.pk,
        to=ClaimStatus.ACTIVE,
        by=ClaimRole.REVIEWER,
    )
    standing.refresh_from_db()
    newer.refresh_from_db()
    assert (standing.status, newer.status) == ("superseded", "active")
    assert newer.supersedes_id == standing.pk
    assert standing.valid_to is not None
    assert [(a.verb, a.data["from"]) for a in _moves(standing)] == [("claim.superseded", "active")]


def test_random_walks_through_the_guard_and_the_database_match_the_table(make_claim, actor):
    """Service moves must follow the role's row of the table; raw SQL moves the trigger's."""

    class ClaimMachine(RuleBasedStateMachine):
        def __init__(self) -> None:
            super().__init__()
            self.claim = make_claim(ClaimStatus.CANDIDATE)
            self.expected = str(ClaimStatus.CANDIDATE)
            self.audited = 0

        @precondition(lambda self: bool(CLAIM_TRANSITIONS[self.expected]))
        @rule(data=st.data())
        def legal_move(self, data: st.DataObject) -> None:
            # Random moves are mostly illegal; this rule walks deep into the machine.
            moves = [
                (role, to)
                for to, roles in CLAIM_TRANSITIONS[self.expected].items()
                for role in sorted(roles)
            ]
            self.move(*data.draw(st.sampled_from(moves)))

        @rule(role=st.sampled_from(ROLES), to=st.sampled_from(STATUSES))
        def move(self, role: str, to: str) -> None:
            allowed = allowed_claim_targets(self.expected, role)
            if to not in allowed:
                with pytest.raises(InvalidTransition) as refused:
                    claim_move(
                        tenant=self.claim.tenant,
                        actor=actor,
                        claim_id=self.claim.pk,
                        to=to,
                        by=role,
                    )
                assert refused.value.extra["allowed"] == allowed
                return
            claim_move(
                tenant=self.claim.tenant, actor=actor, claim_id=self.claim.pk, to=to, by=role
            )
            self.expected = to
            self.audited += 1

        @rule(to=st.sampled_from(STATUSES))
        def raw_update(self, to: str) -> None:
            legal = to in _sql_legal(self.expected)
            try:
                with transaction.atomic(), connection.cursor() as cursor:
                    cursor.execute(
                        "UPDATE memory_claim SET status = %s WHERE id = %s", [to, self.claim.pk]
                    )
            except IntegrityError as refused:
                assert not legal, refused
                assert "illegal claim transition" in str(refused)
                return
            assert legal, f"the database let {self.expected} -> {to} through"
            self.expected = to

        @invariant()
        def stored_status_is_the_model_status(self) -> None:
            self.claim.refresh_from_db()
            assert self.claim.status == self.expected
            assert len(_moves(self.claim)) == self.audited

    run_state_machine_as_test(
        ClaimMachine,
        settings=hypothesis_settings(
            max_examples=30,
            stateful_step_count=12,
            deadline=None,
            suppress_health_check=[HealthCheck.too_slow],
        ),
    )


def _sql_legal(source: str) -> set[str]:
    """Where raw SQL may move a claim: every move some role other than undo may make."""
    return {source} | {
        target for target, roles in CLAIM_TRANSITIONS[source].items() if roles - {ClaimRole.UNDO}
    }


UNDO_ONLY = sorted(
    (source, target)
    for source, moves in CLAIM_TRANSITIONS.items()
    for target, roles in moves.items()
    if roles == {ClaimRole.UNDO}
)


@pytest.mark.parametrize("source", STATUSES)
def test_the_database_refuses_every_illegal_status_update(source, make_claim):
    legal = _sql_legal(source)
    for target in STATUSES:
        claim = make_claim(source)
        sql = "UPDATE memory_claim SET status = %s WHERE id = %s AND status = %s"
        if target in legal:
            with connection.cursor() as cursor:
                cursor.execute(sql, [target, claim.pk, source])
                assert cursor.rowcount == 1
            claim.refresh_from_db()
            assert claim.status == target
            continue
        with (
            pytest.raises(IntegrityError, match=f"illegal claim transition: {source} -> {target}"),
            transaction.atomic(),
            connection.cursor() as cursor,
        ):
            cursor.execute(sql, [target, claim.pk, source])
        claim.refresh_from_db()
        assert claim.status == source


def test_a_rejected_claim_cannot_be_brought_back_by_sql_but_its_metadata_can_change(
    make_claim,
):
    rejected = make_claim(ClaimStatus.REJECTED)
    # Only an undo of the rejecting review decision may bring it back, through the undo
    # service; raw SQL cannot, to active or anywhere else.
    for target in ("active", "archived"):
        with (
            pytest.raises(IntegrityError, match=f"illegal claim transition: rejected -> {target}"),
            transaction.atomic(),
            connection.cursor() as cursor,
        ):
            cursor.execute(
                "UPDATE memory_claim SET status = %s WHERE id = %s AND status = 'rejected'",
                [target, rejected.pk],
            )
    # Same-status updates (links, counters, erasing remnants) are not moves.
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE memory_claim SET status = 'rejected', use_count = use_count + 1, "
            "text = '' WHERE id = %s",
            [rejected.pk],
        )
    rejected.refresh_from_db()
    assert (rejected.status, rejected.use_count, rejected.text) == ("rejected", 1, "")
    # Erasure is legal from every state.
    with connection.cursor() as cursor:
        cursor.execute("UPDATE memory_claim SET status = 'erased' WHERE id = %s", [rejected.pk])
    rejected.refresh_from_db()
    assert rejected.status == "erased"


@pytest.mark.parametrize(("source", "target"), UNDO_ONLY)
def test_moves_only_an_undo_may_make_pass_the_trigger_only_inside_the_undo_role(
    source, target, make_claim
):
    claim = make_claim(source)
    sql = "UPDATE memory_claim SET status = %s WHERE id = %s AND status = %s"
    with (
        pytest.raises(IntegrityError, match=f"illegal claim transition: {source} -> {target}"),
        transaction.atomic(),
        connection.cursor() as cursor,
    ):
        cursor.execute(sql, [target, claim.pk, source])
    with transaction.atomic():
        with role_gated(ClaimRole.UNDO), connection.cursor() as cursor:
            cursor.execute(sql, [target, claim.pk, source])
            assert cursor.rowcount == 1
        # The role ends with its block: later raw SQL in the transaction has none.
        with connection.cursor() as cursor:
            cursor.execute("SELECT current_setting('memdesk.transition_role', true)")
            assert cursor.fetchone()[0] == ""
    claim.refresh_from_db()
    assert claim.status == target
