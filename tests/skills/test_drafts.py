"""Experience claims → a SKILL.md draft with lineage; deleting a source claim flags it."""

from __future__ import annotations

import pytest

from accounts.actors import Actor
from memory.claims.models import Claim, Subject
from memory.privacy.services.deletion import deletion_request_create, deletion_run
from skills.models import DraftSource, SkillVersion
from tests.memory.helpers import candidate, post_event

DRAFTS = "/api/v1/skills/drafts"
SLUG = "deploy-crm"
pytestmark = pytest.mark.django_db
STEPS = [
    ["run the migrations", "switch traffic to green", "watch errors for 10 minutes"],
    [
        "run the migrations",
        "restart the cache",
        "switch traffic to green",
        "watch errors for 10 minutes",
    ],
    ["run the migrations", "switch traffic to green", "watch errors for 10 minutes"],
]


@pytest.fixture
def tool_runner(acme, make_agent):
    return make_agent(acme, name="tool-runner", max_authority="tool_verified")


def experience(
    client, n: int, *, outcome: str = "success", steps=None, subject="project:crm", **fields
):
    evidence = post_event(client, subject=subject, kind="tool_result", text=f"deploy {n}: ok")
    body = candidate(
        evidence["id"],
        subject=subject,
        kind="experience",
        predicate=f"deploy_run_{n}",
        text=f"Blue-green deploy of CRM release {n} succeeded",
        authority="tool_verified",
        basis="verified",
        value={"outcome": outcome, "steps": steps or STEPS[n % 3], **fields},
    )
    response = client.post("/api/v1/claims", body, format="json")
    assert response.status_code == 201, response.json()
    return response.json()


@pytest.fixture
def runs(tool_runner) -> list[str]:
    claims = [experience(tool_runner, n) for n in range(3)]
    assert {claim["status"] for claim in claims} == {"active"}, claims
    return [claim["id"] for claim in claims]


def draft(client, claims, **extra):
    body = {
        "slug": SLUG,
        "name": "Deploy CRM",
        "description": "Deploy the CRM with a blue-green switch and watch the errors.",
        "claims": claims,
        **extra,
    }
    return client.post(DRAFTS, body, format="json")


def test_an_editor_drafts_a_skill_from_repeated_successes(session_api, editor, runs):
    response = draft(session_api(editor), runs)

    assert response.status_code == 201, response.json()
    body = response.json()
    assert (body["created"], body["sources"]) == (True, runs)
    version = body["version"]
    assert (version["skill"], version["number"], version["status"]) == (SLUG, 1, "draft")
    assert version["author"]["label"] == "erin"
    assert version["manifest"]["metadata"] == {
        "memdesk-origin": "experience-draft",
        "memdesk-sources": "3",
    }
    stored = SkillVersion.objects.get(skill__slug=SLUG)
    assert "1. run the migrations\n2. switch traffic to green\n3. watch errors" in stored.body
    assert "## Seen in some runs only" in stored.body and "- restart the cache" in stored.body
    assert {str(s.claim_id) for s in DraftSource.objects.filter(version=stored)} == set(runs)
    detail = session_api(editor).get(f"/api/v1/skills/{SLUG}/versions/1").json()
    assert [s["claim"] for s in detail["draft_sources"]] == runs
    assert all(s["source_deleted_at"] is None for s in detail["draft_sources"])


def test_one_run_is_not_a_procedure(session_api, editor, runs):
    response = draft(session_api(editor), runs[:1])

    assert (response.status_code, response.json()["code"]) == (400, "validation_error")
    assert not SkillVersion.objects.exists()


def test_partial_experiences_are_not_eligible(session_api, editor, tool_runner, runs):
    partial = experience(tool_runner, 7, outcome="partial")
    response = draft(session_api(editor), [runs[0], runs[1], partial["id"]])

    assert (response.status_code, response.json()["code"]) == (409, "claim_not_eligible")
    assert response.json()["claims"] == [
        {"claim": partial["id"], "reason": "outcome_not_success_or_failure"}
    ]
    assert not SkillVersion.objects.exists()


def test_another_tenants_claims_are_not_found(session_api, editor, runs, globex, make_agent):
    foreign_runner = make_agent(globex, name="tr", max_authority="tool_verified")
    foreign = experience(foreign_runner, 1)

    response = draft(session_api(editor), [runs[0], foreign["id"]])
    assert response.status_code == 404
    assert not SkillVersion.objects.exists()


def test_agents_cannot_draft(acme, make_agent, runs):
    agent = make_agent(acme, name="w", capabilities=["skills:write", "skills:read"])

    assert draft(agent, runs).status_code == 403


