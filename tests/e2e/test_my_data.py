"""An end user downloads everything memdesk holds about them, then deletes everything and
reads the report, in a real browser at desktop and phone widths."""

import json
from pathlib import Path

import pytest

from memory.models import Claim, ClaimStatus, DataExport, ExportStatus
from tests.e2e.conftest import screenshot

pytestmark = [pytest.mark.browser, pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def download(page, click: str) -> dict:
    with page.expect_download() as started:
        page.click(click)
    path = started.value.path()
    assert started.value.suggested_filename.startswith("memdesk-export-")
    return json.loads(Path(path).read_text())


@pytest.mark.parametrize("width", [1400, 390])
def test_end_user_downloads_their_data_then_deletes_everything(
    sign_in, celery_workers, settings, width
):
    settings.LIFECYCLE_QUEUE = celery_workers.queue
    celery_workers.env["LIFECYCLE_QUEUE"] = celery_workers.queue
    celery_workers.start().wait_ready()
    mine = {
        str(pk)
        for pk in Claim.objects.filter(subject__kind="user", subject__ref="alice")
        .exclude(status=ClaimStatus.ERASED)
        .values_list("pk", flat=True)
    }
    page = sign_in("alice", width=width)
    page.goto("/me/")
    screenshot(page, f"my-data-{width}")

    # Small: the file comes at once.
    document = download(page, "#download-my-data")
    assert document["user"] == "alice" and document["subjects"] == ["user:alice"]
    assert {claim["id"] for claim in document["claims"]} == mine
    assert "Alice lives in Shanghai" in {claim["text"] for claim in document["claims"]}
    assert {event["subject"] for event in document["events"]} == {"user:alice"}
    assert document["counts"]["claims"] == len(mine)

    # Large: a worker makes it while the page shows the progress.
    settings.EXPORT_INLINE_MAX_ROWS = 1
    page.click("#download-my-data")
    page.wait_for_url("**/me/exports/**")
    page.wait_for_selector("#export-download", timeout=60_000)
    screenshot(page, f"my-data-ready-{width}")
    export = DataExport.objects.get()
    assert export.status == ExportStatus.READY and export.rows_done == export.rows_total
    assert "rows" in page.inner_text("#progress")
    worker_document = download(page, "#export-download")
    assert {claim["id"] for claim in worker_document["claims"]} == mine
    export_page = page.url

    # Delete everything, then read the report.
    page.goto("/me/")
    page.fill("#confirm-1", "user:alice")
    page.once("dialog", lambda dialog: dialog.accept())
    page.click("form.danger-zone button.danger")
    page.wait_for_url("**/me/deletions/**")
    page.wait_for_selector("#deletion-status:text('completed')", timeout=60_000)
    page.wait_for_selector("#probes")
    screenshot(page, f"my-data-deleted-{width}")
    deletion_id = page.url.rstrip("/").rsplit("/", 1)[-1]
    report = page.inner_text("main")
    assert "Deletion of everything about user:alice" in report
    # Whether every probe is clean on the demo data is the deletion's own tests' business;
    # here the person reads the report: what was touched and what was checked.
    assert "What was touched" in report and "The memory itself" in page.inner_text("#probes")
    assert (
        not Claim.objects.filter(subject__ref="alice", subject__kind="user")
        .exclude(status=ClaimStatus.ERASED)
        .exists()
    )

    # The stored export went with the memories it held.
    page.goto(export_page)
    assert "the file was deleted with them" in page.inner_text("#progress")
    assert DataExport.objects.get().content == ""
    screenshot(page, f"my-data-export-erased-{width}")
    page.goto("/me/")
    assert "Alice lives in Shanghai" not in page.inner_text("#memories")
    settings.EXPORT_INLINE_MAX_ROWS = 2000
    after = download(page, "#download-my-data")
    assert after["claims"] == []
    everything = next(d for d in after["deletions"] if d["id"] == deletion_id)
    assert everything["scope"] == "subject" and everything["status"] == "completed"
    assert {probe["name"] for probe in everything["report"]["probes"]} >= {
        "claims_table",
        "ledger_events",
    }
