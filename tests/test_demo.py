from io import StringIO

import pytest
from django.core.management import call_command

from accounts.models import AgentToken, Membership
from memory.models import Claim
from reviews.models import ReviewItem

pytestmark = pytest.mark.django_db


def test_seed_demo_loads_once_and_fills_the_queues():
    out = StringIO()
    call_command("seed_demo", stdout=out)
    assert "mdk_" in out.getvalue()
    assert Membership.objects.filter(tenant__slug="demo").count() == 6
    assert Claim.objects.filter(status="active").exists()
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
    assert AgentToken.objects.filter(tenant__slug="demo").count() == 1
