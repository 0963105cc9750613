"""The console's user and membership lookups, read with fixed SQL on every page."""

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.test.utils import CaptureQueriesContext

from accounts.models import Membership, Role
from accounts.selectors import membership_for_user, user_with_first_membership

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


def test_a_signed_in_user_is_read_with_their_first_membership_in_one_statement(
    acme, globex, make_member, outsider, django_assert_num_queries
):
    erin = make_member(acme, "erin", Role.EDITOR)
    Membership.objects.create(tenant=globex, user=erin, role=Role.ADMIN)
    with django_assert_num_queries(1):
        user = user_with_first_membership(user_id=erin.pk)
        # With no tenant chosen, the console's lookup answers from what came with the user.
        first = membership_for_user(user=user)
        assert first is not None
        assert (first.tenant.slug, first.role) == ("acme", Role.EDITOR)
    orm_user = get_user_model().objects.get(pk=erin.pk)
    assert [getattr(user, f.attname) for f in user._meta.concrete_fields] == [
        getattr(orm_user, f.attname) for f in orm_user._meta.concrete_fields
    ]
    assert not user._state.adding
    assert first == Membership.objects.get(tenant=acme, user=erin)
    # A chosen tenant is still read for: the attached first membership does not answer.
    with django_assert_num_queries(1):
        assert membership_for_user(user=user, tenant_id=globex.pk).tenant.slug == "globex"
    # Someone in no tenant carries no membership; an unknown id is no user.
    with django_assert_num_queries(1):
        assert membership_for_user(user=user_with_first_membership(user_id=outsider.pk)) is None
    assert user_with_first_membership(user_id=outsider.pk + erin.pk + 1) is None


def test_console_pages_read_the_membership_with_the_user(editor, login):
    client = login(editor)
    client.get("/dashboard/")
    with CaptureQueriesContext(connection) as captured:
        assert client.get("/skills/").status_code == 200
    sql = [q["sql"] for q in captured.captured_queries]
    assert sum("accounts_membership" in q for q in sql) == 1
    assert any("auth_user" in q and "LATERAL" in q for q in sql)
