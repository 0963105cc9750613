"""The end user's pages in plain words: corrections answer at once, history rows are
read-only, deletions are listed, and reports keep the engineer's details for editors."""

import pytest

from accounts.actors import Actor
from memory.claims.models import Claim, ClaimStatus
from memory.privacy.models.lifecycle import DeletionRequest
from memory.privacy.services.deletion import deletion_run
from tests.memory.helpers import post_event, submit

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture
def alice_memory(agent, alice):
    event = post_event(agent)
    return submit(agent, event_id=event["id"])


def csrf(client) -> str:
    client.get("/me/")
    return client.cookies["csrftoken"].value


def test_a_correction_answers_at_once_with_its_message_and_the_new_row(alice, login, alice_memory):
    client = login(alice)
    response = client.post(
        f"/me/memories/{alice_memory['id']}/correct",
        {"text": "Alice lives in Hangzhou", "value": "Hangzhou"},
        HTTP_X_CSRFTOKEN=csrf(client),
        **HTMX,
    ).content.decode()
    new = Claim.objects.get(subject__ref="alice", status=ClaimStatus.ACTIVE)
    assert response.lstrip().startswith(f'<tr id="memory-{new.pk}"')
    assert "Alice lives in Hangzhou" in response and f'id="corrected-{new.pk}"' in response
    # The message comes with this answer (a toast, out of band), not a page later.
    oob = response[response.index("<template>") :]
    assert 'id="messages" class="toasts"' in oob and 'hx-swap-oob="true"' in oob
    assert "Corrected. Agents recall the new statement from now on." in response
    assert "Corrected." not in client.get("/me/").content.decode().split('id="messages"')[1][:300]


def test_the_replaced_memory_is_history_without_correct_or_delete(alice, login, alice_memory):
    client = login(alice)
    answer = client.post(
        f"/me/memories/{alice_memory['id']}/correct",
        {"text": "Alice lives in Hangzhou"},
        HTTP_X_CSRFTOKEN=csrf(client),
        follow=True,
    )
    assert "Corrected." in answer.content.decode(), answer.content.decode()[-3000:]
    assert Claim.objects.get(pk=alice_memory["id"]).status == ClaimStatus.SUPERSEDED
    page = client.get("/me/").content.decode()
    old_row = page[page.index(f'<tr id="memory-{alice_memory["id"]}"') :]
    old_row = old_row[: old_row.index("</tr>")]
    assert 'class="history"' in old_row and "replaced" in old_row
    assert "Correct</a>" not in old_row and "Delete</button>" not in old_row


def test_the_page_says_what_delete_does_and_lists_my_deletions(alice, login, alice_memory):
    client = login(alice)
    page = client.get("/me/").content.decode()
    assert "What happens when you delete a memory?" in page
    assert "You have not asked memdesk to forget anything yet." in page
    client.post(f"/me/memories/{alice_memory['id']}/delete", HTTP_X_CSRFTOKEN=csrf(client))
    deletion = DeletionRequest.objects.get()
    page = client.get("/me/").content.decode()
    mine = page[page.index('id="my-deletions"') :]
    assert f'href="/me/deletions/{deletion.pk}/"' in mine and "One memory about" in mine


def test_memory_rows_become_labelled_cards_on_a_phone(alice, login, alice_memory):
    page = login(alice).get("/me/").content.decode()
    assert '<table class="memories cards">' in page
    assert 'data-label="Where it came from"' in page and 'data-label="State"' in page


@pytest.fixture
def finished_deletion(alice, login, alice_memory):
    client = login(alice)
    client.post(f"/me/memories/{alice_memory['id']}/delete", HTTP_X_CSRFTOKEN=csrf(client))
    deletion = DeletionRequest.objects.get()
    deletion_run(deletion_id=deletion.pk, worker=Actor.system("lifecycle vm:30764"))
    deletion.refresh_from_db()
    assert deletion.report.get("probes")
    return deletion


def test_the_owner_reads_the_report_without_sql_digests_or_worker_names(
    alice, login, finished_deletion
):
    page = login(alice).get(f"/me/deletions/{finished_deletion.pk}/").content.decode()
    assert "Where we looked afterwards" in page and "The memory itself" in page
    for engineer_word in ("SELECT", "hmac-sha256", "lifecycle vm:30764", "{&#x27;"):
        assert engineer_word not in page, engineer_word
    assert "memdesk, automatically" in page
    assert 'id="engineer-details"' not in page


def test_editors_find_the_engineer_details_behind_a_disclosure(editor, login, finished_deletion):
    page = login(editor).get(f"/me/deletions/{finished_deletion.pk}/").content.decode()
    details = page[page.index('<details id="engineer-details"') :]
    assert "SELECT" in details and "claims_table" in details
    assert "lifecycle vm:30764" in page  # editors see which worker did it
