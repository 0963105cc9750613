"""The secret screen against the red-team set: vendor formats, prose in many languages,
every disguise, and the benign look-alikes beside them. No database."""

from __future__ import annotations

from collections import defaultdict

import pytest

from common.screen.secrets import find_secrets_in_text
from testing.corpus import labelled

SAMPLES = labelled("secrets_redteam.tsv")
SECRETS: dict[str, list[str]] = defaultdict(list)
for label, text in SAMPLES:
    if label != "benign":
        SECRETS[label].append(text)
BENIGN = [text for label, text in SAMPLES if label == "benign"]
MAX_FALSE_POSITIVES = 0.01


def test_the_red_team_set_is_big_enough_to_mean_something():
    assert sum(len(texts) for texts in SECRETS.values()) >= 200
    assert len(BENIGN) >= 150
    assert {
        "vendor_key",
        "prose_password",
        "url_password_symbols",
        "env_shell_cli",
        "kubernetes_secret",
        "zero_width_in_key",
        "full_width_key",
        "grouped_key",
        "split_lines",
        "reversed",
        "rot13",
        "base64",
        "base32",
        "hex",
        "hex_escape",
        "url_encoded",
        "split_json",
        "markdown",
        "query_string",
    } <= set(SECRETS)


@pytest.mark.parametrize("label", sorted(SECRETS))
def test_every_red_team_secret_of_each_class_is_found(label):
    missed = [text for text in SECRETS[label] if not find_secrets_in_text(text)]
    assert missed == []


def test_benign_look_alikes_are_rarely_flagged():
    flagged = [text for text in BENIGN if find_secrets_in_text(text)]
    assert len(flagged) / len(BENIGN) <= MAX_FALSE_POSITIVES, flagged


@pytest.mark.parametrize(
    "text",
    [
        "AKIAXXXXXXXXXXXXXXXX",
        "ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
        "postgres://user:password@localhost:5432/db",
        "const token = process.env.SLACK_BOT_TOKEN;",
        "password = getpass.getpass()",
        "Use GOCSPX- prefixed client secrets only in server code.",
        "the password is v2.3.1",
        "password: db_password",
    ],
)
def test_a_key_written_to_stand_for_one_is_not_a_credential(text):
    assert find_secrets_in_text(text) == []


@pytest.mark.parametrize(
    "text",
    [
        "root with password Quartz*3495",
        "use Maple&7699 to log in",
        "creds: admin/Cobalt!5718",
        "PIN and password: 4821 / Tulip$4996",
    ],
)
def test_a_strong_password_needs_no_linking_word(text):
    assert find_secrets_in_text(text)


@pytest.mark.parametrize(
    "text",
    [
        "password SEC-4421 tracks the reset flow",
        "log in with your SSO account",
        "credentials: see docs/auth",
        "login: 2026/06/11",
    ],
)
def test_a_plain_word_or_an_id_after_a_password_word_is_not_a_password(text):
    assert find_secrets_in_text(text) == []


def test_a_key_cut_across_json_values_is_read_joined():
    assert find_secrets_in_text('{"part_1": "AKIAYLBDNI", "part_2": "2KULNMTNML"}')
    assert not find_secrets_in_text('{"region": "ASIA", "zone": "PACIFIC-2026-Q4-NOTES"}')
