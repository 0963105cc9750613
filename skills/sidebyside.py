"""Side-by-side file diffs for the console (the API returns unified diffs instead)."""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from itertools import zip_longest


@dataclass(frozen=True)
class DiffRow:
    """One line pair. ``kind`` is equal, replace, delete or insert; ``gap`` marks skipped lines."""

    kind: str
    old_number: int | None = None
    old_text: str | None = None
    new_number: int | None = None
    new_text: str | None = None

    @property
    def gap(self) -> bool:
        return self.kind == "gap"


def side_by_side(old: str | None, new: str | None, *, context: int = 3) -> list[DiffRow]:
    """Changed lines paired left and right, with ``context`` unchanged lines around each hunk."""
    old_lines = (old or "").splitlines()
    new_lines = (new or "").splitlines()
    matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    rows: list[DiffRow] = []
    for index, group in enumerate(matcher.get_grouped_opcodes(context)):
        if index:
            rows.append(DiffRow(kind="gap"))
        for tag, i1, i2, j1, j2 in group:
            pairs = zip_longest(range(i1, i2), range(j1, j2))
            for i, j in pairs:
                rows.append(
                    DiffRow(
                        kind=tag,
                        old_number=None if i is None else i + 1,
                        old_text=None if i is None else old_lines[i],
                        new_number=None if j is None else j + 1,
                        new_text=None if j is None else new_lines[j],
                    )
                )
    return rows
