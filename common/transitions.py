"""A database trigger generated from a state machine's transition table.

Each state machine keeps its table beside its model; the trigger built here
refuses any status UPDATE the table does not list, raw SQL included. Because
it is generated from the table, a change to the table shows up in
`makemigrations` as a new trigger, so the two cannot drift apart.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import pgtrigger


def status_transition_trigger(
    *, name: str, label: str, table: Mapping[str, Iterable[str]]
) -> pgtrigger.Trigger:
    """Refuse `OLD.status -> NEW.status` unless `table[OLD.status]` lists it.

    Same-status updates pass, so rows can change everything but their state.
    """
    pairs = sorted(
        f"{source}>{target}"
        for source, targets in table.items()
        for target in targets
        if source != target
    )
    listed = ", ".join(f"'{pair}'" for pair in pairs)
    return pgtrigger.Trigger(
        name=name,
        when=pgtrigger.Before,
        operation=pgtrigger.Update,
        condition=pgtrigger.Condition("OLD.status IS DISTINCT FROM NEW.status"),
        func=f"""
            IF NOT ((OLD.status || '>' || NEW.status) = ANY (ARRAY[{listed}])) THEN
                RAISE EXCEPTION 'illegal {label} transition: % -> %', OLD.status, NEW.status
                    USING ERRCODE = 'check_violation';
            END IF;
            RETURN NEW;
        """,
    )
