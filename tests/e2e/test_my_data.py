"""One end user's journey through their data, in a real browser at desktop and phone widths:
grant consent for a sensitive class, withdraw it and read what that deleted, download
everything memdesk holds about them (at once, then through a worker with progress),
delete everything and read the plain-language report with the engineer's details
behind a disclosure."""

import json
from pathlib import Path

import pytest
from django.utils import timezone

from accounts.actors import Actor
from accounts.models import Tenant
from memory.claims.models import Claim, ClaimStatus, Event
from memory.claims.services.claim_inputs import CandidateInput, SourceInput
from memory.claims.services.claims import claim_submit
from memory.claims.services.events import event_record
from memory.privacy.models import DataExport, DeletionRequest, DeletionStatus, ExportStatus
from tests.e2e.conftest import screenshot

pytestmark = [pytest.mark.browser, pytest.mark.worker, pytest.mark.django_db(transaction=True)]

AGENT = Actor.system("e2e agent")


def download(page, click: str) -> dict:
    with page.expect_download() as started:
        page.click(click)
    path = started.value.path()
    assert started.value.suggested_filename.startswith("memdesk-export-")
    return json.loads(Path(path).read_text())


def alices_claims() -> set[str]:
    return {
        str(pk)
        for pk in Claim.objects.filter(subject__kind="user", subject__ref="alice")
        .exclude(status=ClaimStatus.ERASED)
        .values_list("pk", flat=True)
    }


def agent_remembers_her_asthma(tenant: Tenant) -> tuple[Event, Claim]:
    """What an agent stores once Alice allowed health memories: her statement in the
    ledger, and a memory resting on another source."""
    event = event_record(
        tenant=tenant,
        actor=AGENT,
        subject_key="user:alice",
        kind="user_statement",
        text="My asthma diagnosis came back from the clinic",
        observed_at=timezone.now(),
    )
    claim = claim_submit(
        tenant=tenant,
        actor=AGENT,
        candidate=CandidateInput(
            subject="user:alice",
            kind="fact",
            predicate="condition",
            authority="agent_inferred",
            basis="inference",
            value="asthma",
            text="Alice has asthma",
            sources=[SourceInput(uri="chat://e2e/1")],
        ),
    ).claim
    return event, claim


