"""The typed merge rules, one value type at a time (pure functions)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from memory.claims.merges import COUNTER, SCALAR, Side, merge_values, merged_text, value_type

EARLY = datetime(2026, 1, 1, tzinfo=UTC)
LATE = EARLY + timedelta(days=1)


def side(claim_id: str, value, authority: str = "agent_inferred", at: datetime = EARLY) -> Side:
    return Side(claim_id=claim_id, value=value, authority=authority, recorded_at=at)


@pytest.mark.parametrize(
    ("value", "kind"),
    [
        (["tea"], "set"),
        ({"count": 3}, "counter"),
        ({"count": 3, "from": []}, "counter"),
        ({"count": True}, "config"),
        ({"count": 3, "unit": "cups"}, "config"),
        ({"theme": "dark"}, "config"),
        ("Shanghai", "scalar"),
        (42, "scalar"),
        (None, "scalar"),
    ],
)
def test_the_value_type_is_read_from_the_shape(value, kind):
    assert value_type(value) == kind


def test_sets_union_keeping_the_standing_order_and_each_item_once():
    merged = merge_values(
        side("a", ["tea", "coffee", {"k": 1}], "user_explicit"),
        side("b", ["coffee", "mate", {"k": 1}], "agent_inferred"),
    )
    assert merged.value == ["tea", "coffee", {"k": 1}, "mate"]
    assert merged.authority == "agent_inferred"  # as strong as its weaker contribution
    assert merged_text("drinks", merged, "") == 'drinks: tea, coffee, {"k": 1}, mate'


def test_counters_add_and_keep_where_each_count_came_from():
    first = merge_values(side("a", {"count": 3}), side("b", {"count": 2}))
    assert first.value_type == COUNTER
    assert first.value == {
        "count": 5,
        "from": [{"claim": "a", "count": 3}, {"claim": "b", "count": 2}],
    }
    again = merge_values(side("m", first.value), side("c", {"count": 4}))
    assert again.value["count"] == 9
    assert [part["claim"] for part in again.value["from"]] == ["a", "b", "c"]


def test_configs_merge_by_key_and_a_disagreement_goes_to_authority_then_time():
    standing = side("a", {"theme": "dark", "lang": "en"}, "user_explicit", EARLY)
    incoming = side("b", {"theme": "light", "font": "serif"}, "agent_inferred", LATE)
    merged = merge_values(standing, incoming)
    assert merged.value == {"theme": "dark", "lang": "en", "font": "serif"}
    assert merged.decided == {"theme": "a"}
    # Equal authority: the newer claim wins the key.
    level = merge_values(
        side("a", {"theme": "dark"}, at=EARLY), side("b", {"theme": "light"}, at=LATE)
    )
    assert level.value == {"theme": "light"} and level.decided == {"theme": "b"}


def test_scalars_go_to_the_stronger_authority_then_the_newer():
    stronger = merge_values(
        side("a", "Shanghai", "tool_verified", EARLY), side("b", "Beijing", "reported", LATE)
    )
    assert (stronger.value_type, stronger.value, stronger.authority) == (
        SCALAR,
        "Shanghai",
        "tool_verified",
    )
    newer = merge_values(side("a", "Shanghai", at=EARLY), side("b", "Beijing", at=LATE))
    assert newer.value == "Beijing" and newer.decided == {"value": "b"}


def test_different_types_do_not_merge():
    with pytest.raises(ValueError, match="does not merge"):
        merge_values(side("a", ["tea"]), side("b", "tea"))
