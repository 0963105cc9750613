"""Every console page, for every persona, at a desktop and a phone width: a screenshot
kept in test-artifacts/, an axe-core scan with every rule and no violation at all, and
no horizontal scrolling at 390 px.

axe-core is the `axe.min.js` shipped inside the `axe-playwright-python` package (a dev
dependency), read from disk and evaluated in the page; nothing is fetched.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pytest

from memory.claims.models import Claim, ClaimSource, RecallTrace
from memory.privacy.models import DeletionRequest
from reviews.models import Queue, ReviewItem
from skills.models import SkillVersion
from tests.e2e.conftest import ARTIFACTS, settle

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

WIDTHS = (1280, 390)
SERIOUS = ("serious", "critical")


def _axe_source() -> str:
    spec = importlib.util.find_spec("axe_playwright_python")
    assert spec is not None and spec.origin, "pip install -e '.[dev]' installs axe-core"
    return (Path(spec.origin).parent / "axe.min.js").read_text()


AXE = _axe_source()


def axe_violations(page: Any, *, every_impact: bool = True) -> list[str]:
    """axe-core's violations on the page as shown now, every rule it runs by default (WCAG
    2.x A/AA and its best practices: landmarks, headings, scrollable regions…); with
    `every_impact=False`, only the serious and critical ones."""
    if not page.evaluate("typeof window.axe !== 'undefined'"):
        page.evaluate(AXE)
    result = page.evaluate(
        """async () => {
          const r = await axe.run(document, { resultTypes: ["violations"] });
          return r.violations.map((v) => ({
            id: v.id, impact: v.impact, help: v.help,
            nodes: v.nodes.slice(0, 6).map((n) => n.target.join(" ")),
          }));
        }"""
    )
    return [
        f"{v['id']} ({v['impact']}): {v['help']} at {v['nodes']}"
        for v in result
        if every_impact or v["impact"] in SERIOUS
    ]


def horizontal_overflow(page: Any) -> int:
    """How many pixels the page is wider than the viewport (0: no horizontal scroll)."""
    return int(
        page.evaluate(
            "Math.max(document.documentElement.scrollWidth, document.body.scrollWidth)"
            " - document.documentElement.clientWidth"
        )
    )


def _pages_for(persona: str) -> list[tuple[str, str]]:
    """(name, path) of every page the persona reaches in the demo."""
    pages: list[tuple[str, str]] = []
    if persona in ("editor", "admin", "auditor"):
        for queue in Queue:
            item = (
                ReviewItem.objects.filter(queue=queue, status__in=["open", "claimed"])
                .order_by("id")
                .first()
            )
            suffix = f"?item={item.pk}" if item else ""
            pages.append((f"review-{queue.value}", f"/review/{queue.value}/{suffix}"))
        pages += [("dashboard", "/dashboard/"), ("skills", "/skills/")]
        version = SkillVersion.objects.order_by("-number").first()
        if version is not None:
            slug = version.skill.slug
            pages += [
                ("skill", f"/skills/{slug}/"),
                ("skill-version", f"/skills/{slug}/v{version.number}/"),
                ("skill-history", f"/skills/{slug}/history/"),
            ]
            file = version.files.order_by("path").first()
            if file is not None:
                pages.append(("skill-file", f"/skills/{slug}/v{version.number}/files/{file.path}"))
        pages += _desk_pages()
    if persona in ("editor", "admin"):
        pages += [("skill-draft-new", "/skills/drafts/new/"), ("recovery", "/recovery/")]
    if persona == "admin":
        pages += [
            ("platforms", "/platforms/"),
            ("tokens", "/tokens/"),
            ("retention", "/settings/retention/"),
        ]
    if persona == "editor":
        deletion = DeletionRequest.objects.order_by("created_at").first()
        if deletion is not None:
            pages.append(("deletion-report-editor", f"/me/deletions/{deletion.pk}/"))
    if persona == "alice":
        pages.append(("my-memories", "/me/"))
        claim = Claim.objects.filter(subject__ref="alice", status="active").first()
        if claim is not None:
            pages.append(("my-memory", f"/me/memories/{claim.pk}/"))
        deletion = DeletionRequest.objects.filter(subject__ref="alice").first()
        if deletion is not None:
            pages.append(("my-deletion", f"/me/deletions/{deletion.pk}/"))
        source = ClaimSource.objects.filter(
            claim__subject__ref="alice", claim__status="active", event__isnull=False
        ).first()
        if source is not None:
            pages.append(("my-source", f"/me/events/{source.event_id}/"))
    return pages


def _refusals_for(persona: str) -> list[tuple[str, str, int]]:
    """(name, path, status) of the console's dead ends the persona meets."""
    refusals = [("not-found", "/no-such-page/", 404)]
    if persona != "admin":
        refusals.append(("forbidden", "/tokens/", 403))
    return refusals


