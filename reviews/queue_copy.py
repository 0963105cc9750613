"""What the queue pages say about each queue: what lands in it, and a reason code to filter by."""

from __future__ import annotations

from reviews.models import Queue

# What lands in each queue, said so that an empty queue does not read as a problem.
QUEUE_HELP = {
    Queue.CANDIDATES: "Memories land here when the write gate would not accept them on its "
    "own: inferences, reports and anything that looked like an instruction.",
    Queue.CONFLICTS: "Claims land here when two active ones disagree about the same thing "
    "and nothing could settle it by authority or observation time.",
    Queue.MANUAL_REVIEW: "Side effects land here when reconciliation could not prove their "
    "outcome: check the outside system, then record what happened.",
    Queue.SKILL_PUBLICATION: "Skill versions land here when they are submitted for approval. "
    "Someone other than the author approves.",
    Queue.DELETIONS: "Deletions land here when they fail or their verification finds "
    "something left.",
    Queue.STALE: "Claims land here when they pass their refresh date and agents keep asking "
    "for them, or when an agent reports that one misled it.",
    Queue.APPROVALS: "Side effects land here when an operation's policy holds them for a "
    "person's approval: read the intent; the agent may submit only after someone other than "
    "the person it acts for approves.",
}

# The reason filter's example: a reason code items in that queue really carry.
REASON_EXAMPLES = {
    Queue.CANDIDATES: "unverified_authority",
    Queue.CONFLICTS: "contradicts_active",
    Queue.MANUAL_REVIEW: "manual_reconciler",
    Queue.SKILL_PUBLICATION: "capability_added",
    Queue.DELETIONS: "dirty:everywhere",
    Queue.STALE: "stale_in_demand",
    Queue.APPROVALS: "approval_required",
}
