"""Demo receipts and checkpoints for `make run`: one receipt in each state people meet."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.utils import timezone

from accounts.actors import Actor
from accounts.models import ActorKind, AgentToken, Tenant
from common.fingerprints import fingerprint
from memory.receipts.models.receipts import Receipt, ReceiptState
from memory.receipts.services.platforms import operation_policy_set, platform_register
from memory.receipts.services.receipt_reads import receipts_reconcile
from memory.receipts.services.receipts import receipt_create, receipt_transition
from memory.receipts.services.recovery import checkpoint_save

BLOG = "https://blog.example/api/articles"
# `.invalid` never resolves (RFC 2606): should a demo receipt's outcome become
# unknown (the in-flight one, once its day-long lease lapses), its reads fail
# harmlessly, are retried with backoff, and the receipt ends in manual_review.
# Lookups read only from registered platforms, so the demo registers this one.
BLOG_PLATFORM_NAME = "demo-blog"
BLOG_PLATFORM_URL = "https://blog.invalid/api/"
LOOKUP = {
    "adapter": "http",
    "lookup_url": "https://blog.invalid/api/articles?key={idempotency_key}",
    "absence_proof": "status_404",
    "external_id_field": "id",
}


def _agent(tenant: Tenant) -> Actor:
    token = AgentToken.objects.filter(tenant=tenant, name="demo-agent").first()
    if token is not None:
        return Actor.for_token(token)
    return Actor(kind=ActorKind.AGENT, id="", label="demo-agent")


def seed_receipts(*, tenant: Tenant) -> None:
    """Receipts in several states, including one waiting in manual_review."""
    agent = _agent(tenant)
    platform_register(
        tenant=tenant,
        actor=Actor.system("demo"),
        name=BLOG_PLATFORM_NAME,
        base_url=BLOG_PLATFORM_URL,
    )

    def plan(key: str, operation: str, intent: dict, reconciler: dict | None = None) -> Receipt:
        receipt, _ = receipt_create(
            tenant=tenant,
            actor=agent,
            operation=operation,
            target=BLOG,
            intent=intent,
            idempotency_key=key,
            reconciler=reconciler or LOOKUP,
            run_id="demo-run-1",
        )
        return receipt

    def move(receipt: Receipt, to: str, **extra: Any) -> None:
        receipt_transition(tenant=tenant, receipt_id=receipt.pk, actor=agent, to=to, **extra)

    plan("demo-newsletter-2026-08-17", "newsletter.send", {"issue": 34, "list": "weekly"})

    published_intent = {"title": "Receipts before calls", "slug": "receipts-before-calls"}
    published = plan("demo-article-2026-08-16", "articles.create", published_intent)
    move(published, ReceiptState.SUBMITTED)
    move(published, ReceiptState.SUCCEEDED, external_id="art_1042", evidence={"status": 201})

    taken = plan("demo-article-2026-08-15", "articles.create", {"slug": "hello-world"})
    move(taken, ReceiptState.SUBMITTED)
    move(taken, ReceiptState.REJECTED, error_code="slug_taken", evidence={"status": 409})

    in_flight = plan("demo-article-2026-08-18", "articles.create", {"slug": "in-flight"})
    move(in_flight, ReceiptState.SUBMITTED, lease_seconds=86400)

    # A platform without lookups: its unknown outcome can only go to a person.
    unknown = plan(
        "demo-comment-2026-08-16",
        "comments.create",
        {"thread": "t-881", "text": "Thanks, fixed in v2."},
        reconciler={"adapter": "manual"},
    )
    move(unknown, ReceiptState.SUBMITTED)
    move(unknown, ReceiptState.OUTCOME_UNKNOWN, error_code="connection_reset")
    receipts_reconcile(receipt_ids=[unknown.pk], worker=Actor.system("demo reconciler"))

    checkpoint_save(
        tenant=tenant,
        actor=agent,
        task_key="daily-publish:2026-08-16",
        run_id="demo-run-1",
        input_fingerprint=fingerprint(published_intent),
        stage="verify",
        stage_complete=True,
        effects=[published.pk],
        expires_at=timezone.now() + timedelta(days=7),
    )
    checkpoint_save(
        tenant=tenant,
        actor=agent,
        task_key="thread-reply:t-881",
        run_id="demo-run-1",
        input_fingerprint=fingerprint({"thread": "t-881"}),
        stage="reply",
        effects=[unknown.pk],
    )
    # Set after the receipts above were reported, as an admin would tighten it later:
    # from now on an agent's articles.create succeeds only with the platform's id and
    # the answer's status as evidence.
    operation_policy_set(
        tenant=tenant,
        actor=Actor.system("demo"),
        platform=BLOG_PLATFORM_NAME,
        operation="articles.create",
        require_external_id=True,
        evidence_fields=["status"],
    )
