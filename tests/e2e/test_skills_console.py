"""An admin publishes a skill version and rolls it back, in a real browser."""

import pytest

from accounts.actors import Actor
from accounts.models import AgentToken, Membership
from skills import services
from skills.models import EvaluationCategory, SkillLabel, SkillVersion
from tests.e2e.conftest import screenshot
from tests.skills.conftest import run_environment, service_case

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_admin_publishes_and_rolls_back(sign_in):
    v2 = SkillVersion.objects.get(number=2)
    tenant = v2.skill.tenant
    # The demo agent acts for `admin`, not for v2's author: an independent evaluator.
    evaluator = Actor.for_token(AgentToken.objects.get(tenant=tenant, name="demo-agent"))
    for category in EvaluationCategory.values:
        services.evaluation_record(
            tenant=tenant,
            version=v2,
            actor=evaluator,
            category=category,
            passed=True,
            content_hash=v2.content_hash,
            environment=run_environment(v2),
            cases=[service_case(category)],
        )
    # admin2 wrote v2 (the demo's author) and it adds a capability: admin and admin3 approve.
    for username in ("admin", "admin3"):
        approver = Membership.objects.get(user__username=username)
        services.skill_version_approve(
            tenant=tenant,
            version=v2,
            actor=Actor.for_user(approver.user, approver.role),
            reason="reviewed the new network script",
        )
    page = sign_in("admin")
    slug = v2.skill.slug
    page.goto(f"/skills/{slug}/v2/")
    form = page.locator("form.action-form", has_text="Publish")
    form.locator("textarea").fill("matrix green, approved by admin")
    confirm = form.locator("input[type=checkbox]")
    if confirm.count():
        confirm.check()
    form.locator("button[type=submit]").click()
    page.wait_for_selector("text=published")
    screenshot(page, "skill-published")
    assert SkillLabel.objects.get(skill=v2.skill, name="production").version.number == 2

    page.goto(f"/skills/{slug}/")
    rollback = page.locator("#production form")
    assert rollback.locator("#rollback-submit").inner_text() == "Roll back"
    rollback.locator("select").select_option("1")
    rollback.locator("textarea, input[type=text]").first.fill("v2 breaks form filling")
    rollback.locator("input[type=checkbox]").check()
    rollback.locator("button[type=submit]").click()
    page.wait_for_selector("#production >> text=v1")
    screenshot(page, "skill-rolled-back")
    # What the form offers now is newer than production: moving there is no rollback.
    assert page.locator("#rollback-submit").inner_text() == "Move production"
    assert SkillLabel.objects.get(skill=v2.skill, name="production").version.number == 1
