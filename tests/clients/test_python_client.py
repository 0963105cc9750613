"""memdesk-client against a live memdesk: the agent loop, errors, retries, pages, receipts."""

from __future__ import annotations

import asyncio
import uuid
from datetime import UTC, datetime, timedelta

import httpx
import pytest
from memdesk_client import AsyncDesk, Desk, RecallResult, error_class_for
from memdesk_client.errors import (
    AuthenticationError,
    CapabilityRequired,
    ConflictError,
    IdempotentReplyErased,
    IllegalTransition,
    InvalidRequest,
    NotFoundError,
    PersonRequired,
    ProblemError,
    ReceiptAlreadyUsed,
    SourceRequired,
    SubjectRequired,
    TimeInFuture,
    UnsafePathSegment,
)

from memory.claims.models import Claim, Event
from memory.receipts.models import Checkpoint, Receipt, ReceiptTransition, RecoveryAnswerRecord

pytestmark = pytest.mark.django_db(transaction=True)

MANUAL = {"adapter": "manual"}
# The first recall in a process loads the local embedding model; a generous wait keeps
# that out of the way (the client's own default is 10 seconds).
TIMEOUT = 120.0


@pytest.fixture
def desk(live_server, agent_token):
    with Desk(live_server.url, agent_token, timeout=TIMEOUT) as desk:
        yield desk


def _said(desk: Desk, text: str = "I moved to Shanghai last year") -> str:
    return desk.log_event("user:alice", "user_statement", text, run_id="run-1")["id"]


def _accepted_fact(desk: Desk, predicate: str, value: str, text: str) -> str:
    verdict = desk.propose(
        "user:alice",
        predicate,
        value,
        text=text,
        sources=[_said(desk, text)],
        authority="user_explicit",
        basis="reported",
    )
    assert verdict["decision"] == "accepted", verdict
    claim_id = verdict["id"]
    assert claim_id is not None  # an accepted claim is stored
    return claim_id


def test_the_agent_loop_from_event_to_recovery(desk, slow_platform):
    event = desk.log_event(
        "user:alice", "user_statement", "I moved to Shanghai last year", run_id="run-7"
    )
    assert Event.objects.get(id=event["id"]).text == "I moved to Shanghai last year"

    verdict = desk.propose(
        "user:alice",
        "home_city",
        "Shanghai",
        text="Alice lives in Shanghai",
        sources=[event["id"]],
        authority="user_explicit",
        basis="reported",
    )
    assert verdict["decision"] == "accepted"
    assert Claim.objects.get(id=verdict["id"]).status == "active"

    recalled = desk.recall("user:alice", "where does alice live")
    assert isinstance(recalled, RecallResult)
    assert [item.id for item in recalled.items] == [verdict["id"]]
    item = recalled.items[0]
    assert item.value == "Shanghai"
    assert item.why.rank > 0
    assert "live" in " ".join(item.why.matched).lower() or item.why.signals
    assert item.sources[0]["event"] == event["id"]
    assert recalled.trace_id

    # The side effect, on a platform that answers at once this time.
    slow_platform.delay = 0
    with desk.receipt(
        operation="articles.create",
        target=slow_platform.url,
        intent={"title": "Alice moved"},
        idempotency_key="pub-loop-1",
        reconciler=MANUAL,
    ) as r:
        r.submitted()
        answer = httpx.post(slow_platform.url, json={"title": "Alice moved"}, timeout=5)
        r.succeeded(external_id=answer.json()["id"], evidence={"status": answer.status_code})
    stored = Receipt.objects.get(id=r.id)
    assert (stored.state, stored.external_id) == ("succeeded", "article-1")
    assert list(
        ReceiptTransition.objects.filter(receipt=stored)
        .order_by("at", "id")
        .values_list("to_state", flat=True)
    ) == ["planned", "submitted", "succeeded"]

    saved = desk.checkpoint(
        "publish-alice",
        input_fingerprint="sha256:abc",
        stage="published",
        stage_complete=True,
        effects=[r.id],
    )
    assert saved["effects"] == [r.id]
    assert Checkpoint.objects.get(task_key="publish-alice").stage == "published"

    answer = desk.recover("publish-alice", "sha256:abc")
    assert (answer["decision"], answer["reason"]) == ("no_op", "already_verified")
    assert [effect["id"] for effect in answer["effects"]] == [r.id]
    assert desk.recover("publish-alice", "sha256:other")["reason"] == "input_changed"
    assert desk.recover("never-ran", "sha256:abc")["decision"] == "fresh"


