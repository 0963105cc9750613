"""The console tour (docs/console.md): each picture taken again from the demo on every run. They
land in test-artifacts/tour/; with `UPDATE_TOUR=1` they replace the docs' own in docs/tour/
(so an ordinary test run leaves the work tree clean). Small viewport shots (not full pages)
keep the PNGs light."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from reviews.models import ReviewItem
from tests.e2e.conftest import settle

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

ROOT = Path(__file__).resolve().parents[2]
TOUR = ROOT / "docs" / "tour" if os.environ.get("UPDATE_TOUR") else ROOT / "test-artifacts" / "tour"


def _item(queue: str) -> int:
    item = ReviewItem.objects.filter(queue=queue, status="open").order_by("id").first()
    assert item is not None, f"the demo leaves work in {queue}"
    return item.pk


def test_the_tour_pictures(sign_in):
    TOUR.mkdir(parents=True, exist_ok=True)
    shots = [
        ("editor", 1100, f"/review/conflicts/?item={_item('conflicts')}", "review-conflict"),
        ("editor", 1100, f"/review/manual_review/?item={_item('manual_review')}", "review-manual"),
        ("alice", 390, "/me/", "my-memories-phone"),
        ("editor", 1100, "/dashboard/", "dashboard"),
        ("auditor", 1100, f"/review/candidates/?item={_item('candidates')}", "auditor"),
    ]
    for persona, width, path, name in shots:
        page = sign_in(persona, width=width)
        page.set_viewport_size({"width": width, "height": 760 if width > 400 else 820})
        page.goto(path)
        settle(page)
        if name == "my-memories-phone":
            page.locator("#memories").scroll_into_view_if_needed()
        target = TOUR / f"{name}.png"
        page.screenshot(path=str(target))
        # Kept small: the README's pictures together stay well under a megabyte.
        assert target.stat().st_size < 200_000, (name, target.stat().st_size)
    tour = (ROOT / "docs" / "console.md").read_text()
    assert all(f"](tour/{name}.png)" in tour for *_, name in shots)
    assert all((ROOT / "docs" / "tour" / f"{name}.png").exists() for *_, name in shots)
