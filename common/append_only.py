"""The one update an append-only record admits, as a database trigger.

Audit rows, ledger events, receipt transitions and review decisions are never
rewritten. The exception is a deletion taking erased words back out of them:
such a rewrite stamps its column (`scrubbed_at`, `redacted_at`) once and may
change only the columns it clears. The trigger built here refuses every other
UPDATE, raw SQL included. It compares every column except the cleared ones,
read from the model's fields when the trigger is compiled, so a column added
later is protected without anyone listing it (and `makemigrations` shows the
trigger changing with it).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pgtrigger
from django.db import models


@dataclass(frozen=True)
class Rewrite:
    """Setting `stamp` (once, from NULL) while changing `clears` and nothing else."""

    stamp: str
    clears: tuple[str, ...]
    # Stamps that must still be unset: an event is scrubbed only before it is redacted.
    only_before: tuple[str, ...] = ()


def _quoted(column: str) -> str:
    return '"' + column.replace('"', '""') + '"'


def _columns(model: type[models.Model], field_names: Sequence[str]) -> list[str]:
    columns = []
    for name in field_names:
        field = model._meta.get_field(name)
        if not isinstance(field, models.Field) or field.column is None:
            raise ValueError(f"{model.__name__}.{name} is not a column")
        columns.append(field.column)
    return columns


def _is_rewrite(model: type[models.Model], rewrite: Rewrite) -> str:
    stamp = _columns(model, [rewrite.stamp])[0]
    free = {stamp, *_columns(model, rewrite.clears)}
    kept = [field.column for field in model._meta.concrete_fields if field.column not in free]
    checks = [
        f"OLD.{_quoted(stamp)} IS NULL",
        f"NEW.{_quoted(stamp)} IS NOT NULL",
        *(f"OLD.{_quoted(column)} IS NULL" for column in _columns(model, rewrite.only_before)),
        *(f"OLD.{_quoted(column)} IS NOT DISTINCT FROM NEW.{_quoted(column)}" for column in kept),
    ]
    return "(" + " AND ".join(checks) + ")"


class _NotARewrite(pgtrigger.Condition):
    def __init__(self, rewrites: Sequence[Rewrite]) -> None:
        self.rewrites = tuple(rewrites)
        self.sql = "generated from the model's fields"

    def resolve(self, model: type[models.Model]) -> str:
        return "NOT (" + " OR ".join(_is_rewrite(model, rewrite) for rewrite in self.rewrites) + ")"


def only_rewrites(*, name: str, rewrites: Sequence[Rewrite]) -> pgtrigger.Protect:
    """Refuse any UPDATE of the model's rows that is not one of `rewrites`.

    The refusal is pgtrigger's own ("Cannot update rows from ... table"), the
    same as a table that admits no update at all.
    """
    if not rewrites:
        raise ValueError("an append-only table with no rewrite needs pgtrigger.Protect alone")
    return pgtrigger.Protect(
        name=name, operation=pgtrigger.Update, condition=_NotARewrite(rewrites)
    )
