"""The queue-page benchmark at its smoke size: it runs, compares equal pages, reports goals."""

import pytest

from bench import queues

pytestmark = pytest.mark.django_db


def test_it_measures_the_queue_page_against_the_admin_on_the_same_rows():
    result = queues.run(items=queues.SMOKE_ITEMS, samples=3, warmup=1)

    assert result.items == 20_000 and result.deep_row == 16_000
    pages = [result.memdesk_page1, result.admin_page1, result.memdesk_deep, result.admin_deep]
    assert all(len(p.seconds) == 3 and p.p50 > 0 for p in pages)
    # The keyset page costs the same statements as page 1.
    assert result.memdesk_deep.queries == result.memdesk_page1.queries
    text = queues.section(result)
    assert text.startswith(queues.HEADING)
    assert "| memdesk queue page at row 16,000 (keyset) |" in text
    assert "| admin changelist page 321 (OFFSET 16,000) |" in text
    for ratio in (result.page1_ratio, result.deep_ratio):
        assert f"| {ratio:.1f}x |" in text
    assert f"| {result.deep_vs_page1:.2f}x |" in text


def test_it_replaces_only_its_own_section_of_the_results(tmp_path):
    path = tmp_path / "RESULTS.md"
    path.write_text("# Benchmark results\n\nerasure table\n")
    queues.write_section(f"{queues.HEADING}\n\nfirst run\n", path)
    path.write_text(path.read_text() + "\n## Another section\n\nkept\n")
    queues.write_section(f"{queues.HEADING}\n\nsecond run\n", path)

    text = path.read_text()
    assert "erasure table" in text and "kept" in text and "second run" in text
    assert "first run" not in text and text.count(queues.HEADING) == 1
