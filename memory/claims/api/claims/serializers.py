from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from common.fields import StrictBooleanField, StrictUUIDField
from common.hidden_chars import for_agent
from memory.claims.models import (
    PROTOCOL_KINDS,
    Authority,
    Basis,
    Claim,
    ClaimKind,
    ClaimSource,
    Event,
    Sensitivity,
)
from memory.claims.services.claim_inputs import CandidateInput, SourceInput


class EffectIn(serializers.Serializer):
    system = serializers.CharField(max_length=100, help_text="Where the change is: git, site…")
    operation = serializers.CharField(max_length=200)
    reference = serializers.CharField(
        max_length=500, help_text="What identifies it there: a commit SHA, a deployment id…"
    )


class EvidenceIn(serializers.Serializer):
    uri = serializers.CharField(max_length=1000)
    observed_at = serializers.DateTimeField()
    digest = serializers.CharField(max_length=200, required=False)
    excerpt = serializers.CharField(max_length=2000, required=False)

    def to_internal_value(self, data: Any) -> dict[str, Any]:
        values = super().to_internal_value(data)
        # Stored as JSON: the time as the text the API answers with.
        values["observed_at"] = values["observed_at"].isoformat()
        return dict(values)


class EventInput(serializers.Serializer):
    subject = serializers.CharField(max_length=255)
    run_id = serializers.CharField(max_length=200, required=False, allow_blank=True, default="")
    agent = serializers.CharField(max_length=100, required=False, allow_blank=True, default="")
    kind = serializers.CharField(max_length=64)
    text = serializers.CharField(required=False, allow_blank=True, default="", max_length=100_000)
    body = serializers.DictField(required=False, default=dict)
    source_uri = serializers.CharField(
        max_length=1000, required=False, allow_blank=True, default=""
    )
    observed_at = serializers.DateTimeField()
    sensitivity = serializers.ChoiceField(
        choices=Sensitivity.choices, required=False, default=Sensitivity.NORMAL
    )
    echo_of = serializers.ListField(
        child=StrictUUIDField(),
        required=False,
        default=list,
        help_text="Claims this event restates (recall put them in the agent's context). memdesk "
        "adds any recently recalled claim of the subject an agent's own text restates; the "
        "answer lists both. A claim citing only echoes is refused as self_reinforcement.",
    )
    stage = serializers.CharField(
        max_length=100,
        required=False,
        allow_blank=True,
        default="",
        help_text="The step of a run this event reports (e.g. discovery, draft, build, "
        "commit, push, deploy, verify, compensate). With it, `kind` is one of "
        f"{', '.join(PROTOCOL_KINDS)} and the other protocol fields may be given.",
    )
    input_fingerprint = serializers.CharField(
        max_length=200, required=False, allow_blank=True, default="",
        help_text="A digest of the run's inputs, so a later run can tell it is the same one.",
    )  # fmt: skip
    policy_version = serializers.CharField(
        max_length=100, required=False, allow_blank=True, default="",
        help_text="The version of the rules the step ran under.",
    )  # fmt: skip
    idempotency_key = serializers.CharField(
        max_length=255, required=False, allow_blank=True, default="",
        help_text="The key of the outside change the step is about (as on its receipt).",
    )  # fmt: skip
    effect = EffectIn(required=False, allow_null=True, default=None)
    # DRF's list serializers take `max_length`; its stubs do not declare it yet.
    evidence = EvidenceIn(many=True, required=False, default=list, max_length=50)  # type: ignore[call-arg]


class EventOutput(serializers.ModelSerializer):
    subject = serializers.CharField(source="subject.key")
    redacted = serializers.SerializerMethodField()
    effect = EffectIn(read_only=True, allow_null=True)
    evidence = EvidenceIn(many=True, read_only=True)

    class Meta:
        model = Event
        fields = [
            "id",
            "subject",
            "run_id",
            "agent",
            "kind",
            "text",
            "body",
            "source_uri",
            "observed_at",
            "recorded_at",
            "digest",
            "sensitivity",
            "echo_of",
            "stage",
            "input_fingerprint",
            "policy_version",
            "idempotency_key",
            "effect",
            "evidence",
            "redacted",
        ]

    def get_redacted(self, event: Event) -> bool:
        return event.redacted_at is not None


