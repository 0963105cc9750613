"""memdesk's own credential detectors: the ones detect-secrets lacks.

Each is a regex and an `accept` that looks at the match and returns the secret, or
None when the match only looks like one (a placeholder, a path, a word, a key spelled
`AKIAXXXX…` in documentation). `own_detectors()` compiles them once: every detector
for the text as written and its compact reading, and the prefixed ones (whose
distinctive start survives) for the readings with spaces or separators removed.
`secrets.py` runs them beside detect-secrets' plugins.
"""

from __future__ import annotations

import base64
import binascii
import math
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache, cached_property

from common.screen.credential_phrases import (
    CREDENTIAL_NEAR,
    CREDENTIAL_NEAR_OTHER,
    CREDENTIAL_PAIR,
    PASSWORD_BARE,
    PASSWORD_FIRST,
    PASSWORD_FIRST_OTHER,
    PASSWORD_LATIN,
    PASSWORD_LOG_IN_WITH,
    PASSWORD_OTHER,
    PASSWORD_SPACED,
    PASSWORD_TO_LOG_IN,
    is_placeholder,
    looks_generated,
    looks_like_password,
    looks_like_strong_password,
    other_kind_of_key,
)
from common.screen.needles import Needles, needles
from common.screen.secret_forms import FORMS, VENDOR_PREFIXED


@dataclass(frozen=True)
class Detector:
    kind: str
    regex: re.Pattern[str]
    accept: Callable[[re.Match[str]], str | None]

    @cached_property
    def needles(self) -> Needles:
        return needles(self.regex)


def _whole(match: re.Match[str]) -> str | None:
    """The key, unless it ends in one character over and over: `AKIAXXXXXXXXXXXXXXXX`,
    `ghp_xxxx…` stand for a key in documentation."""
    key = match.group()
    return None if stands_for_a_key(key) else key


def stands_for_a_key(key: str) -> bool:
    """`AKIAXXXXXXXXXXXXXXXX`, `ghp_xxxx…`: one character over and over; or prose run
    together with the prefix (`GOCSPX-prefixedclientsecrets…`, read without its spaces)."""
    tail = key[-16:]
    return len(set(tail)) <= 2 or (tail.isalpha() and tail.islower())


def _der_private_key(match: re.Match[str]) -> str | None:
    """A base64 run whose DER opens like a private key (version 0 or 1).

    Certificates and public keys open with a nested SEQUENCE or the modulus instead.
    """
    run = match.group()
    if run.startswith("b3BlbnNzaC1rZXktdjE"):  # "openssh-key-v1": OpenSSH private keys only
        return run
    head = run[:64]
    try:
        raw = base64.b64decode(head[: len(head) - len(head) % 4])
    except (binascii.Error, ValueError):
        return None
    if len(raw) < 8 or raw[0] != 0x30:
        return None
    if any(oid in raw for oid in _ENCRYPTED_KEY_OIDS):
        return run  # an encrypted PKCS#8 key: its encryption scheme comes first
    size = raw[1]
    start = 2 + (size & 0x7F if size & 0x80 else 0)
    # Version 0 or 1: a PKCS#1, PKCS#8 or EC private key; version 3: a PKCS#12 bundle.
    return (
        run
        if raw[start : start + 3] in (b"\x02\x01\x00", b"\x02\x01\x01", b"\x02\x01\x03")
        else None
    )


# PBES2 and the PKCS#12 password-based schemes (1.2.840.113549.1.5.13, 1.2.840.113549.1.12.1).
_ENCRYPTED_KEY_OIDS = (
    b"\x2a\x86\x48\x86\xf7\x0d\x01\x05\x0d",
    b"\x2a\x86\x48\x86\xf7\x0d\x01\x0c\x01",
)


