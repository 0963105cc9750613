from __future__ import annotations

from typing import Any

from rest_framework import serializers

from common.fields import StrictBooleanField, StrictUUIDField

# What an agent may name a run or a task: an identifier, never prose.
RUN_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._:/@#-]{0,199}$"


class TraceClaimOut(serializers.Serializer):
    id = serializers.UUIDField()
    rank = serializers.FloatField(allow_null=True)
    signals = serializers.DictField(help_text="Each ranking signal's rank (and score).")
    chars = serializers.IntegerField(allow_null=True)
    predicate = serializers.CharField()
    text = serializers.CharField(help_text="The claim as it stands now (empty once erased).")
    status = serializers.CharField()
    subject = serializers.CharField()


class TraceReturnedOut(TraceClaimOut):
    position = serializers.IntegerField(help_text="Its place in the answer, 0 first.")
    used = serializers.BooleanField(
        allow_null=True,
        help_text="Whether the agent reported putting it into the context; null when the "
        "agent reported nothing for this trace.",
    )
    cited = serializers.BooleanField()
    prompt_position = serializers.IntegerField(allow_null=True)
    relevance = serializers.CharField(
        allow_null=True, help_text="`strong` or `weak`; null without a query or in older traces."
    )


class TraceCutOut(TraceClaimOut):
    reason = serializers.ChoiceField(
        choices=["over_budget", "below_limit", "below_floor"],
        help_text="`over_budget`: its text did not fit in what was left of `budget_chars`; "
        "`below_limit`: `limit` better-ranked claims were returned; `below_floor`: recall "
        "abstained, no candidate was relevant enough.",
    )


class LegalSetOut(serializers.Serializer):
    legal = serializers.IntegerField(
        allow_null=True, help_text="Claims of the subject inside the legal set."
    )
    excluded = serializers.DictField(
        child=serializers.IntegerField(), help_text="Claims each rule excluded, by reason."
    )


class TraceAbstentionOut(serializers.Serializer):
    judged = serializers.BooleanField(
        help_text="Whether recall could judge relevance: a question, and every legal claim "
        "measured (a vector or exact evidence)."
    )
    abstained = serializers.BooleanField(help_text="Whether recall answered nothing.")
    best = serializers.FloatField(allow_null=True, help_text="The best legal claim's relevance.")
    floor = serializers.FloatField(help_text="The relevance floor in force.")
    strong = serializers.FloatField(help_text="The relevance an item needed to be `strong`.")
    reason = serializers.CharField(
        allow_null=True, help_text="`nothing_relevant` when recall abstained."
    )
    asked = serializers.FloatField(
        required=False,
        allow_null=True,
        help_text="The question's similarity to the nearest common attribute of a person "
        "(what it asks about); a claim whose topic falls short of it lost relevance. Null "
        "without a vector, and absent from older traces.",
    )


class TraceBudgetOut(serializers.Serializer):
    budget_chars = serializers.IntegerField(allow_null=True)
    used_chars = serializers.IntegerField()
    over_budget = serializers.IntegerField()
    below_limit = serializers.IntegerField()


class TraceUseOut(serializers.Serializer):
    claim = serializers.UUIDField()
    position = serializers.IntegerField(allow_null=True)
    cited = serializers.BooleanField()
    harmful = serializers.BooleanField()
    run_id = serializers.CharField()
    task_id = serializers.CharField()
    reported_at = serializers.DateTimeField()


class TraceOut(serializers.Serializer):
    id = serializers.UUIDField()
    kind = serializers.ChoiceField(choices=["recall", "hot_memory"])
    subject = serializers.CharField()
    query = serializers.CharField()
    filters = serializers.DictField()
    created_at = serializers.DateTimeField()
    redacted = serializers.BooleanField(
        help_text="A deletion redacted the trace: query, filters and signals are gone."
    )
    duration_ms = serializers.FloatField()
    semantic = serializers.CharField(allow_null=True)
    abstention = TraceAbstentionOut(
        allow_null=True,
        help_text="Whether the evidence was enough to answer; null for hot memory and for "
        "traces written before recall could abstain.",
    )
    legal_set = LegalSetOut()
    rendered_context = serializers.CharField(
        allow_null=True,
        help_text="The returned claims' text as the agent got it, one per line; null for hot "
        "memory, older traces and redacted ones.",
    )
    context_tokens = serializers.IntegerField(
        allow_null=True,
        help_text="The context's size in tokens of the embedder's tokenizer (MiniLM WordPiece).",
    )
    budget = TraceBudgetOut()
    returned = TraceReturnedOut(many=True)
    cut = TraceCutOut(many=True)
    uses = TraceUseOut(many=True)


