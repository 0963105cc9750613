"""What the gate reads before it judges a candidate: secrets (refused or withheld),
injections (alone and in the subject's recent context), sensitivity and consent."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import timedelta
from typing import Any

from django.utils import timezone

from accounts.models import Tenant
from common.problems import Problem
from common.screen import SecretFinding, find_secrets_in_text, find_secrets_in_value, strings_in
from common.screen.injection import InjectionResult, judge_injection, judge_injection_many
from common.screen.learned import PASS, Bands
from memory.claims import gate, sensitivity
from memory.claims.future_times import refuse_future_times
from memory.claims.models import Claim, ClaimStatus, Sensitivity, Subject
from memory.claims.services.claim_inputs import (
    SENSITIVITIES,
    CandidateInput,
    scope_key,
    validate_scope,
)


def refuse_identity_secrets(
    *, candidate: CandidateInput, scope: dict[str, str], scan: SecretScan
) -> None:
    """A credential in what names the claim would be stored even on a rejected claim: refuse it."""
    errors: dict[str, list[str]] = {}
    kinds: set[str] = set()
    for name, findings in (
        ("subject", scan.text(candidate.subject)),
        ("predicate", scan.text(candidate.predicate)),
        ("scope", scan.scope(scope)),
    ):
        if findings:
            found = sorted({f.kind for f in findings})
            kinds.update(found)
            errors[name] = [f"Looks like a credential ({', '.join(found)})."]
    if errors:
        raise Problem(
            "secret_detected",
            "The claim's subject, predicate or scope contains what looks like a credential. "
            "Nothing was stored; memdesk never stores secrets.",
            errors=errors,
            kinds=sorted(kinds),
        )


@dataclass(frozen=True)
class Screened:
    """A candidate past the checks that need no database: its scope and what its uris hide."""

    candidate: CandidateInput
    scope: dict[str, str]
    scope_json: str
    uri_secrets: list[SecretFinding]
    # What `gate.find_secrets` would find in the text and the value.
    content_secrets: tuple[SecretFinding, ...]
    classification: sensitivity.Classification
    ephemeral: tuple[str, ...]
    # The injection screen's judgement of the content (`gate.content_strings`).
    injection: InjectionResult | None = None


class SecretScan:
    """The secret detectors, remembering what they found in strings seen before.

    A batch names the same subjects and scopes again and again, and a value
    often repeats its text; each is scanned once. The findings depend on the
    string alone, so remembering them changes no answer.
    """

    def __init__(self) -> None:
        self._texts: dict[str, list[SecretFinding]] = {}
        self._scopes: dict[str, list[SecretFinding]] = {}

    def text(self, text: str) -> list[SecretFinding]:
        if text not in self._texts:
            self._texts[text] = find_secrets_in_text(text)
        return self._texts[text]

    def scope(self, scope: dict[str, str]) -> list[SecretFinding]:
        key = scope_key(scope)
        if key not in self._scopes:
            self._scopes[key] = find_secrets_in_value(scope, find=self.text)
        return self._scopes[key]

    def value(self, value: Any) -> list[SecretFinding]:
        return find_secrets_in_value(value, find=self.text)


def content_strings_of(screened: Screened) -> list[str]:
    candidate = screened.candidate
    return gate.strings_of_content(
        text=candidate.text,
        value=candidate.value,
        predicate=candidate.predicate,
        subject=candidate.subject,
        scope=screened.scope,
    )


def screen_injections(
    screened: Sequence[Screened], *, bands: Bands | None = None
) -> list[Screened]:
    """`screened` with their injection judgements, the learned head run once for them all.

    `bands` are the tenant's calibrated thresholds, if it has any; else the head's own.
    """
    judged = judge_injection_many([content_strings_of(item) for item in screened], bands=bands)
    return [replace(item, injection=result) for item, result in zip(screened, judged, strict=True)]


def screen_sensitivities(screened: Sequence[Screened]) -> list[Screened]:
    """`screened` with what the learned sensitivity head reads, run once for them all."""
    classified = sensitivity.with_learned(
        [item.classification for item in screened],
        [sensitivity_content(item.candidate, item.scope) for item in screened],
    )
    return [
        replace(item, classification=classification)
        for item, classification in zip(screened, classified, strict=True)
    ]


# How far back, and how many of a subject's claims, an order split across claims is looked for.
CONTEXT_WINDOW = timedelta(hours=24)


CONTEXT_CLAIMS = 5


def injection_in_context(
    *, tenant: Tenant, subject: Subject, screened: Screened, bands: Bands | None = None
) -> bool:
    """Whether the candidate, read after the subject's recent claims, completes an order.

    Only when neither reads as one alone: a claim already judged an order was
    quarantined on its own, and the recent claims passed the screen when written.
    """
    if screened.injection is not None and screened.injection.band != PASS:
        return False
    recent = list(
        Claim.objects.filter(
            tenant=tenant,
            subject=subject,
            status__in=(ClaimStatus.ACTIVE, ClaimStatus.CANDIDATE),
            recorded_at__gte=timezone.now() - CONTEXT_WINDOW,
        )
        .exclude(text="")
        .order_by("-recorded_at", "-id")
        .values_list("text", flat=True)[:CONTEXT_CLAIMS]
    )
    if not recent:
        return False
    joined = judge_injection([*reversed(recent), *content_strings_of(screened)], bands=bands)
    return joined.is_injection and not judge_injection(recent, bands=bands).is_injection


def sensitivity_content(candidate: CandidateInput, scope: dict[str, str]) -> list[str]:
    """What the claim says and what names it: a sensitive predicate is as telling as a text."""
    return [candidate.text, *strings_in(candidate.value), candidate.predicate, *scope.values()]


def screen_candidate(
    candidate: CandidateInput, *, scan: SecretScan | None = None, learned: bool = True
) -> Screened:
    """The checks before any read: times, scope shape, secrets in the identity and in the sources.

    A batch passes one `scan` for all its candidates (see `SecretScan`), and leaves the
    learned sensitivity head (`learned`) to `screen_sensitivities`, which reads them all
    at once.
    """
    scan = scan or SecretScan()
    refuse_future_times(
        {
            "available_at": candidate.available_at,
            "valid_from": candidate.valid_from,
            **{
                f"sources.{index}.observed_at": source.observed_at
                for index, source in enumerate(candidate.sources)
            },
        }
    )
    scope = validate_scope(candidate.scope)
    if candidate.sensitivity not in SENSITIVITIES:
        raise Problem(
            "validation_error",
            "Unknown sensitivity class.",
            errors={"sensitivity": [f"One of {', '.join(Sensitivity.values)}."]},
        )
    refuse_identity_secrets(candidate=candidate, scope=scope, scan=scan)
    content = sensitivity_content(candidate, scope)
    return Screened(
        candidate=candidate,
        scope=scope,
        scope_json=scope_key(scope),
        uri_secrets=[f for s in candidate.sources for f in scan.text(s.uri) + scan.text(s.digest)],
        content_secrets=(*scan.text(candidate.text), *scan.value(candidate.value)),
        classification=sensitivity.classify(content, hint=candidate.sensitivity, learned=learned),
        ephemeral=sensitivity.find_ephemeral(content),
    )


def consent_to_read(screened: Screened) -> bool:
    """Whether the gate needs the subject's consents for this candidate."""
    return bool(screened.classification.consent_classes)


def screen_record(verdict: gate.Verdict) -> dict[str, Any]:
    """What the injection screen saw, kept on the claim for editors (never the content)."""
    injection = verdict.injection
    if injection is None:
        return {}
    return {
        "injection": {
            "band": injection.band,
            "score": round(injection.learned, 4),
            "reading": injection.learned_reading,
            "signals": list(injection.signals),
            "signals_reading": injection.reading,
            # The second look's score of that reading; None when it did not look.
            "second_look": None if injection.second is None else round(injection.second, 4),
        }
    }