def test_recover_reports_when_the_run_was_triggered(desk, acme):
    # The decision's latency counts from the trigger: a run triggered a minute ago that
    # asks now is recorded as about a minute, not as this request's few milliseconds.
    triggered_at = datetime.now(UTC) - timedelta(seconds=60)
    assert desk.recover("late-run", "sha256:1", triggered_at=triggered_at)["decision"] == "fresh"
    desk.recover("prompt-run", "sha256:1")
    # Newest first.
    prompt, late = RecoveryAnswerRecord.objects.filter(tenant=acme).order_by("-id")[:2]
    assert late.from_trigger and 60 <= late.latency_seconds < 600
    assert not prompt.from_trigger and prompt.latency_seconds < 60


def test_problems_become_typed_errors_with_their_code(desk, live_server, issue_token):
    with pytest.raises(SourceRequired) as missing_source:
        desk.propose("user:alice", "home_city", "Shanghai", sources=[])
    error = missing_source.value
    assert (error.status, error.code) == (400, "source_required")
    assert error.problem["type"].endswith("source_required")
    assert isinstance(error, InvalidRequest)
    assert error.detail
    assert Claim.objects.count() == 0

    with pytest.raises(SubjectRequired):
        desk.recall("", "anything")

    with pytest.raises(TimeInFuture) as future:
        desk.log_event("user:alice", "user_statement", "hi", observed_at="9999-12-31T00:00:00Z")
    assert (future.value.code, list(future.value.problem["errors"])) == (
        "time_in_future",
        ["observed_at"],
    )
    assert isinstance(future.value, InvalidRequest)

    with pytest.raises(NotFoundError) as missing:
        desk.get_claim(str(uuid.uuid4()))
    assert missing.value.code == "not_found"

    receipt, created = desk.plan_receipt(
        operation="articles.create",
        target="https://blog.example/api/articles",
        intent={"title": "x"},
        idempotency_key="errors-1",
        reconciler=MANUAL,
    )
    assert created
    with pytest.raises(IllegalTransition) as illegal:
        desk.transition_receipt(receipt["id"], "succeeded", external_id="a-1")
    assert illegal.value.allowed == ["submitted"]
    assert isinstance(illegal.value, ConflictError)
    assert Receipt.objects.get(id=receipt["id"]).state == "planned"

    with pytest.raises(PersonRequired) as person:
        desk.request_deletion(claim_id=str(uuid.uuid4()))
    assert (person.value.status, person.value.code) == (403, "person_required")

    with (
        Desk(
            live_server.url, issue_token(capabilities=["events:write"]), timeout=TIMEOUT
        ) as narrow,
        pytest.raises(CapabilityRequired) as capability,
    ):
        narrow.recall("user:alice", "x")
    assert capability.value.code == "capability_required"

    stranger = Desk(live_server.url, "mdk_not-a-token", timeout=TIMEOUT)
    with stranger, pytest.raises(AuthenticationError) as unknown_token:
        stranger.get_claim(str(uuid.uuid4()))
    assert unknown_token.value.status == 401
    assert unknown_token.value.code in {"authentication_failed", "not_authenticated"}

    assert error_class_for("illegal_transition") is IllegalTransition
    assert issubclass(error_class_for("approval_required", 409), ConflictError)
    assert error_class_for("approval_required").__name__ == "ApprovalRequired"
    erased = error_class_for("idempotent_reply_erased", 409)(
        {"code": "idempotent_reply_erased", "status": 409, "id": "r-1", "original_status": 201}
    )
    assert isinstance(erased, IdempotentReplyErased) and isinstance(erased, ConflictError)
    assert (erased.original_id, erased.original_status) == ("r-1", 201)
    assert error_class_for("some_new_code", 409) is ConflictError
    assert issubclass(error_class_for("some_new_code", 500), ProblemError)


