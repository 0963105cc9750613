"""The end user's pages speak of memories, sources and deletions in words, and editors
read the same reports in an editor's words; deleting asks in a styled, keyboard-ready
dialog. In a real browser at a desktop and a phone width, screenshots in test-artifacts/."""

import re

import pytest

from memory.claims.models import Claim, ClaimSource
from memory.privacy.models import DeletionRequest
from tests.e2e.conftest import screenshot, settle

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

WIDTHS = (1280, 390)


def alices_memory() -> Claim:
    return Claim.objects.get(predicate="home_city", subject__ref="alice", status="active")


@pytest.mark.parametrize("width", WIDTHS)
def test_a_memory_page_has_a_heading_column_names_and_a_history_in_words(sign_in, width):
    claim = alices_memory()
    page = sign_in("alice", width=width)
    page.goto(f"/me/memories/{claim.pk}/")
    settle(page)
    screenshot(page, f"plain-memory-{width}")
    assert page.inner_text("h1") == "A memory about you"
    headers = page.locator("table.memories thead th")
    assert headers.count() == 6 and headers.nth(0).inner_text() == "What is remembered"
    history = page.inner_text(".timeline")
    assert "Accepted: agents may recall it" in history and "by an agent" in history
    for engineer_word in ("claim.accepted", "user_explicit_verified", "0 minutes"):
        assert engineer_word not in page.inner_text("main"), engineer_word


@pytest.mark.parametrize("width", WIDTHS)
def test_a_source_page_says_what_she_said_without_digests_or_uris(sign_in, width):
    source = ClaimSource.objects.filter(claim=alices_memory(), event__isnull=False).get()
    page = sign_in("alice", width=width)
    page.goto(f"/me/events/{source.event_id}/")
    settle(page)
    screenshot(page, f"plain-source-{width}")
    assert page.inner_text("h1") == "What you said"
    assert "I moved to Shanghai" in page.inner_text("#event-text")
    text = page.inner_text("main")
    for engineer_word in ("user_statement", "sha256", "chat://", "Digest"):
        assert engineer_word not in text, engineer_word
    assert not page.query_selector("#event-details")


@pytest.mark.parametrize("width", WIDTHS)
def test_her_report_is_plain_and_the_editors_is_for_editors(sign_in, width):
    deletion = DeletionRequest.objects.get(subject__ref="alice", status="needs_review")
    page = sign_in("alice", width=width)
    page.goto(f"/me/deletions/{deletion.pk}/")
    settle(page)
    screenshot(page, f"plain-report-alice-{width}")
    text = page.inner_text("main")
    assert page.inner_text("#deletion-status") == "an editor is checking"
    # The demo's deletion was asked when the demo was seeded: "just now" or minutes ago,
    # never "0 minutes ago", and no stray space before a comma.
    assert re.fullmatch(r"Asked (just now|\d+\s+minutes? ago)", page.inner_text("#deletion-times"))
    assert "1 memory erased" in page.inner_text("#touched")
    for engineer_word in (
        "Details for engineers",
        "VACUUM",
        "dead tuples",
        "memory_claim",
        "DELETION_BACKUP",
        "manage.py",
        "needs_review",
        "deletion.",
    ):
        assert engineer_word not in text, engineer_word
    assert not page.query_selector("#horizon") and not page.query_selector("#engineer-details")

    editor = sign_in("editor", width=width)
    editor.goto(f"/me/deletions/{deletion.pk}/")
    settle(editor)
    screenshot(editor, f"plain-report-editor-{width}")
    report = editor.inner_text("main")
    assert "← Deletions queue" in report and "← My memories" not in report
    assert "What you asked us to forget" not in report and "acknowledge it" in report
    assert editor.query_selector("#horizon") and editor.query_selector("#engineer-details")
    # The queue row says why it waits in words, not as raw codes.
    editor.goto("/review/deletions/")
    settle(editor)
    screenshot(editor, f"plain-deletions-queue-{width}")
    row = editor.inner_text("#list .row")
    assert "Deletion of one memory about user:alice" in row
    assert "possible copy: every other place memdesk stores text" in row
    assert "matched in memory_receipt.idempotency_key" in row
    assert "dirty:" not in row and "found:" not in row


@pytest.mark.parametrize("width", WIDTHS)
def test_deleting_asks_in_a_dialog_the_keyboard_can_answer(sign_in, width):
    claim = alices_memory()
    page = sign_in("alice", width=width)
    page.goto("/me/")
    settle(page)
    page.click(f"#memory-{claim.pk} button.danger")
    dialog = page.locator("#confirm-dialog")
    dialog.wait_for(state="visible")
    screenshot(page, f"plain-confirm-{width}", full_page=False)
    assert "Forget “Alice lives in Shanghai”?" in page.inner_text("#confirm-question")
    assert page.evaluate("document.activeElement.textContent") == "Cancel"
    # Escape answers no: nothing is asked of memdesk.
    page.keyboard.press("Escape")
    dialog.wait_for(state="hidden")
    assert not DeletionRequest.objects.filter(claim=claim).exists()
    # Tab to "Forget it" and Enter answers yes.
    page.click(f"#memory-{claim.pk} button.danger")
    dialog.wait_for(state="visible")
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.textContent") == "Forget it"
    page.keyboard.press("Enter")
    page.wait_for_url("**/me/deletions/**")
    settle(page)
    deletion = DeletionRequest.objects.get(claim=claim)
    shown = page.get_attribute("#deletion-status", "data-status")
    toast = page.inner_text("#messages")
    # The toast says what the report shows at that moment.
    if shown == "completed":
        assert toast.startswith("Deleted.")
    else:
        assert toast.startswith("Deletion started.") and deletion.status != "completed"


@pytest.mark.parametrize("width", WIDTHS)
def test_my_memories_come_first_and_a_subject_never_breaks(sign_in, width):
    page = sign_in("alice", width=width)
    page.goto("/me/")
    settle(page)
    screenshot(page, f"plain-me-{width}")
    memories = page.locator("#memories").bounding_box()
    consents = page.locator("#consents").bounding_box()
    assert memories["y"] < consents["y"]
    cell = page.locator("#consents td.mono").first
    line = float(cell.evaluate("(td) => parseFloat(getComputedStyle(td).lineHeight)"))
    text_height = cell.evaluate(
        "(td) => { const r = document.createRange(); r.selectNodeContents(td);"
        " return r.getBoundingClientRect().height; }"
    )
    assert text_height < 1.5 * line, "user:alice breaks over two lines"
    # An editor owns no subject: no empty consent card.
    editor = sign_in("editor", width=width)
    editor.goto("/me/")
    assert not editor.query_selector("#consents")
