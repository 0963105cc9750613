"""State machines, declared once: the moves, the database guard and the move itself.

Every state machine in memdesk (claims, receipts, deletions, exports, skill versions,
review items) is a `StateMachine` beside its model: which state may become which, and
which role may make each move. From that one declaration come

- the database trigger (`StateMachine.trigger`) that refuses any UPDATE of the state
  column the table does not list, raw SQL included; because it is generated from the
  table, a change to the table shows up in `makemigrations` as a new trigger, so the
  two cannot drift apart;
- the check a service makes before it moves (`StateMachine.check`, which raises
  `InvalidTransition` naming the moves the caller may make);
- `move` and `move_many`: lock the row(s), check every move, write the new state, and
  tell the apps that keep records of moves (`on_moves`): accounts appends the audit
  rows and reviews closes the open review items the move made pointless, in the same
  transaction. `move_many` is the set-wise form for bulk paths (erasure, consolidation,
  a batch superseding what it replaces): one locking read, one UPDATE, one insert of
  audit rows, one closing of review items, whatever the number of rows.

`common` is the lowest layer, so it calls the record keepers through `on_moves`
rather than importing them (docs/architecture.md, "Layers").
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from typing import Any, TypeVar

import pgtrigger
from django.db import connection, models, transaction
from django.utils import timezone

from common.problems import InvalidTransition, not_found

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


Row = TypeVar("Row", bound=models.Model)

# The role of a move anyone with the service's own permission may make.
ANY_ROLE = "any"


@dataclass(frozen=True)
class StateMachine:
    """A state column's moves, with the roles that may make each one.

    `moves` is `source -> {target: roles}`. A machine whose moves carry no roles is
    built with `StateMachine.plain`. `gated_role` names the role whose moves the
    database passes only inside `role_gated` (an undo, an editor's settlement), so raw
    SQL cannot make them. `verb` formats the audit verb of a move (`{to}` is the new
    state) and `target_type` names the row in the audit trail; no `verb` when the
    machine keeps its own append-only record of moves (receipts' transitions, review
    decisions). `review_target` and `closes_reviews_at` say whose open review items a
    move to one of those states closes.
    """

    label: str
    moves: Mapping[str, Mapping[str, frozenset[str]]]
    column: str = "status"
    gated_role: str | None = None
    verb: str | None = None
    target_type: str = ""
    # The order answers list states in (the TextChoices' order); alphabetical if empty.
    states: tuple[str, ...] = ()
    review_target: str | None = None
    closes_reviews_at: frozenset[str] = field(default_factory=frozenset)

    @classmethod
    def plain(
        cls, *, label: str, table: Mapping[str, Iterable[str]], **options: Any
    ) -> StateMachine:
        """A machine whose every move any role may make."""
        moves = {
            source: {target: frozenset({ANY_ROLE}) for target in targets}
            for source, targets in table.items()
        }
        return cls(label=label, moves=moves, **options)

    def allows(self, source: str, target: str, role: str | None = ANY_ROLE) -> bool:
        """Whether `role` may move a `source` row to `target`; with no role, whether anyone may."""
        roles = self.moves.get(source, {}).get(target, frozenset())
        if role is None:
            return bool(roles)
        return role in roles or ANY_ROLE in roles

    def _ordered(self, states: Iterable[str]) -> list[str]:
        chosen = set(states)
        if self.states:
            return [state for state in self.states if state in chosen]
        return sorted(chosen)

    def targets(self, source: str, role: str | None = ANY_ROLE) -> list[str]:
        """The states `role` may move a `source` row to."""
        return self._ordered(t for t in self.moves.get(source, {}) if self.allows(source, t, role))

    def sources(self, target: str, role: str | None = ANY_ROLE) -> list[str]:
        """The states `role` may move a row from to reach `target`: the WHERE clause of a
        set-wise move written as one SQL statement (`status = ANY(%s)`)."""
        return self._ordered(s for s in self.moves if self.allows(s, target, role))

    def check(self, source: str, target: str, role: str = ANY_ROLE, *, noun: str = "") -> None:
        """Raise `InvalidTransition` (409, with the allowed targets) unless the move is legal."""
        if not self.allows(source, target, role):
            raise InvalidTransition(
                f"{noun or f'A {source} {self.label}'} cannot become {target}.",
                allowed=self.targets(source, role),
            )

    def trigger(self, name: str) -> pgtrigger.Trigger:
        """The database's copy of the table: refuses every move the table does not list."""
        if self.gated_role is None:
            table = {s: set(targets) for s, targets in self.moves.items()}
            return status_transition_trigger(
                name=name, label=self.label, table=table, column=self.column
            )
        return status_transition_trigger(
            name=name,
            label=self.label,
            table=moves_of_any_role_but(self.moves, self.gated_role),
            role_only=(self.gated_role, moves_only_of(self.moves, self.gated_role)),
            column=self.column,
        )


@dataclass(frozen=True)
class Moves:
    """What `move` or `move_many` did, for the apps that keep its records."""

    machine: StateMachine
    tenant: Any
    actor: Any
    to: str
    by: str
    reason: str
    moved: Sequence[tuple[Any, str]]  # (primary key, the state it left)
    data: Mapping[str, Any]


MoveListener = Callable[[Moves], None]
_listeners: list[MoveListener] = []


def on_moves(listener: MoveListener) -> None:
    """Have `listener` called, inside the transaction, after every `move` and `move_many`."""
    if listener not in _listeners:
        _listeners.append(listener)


def _gate(machine: StateMachine, by: str) -> Any:
    return (
        role_gated(by)
        if machine.gated_role is not None and by == machine.gated_role
        else (nullcontext())
    )


def move(
    machine: StateMachine,
    rows: models.QuerySet[Row],
    *,
    pk: Any,
    to: str,
    by: str = ANY_ROLE,
    tenant: Any,
    actor: Any,
    reason: str = "",
    changes: Mapping[str, Any] | None = None,
    data: Mapping[str, Any] | None = None,
) -> Row:
    """Lock one row of `rows` (already narrowed to the tenant) and move it to `to` as `by`.

    A row that is not there is a 404; otherwise as `move_row`. Returns the row as it now is.
    """
    with transaction.atomic():
        row = rows.select_for_update(of=("self",)).filter(pk=pk).first()
        if row is None:
            raise not_found(machine.label)
        return move_row(
            machine,
            row,
            to=to,
            by=by,
            tenant=tenant,
            actor=actor,
            reason=reason,
            changes=changes,
            data=data,
        )


def move_row(
    machine: StateMachine,
    row: Row,
    *,
    to: str,
    by: str = ANY_ROLE,
    tenant: Any,
    actor: Any,
    reason: str = "",
    changes: Mapping[str, Any] | None = None,
    data: Mapping[str, Any] | None = None,
) -> Row:
    """Move a row the caller has locked (`select_for_update`) to `to` as `by`.

    Checks the move against the machine (an illegal one is a 409 naming the moves `by`
    may make), writes the state and `changes` in one UPDATE, and has the audit row
    written and the row's open review items closed in the same transaction.
    """
    source = getattr(row, machine.column)
    # Staying put is not a move (a lease renewed, a field corrected: the table and the
    # trigger let a row change everything but its state), unless the table lists the
    # stay as a move of its own (a conflict settled for the claim standing).
    moving = source != to or to in machine.moves.get(source, {})
    if moving:
        machine.check(source, to, by)
    written = {machine.column: to, **(changes or {})}
    if _has_field(row, "updated_at") and "updated_at" not in written:
        written["updated_at"] = timezone.now()
    for name, value in written.items():
        setattr(row, name, value)
    with transaction.atomic():
        with _gate(machine, by):
            row.save(update_fields=list(written))
        if moving:
            moves_recorded(machine, tenant, actor, to, by, reason, [(row.pk, source)], data)
    return row


def move_many(
    machine: StateMachine,
    rows: models.QuerySet[Any],
    *,
    to: str,
    by: str = ANY_ROLE,
    tenant: Any,
    actor: Any,
    reason: str = "",
    changes: Mapping[str, Any] | None = None,
    data: Mapping[str, Any] | None = None,
    skip_illegal: bool = False,
) -> list[Any]:
    """Move every row of `rows` to `to` as `by`, set-wise: the form bulk paths use.

    One locking read (in key order, so two bulk moves never deadlock), one UPDATE, one
    round of records. Rows already in `to` are left alone. An illegal move refuses the
    whole set, unless `skip_illegal`, which leaves those rows where they are (a sweep
    that meets rows another path already moved). Returns the keys of the rows moved.
    """
    with transaction.atomic():
        found = list(
            rows.select_for_update(of=("self",)).order_by("pk").values_list("pk", machine.column)
        )
        moving: list[tuple[Any, str]] = []
        for pk, source in found:
            if source == to:
                continue
            if not machine.allows(source, to, by):
                if skip_illegal:
                    continue
                machine.check(source, to, by)
            moving.append((pk, source))
        if not moving:
            return []
        written = {machine.column: to, **(changes or {})}
        if _has_field(rows.model, "updated_at") and "updated_at" not in written:
            written["updated_at"] = timezone.now()
        with _gate(machine, by):
            rows.model._default_manager.filter(pk__any=[pk for pk, _ in moving]).update(**written)
        moves_recorded(machine, tenant, actor, to, by, reason, moving, data)
    return [pk for pk, _ in moving]


def _has_field(model: Any, name: str) -> bool:
    return any(f.name == name for f in model._meta.concrete_fields)


def moves_recorded(
    machine: StateMachine,
    tenant: Any,
    actor: Any,
    to: str,
    by: str,
    reason: str,
    moved: Sequence[tuple[Any, str]],
    data: Mapping[str, Any] | None,
) -> None:
    done = Moves(
        machine=machine,
        tenant=tenant,
        actor=actor,
        to=to,
        by=by,
        reason=reason,
        moved=moved,
        data=data or {},
    )
    for listener in _listeners:
        listener(done)
