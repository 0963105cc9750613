"""The console's membership lookup, read with fixed SQL on every page."""

import pytest

from accounts.models import Membership, Role
from accounts.selectors import membership_for_user

pytestmark = pytest.mark.django_db


def test_the_chosen_tenant_wins_else_the_oldest_membership(
    acme, globex, make_member, outsider, django_assert_num_queries
):
    erin = make_member(acme, "erin", Role.EDITOR)
    Membership.objects.create(tenant=globex, user=erin, role=Role.ADMIN)
    with django_assert_num_queries(1):
        chosen = membership_for_user(user=erin, tenant_id=globex.pk)
        assert chosen is not None
        assert (chosen.tenant.slug, chosen.role) == ("globex", Role.ADMIN)
    assert membership_for_user(user=erin, tenant_id=None).tenant.slug == "acme"
    # A tenant the person is no member of is no choice: their first membership answers.
    other = globex.pk + acme.pk + 1
    assert membership_for_user(user=erin, tenant_id=other).tenant.slug == "acme"
    assert membership_for_user(user=outsider, tenant_id=acme.pk) is None
    loaded = membership_for_user(user=erin)
    assert loaded == Membership.objects.get(tenant=acme, user=erin)
    assert not loaded._state.adding
