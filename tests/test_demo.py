from io import StringIO

import pytest
from django.core.management import call_command

from accounts.models import AgentToken, Membership
from memory.models import Claim, ClaimSource
from reviews.models import ReviewItem

pytestmark = pytest.mark.django_db


def test_seed_demo_loads_once_and_fills_the_queues():
    out = StringIO()
    call_command("seed_demo", stdout=out)
    assert "mdk_" in out.getvalue()
    assert Membership.objects.filter(tenant__slug="demo").count() == 6
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