def test_iteration_follows_the_cursor_over_several_pages(desk):
    event_id = _said(desk, "my favourite colours")
    items = [
        {
            "subject": "user:alice",
            "kind": "fact",
            "predicate": f"colour_{n}",
            "value": f"colour {n}",
            "text": f"Alice's colour number {n}",
            "authority": "user_explicit",
            "basis": "reported",
            "sources": [{"event": event_id}],
        }
        for n in range(5)
    ]
    verdicts = desk.propose_batch(items)
    assert [v["decision"] for v in verdicts] == ["accepted"] * 5

    first = desk.list_claims(subject="user:alice", limit=2)
    assert len(first["results"]) == 2
    assert first["next"]
    seen = [claim["id"] for claim in desk.iter_claims(subject="user:alice", limit=2)]
    assert len(seen) == len(set(seen)) == 5
    assert set(seen) == {str(pk) for pk in Claim.objects.values_list("id", flat=True)}


def test_hot_memory_is_revalidated_with_its_etag(desk):
    _accepted_fact(desk, "home_city", "Shanghai", "Alice lives in Shanghai")
    first = desk.hot_memory("user:alice", budget_chars=500)
    assert not first.not_modified
    assert first.etag
    assert "Shanghai" in first.text

    again = desk.hot_memory("user:alice", budget_chars=500)
    assert again.not_modified
    assert (again.text, again.etag) == (first.text, first.etag)

    _accepted_fact(desk, "employer", "Acme", "Alice works at Acme")
    changed = desk.hot_memory("user:alice", budget_chars=500)
    assert not changed.not_modified
    assert changed.etag != first.etag
    assert "Acme" in changed.text


def test_hot_memory_takes_a_scope_and_keeps_an_etag_per_scope(desk):
    _accepted_fact(desk, "home_city", "Shanghai", "Alice lives in Shanghai")
    verdict = desk.propose(
        "user:alice",
        "notify_channel",
        "in-app",
        text="For the CRM project Alice wants in-app notifications",
        sources=[_said(desk, "For CRM, in-app notifications please")],
        authority="user_explicit",
        basis="reported",
        scope={"project": "crm"},
    )
    assert verdict["decision"] == "accepted", verdict
    unscoped = desk.hot_memory("user:alice", budget_chars=500)
    in_crm = desk.hot_memory("user:alice", budget_chars=500, scope={"project": "crm"})
    assert "Shanghai" in unscoped.text and "in-app" not in unscoped.text
    assert "Shanghai" in in_crm.text and "in-app" in in_crm.text
    # Each scope revalidates its own block.
    assert desk.hot_memory("user:alice", budget_chars=500, scope={"project": "crm"}).not_modified
    assert desk.hot_memory("user:alice", budget_chars=500).not_modified


def test_a_timeout_inside_the_receipt_block_is_an_unknown_outcome_never_a_retry(
    desk, slow_platform
):
    with (
        pytest.raises(httpx.ReadTimeout),
        desk.receipt(
            operation="articles.create",
            target=slow_platform.url,
            intent={"title": "Alice moved"},
            idempotency_key="pub-timeout-1",
            reconciler=MANUAL,
        ) as r,
    ):
        r.submitted()
        httpx.post(slow_platform.url, json={"title": "Alice moved"}, timeout=0.5)
        r.succeeded(external_id="never reached")

    stored = Receipt.objects.get(id=r.id)
    assert stored.state == "outcome_unknown"
    assert stored.error_code == "timeout"
    assert slow_platform.writes == 1

    # Running the same step again finds the receipt and does not make the call.
    ran = False
    with (
        pytest.raises(ReceiptAlreadyUsed) as used,
        desk.receipt(
            operation="articles.create",
            target=slow_platform.url,
            intent={"title": "Alice moved"},
            idempotency_key="pub-timeout-1",
            reconciler=MANUAL,
        ),
    ):
        ran = True
    assert not ran
    assert used.value.receipt["id"] == r.id
    assert slow_platform.writes == 1
    assert Receipt.objects.count() == 1


