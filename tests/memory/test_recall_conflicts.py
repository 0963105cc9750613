"""Conflicts are visible at recall: an item whose identity has an open conflict says so."""

from __future__ import annotations

import pytest

from memory.claims.models import Claim
from reviews.models import ReviewItem
from tests.memory.helpers import recall, submit


@pytest.mark.django_db
def test_a_recalled_claim_with_an_open_conflict_carries_it(agent, editor, session_api):
    standing = submit(agent, authority="tool_verified", value="Beijing", text="Alice is in Beijing")
    contender = submit(agent, authority="agent_inferred", basis="inference")
    assert contender["decision"] == "conflict"
    calm = submit(agent, predicate="drink", value="tea", text="Alice drinks tea")

    items = {item["id"]: item for item in recall(agent, query="Alice")["items"]}
    assert set(items) == {standing["id"], calm["id"]}  # the conflicted side is not legal
    item_id = contender["review_item"]["id"]
    assert items[standing["id"]]["conflict"] == {
        "id": str(item_id),
        "other": contender["id"],
        "other_side_summary": "Alice lives in Shanghai",
    }
    assert items[calm["id"]]["conflict"] is None
    assert ReviewItem.objects.get(pk=item_id).target_id == contender["id"]

    # An editor settles it for the standing side: the flag goes with the conflict.
    decided = session_api(editor).post(
        f"/api/v1/reviews/{item_id}/decide",
        {"verdict": "reject", "reason_code": "unsupported"},
        format="json",
    )
    assert decided.status_code == 200, decided.json()
    assert Claim.objects.get(pk=standing["id"]).conflicts_with == []
    items = {item["id"]: item for item in recall(agent, query="Alice")["items"]}
    assert items[standing["id"]]["conflict"] is None
