"""Hybrid recall: meaning ranks inside the legal set, which stays exact.

The real packaged model embeds (loaded once per test process); the HTTP
embedder talks to a real server on loopback.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext

from accounts.actors import Actor
from memory.claims.models import Claim, ClaimEmbedding, RecallTrace, Subject
from memory.claims.selectors.claims import RecallResult, claims_recall
from memory.claims.selectors.recall_ranking import RecallQuery
from memory.claims.tasks import embed_claims
from memory.privacy.services.consent import consents_set
from memory.privacy.services.deletion import deletion_request_create, deletion_run
from tests.dump import tables_containing
from tests.memory.helpers import recall, submit

pytestmark = pytest.mark.django_db

ALICE = [
    ("home_city", "Shanghai", "Alice lives in Shanghai"),
    ("drink", "tea", "Alice drinks green tea every morning"),
    ("pet", "Rex", "Alice has a dog named Rex"),
    ("job", "nurse", "Alice works as a nurse at the children's hospital"),
    ("allergy", "peanuts", "Alice is allergic to peanuts"),
    ("sport", "tennis", "Alice plays tennis on weekends"),
    ("car", "Tesla", "Alice drives a red Tesla"),
    ("language", "French", "Alice is learning French"),
    ("music", "jazz", "Alice listens to jazz while cooking"),
    ("birthday", "May 3", "Alice was born on the third of May"),
    ("editor", "vim", "Alice writes code in vim"),
    ("travel", "Japan", "Alice is planning a trip to Japan"),
]
WORKER = Actor.system("test embedding worker")


@pytest.fixture(autouse=True)
def _alice_consents_to_health_memories(acme) -> None:
    # The allergy is health data, which memdesk keeps only with the subject's consent.
    consents_set(
        tenant=acme,
        actor=Actor.system("test consent"),
        subject_keys=["user:alice"],
        changes={"health": True},
    )


def seed(agent, facts=ALICE, subject: str = "user:alice") -> list[str]:
    return [submit(agent, subject=subject, predicate=p, value=v, text=t)["id"] for p, v, t in facts]


def embed_all() -> None:
    out = io.StringIO()
    call_command("embed_backfill", stdout=out)
    assert json.loads(out.getvalue())["model"]


def expected_mode() -> str:
    # numpy computes the similarities, whether or not the database has pgvector.
    return "numpy"


def test_paraphrase_is_found_by_meaning_once_embedded(agent, client):
    ids = seed(agent)
    question = "which metropolis does she reside in"
    before = recall(agent, query=question)
    # Before the worker ran: still a full answer, ranked without meaning, and it says so.
    assert len(before["items"]) == 10
    assert {i["why"]["semantic"] for i in before["items"]} == {"unavailable"}
    assert all("vector" not in i["why"]["signals"] for i in before["items"])

    embed_all()
    assert ClaimEmbedding.objects.filter(claim_id__in=ids).count() == len(ALICE)
    result = recall(agent, query=question)
    top = result["items"][0]
    assert top["predicate"] == "home_city"
    assert top["why"]["matched"] == []  # no shared word: found by meaning
    assert top["why"]["semantic"] == expected_mode()
    assert top["why"]["signals"]["vector"]["rank"] == 1
    assert {"recency", "authority"} <= set(top["why"]["signals"])
    assert recall(agent, query="what should she never eat")["items"][0]["predicate"] == "allergy"
    assert client.get("/healthz").json()["semantic"] == expected_mode()
    metrics = client.get("/metrics").content.decode()
    assert f"memdesk_recall_embedding_lag_seconds_count {float(len(ALICE))}" in metrics
    assert "memdesk_recall_claims_pending_embedding 0.0" in metrics

    trace = RecallTrace.objects.get(pk=result["trace_id"])
    assert trace.ranking["semantic"] == expected_mode()
    assert trace.ranking["items"][top["id"]]["signals"]["vector"]["rank"] == 1


def test_semantic_recall_runs_two_statements_however_many_claims(agent, acme):
    seed(agent)
    embed_all()
    subject = Subject.objects.get(tenant=acme, kind="user", ref="alice")

    def statements(**query) -> tuple[int, RecallResult]:
        with CaptureQueriesContext(connection) as captured:
            result = claims_recall(tenant=acme, q=RecallQuery(subject=subject, **query))
        return len(captured.captured_queries), result

    # The legal set, its lexical signals and the subject's vectors in one statement (run
    # while the question is embedded), the returned claims and their sources in another.
    few, result = statements(query="which metropolis does she reside in", limit=5)
    assert few == 2 and result.semantic == expected_mode() and len(result.items) == 5
    assert result.items[0].claim.predicate == "home_city"
    assert all(item.sources for item in result.items)
    seed(agent, [(f"note_{n}", str(n), f"Alice wrote note {n}") for n in range(40)])
    embed_all()
    more, result = statements(query="which metropolis does she reside in", limit=5)
    assert more == few and result.items[0].claim.predicate == "home_city"


def test_a_written_claim_is_embedded_by_the_task_enqueued_on_commit(
    agent, django_capture_on_commit_callbacks
):
    # Eager: the task runs where it is enqueued, so this follows submit -> commit -> task.
    embed_claims.app.conf.task_always_eager = True
    try:
        with django_capture_on_commit_callbacks(execute=True) as callbacks:
            [claim_id] = seed(agent, ALICE[:1])
            assert not ClaimEmbedding.objects.filter(claim_id=claim_id).exists()
    finally:
        embed_claims.app.conf.task_always_eager = False
    assert callbacks
    assert ClaimEmbedding.objects.filter(claim_id=claim_id).count() == 1


def test_a_claim_is_embedded_once_and_again_when_its_text_changes(agent):
    [claim_id] = seed(agent, ALICE[:1])
    assert embed_claims([claim_id]) == 1
    assert embed_claims([claim_id]) == 0
    first = ClaimEmbedding.objects.get(claim_id=claim_id)
    assert first.dim == 384 and first.lag_seconds >= 0
    Claim.objects.filter(pk=claim_id).update(text="Alice moved to Hangzhou")
    assert embed_claims([claim_id]) == 1
    assert ClaimEmbedding.objects.get(claim_id=claim_id).digest != first.digest


def test_the_backfill_refreshes_vectors_of_changed_text(agent):
    [claim_id] = seed(agent, ALICE[:1])
    embed_all()
    # As after an upgrade that embeds claims differently: the stored digest no longer
    # matches what would be embedded now.
    ClaimEmbedding.objects.filter(claim_id=claim_id).update(digest="old")
    embed_all()  # the plain backfill only fills claims without a vector
    assert ClaimEmbedding.objects.get(claim_id=claim_id).digest == "old"
    out = io.StringIO()
    call_command("embed_backfill", "--refresh", stdout=out)
    assert json.loads(out.getvalue())["embedded"] == 1
    refreshed = ClaimEmbedding.objects.get(claim_id=claim_id)
    assert refreshed.digest != "old" and refreshed.packed is not None


def test_look_alike_subject_never_leaks_in(agent):
    alice = seed(agent, ALICE[:3])
    twin = seed(agent, ALICE, subject="user:alice2")
    embed_all()
    for query in ("Alice lives in Shanghai", "which metropolis does she reside in", ""):
        result = recall(agent, query=query, limit=100)
        assert sorted(i["id"] for i in result["items"]) == sorted(alice)
        assert not set(twin) & {i["id"] for i in result["items"]}


def test_filters_return_exactly_the_legal_count(agent):
    seed(agent)
    crm_only = [
        submit(
            agent,
            predicate=f"crm_{n}",
            value=str(n),
            text=f"CRM note {n}",
            scope={"project": "crm"},
        )["id"]
        for n in range(3)
    ]
    seed(agent, ALICE, subject="user:bob")
    embed_all()
    ten = recall(agent, query="what does alice do for a living", limit=10)
    assert len(ten["items"]) == 10
    everything = recall(agent, query="what does alice do for a living", limit=100)
    assert len(everything["items"]) == len(ALICE)  # global claims only, no project scope
    assert everything["excluded"]["out_of_scope"] == 3
    in_crm = recall(agent, query="notes", scope={"project": "crm"}, limit=100)
    assert len(in_crm["items"]) == len(ALICE) + 3
    assert set(crm_only) <= {i["id"] for i in in_crm["items"]}
    assert recall(agent, subject="user:nobody", query="notes")["items"] == []
    # Outside the legal set nothing comes back, however close in meaning.
    only_facts_elsewhere = recall(agent, query="notes", kinds=["preference"], limit=100)
    assert only_facts_elsewhere["items"] == []


def test_without_an_embedder_recall_is_lexical_and_says_so(agent, client, settings):
    seed(agent, ALICE[:4])
    settings.MEMDESK_EMBEDDER = "none"
    assert client.get("/healthz").json()["semantic"] == "off"
    result = recall(agent, query="green tea", limit=10)
    assert result["items"][0]["predicate"] == "drink"
    assert result["items"][0]["why"]["signals"]["fulltext"]["rank"] == 1
    assert {i["why"]["semantic"] for i in result["items"]} == {"unavailable"}
    assert len(result["items"]) == 4
    assert result["excluded"]["no_match"] == 3
    assert RecallTrace.objects.get(pk=result["trace_id"]).ranking["semantic"] == "unavailable"


def test_erasure_removes_the_vectors(agent, acme):
    ids = seed(agent, ALICE[:2])
    embed_all()
    subject = Subject.objects.get(tenant=acme, kind="user", ref="alice")
    deletion, _ = deletion_request_create(
        tenant=acme, actor=WORKER, subject=subject, claim=Claim.objects.get(pk=ids[0])
    )
    done = deletion_run(deletion_id=deletion.pk, worker=WORKER)
    assert done is not None and done.report["clean"]
    assert list(ClaimEmbedding.objects.values_list("claim_id", flat=True)) == [
        Claim.objects.get(pk=ids[1]).pk
    ]
    embed_all()  # the sweep never embeds an erased claim again
    assert ClaimEmbedding.objects.count() == 1


class _EmbeddingsEndpoint(BaseHTTPRequestHandler):
    """An OpenAI-compatible endpoint whose 'meaning' is a keyword table."""

    seen: list[dict] = []
    AXES = (("shanghai", "city", "live"), ("tea", "drink", "beverage"), ("dog", "pet", "rex"))

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.seen.append({"auth": self.headers.get("Authorization"), **body})
        data = [
            {
                "index": n,
                "embedding": [
                    float(any(word in text.lower() for word in axis)) for axis in self.AXES
                ]
                + [0.1],
            }
            for n, text in enumerate(body["input"])
        ]
        payload = json.dumps({"data": data, "model": body["model"]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args) -> None:
        pass


@pytest.fixture
def http_embedder(settings) -> Iterator[list[dict]]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _EmbeddingsEndpoint)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    _EmbeddingsEndpoint.seen = []
    settings.MEMDESK_EMBEDDER = "http"
    settings.MEMDESK_EMBEDDER_URL = f"http://127.0.0.1:{server.server_port}/v1/embeddings"
    settings.MEMDESK_EMBEDDER_MODEL = "keyword-axes"
    settings.MEMDESK_EMBEDDER_KEY = "embedder-key-9f8e7d6c5b4a"
    yield _EmbeddingsEndpoint.seen
    server.shutdown()
    server.server_close()


def test_the_embedder_is_pluggable(agent, http_embedder):
    seed(agent, ALICE[:3])
    embed_all()
    assert set(ClaimEmbedding.objects.values_list("model", "dim")) == {("keyword-axes", 4)}
    result = recall(agent, query="favourite beverage?")
    assert result["items"][0]["predicate"] == "drink"
    assert result["items"][0]["why"]["signals"]["vector"]["rank"] == 1
    assert http_embedder[0]["auth"] == "Bearer embedder-key-9f8e7d6c5b4a"
    assert http_embedder[0]["model"] == "keyword-axes"
    assert tables_containing("embedder-key-9f8e7d6c5b4a") == {}


def test_an_unreachable_embedder_degrades_recall_to_lexical(agent, settings):
    seed(agent, ALICE[:3])
    settings.MEMDESK_EMBEDDER = "http"
    settings.MEMDESK_EMBEDDER_URL = "http://127.0.0.1:9/v1/embeddings"
    result = recall(agent, query="green tea")
    assert result["items"][0]["predicate"] == "drink"
    assert len(result["items"]) == 3
    assert {i["why"]["semantic"] for i in result["items"]} == {"unavailable"}


NO_NETWORK = """
import socket, sys
real_connect = socket.socket.connect
def guarded(self, address):
    host = address[0] if isinstance(address, tuple) else address
    if isinstance(host, str) and host not in ("127.0.0.1", "::1", "localhost") and "/" not in host:
        raise SystemExit(f"network connect to {address!r}")
    return real_connect(self, address)
socket.socket.connect = guarded
import django
django.setup()
from memory.claims.embedders import LocalEmbedder
vectors = LocalEmbedder().embed(["Alice lives in Shanghai", "where is she based"])
print(vectors.shape[1], round(float(vectors[0] @ vectors[1]), 2))
"""


def test_the_default_embedder_loads_with_no_network():
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("HF_", "TRANSFORMERS_"))
    }
    # Any proxy points nowhere: a download attempt fails instead of leaving the machine.
    for proxy in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY"):
        env[proxy] = "http://192.0.2.1:9"
    env["HF_HOME"] = str(Path(os.devnull).parent / "nonexistent-hf-home")
    env["DJANGO_SETTINGS_MODULE"] = "config.settings"
    done = subprocess.run(
        [sys.executable, "-c", NO_NETWORK],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert done.returncode == 0, done.stderr[-2000:]
    dim, similarity = done.stdout.split()[-2:]
    assert dim == "384" and float(similarity) > 0.3
