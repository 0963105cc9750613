"""Derived things forget too: drafts are parameterised, and deleting a memory scrubs,
revokes and supersedes every skill version holding its words."""

from __future__ import annotations

import json

import pytest

from accounts.actors import Actor
from accounts.models import AuditEvent
from memory.privacy.models import DeletionRequest, DeletionStatus
from memory.privacy.services.deletion import deletion_run
from skills.models import DraftSource, SkillFile, SkillLabel, SkillVersion
from tests.dump import tables_containing
from tests.skills.test_drafts import draft, experience

pytestmark = pytest.mark.django_db
SLUG = "deploy-crm"
CANARY = "quokkavendorline"
WORKER = Actor.system("test lifecycle worker")


@pytest.fixture
def tool_runner(acme, make_agent):
    return make_agent(acme, name="tool-runner", max_authority="tool_verified")


def run(client, n: int, *, outcome: str = "success", steps: list[str], **value) -> str:
    claim = experience(client, n, outcome=outcome, steps=steps, subject="user:alice", **value)
    assert claim["status"] == "active", claim
    return claim["id"]


@pytest.fixture
def alice_runs(tool_runner) -> dict[str, str]:
    common = ["look up the order ORD-55123 for alice", "refund through the gateway"]
    return {
        "plain": run(tool_runner, 0, steps=[*common, "email alice the receipt"]),
        "again": run(tool_runner, 3, steps=[*common, "email alice the receipt"]),
        # Its own words only: a word it shares with the others stays theirs.
        "canary": run(tool_runner, 1, steps=[f"ring {CANARY}"]),
        "failed": run(
            tool_runner,
            2,
            outcome="failure",
            steps=["look up the order ORD-55123 for alice", "email alice the receipt"],
            failure="refunded twice: the gateway was skipped and a manual refund was made",
        ),
    }


def test_a_draft_is_parameterised_and_learns_from_the_failed_run(session_api, editor, alice_runs):
    chosen = [alice_runs[run] for run in ("plain", "again", "failed")]
    response = draft(session_api(editor), chosen)

    assert response.status_code == 201, response.json()
    version = SkillVersion.objects.get(skill__slug=SLUG)
    body = version.body
    # Nobody's name or key: the subject is an input of the skill.
    assert "alice" not in body.lower() and "alice" not in str(version.manifest).lower()
    assert "{{customer}}" in body
    assert set(version.manifest["inputs"]) == {"customer"}
    assert version.manifest["inputs"]["customer"]["required"] is True
    # The step every success took and the failure did not is the one that mattered.
    assert (
        "2. refund through the gateway (every successful run did this; no failed run did)" in body
    )
    assert "1. look up the order ORD-55123 for {{customer}}\n" in body
    assert "## Pitfalls" in body and "refunded twice: the gateway was skipped" in body
    assert version.manifest["metadata"] == {
        "memdesk-origin": "experience-draft",
        "memdesk-sources": "2",
        "memdesk-failures": "1",
    }
    assert f"- failed: claim {alice_runs['failed']}" in body


def test_personal_values_of_a_run_become_inputs(session_api, editor, tool_runner):
    claims = [
        run(
            tool_runner, n, steps=[f"ship order ORD-{n}4242 to the warehouse"], order=f"ORD-{n}4242"
        )
        for n in range(2)
    ]
    response = draft(session_api(editor), claims)

    assert response.status_code == 201, response.json()
    version = SkillVersion.objects.get(skill__slug=SLUG)
    assert "ORD-" not in version.body
    assert "1. ship order {{order}} to the warehouse" in version.body
    assert set(version.manifest["inputs"]) == {"customer", "order"}