class SourceIn(serializers.Serializer):
    event = StrictUUIDField(required=False)
    uri = serializers.CharField(max_length=1000, required=False, allow_blank=True, default="")
    observed_at = serializers.DateTimeField(required=False)
    digest = serializers.CharField(max_length=80, required=False, allow_blank=True, default="")


class EventListInput(serializers.Serializer):
    subject = serializers.CharField(max_length=255, required=False, min_length=1)
    run_id = serializers.CharField(max_length=200, required=False, min_length=1)
    stage = serializers.CharField(max_length=100, required=False, min_length=1)
    kind = serializers.CharField(max_length=64, required=False, min_length=1)
    idempotency_key = serializers.CharField(max_length=255, required=False, min_length=1)


class CandidateIn(serializers.Serializer):
    subject = serializers.CharField(max_length=255)
    kind = serializers.ChoiceField(choices=ClaimKind.choices)
    predicate = serializers.RegexField(r"^[A-Za-z0-9_.:\-]{1,200}$")
    value = serializers.JSONField(required=False, allow_null=True, default=None)
    text = serializers.CharField(required=False, allow_blank=True, default="", max_length=10_000)
    scope = serializers.DictField(child=serializers.CharField(), required=False, default=dict)
    authority = serializers.ChoiceField(choices=Authority.choices)
    basis = serializers.ChoiceField(choices=Basis.choices)
    sources = SourceIn(many=True, required=False, default=list)
    valid_from = serializers.DateTimeField(required=False, allow_null=True, default=None)
    valid_to = serializers.DateTimeField(required=False, allow_null=True, default=None)
    available_at = serializers.DateTimeField(required=False, allow_null=True, default=None)
    refresh_after = serializers.DateTimeField(required=False, allow_null=True, default=None)
    expires_at = serializers.DateTimeField(required=False, allow_null=True, default=None)
    supersedes = StrictUUIDField(required=False, allow_null=True, default=None)
    sensitivity = serializers.ChoiceField(
        choices=Sensitivity.choices,
        required=False,
        default=Sensitivity.NORMAL,
        help_text="The agent's reading of the content's class. The stronger of it and the "
        "gate's rules wins: a hint can raise the class, never lower it.",
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if attrs.get("value") is None and not attrs.get("text"):
            raise serializers.ValidationError({"value": ["Give a value, a text, or both."]})
        valid_from, valid_to = attrs.get("valid_from"), attrs.get("valid_to")
        if valid_from and valid_to and valid_to <= valid_from:
            raise serializers.ValidationError({"valid_to": ["Must be after valid_from."]})
        return attrs

    def to_candidate(self, *, derived_from: list[Any] | None = None) -> CandidateInput:
        return self.candidate_from(self.validated_data, derived_from=derived_from)

    @staticmethod
    def candidate_from(
        validated: dict[str, Any], *, derived_from: list[Any] | None = None
    ) -> CandidateInput:
        data = dict(validated)
        sources = [SourceInput(**s) for s in data.pop("sources")]
        return CandidateInput(sources=sources, derived_from=derived_from or [], **data)


class DeriveIn(CandidateIn):
    derived_from = serializers.ListField(
        child=StrictUUIDField(), required=False, default=list, max_length=100
    )

    def to_candidate(self, *, derived_from: list[Any] | None = None) -> CandidateInput:
        data = dict(self.validated_data)
        data.pop("derived_from", None)
        sources = [SourceInput(**s) for s in data.pop("sources")]
        return CandidateInput(sources=sources, derived_from=derived_from or [], **data)


class BatchIn(serializers.Serializer):
    items = serializers.ListField(
        child=serializers.DictField(), min_length=1, max_length=1000, allow_empty=False
    )


class ReviewRef(serializers.Serializer):
    id = serializers.IntegerField()
    queue = serializers.CharField()


class VerdictOut(serializers.Serializer):
    id = serializers.UUIDField()
    status = serializers.CharField()
    decision = serializers.CharField()
    reasons = serializers.ListField(child=serializers.CharField())
    revision = serializers.IntegerField()
    merged_into = serializers.UUIDField(allow_null=True)
    conflict_with = serializers.ListField(child=serializers.UUIDField())
    review_item = ReviewRef(allow_null=True)
    sensitivity = serializers.CharField(help_text="The class the claim is stored with.")
    consent_required = serializers.ListField(
        child=serializers.CharField(),
        help_text="With `consent_required`: the sensitive classes the subject has not "
        "consented to. Nothing of the content was kept.",
    )


def verdict_data(result: Any) -> dict[str, Any]:
    item = result.review_item
    return {
        "id": str(result.claim.id),
        "status": result.claim.status,
        "decision": result.decision,
        "reasons": result.reasons,
        "revision": result.claim.revision,
        "merged_into": str(result.merged_into) if result.merged_into else None,
        "conflict_with": [str(c) for c in result.conflict_with],
        "review_item": {"id": item.id, "queue": item.queue} if item else None,
        "sensitivity": result.claim.sensitivity,
        "consent_required": list(result.consent_required),
    }


class SourceOut(serializers.ModelSerializer):
    class Meta:
        model = ClaimSource
        fields = ["event", "uri", "observed_at", "digest", "added_at"]


class ClaimRef(serializers.ModelSerializer):
    class Meta:
        model = Claim
        fields = ["id", "predicate", "status", "revision", "recorded_at"]


class ClaimOutput(serializers.ModelSerializer):
    subject = serializers.CharField(source="subject.key")
    sources = SourceOut(many=True)
    gate = serializers.SerializerMethodField()

    class Meta:
        model = Claim
        fields = [
            "id",
            "subject",
            "kind",
            "predicate",
            "scope",
            "value",
            "text",
            "authority",
            "basis",
            "valid_from",
            "valid_to",
            "available_at",
            "recorded_at",
            "refresh_after",
            "expires_at",
            "status",
            "revision",
            "supersedes",
            "conflicts_with",
            "sources",
            "gate",
            "agent",
            "last_used_at",
            "use_count",
        ]

    @extend_schema_field(
        {
            "type": "object",
            "properties": {
                "decision": {"type": "string"},
                "reasons": {"type": "array", "items": {"type": "string"}},
                "screen": {
                    "type": "object",
                    "description": "How the injection screen read the content: `band` "
                    "(quarantine, review or pass), the learned head's `score` and the "
                    "`reading` it scored highest (written, joined, or a decoding such as "
                    "base64>rot13), the rules' `signals` and the reading they fired on, and "
                    "`second_look`: the multilingual encoder's score of that reading when the "
                    "head's score fell just under its review band (null when it did not look).",
                },
            },
        }
    )
    def get_gate(self, claim: Claim) -> dict[str, Any]:
        return {
            "decision": claim.gate_decision,
            "reasons": claim.gate_reasons,
            "screen": claim.screen,
        }

    def to_representation(self, instance: Claim) -> dict[str, Any]:
        # An agent reading a claim back gets what recall would hand it: the stored claim
        # keeps any hidden characters as evidence for the console, the answer has none.
        return for_agent(super().to_representation(instance))


class ClaimValueOut(serializers.Serializer):
    returned = serializers.IntegerField(help_text="Recalls and hot-memory reads that held it.")
    reported = serializers.IntegerField(help_text="Of those, the ones agents reported on.")
    used = serializers.IntegerField(help_text="Reported as put into the context.")
    cited = serializers.IntegerField(help_text="Reported as cited in the output.")
    harmful = serializers.IntegerField(help_text="Reported as wrong or misleading.")
    unused = serializers.IntegerField(help_text="Returned in a reported answer and left out.")


class ClaimDetailOutput(ClaimOutput):
    history = serializers.SerializerMethodField()
    derived_from = ClaimRef(many=True)
    derivatives = ClaimRef(many=True)
    superseded_by = serializers.SerializerMethodField()
    value_signals = serializers.SerializerMethodField()

    class Meta(ClaimOutput.Meta):
        fields = [
            *ClaimOutput.Meta.fields,
            "history",
            "derived_from",
            "derivatives",
            "superseded_by",
            "value_signals",
        ]

    @extend_schema_field(ClaimValueOut)
    def get_value_signals(self, claim: Claim) -> dict[str, int]:
        value = self.context["value"]
        return {
            "returned": value.returned,
            "reported": value.reported,
            "used": value.used,
            "cited": value.cited,
            "harmful": value.harmful,
            "unused": value.unused,
        }

    @extend_schema_field(ClaimRef(many=True))
    def get_history(self, claim: Claim) -> list[dict[str, Any]]:
        # many=True makes a ListSerializer; the stubs still type the data as one item's.
        return ClaimRef(self.context["history"], many=True).data  # type: ignore[return-value]

    @extend_schema_field(serializers.UUIDField(allow_null=True))
    def get_superseded_by(self, claim: Claim) -> str | None:
        later = next((c for c in self.context["history"] if c.supersedes_id == claim.id), None)
        return str(later.id) if later else None


class ClaimListInput(serializers.Serializer):
    subject = serializers.CharField(required=False)
    status = serializers.CharField(required=False)
    predicate = serializers.CharField(required=False)
    kind = serializers.ChoiceField(choices=ClaimKind.choices, required=False)


class InvalidateIn(serializers.Serializer):
    reason = serializers.CharField(max_length=500)


class RecallIn(serializers.Serializer):
    subject = serializers.CharField(max_length=255, required=False, allow_blank=True)
    subjects = serializers.ListField(
        child=serializers.CharField(max_length=255),
        required=False,
        default=list,
        max_length=20,
        help_text="Cross-subject recall, instead of `subject`: only for a token that lists "
        "these subjects. One legal set and one ranking across them; each item says its "
        "`subject`, and each subject gets its own trace (`traces`).",
    )
    scope = serializers.DictField(child=serializers.CharField(), required=False, default=dict)
    query = serializers.CharField(required=False, allow_blank=True, default="", max_length=2000)
    as_of = serializers.DateTimeField(required=False, allow_null=True, default=None)
    cutoff = serializers.DateTimeField(required=False, allow_null=True, default=None)
    kinds = serializers.ListField(
        child=serializers.ChoiceField(choices=ClaimKind.choices), required=False, default=list
    )
    limit = serializers.IntegerField(min_value=1, max_value=100, required=False, default=10)
    budget_chars = serializers.IntegerField(
        min_value=1, max_value=200_000, required=False, allow_null=True, default=None
    )
    include_stale = StrictBooleanField(required=False, default=False)


class RecallConflictOut(serializers.Serializer):
    id = serializers.CharField(
        allow_null=True, help_text="The open `conflicts` review item; null when none is open."
    )
    other = serializers.UUIDField(help_text="The claim on the other side.")
    other_side_summary = serializers.CharField(help_text="What the other side says.")


class RecallItemOut(serializers.Serializer):
    id = serializers.UUIDField()
    subject = serializers.CharField(help_text="The subject the claim is about.")
    kind = serializers.CharField()
    predicate = serializers.CharField()
    value = serializers.JSONField()
    text = serializers.CharField()
    scope = serializers.DictField()
    authority = serializers.CharField()
    valid_from = serializers.DateTimeField(allow_null=True)
    valid_to = serializers.DateTimeField(allow_null=True)
    available_at = serializers.DateTimeField()
    stale = serializers.BooleanField()
    sources = SourceOut(many=True)
    conflict = RecallConflictOut(
        allow_null=True,
        help_text="The open conflict on the claim's identity, or null: another claim says "
        "otherwise and a person has not settled it yet.",
    )
    relevance = serializers.ChoiceField(
        choices=["strong", "weak"],
        allow_null=True,
        help_text="How surely the claim is about the question: `strong` (exact evidence, or "
        "meaning as close as a never-provided question almost never comes), `weak` (above "
        "the relevance floor, or the best of a recall that could not judge). Null for a "
        "recall without a query.",
    )
    why = serializers.DictField()


class RecallAbstentionOut(serializers.Serializer):
    reason = serializers.ChoiceField(
        choices=["nothing_relevant"],
        help_text="`nothing_relevant`: the legal set held claims, none about the question.",
    )
    best_relevance = serializers.FloatField(
        help_text="The most relevant legal claim's relevance (below `floor`)."
    )
    floor = serializers.FloatField(help_text="The relevance floor (`RECALL_ABSTAIN_FLOOR`).")


class RecallOut(serializers.Serializer):
    items = RecallItemOut(many=True)
    abstained = serializers.BooleanField(
        help_text='True when recall answers "I don\'t know": a question was asked, every '
        "legal claim was measured, and none was relevant enough; `items` is then empty."
    )
    abstention = RecallAbstentionOut(
        allow_null=True, help_text="Why recall abstained; null when it answered."
    )
    excluded = serializers.DictField(child=serializers.IntegerField())
    trace_id = serializers.UUIDField()
    trace_url = serializers.CharField(help_text="Where to read the trace (and report uses).")
    traces = serializers.DictField(
        child=serializers.UUIDField(),
        help_text="Each subject's trace id (one entry unless the recall was cross-subject; "
        "`trace_id` is the first).",
    )


class HotMemoryOut(serializers.Serializer):
    subject = serializers.CharField()
    text = serializers.CharField()
    budget_chars = serializers.IntegerField()
    chars = serializers.IntegerField()
    claims = serializers.ListField(child=serializers.UUIDField())
    trace_id = serializers.UUIDField(
        help_text="This block's trace: report what went into the context at "
        "`/recall/traces/{id}/used`. A `304` keeps the trace of the block you hold."
    )


class GateRuleOut(serializers.Serializer):
    code = serializers.CharField()
    decision = serializers.CharField()
    description = serializers.CharField()


class InjectionSignalOut(serializers.Serializer):
    code = serializers.CharField()
    description = serializers.CharField()
    weight = serializers.IntegerField()
    patterns = serializers.ListField(
        child=serializers.CharField(),
        help_text="Regular expressions matched against the canonical text (lower-case, "
        "look-alike letters folded, invisible characters removed).",
    )


class SensitivityRuleOut(serializers.Serializer):
    sensitivity = serializers.CharField()
    description = serializers.CharField()
    needs_consent = serializers.BooleanField(
        help_text="Kept only when the subject consented to this class (`consent_required`)."
    )
    patterns = serializers.ListField(
        child=serializers.CharField(), help_text="Regular expressions on the canonical text."
    )


class EphemeralRuleOut(serializers.Serializer):
    kind = serializers.CharField()
    description = serializers.CharField()
    patterns = serializers.ListField(child=serializers.CharField())


class GateRulesOut(serializers.Serializer):
    """The whole rule list in one page: `next` is always null."""

    results = GateRuleOut(many=True)
    next = serializers.CharField(allow_null=True)
    sensitivity_rules = SensitivityRuleOut(
        many=True,
        help_text="How the gate classes content (claims and events); the stronger of these "
        "and the agent's `sensitivity` hint wins.",
    )
    ephemeral_rules = EphemeralRuleOut(
        many=True, help_text="Values never remembered (`ephemeral_value`)."
    )
    injection_threshold = serializers.IntegerField(
        help_text="A text whose fired signals weigh this much or more is quarantined "
        "with `instruction_injection`."
    )
    injection_signals = InjectionSignalOut(many=True)