_PREFIXED: tuple[tuple[str, str], ...] = (
    ("GitHub Fine-grained Token", r"github_pat_[A-Za-z0-9_]{36,}"),
    # No word boundary before the prefix: read with its spaces removed, a key split into
    # groups ("token ghp_D6Wm HGQW…") runs on from the word before it.
    ("GitHub Token", r"(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36,}"),
    ("Google API Key", r"AIza[0-9A-Za-z_\-]{35}"),
    ("Anthropic API Key", r"sk-ant-[a-z0-9]+-[A-Za-z0-9_\-]{20,}"),
    ("OpenAI Token", r"sk-(?:proj|svcacct|admin|None)-[A-Za-z0-9_\-]{20,}"),
    ("OpenAI Token", r"\bsk-[A-Za-z0-9]{40,}"),
    ("Hugging Face Token", r"\bhf_[A-Za-z0-9]{34,}"),
    ("GitLab Token", r"\bgl(?:pat|dt|rt|ptt|ft|imt|cbt|oas|soat)-[A-Za-z0-9_\-]{20,}"),
    ("GitLab Token", r"GR1348941[A-Za-z0-9_\-]{20,}"),
    ("NPM tokens", r"\bnpm_[A-Za-z0-9]{36}"),
    ("PyPI Token", r"pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_\-]{50,}"),
    ("AWS Access Key", r"(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}"),
    ("Slack Token", r"xox[abposre]-[A-Za-z0-9\-]{10,}|xoxe\.xox[bp]-\d-[A-Za-z0-9]{40,}"),
    ("Slack Token", r"xapp-\d-[A-Z0-9]{9,}-\d{9,}-[a-f0-9]{40,}"),
    ("Stripe Webhook Secret", r"\bwhsec_[A-Za-z0-9+/]{32,}"),
    ("Stripe Access Key", r"(?:sk|rk)_live_[0-9A-Za-z]{24,}"),
    ("SendGrid API Key", r"SG\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43}"),
    ("Shopify Token", r"\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}"),
    ("Google OAuth Client Secret", r"GOCSPX-[A-Za-z0-9_\-]{28}"),
    ("Google OAuth Token", r"\bya29\.[A-Za-z0-9_\-]{30,}|\b1//0[A-Za-z0-9_\-]{40,}"),
    ("Azure Client Secret", r"(?<![\w~.\-])[A-Za-z0-9_~.\-]{3}\dQ~[A-Za-z0-9_~.\-]{31,34}"),
    ("Docker Hub Token", r"dckr_pat_[A-Za-z0-9_\-]{27,}"),
    ("DigitalOcean Token", r"do[por]_v1_[a-f0-9]{64}"),
    ("Heroku API Key", r"\bHRKU-AA[A-Za-z0-9_\-]{58}"),
    ("Braintree Access Token", r"access_token\$production\$[0-9a-z]{16}\$[0-9a-f]{32}"),
    ("Square Access Token", r"\bEAAA[A-Za-z0-9_\-]{60}\b|\bsq0atp-[A-Za-z0-9_\-]{22}"),
    ("New Relic Key", r"\b[a-f0-9]{36}NRAL\b|\bNRAK-[A-Z0-9]{27}\b"),
    ("Linear API Key", r"\blin_api_[A-Za-z0-9]{40}"),
    ("Notion Token", r"\bsecret_[A-Za-z0-9]{43}\b|\bntn_[A-Za-z0-9]{40,}"),
    ("Atlassian API Token", r"\bATATT3[A-Za-z0-9_\-=]{150,}"),
    ("Grafana Token", r"\bglsa_[A-Za-z0-9]{32}_[a-f0-9]{8}|\bglc_[A-Za-z0-9+/]{32,}={0,2}"),
    ("Postman API Key", r"\bPMAK-[a-f0-9]{24}-[a-f0-9]{34}"),
    ("Vault Token", r"\bhv[sb]\.[A-Za-z0-9_\-]{90,}"),
    ("Age Secret Key", r"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}"),
    ("PyPI Token", r"pypi-AgENdGVzdC5weXBpLm9yZw[A-Za-z0-9_\-]{50,}"),
    (
        "Discord Webhook",
        r"(?i)discord(?:app)?\.com/api/(?:v\d+/)?webhooks/\d{15,22}/[A-Za-z0-9_\-]{30,}",
    ),
    ("Slack Webhook", r"hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/\-]{20,}"),
    (
        "Teams Webhook",
        r"(?i)(?:webhook\.office\.com|outlook\.office(?:365)?\.com)/webhook(?:b2)?/"
        r"[A-Za-z0-9@/_.\-]{40,}",
    ),
    ("Teams Webhook", r"(?i)\.logic\.azure\.com(?::\d+)?/workflows/\S*?[?&]sig=[\w%\-]{20,}"),
    (
        "JSON Web Token",
        r"eyJ[A-Za-z0-9_\-]{10,}\.eyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}",
    ),
    ("Private Key", r"-----\s*BEGIN[A-Z0-9 ]{0,24}PRIVATE\s*KEY|PuTTY-User-Key-File-\d"),
    # The token's secret half opens with "AA"; the bot id before it is all digits.
    ("Telegram Bot Token", r"(?<![\w:])\d{8,10}:AA[A-Za-z0-9_\-]{30,34}(?![\w\-])"),
    *VENDOR_PREFIXED,
)

