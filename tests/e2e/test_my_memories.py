"""An end user deletes a memory, or withdraws a consent, in a real browser and watches the
report complete."""

import pytest

from accounts.actors import Actor
from accounts.models import Tenant
from memory.models import Claim
from memory.models.lifecycle import DeletionRequest
from memory.services.claims import CandidateInput, SourceInput, claim_submit
from tests.e2e.conftest import screenshot

pytestmark = [pytest.mark.browser, pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def test_end_user_deletes_a_memory_and_the_report_completes_clean(
    sign_in, celery_workers, settings
):
    settings.LIFECYCLE_QUEUE = celery_workers.queue
    celery_workers.env["LIFECYCLE_QUEUE"] = celery_workers.queue
    celery_workers.start().wait_ready()
    claim = Claim.objects.get(predicate="home_city", subject__ref="alice")
    page = sign_in("alice")
    page.goto("/me/")
    assert "Alice lives in Shanghai" in page.inner_text("#memories")
    page.once("dialog", lambda dialog: dialog.accept())
    page.click(f"#memory-{claim.pk} button.danger")
    page.wait_for_url("**/me/deletions/**")
    page.wait_for_selector("#deletion-status:text('completed')", timeout=60_000)
    page.wait_for_selector("#probes")
    screenshot(page, "deletion-report")
    assert "found something" not in page.inner_text("#probes")
    deletion = DeletionRequest.objects.get(claim=claim)
    assert deletion.status == "completed"
    claim.refresh_from_db()
    assert claim.status == "erased" and claim.text == ""
    page.goto("/me/")
    assert "Alice lives in Shanghai" not in page.inner_text("#memories")


def test_end_user_grants_then_withdraws_consent_and_reads_the_report(
    sign_in, celery_workers, settings
):
    settings.LIFECYCLE_QUEUE = celery_workers.queue
    celery_workers.env["LIFECYCLE_QUEUE"] = celery_workers.queue
    celery_workers.start().wait_ready()
    page = sign_in("alice")
    page.goto("/me/")
    row = "#consent-useralice-health"
    assert "not granted" in page.inner_text(row)
    page.click(f"{row} button")
    page.wait_for_selector(f"{row} .chip:text-is('granted')")
    claim = claim_submit(
        tenant=Tenant.objects.get(slug="demo"),
        actor=Actor.system("e2e agent"),
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
    assert claim.sensitivity == "health"

    page.once("dialog", lambda dialog: dialog.accept())
    page.click(f"{row} button")
    page.wait_for_selector("#consents [role=status]:has-text('being deleted')")
    screenshot(page, "consent-withdrawn")
    page.click("#consents [role=status] a")
    page.wait_for_selector("#deletion-status:text('completed')", timeout=60_000)
    claim.refresh_from_db()
    assert claim.status == "erased"
