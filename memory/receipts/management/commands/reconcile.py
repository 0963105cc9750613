"""`manage.py reconcile [--receipt ID]`: one reconciliation pass, synchronously, for operators."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from django.core.management.base import BaseCommand, CommandError, CommandParser

from accounts.actors import Actor
from memory.receipts.models.receipts import Receipt
from memory.receipts.services.receipt_sweeps import receipts_due_ids, receipts_expire_submit_leases
from memory.receipts.services.reconciliation import receipts_reconcile_batch


class Command(BaseCommand):
    help = (
        "Reconcile now, in this process: mark submitted receipts whose lease lapsed as "
        "outcome_unknown, then read the outside system once for every due receipt. With "
        "--receipt, read for that receipt even if its next retry is not due yet (a live "
        "worker lease is still respected)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--receipt", type=UUID, help="reconcile only this receipt")
        parser.add_argument(
            "--limit", type=int, default=1000, help="most receipts to read in this pass"
        )

    def handle(self, *args: Any, receipt: UUID | None, limit: int, **options: Any) -> None:
        worker = Actor.system("reconcile command")
        if receipt is not None:
            if not Receipt.objects.filter(pk=receipt).exists():
                raise CommandError(f"no receipt {receipt}")
            ids = [receipt]
        else:
            # The sweep's own Celery wake-up is not needed: this pass reads them now.
            expired = receipts_expire_submit_leases(enqueue=False)
            if expired:
                self.stdout.write(f"{len(expired)} submitted receipt(s) became outcome_unknown")
            ids = receipts_due_ids(limit=limit)
        report = receipts_reconcile_batch(receipt_ids=ids, worker=worker, force=receipt is not None)
        states = dict(Receipt.objects.filter(pk__in=ids).values_list("pk", "state"))
        for receipt_id in ids:
            self.stdout.write(f"{receipt_id}  {states.get(receipt_id, 'missing')}")
        summary = report.as_dict()
        self.stdout.write(
            f"claimed {summary['claimed']}, skipped {summary['skipped']} (not due, leased or "
            f"settled), fenced {summary['fenced']}; after the reads: "
            + (", ".join(f"{k} {v}" for k, v in sorted(summary["states"].items())) or "none")
        )
