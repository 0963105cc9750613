"""Every persona walks the console under its Content-Security-Policy: nothing is refused.

The policy allows no inline script or style, so a handler or style attribute
left in a template, or htmx injecting its own <style>, would show up here as a
refusal in the browser's console or as a securitypolicyviolation event.
"""

import pytest

from memory.claims.models import Claim
from reviews.models import ReviewItem
from skills.models import SkillVersion
from tests.e2e.conftest import screenshot, settle, violations, watch

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def visit(page, path: str) -> None:
    page.goto(path)
    settle(page)


def quiet(page) -> list[str]:
    """Console errors and warnings, and policy refusals: a clean walk has none."""
    noisy = [line for line in page.console_lines if line.startswith(("console error", "page"))]
    noisy += [line for line in page.console_lines if line.startswith("console warning")]
    return noisy + violations(page, [])


@pytest.mark.parametrize("width", [1400, 390])
def test_an_editor_walks_the_queues_and_decides_with_the_keyboard(sign_in, width):
    page = sign_in("editor", width=width)
    item = ReviewItem.objects.filter(
        queue="candidates", reason_codes__contains=["unverified_authority"]
    ).get()
    visit(page, "/review/candidates/")
    # ? opens the shortcuts dialog through console.js (it used to be an onclick).
    page.keyboard.press("?")
    page.wait_for_selector("dialog#shortcuts[open]")
    screenshot(page, f"csp-shortcuts-{width}")
    page.click("dialog#shortcuts button")
    # j selects the first row, Enter opens it through htmx, a approves it.
    page.keyboard.press("j")
    page.click(f"[data-item='{item.pk}'] .row-link")
    page.wait_for_selector("#claim-status")
    settle(page)
    page.keyboard.press("a")
    page.wait_for_selector("text=Approved “")
    screenshot(page, f"csp-decided-{width}")
    assert Claim.objects.get(pk=item.target_id).status == "active"
    for queue in ("conflicts", "manual_review", "stale", "deletions"):
        visit(page, f"/review/{queue}/")
    visit(page, "/dashboard/")
    page.click("text=Refresh")
    settle(page)
    screenshot(page, f"csp-dashboard-{width}")
    visit(page, "/me/")
    assert quiet(page) == []


@pytest.mark.parametrize("width", [1400, 390])
def test_an_admin_walks_the_skills_pages(sign_in, width):
    version = SkillVersion.objects.order_by("-number").first()
    slug = version.skill.slug
    page = sign_in("admin", width=width)
    visit(page, "/skills/")
    screenshot(page, f"csp-skills-{width}")
    visit(page, f"/skills/{slug}/")
    screenshot(page, f"csp-skill-{width}")
    visit(page, f"/skills/{slug}/v{version.number}/")
    page.click("text=Refresh matrix")
    settle(page)
    page.locator("section[aria-labelledby=files-heading] a", has_text="view").first.click()
    page.wait_for_selector(".file-view")
    screenshot(page, f"csp-version-{width}")
    visit(page, f"/skills/{slug}/diff/?a=1&b={version.number}")
    screenshot(page, f"csp-diff-{width}")
    visit(page, f"/skills/{slug}/history/")
    assert quiet(page) == []


def test_an_auditor_and_an_end_user_read_their_pages(sign_in):
    auditor = sign_in("auditor")
    for path in ("/review/candidates/", "/review/conflicts/", "/skills/", "/dashboard/"):
        visit(auditor, path)
    assert quiet(auditor) == []

    alice = sign_in("alice")
    visit(alice, "/me/")
    claim = Claim.objects.get(predicate="home_city", subject__ref="alice")
    visit(alice, f"/me/memories/{claim.pk}/")
    screenshot(alice, "csp-my-memory")
    assert quiet(alice) == []


def test_sign_in_the_admin_and_the_api_docs_run_under_the_policy(browser, live_server, demo):
    context = browser.new_context(base_url=live_server.url, viewport={"width": 1400, "height": 900})
    page = context.new_page()
    page.console_lines = watch(page)
    visit(page, "/accounts/login/")
    screenshot(page, "csp-login")
    problems = quiet(page)
    # Django's admin has no favicon (a 404 in the console); its pages break no policy.
    visit(page, "/admin/login/")
    assert page.locator("#login-form").count() == 1
    problems += violations(page, page.console_lines)
    page.console_lines.clear()
    visit(page, "/api/docs/")
    # Swagger UI started from its split-out script and rendered the schema.
    page.wait_for_selector(".swagger-ui .info .title")
    assert "memdesk agent API" in page.inner_text(".swagger-ui .info .title")
    screenshot(page, "csp-api-docs")
    problems += quiet(page)
    # Redoc may inject its styles (that page's policy allows inline style). Its
    # footer asks a CDN for a logo; the policy refuses that and nothing else.
    page.console_lines.clear()
    visit(page, "/api/redoc/")
    page.wait_for_selector("h1:has-text('memdesk agent API')")
    # The first screen: the whole reference is one page tens of thousands of pixels tall
    # (a 9 MB picture that took seconds to encode and shows nothing more to check).
    screenshot(page, "csp-api-redoc", full_page=False)
    problems += [line for line in quiet(page) if "https://cdn.redoc.ly/" not in line]
    context.close()
    assert problems == []
