"""Issue 17's acceptance: experience → draft → independent evaluation → four eyes → catalog.

An admin turns three experience claims into a draft in the console, an
independent evaluator posts a passing matrix case by case, a second admin
approves and publishes, and an agent finds the skill in the catalog and
loads it level by level.
"""

from __future__ import annotations

import pytest

from accounts.actors import Actor
from accounts.models import Membership, Role
from skills.models import EvaluationCategory, SkillLabel, SkillLoad, SkillVersion
from skills.services.instances import token_grant_add
from tests.e2e.conftest import ARTIFACTS, screenshot
from tests.memory.helpers import candidate, post_event
from tests.skills.conftest import api_case, instantiate_ready

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SLUG = "deploy-crm"
STEPS = ["run the migrations", "switch traffic to green", "watch errors for 10 minutes"]


def record_runs(tool_runner) -> list[str]:
    ids = []
    for n, extra in enumerate([[], ["restart the cache"], []]):
        evidence = post_event(
            tool_runner, subject="project:crm", kind="tool_result", text=f"deploy {n}: healthy"
        )
        body = candidate(
            evidence["id"],
            subject="project:crm",
            kind="experience",
            predicate=f"deploy_release_{n}",
            text=f"Blue-green deploy of CRM release 4.{n} succeeded",
            authority="tool_verified",
            basis="verified",
            value={"outcome": "success", "steps": [STEPS[0], *extra, *STEPS[1:]]},
        )
        claim = tool_runner.post("/api/v1/claims", body, format="json").json()
        assert claim["status"] == "active", claim
        ids.append(claim["id"])
    return ids


def test_experience_becomes_a_published_skill_an_agent_loads_level_by_level(sign_in, make_agent):
    tenant = Membership.objects.get(user__username="admin").tenant
    tool_runner = make_agent(tenant, name="e2e-tool-runner", max_authority="tool_verified")
    evaluator = make_agent(
        tenant,
        name="e2e-evaluator",
        capabilities=["evaluations:write"],
        owner=Membership.objects.get(user__username="editor").user,
    )
    agent = make_agent(tenant, name="e2e-agent", capabilities=["skills:read"])
    runs = record_runs(tool_runner)

    # 1. An admin picks the three runs and drafts the skill.
    admin = sign_in("admin", width=1280)
    admin.goto("/skills/")
    admin.click("text=Draft from experience")
    admin.fill("#id_slug", SLUG)
    admin.fill("#id_name", "Deploy CRM")
    admin.fill("#id_description", "Deploy the CRM with a blue-green switch and watch errors.")
    for claim_id in runs:
        admin.check(f"input[name=claims][value='{claim_id}']")
    screenshot(admin, "skill-draft-from-experience-1280")
    admin.click("button:has-text('Draft SKILL.md')")
    admin.wait_for_url(f"**/skills/{SLUG}/v1/")
    assert admin.locator("#draft-sources li").count() == 3
    version = SkillVersion.objects.get(skill__slug=SLUG)
    assert (version.status, version.author_label) == ("draft", "admin")
    assert "1. run the migrations" in version.body and "- restart the cache" in version.body
    submit = admin.locator("form.action-form", has_text="Submit")
    submit.locator("input[type=checkbox]").check()
    submit.locator("button[type=submit]").click()
    admin.wait_for_selector("#version-state h2 .chip.in_review")

    # 2. An independent evaluator posts the six categories, case by case.
    for category in EvaluationCategory.values:
        response = evaluator.post(
            f"/api/v1/skills/{SLUG}/versions/1/evaluations",
            {
                "category": category,
                "passed": True,
                "content_hash": version.content_hash,
                "environment": {"model": "e2e-model", "tools": {}},
                "cases": [api_case(category, tokens=700), api_case(category, tokens=900)],
            },
            format="json",
        )
        assert response.status_code == 201, response.json()

    # 3. A second admin approves and publishes.
    second = sign_in("admin2", width=1280)
    second.goto(f"/skills/{SLUG}/v1/")
    assert second.locator("#evaluation-matrix >> text=all six categories passed").count() == 1
    for action, reason, status in (
        ("Approve", "steps match the three runs", "approved"),
        ("Publish", "matrix green", "published"),
    ):
        form = second.locator("form.action-form", has_text=action)
        form.locator("textarea").fill(reason)
        form.locator("input[type=checkbox]").check()
        form.locator("button[type=submit]").click()
        second.wait_for_selector(f"#version-state h2 .chip.{status}")
    second.wait_for_selector("#version-state h2 .chip.production")
    label = SkillLabel.objects.get(skill__slug=SLUG, name="production")
    assert label.version_id == version.pk
    version.refresh_from_db()
    assert (version.status, version.approved_by_label) == ("published", "admin2")

    # 4. An agent finds it in the catalog and loads it level by level.
    catalog = agent.get("/api/v1/skills/catalog", {"q": "deploy the crm", "tools": ""}).json()
    (entry,) = [e for e in catalog["results"] if e["skill"] == SLUG]
    assert (entry["version"], entry["content_hash"]) == (1, version.content_hash)
    assert "body" not in entry
    # Loading needs a ready instance: an admin grants the agent's token what the version
    # needs, and the agent checks it can run it.
    admin = Actor.for_user(Membership.objects.get(user__username="admin2").user, Role.ADMIN)
    for kind, names in (
        ("tool", version.manifest.get("tools") or []),
        ("capability", version.manifest.get("capabilities") or []),
    ):
        for name in names:
            token_grant_add(tenant=tenant, actor=admin, token=agent.token, kind=kind, name=name)
    # The draft made the runs' customer an input: the agent names its own.
    inputs = {name: f"{name}-7" for name in version.manifest.get("inputs") or {}}
    assert inputs, "a draft from experiences is parameterised"
    instantiate_ready(agent, SLUG, 1, inputs=inputs)
    body = agent.get(entry["body_url"]).json()
    assert body["body"] == version.body
    (skill_md,) = body["files"]
    assert agent.get(skill_md["url"]).content.decode().startswith("---\nname: deploy-crm\n")
    loads = {
        load.level: load.count
        for load in SkillLoad.objects.filter(version=version, loader_label="e2e-agent")
    }
    assert loads == {1: 1, 2: 1, 3: 1}

    second.goto("/skills/")
    screenshot(second, "skills-index-1280")
    second.goto(f"/skills/{SLUG}/v1/")
    assert second.locator("#loads").inner_text() == "1 catalog · 1 body · 1 file"
    screenshot(second, "skill-from-experience-published-1280")
    narrow = sign_in("admin2", width=390)
    narrow.goto(f"/skills/{SLUG}/v1/")
    screenshot(narrow, "skill-from-experience-published-390")
    narrow.locator("#evaluation-matrix").screenshot(path=str(ARTIFACTS / "skill-matrix-390.png"))
    narrow.locator("#cost-curve").screenshot(path=str(ARTIFACTS / "skill-cost-curve-390.png"))
    narrow.goto("/skills/drafts/new/")
    narrow.screenshot(path=str(ARTIFACTS / "skill-draft-from-experience-390.png"))
