"""accounts 0006: existing tokens take their owner from the audit row of their creation."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

BEFORE = [("accounts", "0005_receipts_operate_capability"), ("skills", "0006_draft_sources")]
AFTER = [("accounts", "0006_agent_token_owner"), ("skills", "0007_skill_version_approvals")]


def migrate(targets):
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    return executor.loader.project_state(targets).apps


@pytest.mark.django_db(transaction=True)
def test_existing_tokens_are_owned_by_the_person_who_issued_them_or_by_nobody():
    old = migrate(BEFORE)
    try:
        tenant = old.get_model("accounts", "Tenant").objects.create(slug="acme", name="Acme")
        users = old.get_model("auth", "User").objects
        admin, end_user = users.create(username="ada"), users.create(username="alice")
        Membership = old.get_model("accounts", "Membership")
        Membership.objects.create(tenant=tenant, user=admin, role="admin")
        Membership.objects.create(tenant=tenant, user=end_user, role="user")
        tokens = old.get_model("accounts", "AgentToken").objects
        AuditEvent = old.get_model("accounts", "AuditEvent").objects
        made = {}
        for name, maker_kind, maker in [
            ("console", "user", admin),
            ("command", "system", None),
            ("odd", "user", end_user),
        ]:
            made[name] = tokens.create(
                tenant=tenant, name=name, prefix="mdk_x", secret_hash=name * 8, capabilities=[]
            )
            AuditEvent.create(
                tenant=tenant,
                actor_kind=maker_kind,
                actor_id=str(maker.pk) if maker else "",
                actor_label=maker.username if maker else "operator",
                verb="agent_token.created",
                target_type="agent_token",
                target_id=str(made[name].pk),
            )

        new = migrate(AFTER)
        owners = dict(new.get_model("accounts", "AgentToken").objects.values_list("name", "owner"))
        # The admin who issued it owns it; an operator's or an end user's is nobody's.
        assert owners == {"console": admin.pk, "command": None, "odd": None}
    finally:
        # Back to the latest migration of every app, whatever was added after these.
        migrate(MigrationExecutor(connection).loader.graph.leaf_nodes())
