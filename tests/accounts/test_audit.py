import pytest
from django.db import DatabaseError, connection, transaction

from accounts.actors import Actor
from accounts.models import AuditEvent
from accounts.services import audit_record


@pytest.fixture
def audit_row(acme) -> AuditEvent:
    return audit_record(
        tenant=acme, actor=Actor.system(), verb="test.happened", target_type="thing", target_id=1
    )


@pytest.mark.parametrize(
    "sql",
    [
        "UPDATE accounts_auditevent SET verb = 'rewritten' WHERE id = %s",
        "DELETE FROM accounts_auditevent WHERE id = %s",
    ],
)
def test_database_refuses_changing_audit_rows_with_raw_sql(audit_row, sql):
    with (
        pytest.raises(DatabaseError, match=r"Cannot (update|delete)"),
        transaction.atomic(),
        connection.cursor() as cursor,
    ):
        cursor.execute(sql, [audit_row.pk])
    audit_row.refresh_from_db()
    assert audit_row.verb == "test.happened"


def test_orm_delete_is_refused_too(audit_row):
    with pytest.raises(DatabaseError), transaction.atomic():
        AuditEvent.objects.filter(pk=audit_row.pk).delete()
    assert AuditEvent.objects.filter(pk=audit_row.pk).exists()
