"""Demo receipts and checkpoints for `make run`."""

from accounts.models import Tenant


def seed_receipts(*, tenant: Tenant) -> None:
    """Receipts in several states, including one waiting in manual_review."""
