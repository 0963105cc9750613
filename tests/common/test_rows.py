"""Fixed-SQL reads (common/rows.py): several statements in one round trip."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from common.rows import fetch_together

pytestmark = pytest.mark.django_db


def test_statements_sent_together_answer_each_in_order(acme, globex):
    with CaptureQueriesContext(connection) as captured:
        slugs, nothing, pair = fetch_together(
            ("SELECT slug FROM accounts_tenant WHERE id = ANY(%s) ORDER BY id", [[acme.pk]]),
            ("SELECT id FROM accounts_tenant WHERE slug = %s", ["no-such-tenant"]),
            ("SELECT %s::int, %s::text", [7, "it's 50% done; really"]),
        )
    assert len(captured.captured_queries) == 1
    assert slugs == [("acme",)]
    assert nothing == []
    # Values are bound on the client: quotes, percent signs and semicolons stay values.
    assert pair == [(7, "it's 50% done; really")]
