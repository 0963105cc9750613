"""The console's refusals and dead ends are pages of the console: styled, with the
navigation, accessible; the API keeps answering problems. And the review console's
copy: one read-only notice for an auditor, queue-specific filter examples."""

import pytest

from tests.e2e.conftest import settle
from tests.e2e.test_every_page import WIDTHS, look

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.mark.parametrize("width", WIDTHS)
def test_403_and_404_are_console_pages_with_the_navigation(sign_in, width):
    page = sign_in("editor", width=width)
    refused = page.goto("/tokens/")
    assert refused is not None and refused.status == 403
    problems = look(page, f"error-403-editor-{width}", width)
    assert page.inner_text("h1") == "You cannot open this page"
    assert (
        page.locator("nav.sidebar")
        .get_by_role("link", name="Review", exact=True, include_hidden=True)
        .count()
        == 1
    )
    missing = page.goto("/no-such-page/")
    assert missing is not None and missing.status == 404
    problems += look(page, f"error-404-editor-{width}", width)
    assert page.inner_text("h1") == "Not found"
    assert page.locator("main a.button", has_text="Go to your start page").count() == 1
    # The API answers the same dead end as a problem document, never this page.
    api = page.request.get("/api/v1/no-such-thing")
    assert api.status == 404 and api.headers["content-type"] == "application/problem+json"
    assert not problems, problems


@pytest.mark.parametrize("width", WIDTHS)
def test_an_auditor_reads_one_read_only_notice(sign_in, width):
    page = sign_in("auditor", width=width)
    page.goto("/review/candidates/")
    settle(page)
    assert page.locator(".notice:visible").count() == 1
    assert "Read-only" in page.inner_text("#auditor-notice")
    assert page.get_attribute("input[name=reason]", "placeholder") == "e.g. unverified_authority"
    page.goto("/review/stale/")
    assert page.get_attribute("input[name=reason]", "placeholder") == "e.g. stale_in_demand"
