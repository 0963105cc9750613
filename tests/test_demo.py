from io import StringIO

import pytest
from django.core.management import call_command

from accounts.actors import Actor
from accounts.models import AgentToken, Membership
from common.fingerprints import erased_marker
from memory.claims.models import Claim, ClaimSource
from memory.privacy.models import DeletionRequest, DeletionStatus
from memory.receipts.models import Checkpoint, Receipt
from memory.receipts.selectors.receipts import checkpoint_get
from reviews.models import ReviewItem

pytestmark = pytest.mark.django_db


def test_seed_demo_loads_once_and_fills_the_queues():
    out = StringIO()
    call_command("seed_demo", stdout=out)
    assert "mdk_" in out.getvalue()
    assert Membership.objects.filter(tenant__slug="demo").count() == 7
    assert Claim.objects.filter(status="active").exists()
    # Alice's own words became user_explicit memories only through the chat front-end,
    # whose ceiling an admin set, and a user-channel event; the demo agent has no such reach.
    tokens = dict(
        AgentToken.objects.filter(tenant__slug="demo").values_list("name", "max_authority")
    )
    assert tokens == {
        "demo-agent": "agent_inferred",
        "demo-chat-frontend": "user_explicit",
        "demo-tool-runner": "tool_verified",
    }
    stated = Claim.objects.filter(status="active", authority="user_explicit")
    assert stated.count() >= 3
    for claim in stated:
        assert claim.agent == "demo-chat-frontend"
        assert ClaimSource.objects.filter(claim=claim, event__kind="user_statement").exists()
    assert not Claim.objects.filter(
        agent="demo-agent", authority__in=["user_explicit", "tool_verified"]
    ).exists()
    queues = set(ReviewItem.objects.values_list("queue", flat=True))
    assert queues == {
        "candidates",
        "conflicts",
        "manual_review",
        "skill_publication",
        "deletions",
        "stale",
    }
    call_command("seed_demo", stdout=StringIO())
    assert AgentToken.objects.filter(tenant__slug="demo").count() == 3


def test_seed_demo_keeps_the_agent_token_in_a_private_file(tmp_path):
    from rest_framework.test import APIClient

    path = tmp_path / "data" / "demo-agent-token"
    call_command("seed_demo", token_file=str(path), stdout=StringIO())
    secret = path.read_text().strip()
    assert path.stat().st_mode & 0o777 == 0o600
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {secret}")
    assert client.get("/api/v1/reviews/queues").status_code in (200, 403)
    assert client.get("/api/v1/skills").status_code == 200


def test_the_demo_skill_in_review_is_approvable_by_the_admin_login():
    from django.contrib.auth import get_user_model

    from skills.models import SkillVersion

    call_command("seed_demo", stdout=StringIO())
    waiting = SkillVersion.objects.get(status="in_review")
    admin = get_user_model().objects.get(username="admin")
    # Four-eyes: the README's `admin` is not the author, so the queue lets them approve.
    assert waiting.author_label != admin.username


def test_the_demo_deletions_one_clean_and_one_waiting_for_an_in_flight_receipt():
    call_command("seed_demo", stdout=StringIO())
    locker, cat = DeletionRequest.objects.filter(tenant__slug="demo").order_by("created_at")
    assert locker.status == DeletionStatus.COMPLETED
    assert locker.report["clean"] is True, [p for p in locker.report["probes"] if not p["clean"]]
    # The reminder task's key named the code: the checkpoint stays, under the key's digest,
    # and recovery by the original key still finds it.
    checkpoint = Checkpoint.objects.get(tenant__slug="demo", task_key__startswith="erased:")
    assert checkpoint.task_key == erased_marker("remind-alice-locker-quokka-2291")
    demo_agent = Actor.for_token(AgentToken.objects.get(tenant__slug="demo", name="demo-agent"))
    found = checkpoint_get(
        tenant=checkpoint.tenant, actor=demo_agent, task_key="remind-alice-locker-quokka-2291"
    )
    assert found == checkpoint
    assert not Checkpoint.objects.filter(task_key__contains="quokka").exists()
    # The cat's name is still the key of a booking being settled: that deletion waits
    # for a person, and its report says why.
    assert cat.status == DeletionStatus.NEEDS_REVIEW
    assert cat.report["artifacts"]["receipts_in_flight"]["keys_kept"] == 1
    booking = Receipt.objects.get(tenant__slug="demo", idempotency_key="vet-checkup-biscotto")
    everywhere = next(p for p in cat.report["probes"] if p["name"] == "everywhere")
    assert everywhere["result"]["findings"] == [
        {
            "table": "memory_receipt",
            "column": "idempotency_key",
            "row": str(booking.pk),
            "scrubbed_by_deletions": True,
        }
    ]