@pytest.mark.parametrize("width", [1280, 390])
def test_end_user_consents_withdraws_downloads_and_deletes_everything(
    sign_in, celery_workers, settings, width
):
    settings.LIFECYCLE_QUEUE = celery_workers.queue
    celery_workers.env["LIFECYCLE_QUEUE"] = celery_workers.queue
    celery_workers.start().wait_ready()
    demo = Tenant.objects.get(slug="demo")
    page = sign_in("alice", width=width)
    page.goto("/me/")
    screenshot(page, f"my-data-{width}")

    # 1. Consent: without it a health memory is refused, with it it is kept.
    refused = claim_submit(
        tenant=demo,
        actor=AGENT,
        candidate=CandidateInput(
            subject="user:alice",
            kind="fact",
            predicate="condition",
            authority="agent_inferred",
            basis="inference",
            value="asthma",
            text="Alice has asthma",
            sources=[SourceInput(uri="chat://e2e/0")],
        ),
    )
    assert refused.claim.gate_reasons == ["consent_required"]
    row = "#consent-useralice-health"
    assert "not granted" in page.inner_text(row)
    page.click(f"{row} button")
    page.wait_for_selector(f"{row} .chip:text-is('granted')")
    event, claim = agent_remembers_her_asthma(demo)
    assert (event.sensitivity, claim.sensitivity) == ("health", "health")
    page.goto("/me/")
    assert "Alice has asthma" in page.inner_text("#memories")

    # 2. Withdrawing it deletes what it covered: the memory and her statement.
    page.click(f"{row} button")
    page.click("#confirm-dialog #confirm-accept:text-is('Withdraw consent')")
    page.wait_for_selector("#consents [role=status]:has-text('being deleted')")
    assert "not granted" in page.inner_text(row)
    screenshot(page, f"my-data-consent-withdrawn-{width}")
    reports = page.locator("#consents [role=status] a")
    assert reports.count() == 2
    for link in [reports.nth(i).get_attribute("href") for i in range(reports.count())]:
        page.goto(link)
        page.wait_for_selector("#deletion-status[data-status=completed]", timeout=60_000)
        assert "You withdrew your consent" in page.inner_text("#cause")
        assert "is gone from memdesk" in page.inner_text("#plain-status")
    screenshot(page, f"my-data-consent-report-{width}")
    withdrawn = DeletionRequest.objects.filter(cause="consent_withdrawn")
    assert {d.scope for d in withdrawn} == {"claim", "records"}
    assert all(d.status == DeletionStatus.COMPLETED and d.report["clean"] for d in withdrawn)
    claim.refresh_from_db()
    event.refresh_from_db()
    assert claim.status == ClaimStatus.ERASED and claim.text == ""
    assert event.redacted_at is not None and event.text == ""

    # 3. Her data: exactly her memories, none of anyone else's, with the deletions.
    page.goto("/me/")
    assert "Alice has asthma" not in page.inner_text("#memories")
    mine = alices_claims()
    assert mine and Claim.objects.exclude(subject__ref="alice").exists()
    document = download(page, "#download-my-data")
    assert document["user"] == "alice" and document["subjects"] == ["user:alice"]
    assert {c["id"] for c in document["claims"]} == mine
    assert {c["subject"] for c in document["claims"]} == {"user:alice"}
    assert {e["subject"] for e in document["events"]} == {"user:alice"}
    assert next(e for e in document["events"] if e["id"] == str(event.pk))["redacted"]
    assert {str(d.pk) for d in withdrawn} <= {d["id"] for d in document["deletions"]}
    # Large: a worker makes it while the page shows the progress.
    settings.EXPORT_INLINE_MAX_ROWS = 1
    page.click("#download-my-data")
    page.wait_for_url("**/me/exports/**")
    page.wait_for_selector("#export-download", timeout=60_000)
    screenshot(page, f"my-data-export-ready-{width}")
    export = DataExport.objects.get()
    assert export.status == ExportStatus.READY and export.rows_done == export.rows_total
    assert "rows" in page.inner_text("#progress")
    assert {c["id"] for c in download(page, "#export-download")["claims"]} == mine
    export_page = page.url

    # 4. Delete everything, and read the report.
    page.goto("/me/")
    page.fill("#confirm-1", "user:alice")
    page.click("form.danger-zone button.danger")
    page.click("#confirm-dialog #confirm-accept:text-is('Delete everything')")
    page.wait_for_url("**/me/deletions/**")
    page.wait_for_selector("#deletion-status[data-status=completed]", timeout=60_000)
    deletion_id = page.url.rstrip("/").rsplit("/", 1)[-1]
    assert "Deletion of everything about user:alice" in page.inner_text("h1")
    plain = page.inner_text("#plain-status")
    assert plain.startswith("What you asked us to forget is gone from memdesk")
    assert "in backups until" in plain and "applied again" in plain
    # She reads what was touched and where memdesk looked afterwards; the engineer's
    # details (probe queries, digests, where the bytes are) are for editors only.
    report = page.inner_text("main")
    assert "What was touched" in report and "The memory itself" in page.inner_text("#probes")
    assert not page.query_selector("#engineer-details")
    assert not page.query_selector("#horizon") and "VACUUM" not in report
    screenshot(page, f"my-data-deleted-{width}")
    assert not alices_claims()
    everything = DeletionRequest.objects.get(pk=deletion_id)
    assert everything.scope == "subject" and everything.status == DeletionStatus.COMPLETED

    # The stored export went with the memories it held; a new one holds none.
    page.goto(export_page)
    assert "the file was deleted with them" in page.inner_text("#progress")
    assert DataExport.objects.get().content == ""
    page.goto("/me/")
    settings.EXPORT_INLINE_MAX_ROWS = 2000
    after = download(page, "#download-my-data")
    assert after["claims"] == []
    listed = next(d for d in after["deletions"] if d["id"] == deletion_id)
    assert listed["scope"] == "subject" and listed["status"] == "completed"
    # Her file holds what each check found, not the SQL memdesk ran to look.
    assert listed["report"]["probes"] and all(
        "query" not in probe and "clean" in probe for probe in listed["report"]["probes"]
    )