def test_only_failures_are_not_a_procedure(session_api, editor, tool_runner, alice_runs):
    response = draft(session_api(editor), [alice_runs["plain"], alice_runs["failed"]])

    assert (response.status_code, response.json()["code"]) == (400, "validation_error")
    assert not SkillVersion.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_deleting_a_memory_scrubs_revokes_and_supersedes_what_holds_its_words(
    acme, session_api, editor, admin_user, alice, alice_runs, publish, reader
):
    draft(session_api(editor), list(alice_runs.values()))
    drafted = SkillVersion.objects.get(skill__slug=SLUG)
    assert CANARY in drafted.body
    # An editor pasted the same words into another skill, now in production.
    published = publish(
        "refunds",
        body=f"# Refunds\n\nWhen the gateway is slow, ring the {CANARY}.\n",
        files={"references/vendors.md": f"Escalations: the {CANARY} (24/7).\n"},
    )
    assert reader.get("/api/v1/skills/refunds/versions/1/files/SKILL.md").status_code == 200
    untouched = publish("unrelated", body="# Unrelated\n\nNothing personal.\n")

    accepted = session_api(alice).delete(f"/api/v1/me/memories/{alice_runs['canary']}")
    assert accepted.status_code == 202, accepted.json()
    deletion_id = accepted.json()["deletion"]
    done = deletion_run(deletion_id=deletion_id, worker=WORKER)

    assert done is not None
    assert done.status == DeletionStatus.COMPLETED, json.dumps(
        [probe for probe in done.report["probes"] if not probe["clean"]]
    )
    assert done.report["clean"] is True
    # No byte of any skill file, and no row of any table, still holds the words.
    assert not [f.path for f in SkillFile.objects.all() if CANARY.encode() in bytes(f.content)]
    assert tables_containing(CANARY) == {}
    scrubbed = SkillFile.objects.get(version=published, path="references/vendors.md")
    assert bytes(scrubbed.content) == b"Escalations: the [erased] (24/7).\n"
    assert scrubbed.scrubbed_at is not None

    # The draft built from the memory and the published version are revoked, with the
    # deletion as their reason; the production label no longer points at anything.
    for version in (drafted, published):
        version.refresh_from_db()
        assert version.status == "revoked"
        assert str(deletion_id) in version.revoke_reason
    assert SkillLabel.objects.get(skill__slug="refunds").version is None
    revoked = reader.get("/api/v1/skills/refunds/versions/1/files/SKILL.md")
    assert revoked.status_code == 410, revoked.json()
    untouched.refresh_from_db()
    assert untouched.status == "published"

    # Each is superseded by a draft of its scrubbed files, to review like any other.
    for slug, source in ((SLUG, drafted), ("refunds", published)):
        successor = SkillVersion.objects.get(skill__slug=slug, number=2)
        assert (successor.status, successor.author_kind) == ("draft", "system")
        assert CANARY not in successor.body
        assert successor.content_hash != source.content_hash
        audit = AuditEvent.objects.get(
            verb="skill_version.superseded_by_deletion", target_id=source.pk
        )
        assert audit.data["deletion"] == str(deletion_id) and audit.data["successor"] == 2
        assert AuditEvent.objects.filter(
            verb="skill_version.revoked", target_id=source.pk, data__deletion=str(deletion_id)
        ).exists()
    # The new draft keeps the lineage of the memories that remain, so it may move on.
    successor = SkillVersion.objects.get(skill__slug=SLUG, number=2)
    assert {str(s.claim_id) for s in DraftSource.objects.filter(version=successor)} == {
        alice_runs["plain"],
        alice_runs["again"],
        alice_runs["failed"],
    }
    submitted = session_api(admin_user).post(f"/api/v1/skills/{SLUG}/versions/2/submit")
    assert submitted.status_code == 200, submitted.json()
    detail = session_api(editor).get("/api/v1/skills/refunds/versions/2").json()
    assert detail["body"] == "# Refunds\n\nWhen the gateway is slow, [erased] the [erased].\n"
    # The revoked draft built from the memory keeps none of its lines.
    drafted.refresh_from_db()
    assert drafted.body == "[erased]"
    assert {bytes(f.content) for f in SkillFile.objects.filter(version=drafted)} == {b"[erased]"}
    assert DeletionRequest.objects.get(pk=deletion_id).report["clean"] is True


def test_stored_words_change_only_when_a_scrub_moves_the_stamp_on(published_v1):
    from django.db import connection

    from tests.skills.test_models import refused

    file = SkillFile.objects.filter(version=published_v1).first()
    version = published_v1.pk
    # Without moving `scrubbed_at` on, neither a file nor a version's words change.
    refused("UPDATE skills_skillfile SET content = 'x' WHERE id = %s", [file.pk])
    refused("UPDATE skills_skillversion SET body = 'x' WHERE id = %s", [version])
    refused("UPDATE skills_skillfile SET path = 'y', scrubbed_at = now() WHERE id = %s", [file.pk])
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE skills_skillfile SET content = 'x', scrubbed_at = now() WHERE id = %s",
            [file.pk],
        )
        cursor.execute(
            "UPDATE skills_skillversion SET body = 'x', scrubbed_at = now() WHERE id = %s",
            [version],
        )
    # The same stamp again is not a new scrub, and the hash never changes.
    refused("UPDATE skills_skillfile SET content = 'z' WHERE id = %s", [file.pk])
    refused(
        "UPDATE skills_skillversion SET content_hash = %s, scrubbed_at = now() + interval '1 day' "
        "WHERE id = %s",
        ["sha256:" + "f" * 64, version],
    )