def test_an_exception_before_submitted_leaves_the_receipt_planned(desk):
    with (
        pytest.raises(ValueError, match="bad input"),
        desk.receipt(
            operation="articles.create",
            target="https://blog.example/api/articles",
            intent={"title": "x"},
            idempotency_key="pub-early-1",
            reconciler=MANUAL,
        ) as r,
    ):
        raise ValueError("bad input")
    assert Receipt.objects.get(id=r.id).state == "planned"
    assert list(
        ReceiptTransition.objects.filter(receipt_id=r.id).values_list("to_state", flat=True)
    ) == ["planned"]


def test_other_exceptions_after_submitted_are_unknown_unless_the_caller_reported(desk):
    with (
        pytest.raises(KeyError),
        desk.receipt(
            operation="articles.create",
            target="https://blog.example/api/articles",
            intent={"title": "y"},
            idempotency_key="pub-key-error",
            reconciler=MANUAL,
        ) as r,
    ):
        r.submitted()
        raise KeyError("id")
    stored = Receipt.objects.get(id=r.id)
    assert (stored.state, stored.error_code) == ("outcome_unknown", "client_exception")

    with (
        pytest.raises(RuntimeError),
        desk.receipt(
            operation="articles.create",
            target="https://blog.example/api/articles",
            intent={"title": "z"},
            idempotency_key="pub-rejected",
            reconciler=MANUAL,
        ) as refused,
    ):
        refused.submitted()
        refused.rejected(error_code="slug_taken")
        raise RuntimeError("platform said no")
    stored = Receipt.objects.get(id=refused.id)
    assert (stored.state, stored.error_code) == ("rejected", "slug_taken")


def test_the_async_desk_runs_the_same_loop(live_server, agent_token, slow_platform):
    async def loop() -> tuple[str, str, str]:
        async with AsyncDesk(live_server.url, agent_token, timeout=TIMEOUT) as desk:
            event = await desk.log_event("user:alice", "user_statement", "I moved to Lyon")
            verdict = await desk.propose(
                "user:alice",
                "home_city",
                "Lyon",
                text="Alice lives in Lyon",
                sources=[event["id"]],
                authority="user_explicit",
                basis="reported",
            )
            recalled = await desk.recall("user:alice", "where does alice live")
            assert [item.id for item in recalled.items] == [verdict["id"]]
            assert recalled.items[0].why.rank > 0

            with pytest.raises(httpx.ReadTimeout):
                async with desk.receipt(
                    operation="articles.create",
                    target=slow_platform.url,
                    intent={"title": "Lyon"},
                    idempotency_key="async-pub-1",
                    reconciler=MANUAL,
                ) as r:
                    await r.submitted()
                    async with httpx.AsyncClient(timeout=0.5) as platform:
                        await platform.post(slow_platform.url, json={"title": "Lyon"})
            await desk.checkpoint(
                "async-task", input_fingerprint="sha256:1", stage="publish", effects=[r.id]
            )
            answer = await desk.recover("async-task", "sha256:1")

            with pytest.raises(SourceRequired):
                await desk.propose("user:alice", "home_city", "Paris", sources=[])
            seen = [c["id"] async for c in desk.iter_claims(subject="user:alice", limit=1)]
            assert seen == [verdict["id"]]
            hot = await desk.hot_memory("user:alice")
            assert (await desk.hot_memory("user:alice")).not_modified
            assert "Lyon" in hot.text
            return r.id, answer["decision"], answer["reason"]

    receipt_id, decision, reason = asyncio.run(loop())
    stored = Receipt.objects.get(id=receipt_id)
    assert (stored.state, stored.error_code) == ("outcome_unknown", "timeout")
    assert slow_platform.writes == 1
    assert (decision, reason) == ("verify_only", "effect_unverified")


