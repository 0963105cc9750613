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
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from memory.claims.models import RecallTrace, Subject
from memory.claims.selectors.claims import RecallResult, claims_recall
from memory.claims.selectors.recall_ranking import RecallQuery
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


def a_family(agent) -> dict[str, str]:
    """Ana told memdesk about her home, her children, her work and her dog, beside a
    run of operational notes; never about a car, a phone or an email address."""
    told = {
        predicate: submit(agent, subject="user:ana", predicate=predicate, value=value, text=text)[
            "id"
        ]
        for predicate, value, text in [
            ("home_city", "Lisbon", "Ana lives in Lisbon"),
            ("kids", "two daughters", "Ana has two daughters"),
            ("job", "nurse", "Ana works as a nurse"),
            ("pet", "dog named Rex", "Ana has a dog named Rex"),
        ]
    }
    for k in range(12):
        submit(
            agent,
            subject="user:ana",
            predicate=f"note_{k}",
            value=None,
            text=f"Ticket {100 + k} about the login component was closed as a duplicate",
        )
    return told


# Each near enough to one of her claims ("what car does she drive" to where she lives,
# "which phone does she use" to her daughters) for similarity alone to answer with it.
NEIGHBOURING_QUESTIONS = [
    "what car does she drive",
    "which phone does she use",
    "what is her email address",
]


def test_a_question_next_to_a_told_topic_is_refused_where_similarity_alone_answered(
    agent, settings
):
    told = a_family(agent)
    embed_all()

    for question in NEIGHBOURING_QUESTIONS:
        refused = recall(agent, subject="user:ana", query=question)
        assert refused["items"] == [], question
        assert refused["abstained"] is True
        trace = RecallTrace.objects.get(pk=refused["trace_id"])
        # The question is nearer to an attribute she never told than to any of her
        # claims' topics: that shortfall is what refused it.
        assert trace.ranking["abstention"]["asked"] > trace.ranking["abstention"]["best"]
    for question, predicate in [
        ("how many children does she have", "kids"),
        ("where does she live", "home_city"),
    ]:
        answered = recall(agent, subject="user:ana", query=question)
        assert answered["abstained"] is False, question
        assert answered["items"][0]["id"] == told[predicate]

    # The relevance before the asked attribute counted (its weight 0, the floor of
    # then) answered each of them with one of her unrelated claims.
    settings.RECALL_ATTRIBUTE_WEIGHT = 0.0
    settings.RECALL_TOPIC_WEIGHT = 0.15
    settings.RECALL_ABSTAIN_FLOOR = 0.262
    for question in NEIGHBOURING_QUESTIONS:
        answered = recall(agent, subject="user:ana", query=question)
        assert answered["abstained"] is False, question
        assert answered["items"][0]["predicate"] in told


def test_abstaining_costs_no_statement_per_claim(agent, acme):
    a_family(agent)
    embed_all()
    subject = Subject.objects.get(tenant=acme, kind="user", ref="ana")

    def statements(query: str) -> tuple[int, RecallResult]:
        with CaptureQueriesContext(connection) as captured:
            result = claims_recall(tenant=acme, q=RecallQuery(subject=subject, query=query))
        return len(captured.captured_queries), result

    refused_with, refused = statements("what car does she drive")
    answered_with, answered = statements("where does she live")
    assert refused.abstained and not answered.abstained
    # The ranking statement gives what relevance needs; an answer adds one read of the
    # returned claims and their sources, an abstention not even that.
    assert refused_with == 1 and answered_with == 2
    assert refused.verdict is not None and len(refused.verdict.evidence) == 16


def test_the_schema_documents_abstention_and_relevance(agent):
    schema = agent.get("/api/schema/", {"format": "json"}).json()["components"]["schemas"]

    answer = schema["RecallOut"]["properties"]
    assert answer["abstained"]["type"] == "boolean"
    assert "abstention" in answer
    abstention = schema["RecallAbstentionOut"]["properties"]
    assert {"reason", "best_relevance", "floor"} <= set(abstention)
    item = schema["RecallItemOut"]["properties"]["relevance"]
    assert "strong" in json.dumps(item) and "weak" in json.dumps(item)
    traced = schema["TraceAbstentionOut"]["properties"]
    assert {"judged", "abstained", "best", "floor", "strong", "reason", "asked"} <= set(traced)
    assert schema["TraceReturnedOut"]["properties"]["relevance"]["nullable"] is True


def test_the_trace_page_shows_each_items_relevance_and_the_asked_attribute(agent, editor, login):
    told = a_family(agent)
    embed_all()
    answer = recall(agent, subject="user:ana", query="where does she live", limit=2)
    trace = RecallTrace.objects.get(pk=answer["trace_id"])
    labels = {item["id"]: item["relevance"] for item in answer["items"]}
    assert labels[told["home_city"]] == "strong"

    page = login(editor).get(reverse("desk:trace", args=[trace.pk])).content.decode()

    home_row = page[page.index("Ana lives in Lisbon") :].split("</th>")[0]
    assert '<span class="chip">strong</span>' in home_row
    assert f"{trace.ranking['abstention']['asked']}</span> alike" in page
