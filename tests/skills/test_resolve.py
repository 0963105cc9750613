"""Resolve: what agents load, how revoke and deprecation reach them, pins, and the cache."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone
from redis.exceptions import ConnectionError as RedisConnectionError

from skills import services
from skills.models import SkillPin
from tests.skills.conftest import SLUG

RESOLVE = f"/api/v1/skills/{SLUG}/resolve"


def test_it_resolves_production_with_body_and_file_listing(make_ready, reader, published_v2):
    make_ready(reader)
    response = reader.get(RESOLVE)
    assert response.status_code == 200
    body = response.json()
    assert (body["skill"], body["number"], body["label"]) == (SLUG, 2, "production")
    assert body["content_hash"] == published_v2.content_hash
    assert body["manifest"]["capabilities"] == ["network"]
    assert body["body"].startswith("# PDF tools")
    assert body["files"][1] == {
        "path": "scripts/fetch.py",
        "sha256": body["files"][1]["sha256"],
        "size": 66,
        "url": f"/api/v1/skills/{SLUG}/versions/2/files/scripts/fetch.py",
    }
    assert "content" not in body["files"][0]
    assert response["ETag"] == f'"{published_v2.content_hash}"'
    assert body["deprecation"] is None
    assert "Warning" not in response


def test_it_resolves_an_exact_version(make_ready, reader, published_v2):
    make_ready(reader)
    body = reader.get(f"{RESOLVE}?version=1").json()
    assert (body["number"], body["label"]) == (1, None)


def test_it_answers_304_when_the_content_hash_matches(make_ready, reader, published_v1):
    make_ready(reader)
    etag = reader.get(RESOLVE)["ETag"]
    assert reader.get(RESOLVE, HTTP_IF_NONE_MATCH=etag).status_code == 304


@pytest.mark.django_db(transaction=True)
def test_it_refuses_revoked_versions_even_for_exact_pins(
    make_ready, acme, reader, published_v2, ada
):
    make_ready(reader)
    # Warm the cache for the exact pin first: revoke must beat a cached answer.
    assert reader.get(f"{RESOLVE}?version=2", HTTP_X_SKILL_INSTANCE="worker-1").status_code == 200
    services.skill_version_revoke(tenant=acme, version=published_v2, actor=ada, reason="leaks")

    pinned = reader.get(f"{RESOLVE}?version=2", HTTP_X_SKILL_INSTANCE="worker-1")
    assert pinned.status_code == 410
    assert pinned.json()["code"] == "version_revoked"
    assert pinned.json()["number"] == 2
    assert reader.get(f"{RESOLVE}?version=2").status_code == 410
    files = reader.get(f"/api/v1/skills/{SLUG}/versions/2/files/SKILL.md")
    assert (files.status_code, files.json()["code"]) == (410, "version_revoked")
    assert reader.get(RESOLVE).json()["number"] == 1


@pytest.mark.django_db(transaction=True)
def test_it_sees_a_rollback_at_once_despite_the_cache(make_ready, acme, reader, published_v2, ada):
    make_ready(reader)
    assert reader.get(RESOLVE).json()["number"] == 2
    assert reader.get(RESOLVE).json()["number"] == 2  # now served from the cache
    services.skill_rollback(
        tenant=acme, skill=published_v2.skill, to_number=1, actor=ada, reason="v2 regressed"
    )
    assert reader.get(RESOLVE).json()["number"] == 1


@pytest.mark.django_db(transaction=True)
def test_it_warns_on_a_deprecated_version(make_ready, acme, reader, published_v1, ada):
    make_ready(reader)
    reader.get(RESOLVE)
    services.skill_version_deprecate(
        tenant=acme, version=published_v1, actor=ada, reason="use pdf-tools-2"
    )
    response = reader.get(RESOLVE)
    assert response.status_code == 200
    assert response["Warning"].startswith('299 - "deprecated: version 1 of pdf-tools')
    assert response.json()["deprecation"]["reason"] == "use pdf-tools-2"


@pytest.mark.django_db(transaction=True)
def test_it_serves_a_cached_resolve_without_touching_skill_tables(
    make_ready, reader, published_v1, django_assert_max_num_queries
):
    make_ready(reader)
    reader.get(RESOLVE)
    # The bearer token lookup and the caller's instance remain (whether it may load the
    # version changes with every instantiation); the answer itself comes from Redis.
    with django_assert_max_num_queries(2) as captured:
        assert reader.get(RESOLVE).status_code == 200
    touched = [query["sql"] for query in captured.captured_queries if "skills_" in query["sql"]]
    assert len(touched) == 1 and "skills_skillinstance" in touched[0]


def test_it_answers_label_not_set_before_anything_is_published(make_ready, reader, upload, ada):
    upload(actor=ada)
    response = reader.get(RESOLVE)
    assert (response.status_code, response.json()["code"]) == (404, "label_not_set")


def test_it_refuses_to_load_an_unpublished_version(make_ready, reader, upload, ada):
    make_ready(reader)
    upload(actor=ada)
    response = reader.get(f"{RESOLVE}?version=1")
    assert (response.status_code, response.json()["code"]) == (409, "version_not_published")
    # The problem's `status` is its HTTP status; the version's is `version_status`.
    assert (response.json()["status"], response.json()["version_status"]) == (409, "draft")


def test_it_validates_resolve_parameters(make_ready, reader, published_v1):
    make_ready(reader)
    both = reader.get(f"{RESOLVE}?version=1&label=production")
    assert (both.status_code, both.json()["code"]) == (400, "validation_error")
    long = reader.get(RESOLVE, HTTP_X_SKILL_INSTANCE="x" * 201)
    assert (long.status_code, long.json()["code"]) == (400, "instance_invalid")
    assert reader.get("/api/v1/skills/unknown/resolve").status_code == 404


# --- pins -------------------------------------------------------------------------------------


def test_it_records_one_pin_per_instance_and_version(make_ready, reader, published_v2):
    make_ready(reader)
    for instance in ("worker-1", "worker-2", "worker-1"):
        reader.get(RESOLVE, HTTP_X_SKILL_INSTANCE=instance)
    reader.get(f"{RESOLVE}?version=1", HTTP_X_SKILL_INSTANCE="worker-3")
    reader.get(RESOLVE)  # no header, no pin
    pins = sorted(SkillPin.objects.values_list("instance", "version__number"))
    assert pins == [("worker-1", 2), ("worker-2", 2), ("worker-3", 1)]


def test_it_counts_instances_of_the_last_24_hours(make_ready, acme, reader, published_v2, ada):
    make_ready(reader)
    for instance in ("worker-1", "worker-2", "worker-3"):
        reader.get(RESOLVE, HTTP_X_SKILL_INSTANCE=instance)
    SkillPin.objects.filter(instance="worker-3").update(
        last_seen_at=timezone.now() - timedelta(hours=25)
    )
    detail = reader.get(f"/api/v1/skills/{SLUG}/versions/2").json()
    assert detail["instances_last_24h"] == 2
    result = services.skill_version_revoke(
        tenant=acme, version=published_v2, actor=ada, reason="leaks"
    )
    assert result.instances_last_24h == 2


def test_it_refreshes_a_pin_at_most_once_a_minute(make_ready, reader, published_v1):
    make_ready(reader)
    reader.get(RESOLVE, HTTP_X_SKILL_INSTANCE="worker-1")
    seen = SkillPin.objects.get().last_seen_at
    reader.get(RESOLVE, HTTP_X_SKILL_INSTANCE="worker-1")
    assert SkillPin.objects.get().last_seen_at == seen


class UnreachableRedis:
    """Stands in for the cache when Redis is down: every call fails like redis-py does."""

    def __getattr__(self, name: str):
        def fail(*args, **kwargs):
            raise RedisConnectionError("Connection refused")

        return fail


def test_it_answers_from_the_database_when_redis_is_down(
    make_ready, acme, reader, published_v2, ada, monkeypatch
):
    make_ready(reader)
    monkeypatch.setattr("skills.cache.cache", UnreachableRedis())
    response = reader.get(RESOLVE, HTTP_X_SKILL_INSTANCE="worker-1")
    assert (response.status_code, response.json()["number"]) == (200, 2)
    # Without the throttle every load writes its pin: the database stays the truth.
    assert SkillPin.objects.get().instance == "worker-1"
    services.skill_version_revoke(tenant=acme, version=published_v2, actor=ada, reason="leaks")
    assert reader.get(f"{RESOLVE}?version=2").status_code == 410