def test_skills_upload_evaluate_and_page_through_versions(live_server, issue_token, editor):
    from skills.models import EvaluationRun, SkillVersion
    from tests.skills.conftest import api_case, package

    token = issue_token(capabilities=["skills:read", "skills:write", "evaluations:write"])
    evaluator_token = issue_token(capabilities=["evaluations:write"], owner=editor)
    with Desk(live_server.url, token, timeout=TIMEOUT) as desk:
        desk.create_skill("pdf-tools", "PDF tools")
        first = desk.upload_skill_version("pdf-tools", package())
        assert (first["number"], first["status"]) == (1, "draft")
        assert desk.upload_skill_version("pdf-tools", package())["number"] == 1
        second = desk.upload_skill_version("pdf-tools", package(body="# PDF tools\n\nv2\n"))
        assert second["number"] == 2
        assert [v["number"] for v in desk.iter_skill_versions("pdf-tools", limit=1)] == [2, 1]
        with pytest.raises(ConflictError) as own:
            desk.record_evaluation(
                "pdf-tools", 2, category="normal", passed=True, content_hash=second["content_hash"]
            )
        assert own.value.code == "evaluator_is_author"
        with Desk(live_server.url, evaluator_token, timeout=TIMEOUT) as independent:
            run = independent.record_evaluation(
                "pdf-tools",
                2,
                category="normal",
                passed=True,
                content_hash=second["content_hash"],
                environment={"model": "test-model", "tools": {}},
                cases=[api_case()],
            )
        assert (run["independent"], len(run["cases"])) == (True, 1)
        assert desk.submit_skill_version("pdf-tools", 2)["status"] == "in_review"
        assert desk.skill_file("pdf-tools", 2, "SKILL.md").decode().endswith("v2\n")
        with pytest.raises(NotFoundError):
            desk.resolve_skill("pdf-tools")  # nothing is published yet
    assert SkillVersion.objects.filter(skill__slug="pdf-tools").count() == 2
    assert EvaluationRun.objects.filter(version__number=2, passed=True).count() == 1


@pytest.mark.parametrize(
    "path",
    [
        "../../../../../recall/traces/{trace}",
        "references/../../../../../../recall/traces/{trace}",
        "%2e%2e/%2e%2e/%2e%2e/%2e%2e/%2e%2e/recall/traces/{trace}",
        "..%2F..%2F..%2F..%2F..%2Frecall%2Ftraces%2F{trace}",
        "..\\..\\..\\..\\..\\recall\\traces\\{trace}",
        "/api/v1/recall/traces/{trace}",
        "references//guide.md",
        "references/./guide.md",
        "references/guide.md/",
        "references/guide.md\x00",
        "",
    ],
)
def test_a_skill_file_path_that_leaves_the_skill_is_refused_unsent(desk, served_paths, path):
    with pytest.raises(UnsafePathSegment, match="file path"):
        desk.skill_file("pdf-tools", 1, path.format(trace=uuid.uuid4()))
    assert served_paths == []


@pytest.mark.parametrize(
    "call",
    [
        lambda desk: desk.get_skill("../recall"),
        lambda desk: desk.get_skill("PDF_tools"),
        lambda desk: desk.skill_body("pdf-tools", -1),
        lambda desk: desk.skill_diff("pdf-tools", 1, "../2"),
        lambda desk: next(desk.iter_label_history("pdf-tools", "../../claims")),
        lambda desk: desk.recall_trace("../../claims"),
        lambda desk: desk.get_event("%2e%2e"),
        lambda desk: desk.get_receipt(".."),
        lambda desk: desk.get_checkpoint(".."),
        lambda desk: desk.get_checkpoint("%2e%2e"),
        lambda desk: desk.get_checkpoint("a/../../recall"),
        lambda desk: desk.hot_memory("user:../../recall"),
    ],
    ids=[
        "slug-climbs",
        "slug-uppercase",
        "negative-version",
        "version-string",
        "label-climbs",
        "trace-id-climbs",
        "event-id-encoded-dots",
        "receipt-id-dots",
        "task-key-dots",
        "task-key-encoded-dots",
        "task-key-climbs",
        "subject-climbs",
    ],
)
def test_ids_slugs_and_keys_that_leave_their_endpoint_are_refused_unsent(desk, served_paths, call):
    with pytest.raises(UnsafePathSegment):
        call(desk)
    assert served_paths == []


