from __future__ import annotations

from typing import Any

from rest_framework import serializers

from memory.claims.selectors.ledger_search import LedgerEvent, RunHit, RunSummary

MODES = ("discovery", "scroll", "browse")
LIMITS = {"discovery": (10, 50), "scroll": (50, 200), "browse": (20, 100)}


class LedgerSearchIn(serializers.Serializer):
    mode = serializers.ChoiceField(choices=MODES, required=False, default="discovery")
    subject = serializers.ListField(
        child=serializers.CharField(max_length=255), allow_empty=False, max_length=20
    )
    q = serializers.CharField(required=False, allow_blank=True, default="", max_length=500)
    run_id = serializers.CharField(required=False, allow_blank=True, default="", max_length=200)
    agent = serializers.CharField(required=False, allow_blank=True, default="", max_length=100)
    cutoff = serializers.DateTimeField(required=False, allow_null=True, default=None)
    window = serializers.IntegerField(min_value=0, max_value=10, required=False, default=2)
    limit = serializers.IntegerField(min_value=1, max_value=200, required=False, default=None)
    cursor = serializers.CharField(required=False, allow_blank=True, default="", max_length=500)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        default, most = LIMITS[attrs["mode"]]
        if attrs["limit"] is None:
            attrs["limit"] = default
        elif attrs["limit"] > most:
            raise serializers.ValidationError(
                {"limit": [f"At most {most} in {attrs['mode']} mode."]}
            )
        return attrs


def event_data(event: LedgerEvent) -> dict[str, Any]:
    return {
        "id": event.id,
        "subject": event.subject,
        "run_id": event.run_id,
        "position": event.position,
        "kind": event.kind,
        "agent": event.agent,
        "text": event.text,
        "observed_at": event.observed_at,
        "recorded_at": event.recorded_at,
        "roles": event.roles,
        "skipped_before": event.skipped_before,
        "signals": event.signals,
    }


def run_hit_data(run: RunHit) -> dict[str, Any]:
    return {
        "run_id": run.run_id,
        "subjects": run.subjects,
        "agents": run.agents,
        "events": run.events,
        "hits": run.hits,
        "score": run.score,
        "first_at": run.first_at,
        "last_at": run.last_at,
        "snippet": run.snippet,
        "matched": run.matched,
        "signals": run.signals,
        "window": [event_data(event) for event in run.window],
    }


def run_summary_data(run: RunSummary) -> dict[str, Any]:
    return {
        "run_id": run.run_id,
        "subjects": run.subjects,
        "agents": run.agents,
        "events": run.events,
        "first_at": run.first_at,
        "last_at": run.last_at,
        "first_text": run.first_text,
    }


class LedgerSearchOut(serializers.Serializer):
    mode = serializers.ChoiceField(choices=MODES)
    results = serializers.ListField(
        child=serializers.DictField(),
        help_text="discovery: runs `{run_id, subjects, agents, events, hits, score, first_at, "
        "last_at, snippet, matched, signals, window}`, where `signals` ⊆ fulltext/ngram/vector "
        "names what matched its hits and `window` is the bookend window (events with "
        "`position`, `roles` ⊆ first/hit/around/last, `skipped_before` and, on a hit, its "
        "`signals`); scroll: "
        "events in order; browse: runs `{run_id, subjects, agents, events, first_at, "
        "last_at, first_text}`.",
    )
    next = serializers.URLField(
        allow_null=True, help_text="scroll: the URL of the next page, or null."
    )
    semantic = serializers.ChoiceField(
        choices=["exact", "unavailable"],
        required=False,
        help_text="discovery: `exact` when the events' meaning was compared with the query's "
        "(exact similarity inside the legal set), `unavailable` when only words were "
        "(semantic search off, or the embedder failed).",
    )
