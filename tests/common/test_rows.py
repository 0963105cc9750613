"""Fixed-SQL reads (common/rows.py): several statements in one round trip, and
statements whose values PostgreSQL binds."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from common.rows import fetch_bound, fetch_together

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


def test_a_server_bound_statement_answers_and_is_logged_with_its_values(acme, globex):
    sql = "SELECT slug, %s::int FROM accounts_tenant WHERE id = ANY(%s) ORDER BY id"
    with CaptureQueriesContext(connection) as captured:
        rows = fetch_bound(sql, [5, [acme.pk, globex.pk]])
        named = fetch_bound("SELECT %(text)s::text", {"text": "it's 50% done; really"})
    assert rows == [("acme", 5), ("globex", 5)]
    assert named == [("it's 50% done; really",)]
    # Each call is logged as Django logs its own, with the values written in.
    assert len(captured.captured_queries) == 2
    assert f"ANY('{{{acme.pk},{globex.pk}}}'" in captured.captured_queries[0]["sql"]


def test_binary_results_bring_bytea_as_bytes():
    (row,) = fetch_bound("SELECT %s::bytea", [b"\x00\xffpacked"], binary=True)
    assert row == (b"\x00\xffpacked",)
