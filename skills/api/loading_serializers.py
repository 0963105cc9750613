"""What the loading endpoints take and answer: the catalog and its exclusions, a body,
loads, instantiation and its reasons, retired tools, and drafts from experience."""

from __future__ import annotations

import json
import re
from typing import Any

from django.urls import reverse
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from common.hidden_chars import for_agent
from skills.api.schema import NamedChoiceField
from skills.api.serializers import (
    DeprecationOutput,
    ResolvedFileOutput,
    SkillActorOutput,
    VersionOutput,
    actor_of,
)
from skills.models import (
    SLUG_PATTERN,
)
from skills.package.manifest import SLOT_PATTERN
from skills.usage_models import GrantKind, UseOutcome

INPUTS_JSON_MAX = 20_000


class CatalogInput(serializers.Serializer):
    q = serializers.CharField(
        required=False,
        allow_blank=True,
        default="",
        max_length=1000,
        help_text="The task, in words. Skills are found by meaning (name, description, "
        "triggers and the start of the body) and by the task's words; one about "
        "nothing in the task is not returned. Empty: every production skill.",
    )
    tools = serializers.CharField(
        required=False,
        allow_blank=True,
        max_length=4000,
        help_text="Comma-separated tools the agent has. Given (even empty), skills needing "
        "another tool are left out and listed in `excluded`. Left out: no tool filter.",
    )
    loaded = serializers.CharField(
        required=False,
        allow_blank=True,
        default="",
        max_length=4000,
        help_text="Comma-separated slugs the agent has loaded already; conflicts with them "
        "are reported too.",
    )
    limit = serializers.IntegerField(required=False, default=20, min_value=1, max_value=100)
    task_type = serializers.RegexField(
        r"^[a-z0-9][a-z0-9_.:-]{0,99}$",
        required=False,
        allow_blank=True,
        default="",
        help_text="The kind of task (as in use reports): ranks skills by how they did on it.",
    )

    def validate_tools(self, value: str) -> list[str]:
        return _name_list(value, field="tools", pattern=r"^[A-Za-z0-9_.:-]{1,100}$")

    def validate_loaded(self, value: str) -> list[str]:
        return _name_list(value, field="loaded", pattern=SLUG_PATTERN)


def _name_list(value: str, *, field: str, pattern: str) -> list[str]:
    names = [name.strip() for name in value.split(",") if name.strip()]
    if len(names) > 100:
        raise serializers.ValidationError(f"At most 100 {field}.")
    bad = [name for name in names if not re.fullmatch(pattern, name)]
    if bad:
        raise serializers.ValidationError(f"Not a valid name: {bad[0][:100]!r}.")
    return list(dict.fromkeys(names))


class CredentialSlotOutput(serializers.Serializer):
    slot = serializers.CharField()
    purpose = serializers.CharField(allow_blank=True)


class CatalogEntryOutput(serializers.Serializer):
    skill = serializers.CharField(source="slug")
    name = serializers.CharField()
    description = serializers.SerializerMethodField()
    version = serializers.IntegerField(source="number")
    content_hash = serializers.CharField()
    status = serializers.CharField()
    risk = serializers.SerializerMethodField()
    capabilities = serializers.SerializerMethodField()
    required_tools = serializers.SerializerMethodField()
    credentials = serializers.SerializerMethodField()
    consumes = serializers.SerializerMethodField()
    produces = serializers.SerializerMethodField()
    score = serializers.FloatField(
        help_text="Similarity in meaning to the task, moved by task words matched, risk, "
        "preconditions, past success on the task type and negative transfer; best first."
    )
    why = serializers.DictField(
        help_text="The signals behind the score: `semantic` (cosine similarity, or "
        "`unavailable`), `matched` task words, `risk`, `preconditions`, `reports`, "
        "`success_rate`, `negative_transfer`, `beats_baseline`."
    )
    body_url = serializers.SerializerMethodField(help_text="Level 2: where to load the body.")

    def get_description(self, entry: Any) -> str:
        return for_agent(str(entry.manifest.get("description") or ""))

    def get_risk(self, entry: Any) -> str:
        return str(entry.manifest.get("risk") or "low")

    @extend_schema_field(serializers.ListField(child=serializers.CharField()))
    def get_capabilities(self, entry: Any) -> list[str]:
        return list(entry.manifest.get("capabilities") or [])

    @extend_schema_field(serializers.ListField(child=serializers.CharField()))
    def get_required_tools(self, entry: Any) -> list[str]:
        return list(entry.manifest.get("tools") or [])

    @extend_schema_field(CredentialSlotOutput(many=True))
    def get_credentials(self, entry: Any) -> list[dict[str, str]]:
        return list(entry.manifest.get("credentials") or [])

    @extend_schema_field(serializers.ListField(child=serializers.CharField()))
    def get_consumes(self, entry: Any) -> list[str]:
        return list(entry.manifest.get("consumes") or [])

    @extend_schema_field(serializers.ListField(child=serializers.CharField()))
    def get_produces(self, entry: Any) -> list[str]:
        return list(entry.manifest.get("produces") or [])

    def get_body_url(self, entry: Any) -> str:
        return reverse("skill-version-body", kwargs={"slug": entry.slug, "number": entry.number})


