"""The reconciliation benchmark at smoke size: both paths run, settle alike and are reported."""

from __future__ import annotations

import pytest

from bench import reconcile as bench

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def test_the_reconciliation_benchmark_runs_both_paths_and_reports_the_goals():
    # measure() itself fails if any receipt ends in the wrong state or the
    # platform saw a write, in either path.
    result = bench.measure(bench.Size(receipts=24, samples=1))
    assert {len(m.seconds) for m in (result.per_receipt, *result.batches)} == {1}
    assert [m.reads_in_flight for m in result.batches] == list(bench.IN_FLIGHT)
    # Concurrent reads beat one read at a time even at this size and under load.
    assert all(result.speedup(m) > 1 for m in result.batches)
    section = bench.report(result)
    assert section.startswith(bench.BEGIN) and section.endswith(bench.END + "\n")
    assert "| batch ≥ 10x the per-receipt path |" in section
    assert "| batch ≥ 80% of the bound |" in section


def test_its_section_replaces_itself_and_keeps_the_others(tmp_path, monkeypatch):
    results = tmp_path / "RESULTS.md"
    results.write_text("# Benchmark results\n\n## Erasure\n\nrows\n")
    monkeypatch.setattr(bench, "RESULTS", results)
    bench.write_section(f"{bench.BEGIN}\nfirst\n{bench.END}\n")
    bench.write_section(f"{bench.BEGIN}\nsecond\n{bench.END}\n")
    text = results.read_text()
    assert (
        text == f"# Benchmark results\n\n## Erasure\n\nrows\n\n{bench.BEGIN}\nsecond\n{bench.END}\n"
    )
