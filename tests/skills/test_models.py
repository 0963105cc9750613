"""What PostgreSQL itself refuses, whatever the code above it does."""

from __future__ import annotations

import pytest
from django.db import DatabaseError, IntegrityError, connection, transaction
from django.utils import timezone

from skills import services
from skills.models import (
    VERSION_TRANSITIONS,
    EvaluationRun,
    LabelMove,
    SkillApproval,
    SkillFile,
    SkillVersion,
    VersionStatus,
)


def refused(sql: str, params: list) -> None:
    with pytest.raises(DatabaseError), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(sql, params)


@pytest.mark.parametrize(
    ("sql", "value"),
    [
        ("UPDATE skills_skillversion SET body = %s WHERE id = %s", "rewritten"),
        ("UPDATE skills_skillversion SET content_hash = %s WHERE id = %s", "sha256:" + "f" * 64),
        ("UPDATE skills_skillversion SET manifest = %s WHERE id = %s", '{"name": "pdf-tools"}'),
        ("UPDATE skills_skillversion SET number = %s WHERE id = %s", 7),
        ("UPDATE skills_skillversion SET author_label = %s WHERE id = %s", "someone else"),
    ],
)
def test_it_refuses_to_change_version_content(published_v1, sql, value):
    refused(sql, [value, published_v1.pk])
    published_v1.refresh_from_db()
    assert published_v1.body.startswith("# PDF tools")


def test_it_refuses_to_change_a_draft_too(upload, ada):
    # Content-addressed: even a draft's content would make its hash lie.
    draft = upload(actor=ada)
    refused("UPDATE skills_skillversion SET body = 'x' WHERE id = %s", [draft.pk])


def test_it_lets_lifecycle_columns_move(published_v1):
    SkillVersion.objects.filter(pk=published_v1.pk).update(deprecate_reason="superseded")
    published_v1.refresh_from_db()
    assert published_v1.deprecate_reason == "superseded"


def test_it_keeps_revoke_final(acme, published_v1, ada):
    services.skill_version_revoke(tenant=acme, version=published_v1, actor=ada, reason="bad")
    refused("UPDATE skills_skillversion SET status = 'published' WHERE id = %s", [published_v1.pk])
    assert SkillVersion.objects.get(pk=published_v1.pk).status == VersionStatus.REVOKED


def test_it_refuses_deleting_versions_files_runs_and_label_moves(published_v1):
    refused("DELETE FROM skills_skillversion WHERE id = %s", [published_v1.pk])
    file = SkillFile.objects.filter(version=published_v1).first()
    refused("UPDATE skills_skillfile SET content = 'x' WHERE id = %s", [file.pk])
    refused("DELETE FROM skills_skillfile WHERE id = %s", [file.pk])
    run = EvaluationRun.objects.filter(version=published_v1).first()
    refused("UPDATE skills_evaluationrun SET passed = false WHERE id = %s", [run.pk])
    move = LabelMove.objects.get(skill=published_v1.skill)
    refused("UPDATE skills_labelmove SET reason = 'edited' WHERE id = %s", [move.pk])
    refused("DELETE FROM skills_labelmove WHERE id = %s", [move.pk])


def test_it_refuses_a_label_move_without_a_reason(published_v1):
    with pytest.raises(IntegrityError), transaction.atomic():
        LabelMove.objects.create(
            tenant=published_v1.tenant,
            skill=published_v1.skill,
            label="production",
            to_version=published_v1,
            cause="rollback",
            actor_kind="user",
            reason="   ",
        )


def test_it_refuses_an_approver_who_is_the_author(upload, ada):
    version = upload(actor=ada)
    with pytest.raises(IntegrityError), transaction.atomic():
        SkillVersion.objects.filter(pk=version.pk).update(
            approved_by_kind=version.author_kind, approved_by_id=version.author_id
        )


def test_the_version_table_is_the_design_lifecycle():
    # docs/design.md, "State machines", written out once more by hand.
    assert {(s, t) for s, targets in VERSION_TRANSITIONS.items() for t in targets} == {
        ("draft", "in_review"),
        ("in_review", "approved"),
        ("in_review", "rejected"),
        ("approved", "published"),
        ("published", "deprecated"),
        *((s, "revoked") for s in ("draft", "in_review", "approved", "published", "deprecated")),
        # A retired tool makes any version not yet final incompatible.
        *(
            (s, "incompatible")
            for s in ("draft", "in_review", "approved", "published", "deprecated")
        ),
        ("incompatible", "revoked"),
    }
    assert set(VERSION_TRANSITIONS) == set(VersionStatus.values)


def _walk_to(status: str) -> list[str]:
    """The statuses a draft passes through to reach `status`, read off the table."""
    previous: dict[str, str | None] = {VersionStatus.DRAFT: None}
    queue = [str(VersionStatus.DRAFT)]
    while queue:
        current = queue.pop(0)
        for target in sorted(VERSION_TRANSITIONS[current]):
            if target not in previous:
                previous[target] = current
                queue.append(target)
    steps: list[str] = []
    at: str | None = status
    while at is not None and at != VersionStatus.DRAFT:
        steps.append(at)
        at = previous[at]
    return list(reversed(steps))


@pytest.mark.parametrize("source", VersionStatus.values)
def test_the_database_refuses_every_status_move_the_table_does_not_list(upload, ada, abe, source):
    version = upload(actor=ada)
    # The times, reason and approval each status's own constraints ask for, so only
    # the transition trigger can refuse a move below.
    SkillApproval.objects.create(
        tenant=version.tenant, version=version, person=abe.person, actor_kind=abe.kind
    )
    now = timezone.now()
    SkillVersion.objects.filter(pk=version.pk).update(
        approved_at=now,
        published_at=now,
        revoked_at=now,
        revoke_reason="checked by hand",
        incompatible_at=now,
        incompatible_reason="checked by hand",
    )
    sql = "UPDATE skills_skillversion SET status = %s WHERE id = %s"
    with connection.cursor() as cursor:
        for step in _walk_to(source):
            cursor.execute(sql, [step, version.pk])
    assert SkillVersion.objects.get(pk=version.pk).status == source
    for target in VersionStatus.values:
        if target == source:
            continue
        if target in VERSION_TRANSITIONS[source]:
            with transaction.atomic(), connection.cursor() as cursor:
                cursor.execute(sql, [target, version.pk])
                assert SkillVersion.objects.get(pk=version.pk).status == target
                transaction.set_rollback(True)
        else:
            with (
                pytest.raises(
                    IntegrityError, match=f"illegal skill version transition: {source} -> {target}"
                ),
                transaction.atomic(),
                connection.cursor() as cursor,
            ):
                cursor.execute(sql, [target, version.pk])
        assert SkillVersion.objects.get(pk=version.pk).status == source
