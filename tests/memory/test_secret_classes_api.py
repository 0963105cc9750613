"""Every class of disguised secret, sent through the API: refused with its problem code or
rejected as `secret_detected`, and stored nowhere; a look-alike of each kind goes through.

The samples are the development set's own (`testing/corpus/secrets_dev.tsv`): the first
two of each secret class and the first of each look-alike class.
"""

from __future__ import annotations

import logging
import re
from collections import defaultdict

import pytest

from common.models import IdempotencyRecord
from memory.claims.models import Claim, Event
from testing.corpus import labelled_rows
from tests.dump import tables_containing
from tests.memory.helpers import candidate

pytestmark = pytest.mark.django_db

_ROWS = labelled_rows("secrets_dev.tsv")
_SECRETS: dict[str, list[str]] = defaultdict(list)
_LOOK_ALIKES: dict[str, str] = {}
for _label, _kind, _lang, _text in _ROWS:
    if _label == "secret" and len(_SECRETS[_kind]) < 2:
        _SECRETS[_kind].append(_text)
    elif _label != "secret":
        _LOOK_ALIKES.setdefault(_kind, _text)

ISSUE_CLASSES = {
    "invisible_in_key",
    "full_width_key",
    "grouped_key",
    "rot13",
    "base32",
    "base64_triple",
    "spaced_hex",
    "url_password_symbols",
    "env_shell_cli",
    "auth_header",
    "webhook_url",
    "vendor_key",
    "prose_password",
    "token_near_credential_word",
    "pin",
    "recovery_code",
    "otp_seed",
    "connection_string",
    "netrc",
    "kubeconfig_token",
    "private_key",
    "pkcs12_passphrase",
}


def _needle(text: str) -> str:
    """A distinctive piece of the text as sent: the middle of its longest unbroken run, or
    its opening when every run is short (spaced hex)."""
    run = max(re.split(r"\s+", text), key=len)
    if len(run) < 12:
        return text[:24]
    middle = len(run) // 2
    return run[max(0, middle - 6) : middle + 6]


def _event(text: str) -> dict[str, str]:
    return {
        "subject": "user:alice",
        "kind": "note",
        "text": text,
        "observed_at": "2026-11-01T00:00:00Z",
    }


def test_the_development_set_covers_every_class_the_screen_promises():
    assert set(_SECRETS) >= ISSUE_CLASSES
    assert sum(label == "secret" for label, *_ in _ROWS) >= 600
    assert sum(label != "secret" for label, *_ in _ROWS) >= 200
    assert {lang for _, _, lang, _ in _ROWS} >= {
        "en", "zh", "de", "ru", "es", "fr", "it", "pt", "ja", "ko", "ar", "hi", "tr", "pl",
        "nl", "vi", "id",
    }  # fmt: skip


@pytest.mark.parametrize("kind", sorted(ISSUE_CLASSES))
def test_a_disguised_secret_is_refused_as_an_event_and_rejected_as_a_claim(agent, kind):
    for number, text in enumerate(_SECRETS[kind]):
        refused = agent.post("/api/v1/events", _event(text), format="json")
        assert refused.status_code == 400, text
        assert refused["Content-Type"] == "application/problem+json"
        assert refused.json()["code"] == "secret_detected"
        assert _needle(text) not in refused.content.decode()

        verdict = agent.post(
            "/api/v1/claims",
            candidate(text=text, value="x", predicate=f"note_{number}"),
            format="json",
        )
        assert verdict.status_code == 201
        assert verdict.json()["decision"] == "rejected"
        assert verdict.json()["reasons"] == ["secret_detected"]

        nested = agent.post(
            "/api/v1/claims",
            candidate(value={"config": {"line": text}}, text="a setting", predicate=f"v_{number}"),
            format="json",
        )
        assert nested.json()["reasons"] == ["secret_detected"]
        assert tables_containing(_needle(text)) == {}
    assert not Event.objects.exists()


@pytest.mark.parametrize("kind", sorted(_LOOK_ALIKES))
def test_a_look_alike_is_not_taken_for_a_secret(agent, kind):
    text = _LOOK_ALIKES[kind]
    recorded = agent.post("/api/v1/events", _event(text), format="json")
    assert recorded.status_code == 201, recorded.json()
    assert Event.objects.get(pk=recorded.json()["id"]).text == text

    verdict = agent.post("/api/v1/claims", candidate(text=text, value="x"), format="json")
    assert verdict.status_code == 201
    assert "secret_detected" not in verdict.json()["reasons"]
    assert Claim.objects.filter(text=text).exists()


@pytest.mark.parametrize(
    "key",
    [
        "gith_ub_p_at_1_1VB6_NZJT_IDRJ_SLOA_OQ3H_Wkf3_fLQ7_bdbD_fIMO_TXTj_6eOA_rwDQ_J0ns",
        "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",
        "dapif97632db9551cc30c5ee1e5ded99129a",
    ],
    ids=["grouped_by_underscores", "openrouter", "databricks"],
)
def test_an_idempotency_key_holding_a_disguised_credential_is_refused(agent, key):
    response = agent.post(
        "/api/v1/events", _event("I live in Shanghai"), format="json", HTTP_IDEMPOTENCY_KEY=key
    )
    assert response.status_code == 400
    assert response.json()["code"] == "secret_in_header"
    assert not IdempotencyRecord.objects.exists() and not Event.objects.exists()
    assert tables_containing(key[6:20]) == {}


def test_a_disguised_credential_in_a_request_path_is_logged_redacted(agent, caplog):
    token = "pscale_tkn_3dPgZtIQfuVcmqrnjYchjUIPZM97ZrEN0ZLPgMvA408"
    with caplog.at_level(logging.INFO, logger="memdesk.request"):
        response = agent.get(f"/api/v1/claims/{token}")
    assert response.status_code == 404
    (record,) = [r for r in caplog.records if r.name == "memdesk.request"]
    assert token not in record.path
    assert all(token not in r.getMessage() for r in caplog.records)
