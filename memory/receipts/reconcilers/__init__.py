"""Reconciler adapters by name, as a receipt's `reconciler.adapter` names them."""

from __future__ import annotations

from typing import Any

from memory.receipts.reconcilers.base import (
    LookupResult,
    LookupTarget,
    PlatformAccess,
    Reconciler,
    ReconcilerConfigError,
)
from memory.receipts.reconcilers.http import HttpReconciler
from memory.receipts.reconcilers.manual import ManualReconciler

_REGISTRY: dict[str, Reconciler] = {
    adapter.name: adapter for adapter in (HttpReconciler(), ManualReconciler())
}

# Without a reconciler an unknown outcome can only be settled by a person.
DEFAULT_RECONCILER: dict[str, Any] = {"adapter": ManualReconciler.name}


def reconciler_names() -> list[str]:
    return sorted(_REGISTRY)


def reconciler_for(name: str) -> Reconciler:
    """The adapter called `name`; stored configurations were validated, so it exists."""
    return _REGISTRY[name]


def reconciler_config_validate(config: dict[str, Any] | None) -> dict[str, Any]:
    """Normalise a receipt's `reconciler` block, or raise `ReconcilerConfigError`."""
    config = dict(config or DEFAULT_RECONCILER)
    name = config.get("adapter")
    adapter = _REGISTRY.get(name) if isinstance(name, str) else None
    if adapter is None:
        raise ReconcilerConfigError(
            {"adapter": [f"Choose one of: {', '.join(reconciler_names())}."]}
        )
    return adapter.validate(config)


__all__ = [
    "DEFAULT_RECONCILER",
    "LookupResult",
    "LookupTarget",
    "PlatformAccess",
    "Reconciler",
    "ReconcilerConfigError",
    "reconciler_config_validate",
    "reconciler_for",
    "reconciler_names",
]