# A name that says "this is a credential"; the assignment follows it.
_CREDENTIAL_NAME = (
    r"(secret|passw(?:or)?d|passphrase|pwd|(?<![a-z])pass(?![a-z])|token|api[_.-]?key|apikey"
    r"|access[_.-]?key|private[_.-]?key|credentials?|signing[_.-]?key|auth[_.-]?key"
    r"|account[_.-]?key|shared[_.-]?access[_.-]?key|subscription[_.-]?key|encryption[_.-]?key"
    r"|(?<![a-z])(?:app|master|hmac|aes|cipher)[_.-]?key|(?<![a-z])pat(?![a-z]))"
    r"([A-Za-z0-9_.\-]{0,40})"
)
_CREDENTIAL_ASSIGNMENT = (
    r"(?i)"
    + _CREDENTIAL_NAME
    + r"[\"']?\s{0,3}(?:=|:=|:|=>)\s{0,3}[\"']?([^\s\"',;{}()<>\[\]`]{6,200})"
)
# The same as an XML element: `<password>…</password>`, `<apiKey>…</apiKey>`.
_CREDENTIAL_ELEMENT = r"(?i)<[A-Za-z0-9_.\-]{0,40}?" + _CREDENTIAL_NAME + r">([^\s<>]{6,200})</"
_PASSWORD_NAME = re.compile(r"(?i)pass|pwd")
_PASSWORD_TAIL = re.compile(r"(?:[(),;\[\]{}][^\s\"'`<>]*)*")
_NEXT_SETTING = re.compile(r";(?=[A-Za-z ]{1,30}=)")
# Names of things about a credential that are not the credential.
_NOT_A_CREDENTIAL_ASSIGNMENT = re.compile(
    r"(?i)[_.-](?:digest|hash|sha\d*|fingerprint|ids?|count|length|len|url|uri|path|file|name"
    r"|type|policy|expiry|expires|ttl|endpoint|hint|rotation|reset|prefix|format|manager|store"
    r"|vault|min|max|limit|age|version|scope|scopes|header|timeout)(?![a-z0-9])"
)
_PLACEHOLDER = re.compile(
    r"^(?:\$\{.*\}|\{\{.*\}\}|<.*>|%\(.*\)s|\*+|x+|\.+|-+|null|none|true|false|redacted|changeme"
    r"|your[_-].*|env\(.*)$",
    re.IGNORECASE,
)
_WORDS = re.compile(r"^[a-z]+(?:[-_./][a-z]+)*$")
_CODE_REFERENCE = re.compile(r"^[A-Za-z_$]+(?:\.[A-Za-z_$]+)+(?:\(\))?;?$")


