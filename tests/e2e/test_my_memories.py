"""An end user deletes one memory in a real browser and watches the report complete
(consent, export and deleting everything are one journey in test_my_data.py)."""

import pytest

from memory.claims.models import Claim
from memory.privacy.models.lifecycle import DeletionRequest
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
    page.click(f"#memory-{claim.pk} button.danger")
    page.click("#confirm-dialog #confirm-accept")
    page.wait_for_url("**/me/deletions/**")
    page.wait_for_selector("#deletion-status[data-status=completed]", timeout=60_000)
    page.wait_for_selector("#probes")
    screenshot(page, "deletion-report")
    assert "found something" not in page.inner_text("#probes")
    deletion = DeletionRequest.objects.get(claim=claim)
    assert deletion.status == "completed"
    claim.refresh_from_db()
    assert claim.status == "erased" and claim.text == ""
    page.goto("/me/")
    assert "Alice lives in Shanghai" not in page.inner_text("#memories")
