"""The reconciliation benchmark at smoke size: both paths run, settle alike and are reported."""

from __future__ import annotations

import pytest

from bench import reconcile as bench

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def test_the_reconciliation_benchmark_runs_both_paths_and_reports_the_goals():
    # measure() itself fails if any receipt ends in the wrong state or the
    # platform saw a write, in either path.
    # The fewest and the most reads in flight; `make bench` measures every setting.
    in_flight = (bench.IN_FLIGHT[0], bench.IN_FLIGHT[-1])
    result = bench.measure(bench.Size(receipts=24, samples=1, warm_up=False), in_flight)
    assert {len(m.seconds) for m in (result.per_receipt, *result.batches)} == {1}
    assert [m.reads_in_flight for m in result.batches] == list(in_flight)
    section = bench.report(result)
    assert section.startswith("## Reconciliation")
    assert "| batch ≥ 10x the per-receipt path |" in section
    assert "| batch ≥ 80% of the bound |" in section
