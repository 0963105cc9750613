"""Browser tests: Playwright driving Debian's chromium against the live test server.

The demo data (`seed_demo`) is loaded for every test, so these tests log in as
the demo users exactly as a newcomer would after `make run`.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterator
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from playwright.sync_api import Error as PlaywrightError

from tests import snapshot

# Real Celery workers for the tests that watch background work finish.
from tests.memory.conftest import celery_workers  # noqa: F401
from tests.snapshot import TableSnapshot

# Playwright's sync API runs an event loop in the test thread; the ORM calls the
# tests make for setup and assertions are still plain synchronous code.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
DEMO_PASSWORD = "memdesk-demo"


# One browser per module, not per session: sync Playwright keeps an asyncio loop running in
# the test process while it is open, and a later test in the same process (the suite runs in
# pytest-xdist workers, in no fixed order) that calls asyncio.run() would find it.
@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if CHROMIUM is None:
        pytest.skip("Debian's chromium is not installed (.ci/run installs it)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM,
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
            ],
        )
        yield browser
        browser.close()


# The demo's rows as seeding first left them in this test process, put back by later tests.
_demo_rows: list[TableSnapshot] = []


@pytest.fixture
def demo(transactional_db: None) -> None:
    """The demo data, in tables every browser test leaves flushed: seeded through the
    services once per test process, then copied back (0.07 s a test instead of 1.5 s)."""
    if not snapshot.usable():
        call_command("seed_demo", stdout=StringIO())
    elif _demo_rows:
        _demo_rows[0].restore()
    else:
        call_command("seed_demo", stdout=StringIO())
        _demo_rows.append(TableSnapshot.take())


# Runs in every document before its own scripts (Playwright injects it past the
# page's policy): remembers each Content-Security-Policy violation the page sees.
RECORD_VIOLATIONS = """
window.__violations = [];
document.addEventListener("securitypolicyviolation", (event) => {
  const where = event.sourceFile ? ` at ${event.sourceFile}:${event.lineNumber}` : "";
  const what = event.target instanceof Element ? ` on ${event.target.outerHTML.slice(0, 120)}` : "";
  window.__violations.push(
    `${event.violatedDirective} blocked ${event.blockedURI || "inline"}${where}${what}`
  );
});
"""


def watch(page: Any) -> list[str]:
    """Collect the page's console messages; Chromium reports every refusal there too."""
    seen: list[str] = []
    page.on("console", lambda message: seen.append(f"console {message.type}: {message.text}"))
    page.on("pageerror", lambda error: seen.append(f"page error: {error}"))
    page.context.add_init_script(RECORD_VIOLATIONS)
    return seen


def violations(page: Any, seen: list[str]) -> list[str]:
    """What the policy refused: from the console, and as events in the document shown now."""
    try:
        current = [] if page.is_closed() else page.evaluate("window.__violations || []")
    except PlaywrightError:  # mid-navigation: the console lines still hold every refusal
        current = []
    return [
        line
        for line in [*seen, *current]
        if "Content Security Policy" in line or " blocked " in line
    ]


# Settled: the document and its subresources loaded, and no htmx request, swap or settle
# under way (htmx marks each with a class while it lasts, e.g. a queue's claim fired on
# `load`). Waiting for this rather than for "networkidle" skips the half second of network
# silence Playwright waits out after every page.
HTMX_QUIET = """() => document.readyState === "complete"
  && !document.querySelector(".htmx-request, .htmx-swapping, .htmx-settling, .htmx-added")"""


def settle(page: Any) -> None:
    """Wait until the page shown now has loaded and htmx has nothing in flight."""
    page.wait_for_load_state("load")
    page.wait_for_function(HTMX_QUIET)


@pytest.fixture
def sign_in(browser: Any, live_server: Any, demo: None) -> Iterator[Callable[[str], Any]]:
    """A signed-in page per persona; no flow may trip the Content-Security-Policy."""
    contexts = []
    watched: list[tuple[Any, list[str]]] = []

    def open_as(username: str, *, width: int = 1400) -> Any:
        context = browser.new_context(
            base_url=live_server.url, viewport={"width": width, "height": 900}
        )
        contexts.append(context)
        page = context.new_page()
        page.console_lines = watch(page)
        watched.append((page, page.console_lines))
        page.set_default_timeout(15_000)
        page.goto("/accounts/login/")
        page.fill("#id_username", username)
        page.fill("#id_password", DEMO_PASSWORD)
        page.click("button[type=submit]")
        page.wait_for_url(lambda url: "/accounts/login/" not in url)
        settle(page)
        return page

    yield open_as
    refused = [line for page, seen in watched for line in violations(page, seen)]
    for context in contexts:
        context.close()
    assert not refused, f"the Content-Security-Policy refused something: {refused}"


def screenshot(page: Any, name: str, *, full_page: bool = True) -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=full_page)
    return path
