"""The batch's plain reader reads an item exactly as `CandidateIn` does, or leaves it to it."""

from __future__ import annotations

import copy
import itertools
import uuid
from typing import Any

from memory.claims.api.claims.batch_reader import ItemReader
from memory.claims.api.claims.serializers import CandidateIn

EVENT = str(uuid.uuid4())
PLAIN: dict[str, Any] = {
    "subject": "user:alice",
    "kind": "fact",
    "predicate": "works_at",
    "value": {"summary": "Acme", "tags": ["crm"]},
    "text": "Alice works at Acme.",
    "authority": "agent_inferred",
    "basis": "inference",
    "sources": [{"uri": "https://tickets.example.com/1"}],
}
# Values of every shape DRF treats specially: absent, null, blank, whitespace, wrong types,
# too long, null characters, surrogates, dates with and without a zone, bad uuids.
ODD_VALUES: list[Any] = [
    None,
    "",
    "  ",
    " padded ",
    "x" * 300,
    "x" * 10_001,
    "a\x00b",
    "a\ud800b",
    5,
    1.5,
    True,
    [],
    ["a"],
    {},
    {"k": "v"},
    {"k": ""},
    {"k": 1},
    "fact",
    "preference",
    "user_explicit",
    "verified",
    "sensitive",
    "not a choice",
    "2026-01-02T03:04:05Z",
    "2026-01-02T03:04:05",
    "2026-01-02",
    "yesterday",
    EVENT,
    EVENT.upper(),
    "not-a-uuid",
]
SOURCE_VALUES: list[Any] = [
    [],
    {},
    "https://a.example",
    [None],
    ["https://a.example"],
    [{}],
    [{"event": EVENT}],
    [{"event": "nope"}],
    [{"uri": " https://a.example ", "observed_at": "2026-01-02T03:04:05+02:00"}],
    [{"uri": "https://a.example", "observed_at": "soon"}],
    [{"uri": "https://a.example", "digest": "x" * 81}],
    [{"uri": "https://a.example", "extra": 1}, {"event": EVENT, "digest": "sha256:ab"}],
]


def _items() -> list[Any]:
    fields = list(CandidateIn().fields)
    items: list[Any] = [PLAIN, {**PLAIN, "extra": "ignored"}, [], "item", None]
    for name, value in itertools.product(fields, ODD_VALUES):
        items.append({**PLAIN, name: value})
    for name in fields:
        items.append({k: v for k, v in PLAIN.items() if k != name})
    items += [{**PLAIN, "sources": value} for value in SOURCE_VALUES]
    items.append({**PLAIN, "valid_from": "2026-01-02T00:00:00Z", "valid_to": "2026-01-01T00:00Z"})
    items.append({**PLAIN, "value": None, "text": ""})
    return items


def test_the_reader_reads_an_item_as_the_serializer_does_or_not_at_all():
    serializer = CandidateIn()
    reader = ItemReader(serializer)
    read_plainly = 0
    for item in _items():
        kept = copy.deepcopy(item)
        read = reader.read(item)
        assert item == kept, "the reader changed the item"
        if read is None:
            continue
        read_plainly += 1
        assert read == CandidateIn().run_validation(copy.deepcopy(item)), item
    assert read_plainly > 100


def test_a_plain_item_is_read_by_the_reader():
    assert ItemReader(CandidateIn()).read(PLAIN) == CandidateIn().run_validation(PLAIN)


def test_an_invalid_item_is_left_to_the_serializer():
    reader = ItemReader(CandidateIn())
    assert reader.read({**PLAIN, "kind": "not a choice"}) is None
    assert reader.read({**PLAIN, "subject": ""}) is None
    assert reader.read({**PLAIN, "sources": [{"event": "nope"}]}) is None
