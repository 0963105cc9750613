"""The ingest benchmark at its smoke size: every path stores the same rows and is reported."""

import pytest

from bench import ingest

pytestmark = pytest.mark.django_db


def test_it_times_the_batch_path_against_bulk_create_on_the_same_rows():
    result = ingest.run(ingest.SMOKE)

    samples = ingest.SMOKE.warmup + ingest.SMOKE.samples
    assert all(len(result.seconds[p]) == ingest.SMOKE.samples for p in ingest.PATHS)
    assert all(len(result.cpu[p]) == ingest.SMOKE.samples for p in ingest.PATHS)
    # Every path stored a full batch per round, warm-up included; memdesk its sources too.
    assert result.rows == {
        "memdesk": ingest.BATCH * samples,
        "bulk_create": ingest.BATCH * samples,
        "save_loop": ingest.BATCH * samples,
        # memdesk's captured statements, replayed with fresh ids: a full batch each time.
        "floor_sql": ingest.BATCH * samples,
        "langgraph_put": ingest.BATCH * samples,
        "langgraph_batch": ingest.BATCH * samples,
        "sources": ingest.BATCH * samples,
    }
    text = ingest.section(result)
    assert text.startswith(ingest.HEADING)
    assert f"| {result.ratio:.2f}x |" in text
    rates = f"({result.per_second('memdesk'):,.0f} vs {result.per_second('langgraph_put'):,.0f}"
    assert f"{rates} claims/s)" in text
    assert "≥ 0.5x bulk_create" in text
    goal = "| claims:batch ≥ LangGraph PostgresStore `put` (same run) |"
    assert f"{goal} {result.vs_langgraph:.2f}x" in text
    assert "2,329 claims/s is LangGraph PostgresStore's put rate" in text
    assert result.per_second("memdesk") > 0 and result.p("memdesk", 95) >= result.p("memdesk", 50)
    # One batch's statements do not depend on its size, and the floor is reported.
    assert 5 <= result.statements <= 15
    assert f"memdesk's own {result.statements} statements" in text and "the same store does" in text
    # The floors are reported with the sum they make against LangGraph's puts.
    floor = result.p("floor_sql", 50) + result.p("floor_screen", 50)
    assert f"together {floor:.1f} ms" in text
    assert 0 < result.p("floor_screen", 50) < result.p("memdesk", 50)
