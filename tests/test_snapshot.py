"""The browser tests' copy of the seeded demo (tests/snapshot.py) puts back exactly what
seeding left: every row, the sequences, and none of an earlier test's cache keys."""

import copy

import pytest
from django.core.cache import cache
from django.core.management import call_command
from django.db import DatabaseError, connection, transaction

from accounts.services import tenant_create
from memory.claims.models import Event
from tests import snapshot
from tests.memory.helpers import submit

pytestmark = pytest.mark.django_db(transaction=True)


def _every_row() -> dict[str, list[tuple]]:
    rows = {}
    with connection.cursor() as cursor:
        for table in snapshot._tables():
            cursor.execute(f"SELECT * FROM {connection.ops.quote_name(table)} ORDER BY 1")  # noqa: S608
            rows[table] = cursor.fetchall()
    return rows


@pytest.fixture
def test_cache_prefix(settings):
    caches = copy.deepcopy(settings.CACHES)
    caches["default"]["KEY_PREFIX"] = f"{snapshot.TEST_CACHE_PREFIX}snapshot"
    settings.CACHES = caches


def test_rows_and_sequences_come_back_exactly_and_cache_keys_go(test_cache_prefix, agent):
    submit(agent, text="Alice lives in Lyon", predicate="home_city", value="Lyon")
    seeded = _every_row()
    assert seeded["memory_claim"] and seeded["accounts_tenant"]
    taken = snapshot.TableSnapshot.take()
    assert "django_content_type" not in taken.rows
    cache.set("counter-of-an-earlier-test", 3)

    # A flush empties every table and starts every sequence again at 1.
    call_command("flush", interactive=False, verbosity=0)
    assert snapshot.usable()
    taken.restore()

    assert _every_row() == seeded
    assert cache.get("counter-of-an-earlier-test") is None
    # The sequences continue after the restored rows, as they did after seeding.
    newer = tenant_create(slug="newer", name="Newer")[0]
    assert newer.pk == max(row[0] for row in seeded["accounts_tenant"]) + 1
    assert not snapshot.usable()  # rows are there now: nothing would be taken or put back


def test_it_is_not_used_with_a_shared_cache_prefix(settings):
    caches = copy.deepcopy(settings.CACHES)
    caches["default"]["KEY_PREFIX"] = "memdesk"
    settings.CACHES = caches
    assert not snapshot.usable()


def test_what_a_transactional_test_leaves_is_emptied_as_a_flush_would(agent):
    submit(agent, text="Alice lives in Lyon", predicate="home_city", value="Lyon")
    assert Event.objects.exists()
    # The ledger is append-only: its trigger refuses a DELETE, as in production.
    with pytest.raises(DatabaseError), transaction.atomic():
        Event.objects.all().delete()
    content_types = _content_types()
    assert content_types

    snapshot.empty_tables()

    # Every table but migrations, content types and permissions.
    assert not any(snapshot._row_counts(snapshot._tables()).values())
    assert not Event.objects.exists()
    # Content types stay as they were, with their ids (a flush would refill the same ones).
    assert _content_types() == content_types


def _content_types() -> list[tuple]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT * FROM django_content_type ORDER BY id")
        return cursor.fetchall()