class ExclusionOutput(serializers.Serializer):
    skill = serializers.CharField(source="slug")
    version = serializers.IntegerField(source="number")
    reason = NamedChoiceField(
        choices=[
            "tools_unavailable",
            "tools_not_granted",
            "capability_not_granted",
            "capability_exceeds_token",
        ],
        enum_name="CatalogExclusionReason",
    )
    missing_tools = serializers.ListField(child=serializers.CharField())
    missing_capabilities = serializers.ListField(child=serializers.CharField())


class ConflictOutput(serializers.Serializer):
    kind = NamedChoiceField(
        choices=["shared_output", "classification_mismatch"], enum_name="SkillConflictKind"
    )
    skills = serializers.ListField(child=serializers.CharField())
    # A declared field, which DRF's metaclass takes off the class: not Field.label.
    label = serializers.CharField()  # type: ignore[assignment]
    detail = serializers.CharField()


class CatalogOutput(serializers.Serializer):
    results = CatalogEntryOutput(many=True, source="entries")
    excluded = ExclusionOutput(many=True)
    conflicts = ConflictOutput(many=True)
    semantic = serializers.CharField(
        help_text="`on` when the task was matched by meaning; `unavailable` (no embedder, "
        "or no task given): by its words only."
    )


class BodyOutput(serializers.Serializer):
    skill = serializers.CharField(source="slug")
    number = serializers.IntegerField()
    content_hash = serializers.CharField()
    status = serializers.CharField()
    body = serializers.CharField(allow_blank=True)
    files = ResolvedFileOutput(many=True, help_text="Level 3: read each file on demand.")
    deprecation = DeprecationOutput(allow_null=True)


class LoadOutput(serializers.Serializer):
    level = serializers.IntegerField(help_text="1 catalog entry, 2 body, 3 file.")
    loader = serializers.SerializerMethodField()
    count = serializers.IntegerField()
    first_at = serializers.DateTimeField()
    last_at = serializers.DateTimeField()

    @extend_schema_field(SkillActorOutput)
    def get_loader(self, load: Any) -> dict[str, str] | None:
        return actor_of(load, "loader")


class InstantiateInput(serializers.Serializer):
    bindings = serializers.DictField(
        child=serializers.RegexField(
            r"^[A-Za-z0-9_./:@-]{1,200}$",
            help_text="The name of a secret the agent holds elsewhere, e.g. vault:blog/token.",
        ),
        required=False,
        default=dict,
        help_text="Credential slot → the name of the secret bound to it. Never a value.",
    )
    inputs = serializers.DictField(
        required=False,
        default=dict,
        help_text="The manifest's inputs bound to the current task: name → value. Checked "
        "against `inputs` in SKILL.md (required, type); only their names are recorded.",
    )
    tools = serializers.ListField(
        child=serializers.RegexField(r"^[A-Za-z0-9_.:-]{1,100}$"),
        required=False,
        default=None,
        max_length=200,
        help_text="The tools the agent has at hand in this run. Only tools granted to the "
        "token count; left out, the grants alone decide.",
    )
    capabilities = serializers.ListField(
        child=serializers.RegexField(r"^[A-Za-z0-9_.:-]{1,100}$"),
        required=False,
        default=None,
        max_length=100,
        help_text="What the agent's runtime has at hand beyond memdesk's token capabilities, "
        "e.g. network. Only capabilities granted to the token count; left out, the grants "
        "alone decide.",
    )

    def validate_inputs(self, value: dict[str, Any]) -> dict[str, Any]:
        if len(value) > 50 or len(json.dumps(value, default=str)) > INPUTS_JSON_MAX:
            raise serializers.ValidationError(
                f"At most 50 inputs and {INPUTS_JSON_MAX} characters of JSON."
            )
        return value

    def validate_bindings(self, value: dict[str, str]) -> dict[str, str]:
        if len(value) > 50:
            raise serializers.ValidationError("At most 50 bindings.")
        # Slot names as SKILL.md declares them; anything else is never echoed back.
        if not all(SLOT_PATTERN.fullmatch(slot) for slot in value):
            raise serializers.ValidationError(
                "Bind slots by their names: lowercase letters, digits and underscores."
            )
        return value


class InstantiationReasonOutput(serializers.Serializer):
    code = NamedChoiceField(
        choices=[
            "version_incompatible",
            "version_not_published",
            "slot_unbound",
            "tool_retired",
            "tool_unavailable",
            "tool_not_granted",
            "capability_exceeds_token",
            "capability_unavailable",
            "capability_not_granted",
            "input_missing",
            "input_invalid",
            "input_unknown",
        ],
        enum_name="InstantiationReasonCode",
    )
    detail = serializers.CharField()
    slot = serializers.CharField(allow_null=True)
    tool = serializers.CharField(allow_null=True)
    capability = serializers.CharField(allow_null=True)
    input = serializers.CharField(allow_null=True)


