"""A database trigger generated from a state machine's transition table.

Each state machine keeps its table beside its model; the trigger built here
refuses any UPDATE of the state column the table does not list, raw SQL included. Because
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


# A table whose moves name the roles allowed to make them: source -> {target: roles}.
RoleTable = Mapping[str, Mapping[str, Iterable[str]]]


def moves_of_any_role_but(table: RoleTable, role: str) -> dict[str, set[str]]:
    """The moves some role other than `role` may make: the trigger's plain table."""
    return {
        source: {target for target, roles in moves.items() if set(roles) - {role}}
        for source, moves in table.items()
    }


def moves_only_of(table: RoleTable, role: str) -> dict[str, set[str]]:
    """The moves `role` alone may make: the trigger's `role_only` moves."""
    return {
        source: {target for target, roles in moves.items() if set(roles) == {role}}
        for source, moves in table.items()
    }


def status_transition_trigger(
    *,
    name: str,
    label: str,
    table: Mapping[str, Iterable[str]],
    role_only: tuple[str, Mapping[str, Iterable[str]]] | None = None,
    column: str = "status",
) -> pgtrigger.Trigger:
    """Refuse `OLD.<column> -> NEW.<column>` unless `table[OLD.<column>]` lists it.

    `role_only = (role, moves)` adds moves that pass only while the transaction's
    `memdesk.transition_role` setting names that role: a service that may make them
    sets it around its update, and raw SQL without it is refused like any illegal move.
    Same-state updates pass, so rows can change everything but their state.
    The refusal is a `check_violation` (an `IntegrityError` to Django).
    """
    if not column.isidentifier():
        raise ValueError(f"not a column name: {column!r}")
    move = f"(OLD.{column} || '>' || NEW.{column})"
    listed = _pairs(table)
    gated = ""
    if role_only is not None:
        role, moves = role_only
        gated = (
            f" OR (coalesce(current_setting('{ROLE_SETTING}', true), '') = '{role}'"
            f" AND {move} = ANY (ARRAY[{_pairs(moves)}]))"
        )
    return pgtrigger.Trigger(
        name=name,
        when=pgtrigger.Before,
        operation=pgtrigger.Update,
        condition=pgtrigger.Condition(f"OLD.{column} IS DISTINCT FROM NEW.{column}"),
        func=f"""
            IF NOT ({move} = ANY (ARRAY[{listed}]){gated}) THEN
                RAISE EXCEPTION 'illegal {label} transition: % -> %', OLD.{column}, NEW.{column}
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
