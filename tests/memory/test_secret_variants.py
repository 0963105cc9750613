"""Credentials in the shapes that used to slip past the screen, through the real API.

Each was found stored as active memory: a key cut by invisible characters, written
full-width or in groups, a URL password with symbols, a shell command, a header, a
webhook URL, a vendor key, a password in a sentence, a token beside its name, a key
in rot13 or base32. Each is rejected with `secret_detected` and stored nowhere.
"""

from __future__ import annotations

import base64
import codecs

import pytest

from tests.dump import tables_containing
from tests.memory.helpers import candidate

pytestmark = pytest.mark.django_db

AWS = "AKIAUJZDEGXDNCF32EPF"
GITHUB = "ghp_JBd0Kh8oOOL8dKLzdocJ2isAjIhKtJ0RlgLK"
FULL_WIDTH_AWS = "".join(chr(ord(c) + 0xFEE0) for c in AWS)
DISCORD = (
    "https://discord.com/api/webhooks/994941573131164364/"
    "alHlsZfYcMMDktXP-tKsf2rcDkdfrUnW5gcF_Ha6ili8GjHEAD6-Wj9KfzjsQGMrb9h_"
)
GROUPS = ["AKIA", "UJZD", "EGXD", "NCF3", "2EPF"]
GITHUB_THIRDS = [GITHUB[:12], GITHUB[12:24], GITHUB[24:]]
SSH_PUBLIC = "AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl"
BASE32 = base64.b32encode(f"token={GITHUB}".encode()).decode()

# (text an agent sends, a part of the secret that must be stored nowhere)
VARIANTS = {
    "zero_width_in_key": ("aws key " + "\u200b".join(GROUPS), "EGXD\u200bNCF3"),
    "word_joiner_in_key": ("token " + "\u2060".join(GITHUB_THIRDS), GITHUB_THIRDS[1]),
    "full_width_key": (f"key {FULL_WIDTH_AWS}", FULL_WIDTH_AWS[4:16]),
    "grouped_key": ("aws AKIA-UJZD-EGXD-NCF3-2EPF", "UJZD-EGXD-NCF3"),
    "url_password_symbols": ("postgres://admin:p#ss!w0rd@db.internal/app", "p#ss!w0rd"),
    "env_export": ("export DB_PASS=Kq9!vT2xLm", "Kq9!vT2xLm"),
    "curl_user": ("curl -u admin:S3cretPa55 https://api.example.com/v1/items", "S3cretPa55"),
    "sshpass": ("sshpass -p 'Sunset#42' ssh ops@10.0.0.7", "Sunset#42"),
    "basic_header": ("Authorization: Basic YWRtaW46UzNjcmV0UGE1NQ==", "YWRtaW46UzNjcmV0UGE1NQ"),
    "token_header": ("Authorization: Token b860dcd6c8a1f8b46287cced9041dff0", "b860dcd6c8a1f8b4"),
    "discord_webhook": (f"post alerts to {DISCORD}", "alHlsZfYcMMDktXP"),
    "teams_webhook": (
        "https://contoso.webhook.office.com/webhookb2/83b7ffc0-50fe-c94d-bca3-a0aac36098b2@"
        "cc2bd818-3194-78da-6bd0-c621de49f145/IncomingWebhook/b860dcd6c8a1f8b46287cced9041dff0/"
        "fda9988c-79fc-3552-6f7e-aed46725a2a7",
        "IncomingWebhook/b860dcd6",
    ),
    "vendor_key": ("shopify 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", "4d8dbc74254770f5"),
    "mailgun_key": ("mailgun key-c1626e53a13043b026c48bbf33feff92", "c1626e53a13043b0"),
    "prose_password_english": ("her bank password is Tr0ub4dor&3", "Tr0ub4dor&3"),
    "prose_password_chinese": ("我的密码是Abc123456", "Abc123456"),
    "prose_password_german": ("Mein Passwort lautet Sonne2026!", "Sonne2026"),
    "prose_password_russian": ("мой пароль Qw3rty!9", "Qw3rty!9"),
    "credential_word_token": ("the deploy token is 9fQ2xLr7Vb8KpZ3mWq1N", "9fQ2xLr7Vb8KpZ3m"),
    "rot13": ("note " + codecs.encode(GITHUB, "rot13"), codecs.encode(GITHUB, "rot13")[4:20]),
    "base32": (f"blob {BASE32}", BASE32[8:32]),
}


@pytest.mark.parametrize("case", sorted(VARIANTS))
def test_a_variant_in_text_or_nested_value_is_rejected_and_stored_nowhere(agent, case):
    text, needle = VARIANTS[case]
    for body in (
        candidate(text=text, predicate=f"t_{case}"),
        candidate(value={"setup": [{"step": text}]}, text="setup", predicate=f"v_{case}"),
    ):
        response = agent.post("/api/v1/claims", body, format="json")
        assert response.status_code == 201, response.json()
        assert (response.json()["decision"], response.json()["reasons"]) == (
            "rejected",
            ["secret_detected"],
        )
    assert tables_containing(needle) == {}


@pytest.mark.parametrize(
    "text",
    [
        "Passwords must be 12 characters; reset the password via the link.",
        "Her password expired yesterday.",
        "Deploy with --token $GITHUB_TOKEN, never the token itself.",
        "The cache key is 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
        f"ssh-ed25519 {SSH_PUBLIC} alice@laptop",
        "Order A1B2-C3D4-E5F6-G7H8 shipped on 2026-11-30.",
        "我的密码忘记了\uff0c请帮我重置\u3002",
    ],
)
def test_a_look_alike_is_not_rejected_as_a_secret(agent, text):
    response = agent.post("/api/v1/claims", candidate(text=text), format="json")
    assert response.status_code == 201, response.json()
    assert "secret_detected" not in response.json()["reasons"]