class UseItemIn(serializers.Serializer):
    id = StrictUUIDField()
    position = serializers.IntegerField(
        min_value=0, max_value=100_000, required=False, allow_null=True, default=None
    )
    cited = StrictBooleanField(required=False, default=False)
    harmful = StrictBooleanField(
        required=False,
        default=False,
        help_text="The claim turned out wrong or misleading once it was in the context.",
    )


class UsesIn(serializers.Serializer):
    items = serializers.ListField(child=UseItemIn(), allow_empty=False, max_length=500)
    run_id = serializers.RegexField(
        RUN_ID_PATTERN, required=False, allow_blank=True, default="", max_length=200
    )
    task_id = serializers.RegexField(
        RUN_ID_PATTERN, required=False, allow_blank=True, default="", max_length=200
    )

    def validate_items(self, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        ids = [str(item["id"]) for item in items]
        if len(set(ids)) != len(ids):
            raise serializers.ValidationError("Name each claim once.")
        return items


class UsesOut(serializers.Serializer):
    trace_id = serializers.UUIDField()
    recorded = serializers.ListField(child=serializers.UUIDField())
    already_reported = serializers.ListField(child=serializers.UUIDField())
    unused = serializers.ListField(
        child=serializers.UUIDField(),
        help_text="Claims the trace returned that no report names.",
    )


class CounterfactualIn(serializers.Serializer):
    claim = StrictUUIDField()
    change = serializers.ChoiceField(
        choices=["hide", "stale", "correct", "outdated", "irrelevant"],
        help_text="`hide`: as if the claim did not exist; `stale`: as if past its refresh "
        "time; `correct`: as if it said `text` (and `value`); `outdated`: the revision it "
        "superseded in its place; `irrelevant`: an active claim of the subject on another "
        "predicate, not returned by the trace, in its place.",
    )
    text = serializers.CharField(required=False, allow_blank=False, max_length=2000)
    value = serializers.JSONField(required=False, allow_null=True, default=None)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if attrs["change"] == "correct" and not attrs.get("text"):
            raise serializers.ValidationError({"text": ["A correction says what the claim says."]})
        return attrs


class ReplayItemOut(serializers.Serializer):
    id = serializers.UUIDField()
    subject = serializers.CharField()
    predicate = serializers.CharField()
    text = serializers.CharField()
    rank = serializers.FloatField()
    position = serializers.IntegerField()
    stale = serializers.BooleanField()


class ReplayOut(serializers.Serializer):
    items = ReplayItemOut(many=True)
    excluded = serializers.DictField(child=serializers.IntegerField())


class MovedOut(serializers.Serializer):
    id = serializers.UUIDField()
    before = serializers.IntegerField()
    after = serializers.IntegerField()


class DifferenceOut(serializers.Serializer):
    removed = serializers.ListField(child=serializers.UUIDField())
    added = serializers.ListField(
        child=serializers.UUIDField(), help_text="Returned only with the change: what came next."
    )
    moved = MovedOut(many=True)
    unchanged = serializers.BooleanField()


class CounterfactualOut(serializers.Serializer):
    trace_id = serializers.UUIDField()
    claim = serializers.UUIDField()
    change = serializers.CharField()
    recorded = serializers.ListField(
        child=serializers.UUIDField(), help_text="What the trace returned when it was asked."
    )
    baseline = ReplayOut(help_text="The trace replayed against memory as it is now.")
    counterfactual = ReplayOut(help_text="The same replay with the change.")
    difference = DifferenceOut()