def _entropy(value: str) -> float:
    counts = Counter(value)
    return -sum(n / len(value) * math.log2(n / len(value)) for n in counts.values())


def _classes(value: str) -> int:
    return sum(
        (
            any(c.islower() for c in value),
            any(c.isupper() for c in value),
            any(c.isdigit() for c in value),
            any(not c.isalnum() for c in value),
        )
    )


def _assigned_secret(match: re.Match[str]) -> str | None:
    name, suffix, value = match.group(1), match.group(2), match.group(3)
    if suffix and not re.fullmatch(r"s?(?:[_.\-][A-Za-z0-9_.\-]*)?", suffix):
        return None  # the name runs on into another word: "tokenizer", "secretary"
    if (
        _NOT_A_CREDENTIAL_ASSIGNMENT.search(suffix)
        or _PLACEHOLDER.match(value)
        or _WORDS.match(value)
    ):
        return None
    if value.startswith(("/", "~", "./", "http://", "https://")) and "@" not in value:
        return None  # a path or a URL without credentials
    if _CODE_REFERENCE.match(value):
        return None  # `process.env.SLACK_BOT_TOKEN`, `settings.SECRET_KEY`
    if _PASSWORD_NAME.match(name):
        # "DB_PASS=hunter22" is a password, whatever it holds: the value runs on over
        # brackets, commas and semicolons, up to the next `key=` of a connection string.
        rest = _PASSWORD_TAIL.match(match.string, match.end(3))
        if rest and rest.group():
            value = _NEXT_SETTING.split(value + rest.group(), maxsplit=1)[0].rstrip(";,)")
        return looks_like_password(value)
    if len(value) < 8:
        return None
    classes = _classes(value)
    if classes >= 3 or (len(value) >= 16 and classes >= 2 and _entropy(value) >= 3.0):
        return value
    return None


def _bearer(match: re.Match[str]) -> str | None:
    value = match.group(1)
    return value if _classes(value) >= 2 and _entropy(value) >= 3.0 else None


def _authorization(match: re.Match[str]) -> str | None:
    """The credential of an `Authorization: Bearer|Token …` header: named a credential
    by the header, so a shorter or plainer one counts than after a bare "bearer"."""
    value = match.group(1)
    if is_placeholder(value):
        return None
    return value if len(value) >= 16 or _classes(value) >= 2 else None


def _basic_credentials(match: re.Match[str]) -> str | None:
    """`Basic <base64 of user:password>`, the password not a placeholder."""
    run = match.group(1)
    try:
        raw = base64.b64decode(run + "=" * (-len(run) % 4), validate=True)
        decoded = raw.decode("ascii")
    except (binascii.Error, ValueError):
        return None
    user, colon, password = decoded.partition(":")
    if not colon or not user or not password or not decoded.isprintable():
        return None
    return None if is_placeholder(password) else run


def _url_password(match: re.Match[str]) -> str | None:
    """The password of `scheme://user:password@host`, whatever characters it holds."""
    password = match.group(2)
    if len(password) < 4 or is_placeholder(password) or password.lower() == "pass":
        return None  # `u:p@`, `user:${PASS}@`, `user:pass@`
    if password.isdigit() and len(password) <= 5:
        return None  # `host:8080@`
    return password


def _docker_auth(match: re.Match[str]) -> str | None:
    """The `"auth"` of a Docker config: base64 of `user:password`."""
    return _basic_credentials(match)


def _command_password(match: re.Match[str]) -> str | None:
    value = next(group for group in match.groups() if group is not None)
    return looks_like_password(value)


def _option_value(match: re.Match[str]) -> str | None:
    """`--token VALUE`, `--password VALUE`: judged as a password or a generated token."""
    name, value = match.group(1), match.group(2)
    if _PASSWORD_NAME.search(name):
        return looks_like_password(value)
    return looks_generated(value, strong=True)


def _prose_password(match: re.Match[str]) -> str | None:
    return looks_like_password(match.group("value"))


