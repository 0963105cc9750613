"""An admin issues an agent token, hands the secret over once, and revokes it, in a real browser."""

import httpx
import pytest

from accounts.models import AgentToken, AuditEvent
from tests.e2e.conftest import screenshot

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_admin_issues_and_revokes_a_token(sign_in, live_server):
    page = sign_in("admin")
    page.click("nav >> text=Agent tokens")
    page.wait_for_url("**/tokens/")
    page.fill("#id_name", "browser-bot")
    page.check("input[name=capabilities][value='claims:write']")
    page.check("input[name=capabilities][value='recall']")
    page.fill("#id_subjects", "user:alice")
    page.check("input[name=max_authority][value='tool_verified']")
    page.click("button:has-text('Issue token')")
    secret = page.locator("#token-secret").inner_text().strip()
    assert secret.startswith("mdk_")
    screenshot(page, "tokens-issued")
    headers = {"Authorization": f"Bearer {secret}"}
    assert httpx.get(f"{live_server.url}/api/v1/claims", headers=headers).status_code == 200

    page.click("text=Back to agent tokens")
    row = page.locator("tr[data-token='browser-bot']")
    assert "tool_verified" in row.inner_text() and "user:alice" in row.inner_text()
    assert secret not in page.content()
    # Revoking asks in a dialog of its own: a compact action in the row, the reason there.
    assert row.locator("input[name=reason]").is_hidden()
    row.locator("button.revoke-open").click()
    dialog = row.locator("dialog")
    dialog.wait_for(state="visible")
    screenshot(page, "tokens-revoke-dialog", full_page=False)
    dialog.locator("button:has-text('Cancel')").click()
    dialog.wait_for(state="hidden")
    assert AgentToken.objects.get(name="browser-bot").revoked_at is None
    row.locator("button.revoke-open").click()
    dialog.locator("input[name=reason]").fill("rotating after the demo")
    dialog.locator("button.danger:has-text('Revoke')").click()
    page.wait_for_selector("text=Revoked browser-bot")
    assert "revoked" in page.locator("tr[data-token='browser-bot']").inner_text()
    screenshot(page, "tokens-revoked")
    assert httpx.get(f"{live_server.url}/api/v1/claims", headers=headers).status_code == 401
    token = AgentToken.objects.get(name="browser-bot")
    audit = AuditEvent.objects.get(verb="agent_token.revoked", target_id=str(token.pk))
    assert audit.reason == "rotating after the demo" and audit.actor_label == "admin"