def _desk_pages() -> list[tuple[str, str]]:
    """The memory desk: the ledger, a recall's trace, its counterfactual, a claim's uses."""
    pages = [("ledger", "/memory/ledger/")]
    trace = (
        RecallTrace.objects.filter(redacted_at__isnull=True, kind="recall")
        .exclude(chosen=[])
        .order_by("created_at")
        .first()
    )
    if trace is not None:
        claim = trace.chosen[0]
        pages += [
            ("recall-trace", f"/memory/traces/{trace.pk}/"),
            (
                "counterfactual",
                f"/memory/traces/{trace.pk}/counterfactual?claim={claim}&change=hide",
            ),
            ("claim-uses", f"/memory/claims/{claim}/"),
        ]
    return pages


def look(page: Any, name: str, width: int) -> list[str]:
    """Screenshot, axe scan and overflow check of the page shown now; what is wrong."""
    settle(page)
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"page-{name}-{width}.png"), full_page=True)
    problems = [f"{name} @{width}: {v}" for v in axe_violations(page)]
    overflow = horizontal_overflow(page)
    if overflow > 0:
        problems.append(f"{name} @{width}: scrolls sideways by {overflow}px")
    return problems


@pytest.mark.parametrize("width", WIDTHS)
def test_the_sign_in_page(browser, live_server, demo, width):
    context = browser.new_context(
        base_url=live_server.url, viewport={"width": width, "height": 900}
    )
    page = context.new_page()
    page.goto("/accounts/login/")
    problems = look(page, "login", width)
    # The card is centred in the page, never squeezed into a sidebar column.
    card = page.locator("section.card").bounding_box()
    heading = page.locator("h1").bounding_box()
    context.close()
    assert not problems, problems
    assert card["width"] >= min(360, width - 48)
    assert heading["height"] < 60  # "Sign in to memdesk" on one line, not a word per line


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("persona", ["editor", "admin", "auditor", "alice"])
def test_every_page_is_accessible_and_fits(sign_in, persona, width):
    page = sign_in(persona, width=width)
    problems: list[str] = []
    for name, path in _pages_for(persona):
        response = page.goto(path)
        assert response is not None and response.ok, (path, response and response.status)
        problems += look(page, f"{persona}-{name}", width)
    for name, path, status in _refusals_for(persona):
        response = page.goto(path)
        assert response is not None and response.status == status, (path, status)
        problems += look(page, f"{persona}-{name}", width)
    assert not problems, "\n".join(problems)


def test_no_page_asks_for_a_missing_favicon(sign_in):
    page = sign_in("editor")
    missing: list[str] = []
    page.on("response", lambda r: missing.append(r.url) if r.status == 404 else None)
    page.goto("/review/candidates/")
    page.goto("/dashboard/")
    page.wait_for_load_state("networkidle")
    assert not missing, missing
    icon = page.evaluate("document.querySelector('link[rel=icon]').href")
    assert page.request.get(icon).ok


@pytest.mark.parametrize("width", WIDTHS)
def test_dashboard_charts_are_readable(sign_in, width):
    page = sign_in("editor", width=width)
    page.goto("/dashboard/")
    settle(page)
    charts = page.evaluate(
        """() => Array.from(document.querySelectorAll("svg.chart")).map((svg) => {
          const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
          const sizes = Array.from(svg.querySelectorAll("text")).map(
            (t) => parseFloat(getComputedStyle(t).fontSize) * scale);
          const frame = svg.closest(".chart-frame");
          const figure = svg.closest("figure");
          const ticks = Array.from(svg.querySelectorAll("text.tick")).map((t) => t.textContent);
          return {
            smallest: Math.min(...sizes),
            ticks,
            counts: !/%|ms|\bs$/.test(ticks.join(" ")),
            caption: figure.querySelector("figcaption")?.textContent || "",
            table: figure.querySelectorAll(".chart-data table tbody tr").length,
            focusable: frame?.tabIndex === 0,
          };
        })"""
    )
    assert len(charts) >= 3
    for chart in charts:
        assert chart["caption"], chart
        assert chart["smallest"] >= 12, chart  # labels readable at their displayed size
        # A count's axis has whole-number ticks (no "0.5" of a claim).
        if chart["counts"]:
            values = [t for t in chart["ticks"] if t.replace(".", "", 1).isdigit()]
            assert all("." not in t for t in values), chart
        assert chart["table"] >= 1, chart  # the numbers behind the chart
        assert chart["focusable"], chart
    labels = " ".join(
        page.eval_on_selector_all(".charts svg text", "(ts) => ts.map((t) => t.textContent)")
    )
    assert "_" not in labels and "…" not in labels, labels  # words, never cut enum names
    assert horizontal_overflow(page) == 0


@pytest.mark.parametrize("width", WIDTHS)
def test_the_api_docs_are_accessible(sign_in, width):
    page = sign_in("editor", width=width)
    response = page.goto("/api/docs/")
    assert response is not None and response.ok
    page.wait_for_selector(".opblock", timeout=30_000)
    problems = look(page, "api-docs", width)
    assert not problems, "\n".join(problems)
