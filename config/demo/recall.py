"""Demo data for the memory desk: an agent's session in the ledger, and recalls whose uses
the agent reported, so the ledger, the trace pages and context redundancy have something
to show after `make run`."""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone

from accounts.actors import Actor
from accounts.models import Tenant
from config.demo.memory import DemoTokens
from memory.claims.selectors.claims import subject_get
from memory.claims.selectors.recall_ranking import RecallQuery
from memory.claims.services.claim_inputs import CandidateInput, SourceInput
from memory.claims.services.claims import claim_submit
from memory.claims.services.events import event_record
from memory.claims.services.recall import recall_run
from memory.claims.services.recall_uses import UseReport, recall_uses_report

DEPLOY_STEPS = [
    "Started the weekly CRM deploy check",
    "Listed the CRM services: api, worker, scheduler",
    "cloud API: api is healthy in region cn-shanghai",
    "cloud API: worker is healthy in region cn-shanghai",
    "The wiki still says the CRM runs in cn-beijing; asked a person to settle it",
    "cloud API: scheduler restarted after a failed health check",
    "Scheduler healthy again after the restart",
    "Wrote the weekly summary for the CRM team",
]


def seed_recall_desk(*, tenant: Tenant, tokens: DemoTokens) -> None:
    tools = Actor.for_token(tokens.tools)
    agent = Actor.for_token(tokens.agent)
    start = timezone.now() - timedelta(hours=3)
    for minute, text in enumerate(DEPLOY_STEPS):
        event_record(
            tenant=tenant,
            actor=tools,
            subject_key="project:crm",
            kind="agent_step",
            text=text,
            run_id="crm-deploy-7",
            agent="ops-runner",
            observed_at=start + timedelta(minutes=minute),
        )
    checked = event_record(
        tenant=tenant,
        actor=tools,
        subject_key="project:crm",
        kind="tool_result",
        text="pager API: the ops team is on call for the CRM this week",
        source_uri="pager://schedules/crm",
        observed_at=start,
    )
    claim_submit(
        tenant=tenant,
        actor=tools,
        candidate=CandidateInput(
            subject="project:crm",
            kind="fact",
            predicate="on_call",
            value="ops team",
            text="The ops team is on call for the CRM",
            authority="tool_verified",
            basis="verified",
            sources=[SourceInput(event=checked.id)],
        ),
    )
    crm = subject_get(tenant=tenant, key="project:crm")
    # The agent asks twice where the CRM runs; each time it puts only the region into
    # its context, and the on-call fact it was also handed goes unused.
    for cited in (True, False):
        result, trace_id = recall_run(
            tenant=tenant,
            actor=agent,
            subject_key="project:crm",
            q=RecallQuery(subject=crm, query="which region is the CRM deployed in"),
            trace_write="inline",
        )
        used = [item.claim for item in result.items if item.claim.predicate == "deploy_region"]
        if used:
            recall_uses_report(
                tenant=tenant,
                actor=agent,
                trace_id=trace_id,
                allowed_subjects=None,
                items=[UseReport(claim_id=str(used[0].id), position=0, cited=cited)],
                run_id="crm-deploy-7",
            )
