"""On a phone the navigation folds under "Menu" so the page comes first; on a desktop
it stays open beside the page. Screenshots in test-artifacts/."""

import pytest

from tests.e2e.conftest import screenshot, settle

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_on_a_phone_the_menu_folds_and_the_content_comes_first(sign_in):
    page = sign_in("editor", width=390)
    page.goto("/review/candidates/")
    settle(page)
    screenshot(page, "mobile-menu-closed-390", full_page=False)
    menu = page.locator("details[data-menu]")
    assert menu.get_attribute("open") is None
    assert page.locator("nav.sidebar a", has_text="Dashboard").is_hidden()
    # The sidebar is one short row: the heading of the page is near the top.
    assert page.locator("nav.sidebar").bounding_box()["height"] < 80
    assert page.locator("main h1").bounding_box()["y"] < 160
    # The keyboard opens it: focus "Menu", Enter.
    page.focus("details[data-menu] > summary")
    page.keyboard.press("Enter")
    page.locator("nav.sidebar a", has_text="Dashboard").wait_for(state="visible")
    screenshot(page, "mobile-menu-open-390", full_page=False)
    page.click("nav.sidebar a:has-text('Dashboard')")
    page.wait_for_url("**/dashboard/")
    settle(page)
    assert page.locator("details[data-menu]").get_attribute("open") is None


def test_on_a_desktop_the_menu_is_always_open_without_a_toggle(sign_in):
    page = sign_in("editor", width=1280)
    page.goto("/review/candidates/")
    settle(page)
    assert page.locator("details[data-menu]").get_attribute("open") is not None
    assert page.locator("details[data-menu] > summary").is_hidden()
    assert page.locator("nav.sidebar a", has_text="Dashboard").is_visible()
    # Narrowing the window folds it; widening opens it again.
    page.set_viewport_size({"width": 390, "height": 900})
    page.wait_for_function("() => !document.querySelector('details[data-menu]').open")
    page.set_viewport_size({"width": 1280, "height": 900})
    page.wait_for_function("() => document.querySelector('details[data-menu]').open")
