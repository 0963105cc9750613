"""The admins' platforms page in a real browser: reached from the navigation, the demo
platform listed, a registration refused for an internal address and then accepted."""

from __future__ import annotations

from memory.receipts.models.platforms import Platform


def test_admin_registers_a_platform_from_the_console(sign_in):
    page = sign_in("admin")
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Platforms").click()
    page.wait_for_url("**/platforms/")
    platforms = page.locator("#platform-list")
    assert platforms.get_by_role("row", name="demo-blog").is_visible()
    # The demo's policy for articles.create is listed with its platform.
    policy = page.locator("#operation-policies").get_by_role("row", name="articles.create")
    assert "demo-blog" in policy.inner_text()

    page.fill("#id_name", "metadata")
    page.fill("#id_base_url", "http://169.254.169.254/latest/")
    page.click("button[type=submit]:has-text('Register')")
    assert page.get_by_role("alert").inner_text().count("169.254.169.254") >= 1
    assert not Platform.objects.filter(name="metadata").exists()

    page.fill("#id_name", "wiki")
    page.fill("#id_base_url", "http://10.20.30.40/api")
    page.check("#id_allow_private")
    page.click("button[type=submit]:has-text('Register')")
    page.wait_for_url("**/platforms/")
    row = page.locator("#platform-list").get_by_role("row", name="wiki")
    assert "http://10.20.30.40/api/" in row.inner_text()
    assert "allowed" in row.inner_text()
    assert Platform.objects.get(name="wiki").allow_private is True


def test_editors_have_no_platforms_link(sign_in):
    page = sign_in("editor")
    navigation = page.get_by_role("navigation", name="Main")
    assert navigation.get_by_role("link", name="Platforms").count() == 0