def test_an_agent_reads_its_recall_trace_and_reports_what_it_used(desk):
    claim_id = _accepted_fact(desk, "home_city", "Shanghai", "Alice lives in Shanghai")
    recalled = desk.recall("user:alice", "where does alice live")
    trace = desk.recall_trace(recalled.trace_id)
    assert [entry["id"] for entry in trace["returned"]] == [claim_id]
    assert trace["returned"][0]["used"] is None
    reported = desk.recall_used(
        recalled.trace_id, [{"id": claim_id, "position": 0, "cited": True}], run_id="run-7"
    )
    assert reported["recorded"] == [claim_id] and reported["unused"] == []
    assert desk.recall_trace(recalled.trace_id)["returned"][0]["used"] is True


def test_an_agent_finds_a_skill_in_the_catalog_checks_a_run_and_loads_it_by_level(
    live_server, issue_token, acme, admin_user, admin2, editor
):
    from accounts.actors import Actor
    from accounts.models import AgentToken, Role
    from accounts.services import agent_token_create
    from skills import services
    from skills.models import EvaluationCategory
    from tests.skills.conftest import package, service_case

    ada, abe = Actor.for_user(admin_user, Role.ADMIN), Actor.for_user(admin2, Role.ADMIN)
    skill = services.skill_create(tenant=acme, slug="blog-publish", actor=ada)
    version, _ = services.skill_version_upload(
        tenant=acme,
        skill=skill,
        data=package(
            "blog-publish",
            description="Publish an article to the blog.",
            credentials=[{"slot": "blog_token", "purpose": "post"}],
            files={"references/style.md": "Short titles.\n"},
            **{"allowed-tools": "http_post"},
        ),
        actor=ada,
    )
    evaluator = Actor.for_token(agent_token_create(tenant=acme, name="ev", owner=editor).token)
    for category in EvaluationCategory.values:
        services.evaluation_record(
            tenant=acme,
            version=version,
            actor=evaluator,
            category=category,
            passed=True,
            content_hash=version.content_hash,
            environment={"model": "test-model", "tools": {"http_post": "2.1"}},
            cases=[service_case(category)],
        )
    services.skill_version_submit(tenant=acme, version=version, actor=ada)
    services.skill_version_approve(tenant=acme, version=version, actor=abe)
    services.skill_version_publish(tenant=acme, version=version, actor=abe)

    token = issue_token(capabilities=["skills:read"])
    # An admin granted the agent's token the tool the skill needs.
    services.token_grant_add(
        tenant=acme,
        actor=ada,
        token=AgentToken.objects.filter(tenant=acme).latest("id"),
        kind="tool",
        name="http_post",
    )
    with Desk(live_server.url, token, timeout=TIMEOUT) as desk:
        assert desk.skill_catalog("publish an article", tools=[])["excluded"][0]["skill"] == (
            "blog-publish"
        )
        (entry,) = desk.skill_catalog("publish an article", tools=["http_post"])["results"]
        assert entry["credentials"] == [{"slot": "blog_token", "purpose": "post"}]
        blocked = desk.instantiate_skill("blog-publish", entry["version"], tools=["http_post"])
        assert [r["code"] for r in blocked["reasons"]] == ["slot_unbound"]
        ready = desk.instantiate_skill(
            "blog-publish",
            entry["version"],
            bindings={"blog_token": "vault:blog"},
            tools=["http_post"],
        )
        assert ready["state"] == "ready"
        body = desk.skill_body("blog-publish", entry["version"])
        assert [f["path"] for f in body["files"]] == ["SKILL.md", "references/style.md"]
        assert desk.skill_file("blog-publish", 1, "references/style.md") == b"Short titles.\n"
