"""Recall that knows when it does not know: a question about something never provided
is answered with nothing, and says why; a question it can answer says how surely.

The real packaged model embeds (docs/recall.md, "Abstention")."""

from __future__ import annotations

import io
import json
import threading
from collections.abc import Iterator
from http.server import ThreadingHTTPServer

import pytest
from django.conf import settings
from django.urls import reverse

from memory.claims.models import RecallTrace
from tests.memory.helpers import recall, submit
from tests.memory.test_semantic_recall import _EmbeddingsEndpoint, embed_all

pytestmark = pytest.mark.django_db


def only_a_home_city(agent) -> str:
    return submit(
        agent, subject="user:ana", predicate="home_city", value="Lisbon", text="Ana lives in Lisbon"
    )["id"]


def test_never_provided_information_is_refused_and_the_trace_says_why(agent, editor, login):
    only_a_home_city(agent)
    embed_all()

    answer = recall(agent, subject="user:ana", query="what is her favourite colour")

    assert answer["items"] == []
    assert answer["abstained"] is True
    abstention = answer["abstention"]
    assert abstention["reason"] == "nothing_relevant"
    assert abstention["floor"] == settings.RECALL_ABSTAIN_FLOOR
    assert abstention["best_relevance"] < abstention["floor"]
    trace = RecallTrace.objects.get(pk=answer["trace_id"])
    assert trace.chosen == []
    assert trace.ranking["abstention"]["abstained"] is True
    assert trace.ranking["abstention"]["best"] == abstention["best_relevance"]
    assert [entry["reason"] for entry in trace.ranking["cut"]] == ["below_floor"]
    read = agent.get(f"/api/v1/recall/traces/{trace.pk}").json()
    assert read["abstention"]["reason"] == "nothing_relevant"
    assert read["cut"][0]["reason"] == "below_floor"
    page = login(editor).get(reverse("desk:trace", args=[trace.pk])).content.decode()
    assert "abstained" in page and "nothing_relevant" in page


def test_a_question_it_can_answer_returns_the_claim_with_its_relevance(agent):
    claim_id = only_a_home_city(agent)
    embed_all()

    answer = recall(agent, subject="user:ana", query="where does she live")

    assert [item["id"] for item in answer["items"]] == [claim_id]
    assert answer["items"][0]["relevance"] in {"strong", "weak"}
    assert answer["abstained"] is False and answer["abstention"] is None
    trace = RecallTrace.objects.get(pk=answer["trace_id"])
    assert trace.ranking["abstention"]["abstained"] is False
    assert trace.ranking["items"][claim_id]["relevance"] == answer["items"][0]["relevance"]


def test_an_exact_identifier_or_named_predicate_is_strong_evidence(agent):
    error = submit(
        agent,
        subject="user:ana",
        predicate="deploy_error",
        value="ERR_4711",
        text="The nightly deploy fails with ERR_4711 when the cache is cold",
    )["id"]
    city = only_a_home_city(agent)
    embed_all()

    by_code = recall(agent, subject="user:ana", query="ERR_4711?")
    assert by_code["items"][0]["id"] == error
    assert by_code["items"][0]["relevance"] == "strong"
    by_predicate = recall(agent, subject="user:ana", query="home city")
    assert by_predicate["items"][0]["id"] == city
    assert by_predicate["items"][0]["relevance"] == "strong"


def test_a_recall_without_a_question_never_abstains(agent):
    claim_id = only_a_home_city(agent)
    embed_all()

    listing = recall(agent, subject="user:ana")

    assert [item["id"] for item in listing["items"]] == [claim_id]
    assert listing["abstained"] is False
    assert listing["items"][0]["relevance"] is None


def test_before_its_claims_have_vectors_recall_cannot_tell_absence_and_answers(agent):
    claim_id = only_a_home_city(agent)  # no worker ran: the claim has no vector yet

    answer = recall(agent, subject="user:ana", query="what is her favourite colour")

    assert [item["id"] for item in answer["items"]] == [claim_id]
    assert answer["abstained"] is False
    assert answer["items"][0]["relevance"] == "weak"
    trace = RecallTrace.objects.get(pk=answer["trace_id"])
    assert trace.ranking["abstention"]["judged"] is False


def test_the_floor_is_a_setting(agent, settings):
    only_a_home_city(agent)
    embed_all()
    settings.RECALL_ABSTAIN_FLOOR = -1.0  # abstention off

    answer = recall(agent, subject="user:ana", query="what is her favourite colour")

    assert len(answer["items"]) == 1 and answer["abstained"] is False
    assert answer["items"][0]["relevance"] == "weak"


def test_the_predicates_topic_adds_to_a_claims_relevance(agent, settings):
    only_a_home_city(agent)
    embed_all()

    settings.RECALL_TOPIC_WEIGHT = 0.0
    text_alone = recall(agent, subject="user:ana", query="in which town do they have their home")
    settings.RECALL_TOPIC_WEIGHT = 0.25
    with_topic = recall(agent, subject="user:ana", query="in which town do they have their home")

    best = [
        RecallTrace.objects.get(pk=answer["trace_id"]).ranking["abstention"]["best"]
        for answer in (text_alone, with_topic)
    ]
    # "home city" is near the question: the topic lifts the claim by a quarter of that.
    assert best[1] > best[0] + 0.1
    assert with_topic["items"][0]["relevance"] == "strong"


class _EndpointFailingOnPredicates(_EmbeddingsEndpoint):
    """The keyword endpoint, except that embedding the predicate words "home city" fails."""

    def do_POST(self) -> None:
        length = int(self.headers["Content-Length"])
        body = self.rfile.read(length)
        if "home city" in json.loads(body)["input"]:
            self.send_error(503)
            return
        self.rfile = io.BytesIO(body)
        super().do_POST()


@pytest.fixture
def endpoint_failing_on_predicates(settings) -> Iterator[None]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _EndpointFailingOnPredicates)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    settings.MEMDESK_EMBEDDER = "http"
    settings.MEMDESK_EMBEDDER_URL = f"http://127.0.0.1:{server.server_port}/v1/embeddings"
    # A model of its own: no other test's predicate vectors are in this process's cache.
    settings.MEMDESK_EMBEDDER_MODEL = "keyword-axes-failing-on-predicates"
    yield
    server.shutdown()
    server.server_close()


def test_a_predicate_that_could_not_be_embedded_is_not_judged(
    agent, endpoint_failing_on_predicates
):
    claim_id = only_a_home_city(agent)
    embed_all()  # the claim's text embeds: only its predicate's words fail

    answer = recall(agent, subject="user:ana", query="what is her favourite colour")

    assert [item["id"] for item in answer["items"]] == [claim_id]
    assert answer["abstained"] is False
    assert answer["items"][0]["relevance"] == "weak"
    trace = RecallTrace.objects.get(pk=answer["trace_id"])
    assert trace.ranking["abstention"]["judged"] is False
    assert trace.ranking["abstention"]["best"] is None