def test_deleting_a_source_claim_flags_the_draft_and_stops_its_lifecycle(
    acme, session_api, editor, admin_user, runs
):
    from accounts.models import Role

    draft(session_api(editor), runs)
    version = SkillVersion.objects.get(skill__slug=SLUG)
    claim = Claim.objects.get(pk=runs[1])
    worker = Actor.system("test-worker")
    deletion, _ = deletion_request_create(
        tenant=acme, actor=worker, subject=Subject.objects.get(pk=claim.subject_id), claim=claim
    )
    assert deletion_run(deletion_id=deletion.pk, worker=worker) is not None

    source = DraftSource.objects.get(version=version, claim_id=runs[1])
    assert source.source_deleted_at is not None and source.deletion_id == deletion.pk
    assert DraftSource.objects.filter(version=version, source_deleted_at__isnull=True).count() == 2
    # The draft held the memory's words: revoked for the deletion, superseded by a draft.
    refused = session_api(admin_user).post(f"/api/v1/skills/{SLUG}/versions/1/submit")
    assert (refused.status_code, refused.json()["code"]) == (409, "illegal_transition")
    version.refresh_from_db()
    assert version.status == "revoked" and str(deletion.pk) in version.revoke_reason
    successor = SkillVersion.objects.get(skill__slug=SLUG, number=2)
    assert successor.status == "draft"
    assert {str(s.claim_id) for s in DraftSource.objects.filter(version=successor)} == {
        runs[0],
        runs[2],
    }
    from accounts.models import AuditEvent

    assert AuditEvent.objects.filter(verb="skill_version.source_deleted").count() == 1
    assert Role.ADMIN  # the admin's session is an admin's


def test_the_draft_page_lists_eligible_experiences_and_drafts_from_them(
    login, editor, runs, tool_runner
):
    from tests.skills.test_views import csrf

    failed = experience(tool_runner, 9, outcome="partial")
    client = login(editor)
    page = client.get("/skills/drafts/new/").content.decode()
    for claim_id in runs:
        assert f'value="{claim_id}"' in page
    assert failed["id"] not in page

    response = client.post(
        "/skills/drafts/new/",
        {
            "csrfmiddlewaretoken": csrf(client),
            "slug": SLUG,
            "name": "Deploy CRM",
            "description": "Deploy the CRM blue-green.",
            "claims": runs,
        },
    )
    assert response.status_code == 302
    assert response["Location"] == f"/skills/{SLUG}/v1/"
    assert SkillVersion.objects.get(skill__slug=SLUG).status == "draft"


def test_the_version_page_shows_the_lineage_and_the_flag(acme, login, session_api, editor, runs):
    draft(session_api(editor), runs)
    page = login(editor).get(f"/skills/{SLUG}/v1/").content.decode()
    assert 'id="draft-sources"' in page and runs[0] in page
    assert "memory deleted" not in page

    from skills import services

    services.drafts_flag_forgotten_sources(tenant_id=acme.pk, claim_ids=[runs[0]], deletion_id=None)
    page = login(editor).get(f"/skills/{SLUG}/v1/").content.decode()
    assert "memory deleted" in page
    assert "cannot be submitted, approved or published" in page


def test_a_flagged_draft_serves_its_body_and_files_to_nobody(
    acme, login, session_api, editor, runs, reader
):
    from skills import services

    draft(session_api(editor), runs)
    text = f"claim {runs[1]}"
    assert text in session_api(editor).get(f"/api/v1/skills/{SLUG}/versions/1").json()["body"]
    services.drafts_flag_forgotten_sources(tenant_id=acme.pk, claim_ids=[runs[1]], deletion_id=None)

    detail = reader.get(f"/api/v1/skills/{SLUG}/versions/1").json()
    assert detail["body"] is None
    file = reader.get(f"/api/v1/skills/{SLUG}/versions/1/files/SKILL.md")
    assert (file.status_code, file.json()["code"]) == (410, "draft_source_deleted")
    client = login(editor)
    page = client.get(f"/skills/{SLUG}/v1/").content.decode()
    assert text not in page and "body and files are withheld" in page
    assert client.get(f"/skills/{SLUG}/v1/files/SKILL.md").status_code == 404
    assert client.get(f"/skills/{SLUG}/v1/download/SKILL.md").status_code == 404
    session_api(editor).post(
        "/api/v1/skills/drafts",
        {
            "slug": SLUG,
            "description": "Again, from the runs that remain.",
            "claims": [runs[0], runs[2]],
        },
        format="json",
    )
    diff = reader.get(f"/api/v1/skills/{SLUG}/versions/1/diff/2").json()
    assert text not in str(diff)
    assert "withheld" in str(diff)