def _strong_password(match: re.Match[str]) -> str | None:
    return looks_like_strong_password(match.group("value"))


def _credential_near(match: re.Match[str]) -> str | None:
    strong = match.group("strong") is not None
    if not strong and other_kind_of_key(match.string[: match.start()]):
        return None
    return looks_generated(match.group("value"), strong=strong)


def _hex_value(match: re.Match[str]) -> str | None:
    return match.group(1)


def _first_group(match: re.Match[str]) -> str | None:
    return next((group for group in match.groups() if group is not None), None)


# (kind, pattern, accept) for the text as written and its compact reading only.
_CONTEXTUAL: tuple[tuple[str, str, Callable[[re.Match[str]], str | None]], ...] = (
    (
        "URL Credentials",
        r"\b[A-Za-z][A-Za-z0-9+.\-]{1,20}://([^\s/@:?#\"'<>]{0,128}):([^\s/\"'<>]{1,256})"
        r"@(?=[A-Za-z0-9\[])",
        _url_password,
    ),
    (
        "Basic Auth Header",
        r"(?i)\bbasic\s+([A-Za-z0-9+/]{6,}={0,2})(?![A-Za-z0-9+/=])",
        _basic_credentials,
    ),
    (
        "Authorization Header",
        r"(?i)\bauthorization[\"']?\s*[:=]\s*[\"']?(?:bearer|token)\s+([A-Za-z0-9._~+/\-]{8,}=*)",
        _authorization,
    ),
    (
        "Command-line Credential",
        r"\bcurl\b[^\n]*?\s(?:-u|--user)(?:\s+|=)['\"]?[^\s:'\"]+:(?:'([^']+)'|\"([^\"]+)\"|([^\s'\"]+))",
        _command_password,
    ),
    (
        "Command-line Credential",
        r"\b(?:mysql|mysqldump|mysqladmin|mariadb|mariadb-dump)\b[^\n]*?\s-p"
        r"(?:'([^']+)'|\"([^\"]+)\"|([^\s'\"-][^\s'\"]*))",
        _command_password,
    ),
    (
        "Command-line Credential",
        r"\bsshpass\b[^\n]*?\s-p\s*(?:'([^']+)'|\"([^\"]+)\"|([^\s'\"]+))",
        _command_password,
    ),
    (
        # Tools that take a password after a short flag of their own.
        "Command-line Credential",
        r"\b(?:(?:docker|podman|nerdctl|helm\s+registry)\s+login\b[^\n]*?\s-p|redis-cli\b[^\n]*?\s-a"
        r"|openssl\b[^\n]*?\s(?:-k|-pass(?:in|out)?\s+pass:)|ssh-keygen\b[^\n]*?\s-N"
        r"|\bzip\b[^\n]*?\s-P|az\s+login\b[^\n]*?\s(?:-p|--password)"
        r"|\b(?:keytool|jarsigner)\b[^\n]*?\s-(?:src|dest)?(?:storepass|keypass)"
        r"|\bhtpasswd\b[^\n]*?\s-\w*b\w*\s+\S+\s+\S+|\bnet\s+use\b[^\n]*?/user:\S+)"
        r"\s*(?:'([^']+)'|\"([^\"]+)\"|([^\s'\"-][^\s'\"]*))",
        _command_password,
    ),
    (
        "Command-line Credential",
        r"\b7za?\s+[^\n]*?\s-p(?:'([^']+)'|\"([^\"]+)\"|([^\s'\"-][^\s'\"]*))",
        _command_password,
    ),
    (
        # `.npmrc`: `_auth = <base64 of user:password>`.
        "NPM Auth",
        r"(?m)(?:^|[\s:])_auth\s*=\s*[\"']?([A-Za-z0-9+/]{8,}={0,2})",
        _basic_credentials,
    ),
    (
        "Docker Registry Auth",
        r"\"auth\"\s*:\s*\"([A-Za-z0-9+/]{8,}={0,2})\"",
        _docker_auth,
    ),
    (
        "Azure SAS Token",
        r"[?&]sig=([A-Za-z0-9%+/]{30,}(?:%3[Dd]|=){0,2})",
        _first_group,
    ),
    (
        "Heroku API Key",
        r"(?i)\bheroku\b[^\n]{0,30}?\b(?:key|token)\b[^\n]{0,10}?"
        r"\b([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\b",
        _hex_value,
    ),
    (
        "Command-line Credential",
        r"(?i)(?<![\w-])--?((?:[a-z0-9]+-)*(?:token|password|passwd|pass|secret|api-?key|apikey"
        r"|access-key|secret-key))\s+['\"]?([^\s'\"]{6,200})",
        _option_value,
    ),
    (
        # `key-` and 32 hex digits is also how many generate ids: only beside the name.
        "Mailgun API Key",
        r"(?i)\bmailgun\b[^\n]{0,60}?\b(key-[0-9a-f]{32})\b"
        r"|\b(key-[0-9a-f]{32})\b[^\n]{0,60}?\bmailgun\b",
        _first_group,
    ),
    (
        "Google Service Account Key",
        r"\bprivate_key_id[\"']?\s*[:=]\s*[\"']?([0-9a-f]{40})(?![0-9a-f])",
        _hex_value,
    ),
    (
        "Datadog API Key",
        r"(?i)\b(?:datadog|dd)[\s_\-]*(?:api|app(?:lication)?)?[\s_\-]*key\b[^\n]{0,16}?"
        r"\b([a-f0-9]{32}|[a-f0-9]{40})\b",
        _hex_value,
    ),
    (
        "Postmark Token",
        r"(?i)\bpostmark\b[^\n]{0,30}?\b(?:token|key)\b[^\n]{0,10}?"
        r"\b([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\b",
        _hex_value,
    ),
    ("Password in Prose", PASSWORD_LATIN, _prose_password),
    ("Password in Prose", PASSWORD_BARE, _prose_password),
    ("Password in Prose", PASSWORD_OTHER, _prose_password),
    ("Password in Prose", PASSWORD_SPACED, _strong_password),
    ("Password in Prose", PASSWORD_TO_LOG_IN, _strong_password),
    ("Password in Prose", PASSWORD_LOG_IN_WITH, _strong_password),
    ("Password in Prose", CREDENTIAL_PAIR, _strong_password),
    ("Password in Prose", PASSWORD_FIRST, _strong_password),
    ("Password in Prose", PASSWORD_FIRST_OTHER, _strong_password),
    ("Credential Near Its Name", CREDENTIAL_NEAR, _credential_near),
    ("Credential Near Its Name", CREDENTIAL_NEAR_OTHER, _credential_near),
    *FORMS,
)


@cache
def own_detectors() -> tuple[tuple[Detector, ...], tuple[Detector, ...]]:
    """(detectors for the text as written, detectors for whitespace-joined text)."""
    prefixed = tuple(Detector(kind, re.compile(p), _whole) for kind, p in _PREFIXED)
    key_body = Detector(
        "Private Key",
        re.compile(r"(?:MI|MH|MC)[A-Za-z0-9+/]{38,}={0,2}|b3BlbnNzaC1rZXktdjE[A-Za-z0-9+/]{20,}"),
        _der_private_key,
    )
    assigned = Detector(
        "High Entropy Assignment", re.compile(_CREDENTIAL_ASSIGNMENT), _assigned_secret
    )
    element = Detector("High Entropy Assignment", re.compile(_CREDENTIAL_ELEMENT), _assigned_secret)
    bearer = Detector(
        "Bearer Token", re.compile(r"(?i)\bbearer\s+([A-Za-z0-9._~+/\-]{20,}=*)"), _bearer
    )
    contextual = tuple(
        Detector(kind, re.compile(pattern), accept) for kind, pattern, accept in _CONTEXTUAL
    )
    return (*prefixed, key_body, assigned, element, bearer, *contextual), (*prefixed, key_body)
