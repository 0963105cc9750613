"""A database trigger generated from a state machine's transition table.

Each state machine keeps its table beside its model; the trigger built here
refuses any status UPDATE the table does not list, raw SQL included. Because
it is generated from the table, a change to the table shows up in
`makemigrations` as a new trigger, so the two cannot drift apart.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager

import pgtrigger
from django.db import connection

# The transaction-local setting a service sets while it makes a move only one role
# may make (`SET LOCAL`-style, through `set_config(..., true)`); see `role_gated`.
ROLE_SETTING = "memdesk.transition_role"


def _pairs(table: Mapping[str, Iterable[str]]) -> str:
    pairs = sorted(
        f"{source}>{target}"
        for source, targets in table.items()
        for target in targets
        if source != target
    )
    return ", ".join(f"'{pair}'" for pair in pairs) or "NULL"


def status_transition_trigger(
    *,
    name: str,
    label: str,
    table: Mapping[str, Iterable[str]],
    role_only: tuple[str, Mapping[str, Iterable[str]]] | None = None,
) -> pgtrigger.Trigger:
    """Refuse `OLD.status -> NEW.status` unless `table[OLD.status]` lists it.

    `role_only = (role, moves)` adds moves that pass only while the transaction's
    `memdesk.transition_role` setting names that role: a service that may make them
    sets it around its update, and raw SQL without it is refused like any illegal move.
    Same-status updates pass, so rows can change everything but their state.
    """
    listed = _pairs(table)
    gated = ""
    if role_only is not None:
        role, moves = role_only
        gated = (
            f" OR (coalesce(current_setting('{ROLE_SETTING}', true), '') = '{role}'"
            f" AND (OLD.status || '>' || NEW.status) = ANY (ARRAY[{_pairs(moves)}]))"
        )
    return pgtrigger.Trigger(
        name=name,
        when=pgtrigger.Before,
        operation=pgtrigger.Update,
        condition=pgtrigger.Condition("OLD.status IS DISTINCT FROM NEW.status"),
        func=f"""
            IF NOT ((OLD.status || '>' || NEW.status) = ANY (ARRAY[{listed}]){gated}) THEN
                RAISE EXCEPTION 'illegal {label} transition: % -> %', OLD.status, NEW.status
                    USING ERRCODE = 'check_violation';
            END IF;
            RETURN NEW;
        """,
    )


@contextmanager
def role_gated(role: str) -> Iterator[None]:
    """Within a transaction, let the trigger accept the moves only `role` may make."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT set_config(%s, %s, true)", [ROLE_SETTING, role])
    try:
        yield
    finally:
        with connection.cursor() as cursor:
            cursor.execute("SELECT set_config(%s, '', true)", [ROLE_SETTING])