class InstantiationOutput(serializers.Serializer):
    skill = serializers.CharField()
    number = serializers.IntegerField()
    content_hash = serializers.CharField()
    instance = serializers.UUIDField(
        help_text="This check's instance. Resolve and body serve the version to you while "
        "your latest instance of it is ready and not invalidated."
    )
    state = NamedChoiceField(choices=["ready", "blocked"], enum_name="InstantiationState")
    reasons = InstantiationReasonOutput(many=True)
    bindings = serializers.DictField(child=serializers.CharField())


class UseReportInput(serializers.Serializer):
    task_type = serializers.RegexField(r"^[a-z0-9][a-z0-9_.:-]{0,99}$")
    outcome = NamedChoiceField(choices=UseOutcome.choices, enum_name="UseOutcome")
    without_skill = NamedChoiceField(
        choices=UseOutcome.choices,
        enum_name="UseOutcome",
        required=False,
        default="",
        help_text="How such tasks go without the skill, when the agent knows.",
    )
    steps = serializers.IntegerField(min_value=0, max_value=100_000, required=False)
    steps_without_skill = serializers.IntegerField(min_value=0, max_value=100_000, required=False)


class UseReportOutput(serializers.Serializer):
    id = serializers.IntegerField()
    task_type = serializers.CharField()
    outcome = serializers.CharField()
    without_skill = serializers.CharField()
    negative_transfer = serializers.BooleanField()
    at = serializers.DateTimeField()


class WantedSkillInput(serializers.Serializer):
    skill = serializers.RegexField(SLUG_PATTERN, max_length=64)
    version = serializers.IntegerField(min_value=1, required=False)


class LoadInput(serializers.Serializer):
    # ListSerializer takes max_length (DRF 3.14); the stubs only know Serializer's arguments.
    skills = WantedSkillInput(many=True, min_length=1, max_length=20)  # type: ignore[call-arg]
    budget_chars = serializers.IntegerField(min_value=1, max_value=10_000_000)


class LoadAnswerOutput(serializers.Serializer):
    skills = BodyOutput(many=True)
    total_chars = serializers.IntegerField()
    budget_chars = serializers.IntegerField()
    conflicts = ConflictOutput(many=True)


class GrantListInput(serializers.Serializer):
    token = serializers.IntegerField(
        min_value=1, required=False, help_text="Only this agent token's grants."
    )


class GrantInput(serializers.Serializer):
    token = serializers.IntegerField(min_value=1, help_text="The agent token's id.")
    kind = NamedChoiceField(choices=GrantKind.choices, enum_name="GrantKind")
    name = serializers.RegexField(r"^[A-Za-z0-9_.:-]{1,100}$")


class GrantOutput(serializers.Serializer):
    id = serializers.IntegerField()
    token = serializers.IntegerField(source="token_id")
    token_name = serializers.CharField(source="token.name")
    kind = serializers.CharField()
    name = serializers.CharField()
    at = serializers.DateTimeField()


class CredentialChangedInput(serializers.Serializer):
    secret = serializers.RegexField(
        r"^[A-Za-z0-9_./:@-]{1,200}$", help_text="The secret's name, as slots are bound to it."
    )
    reason = serializers.CharField(max_length=1000)


class InvalidatedOutput(serializers.Serializer):
    invalidated = serializers.ListField(child=serializers.UUIDField())


class RetireToolInput(serializers.Serializer):
    reason = serializers.CharField(max_length=1000, required=False, allow_blank=True, default="")


class RetiredToolOutput(serializers.Serializer):
    name = serializers.CharField()
    reason = serializers.CharField()
    actor = serializers.SerializerMethodField()
    at = serializers.DateTimeField()

    @extend_schema_field(SkillActorOutput)
    def get_actor(self, tool: Any) -> dict[str, str] | None:
        return actor_of(tool, "actor")


class IncompatibleVersionOutput(serializers.Serializer):
    skill = serializers.CharField()
    number = serializers.IntegerField()
    previous_status = serializers.CharField()


class RetirementOutput(serializers.Serializer):
    tool = RetiredToolOutput()
    incompatible = IncompatibleVersionOutput(many=True)


class DraftInput(serializers.Serializer):
    slug = serializers.RegexField(
        SLUG_PATTERN,
        max_length=64,
        help_text="The skill the draft belongs to; created when it does not exist yet.",
    )
    name = serializers.CharField(max_length=200, required=False, allow_blank=True, default="")
    description = serializers.CharField(
        max_length=1024, help_text="What the skill does and when to use it (Agent Skills)."
    )
    claims = serializers.ListField(
        child=serializers.UUIDField(format="hex_verbose"),
        min_length=1,
        max_length=50,
        help_text="Experience claims: active, with a successful outcome, 2 to 20 of them.",
    )


class DraftOutput(serializers.Serializer):
    version = VersionOutput()
    created = serializers.BooleanField()
    sources = serializers.ListField(child=serializers.CharField(), source="claim_ids")
