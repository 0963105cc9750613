"""Credentials in any string an agent sends, found before anything is written.

Three layers, each compiled once at first use:

1. detect-secrets' detector plugins (AWS, GitHub, Slack, JWT, private keys,
   quoted `password = "…"`, …) with its false-positive filters. The generic
   high-entropy and public-IP plugins stay off: they flag prose, hashes and
   commit ids.
2. Detectors detect-secrets lacks (`secret_detectors`): fine-grained GitHub tokens, Google API
   keys and OAuth secrets and tokens, OpenAI project and Anthropic keys,
   Hugging Face, GitLab, npm, Docker Hub, DigitalOcean, Heroku, Square,
   Braintree, Azure client-secret and SAS, Stripe webhook, Telegram, Vault
   and other vendor tokens, Shopify and Mailgun tokens, Discord, Slack and
   Teams webhook URLs, Docker registry `auth`,
   private-key bodies without their BEGIN line (recognised by their DER
   header, so certificates and public keys pass), URL credentials whatever
   their password holds, `Authorization: Basic`/`Bearer`/`Token` headers,
   shell and CLI forms (`curl -u`, `mysql -p…`, `sshpass -p`, `--token …`),
   high-entropy values assigned to a secret-ish name, quoted or not
   (`aws_secret_access_key = …`, `<password>…</password>`), and credentials
   written into a sentence in many languages (`credential_phrases`).
3. Re-readings, each against the detectors that need a distinctive prefix:
   the text with its whitespace removed (a key split by spaces or line
   breaks); its compact reading (NFKC, format and invisible characters
   removed: a key split by zero-width characters or written full-width),
   scanned by every detector; its degrouped reading (`AKIA-UJZD-EGXD-…`:
   the separators of short groups removed, only inside such runs, so prose
   is not fused), likewise for groups cut by `_` or `/`; its rot13 reading
   (scanned by every detector when a credential's name shifted by rot13 is
   there); its reversed reading; the string values of a JSON object joined (a
   key cut across values); and every decoded payload
   (`decode.hidden_texts`), scanned by every detector.

Most strings hold no credential: each detector runs only on a line or text
that holds one of its needles (`needles`: literal strings every match of its
regexes contains), found for all detectors in one pass.

A finding keeps a digest of the secret, never the secret.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from functools import cache
from typing import Any, cast

from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
from detect_secrets.filters import heuristic
from detect_secrets.plugins.base import BasePlugin, RegexBasedDetector
from detect_secrets.plugins.jwt import JwtTokenDetector
from detect_secrets.plugins.keyword import DENYLIST, KeywordDetector

from common.screen.credential_phrases import is_placeholder
from common.screen.decode import hidden_texts
from common.screen.needles import Haystack, Needles, needles, needles_of
from common.screen.normalize import strip_invisible
from common.screen.secret_detectors import Detector, own_detectors, stands_for_a_key
from common.screen.strings import strings_in

_NOISY_PLUGINS = {
    "Base64 High Entropy String",
    "Hex High Entropy String",
    "Public IP (ipv4)",
}


@dataclass(frozen=True)
class SecretFinding:
    """Where a secret was found. Holds a digest of the secret, never the secret."""

    kind: str
    line: int
    digest: str


@cache
def _own_haystacks() -> tuple[Haystack, Haystack]:
    """The needles of `own_detectors()`: (for the text as written, for joined text)."""
    written, joined = own_detectors()
    return (
        Haystack([detector.needles for detector in written]),
        Haystack([detector.needles for detector in joined]),
    )


# The keyword detector is the slowest plugin and can only fire near one of its
# keywords; a key name worth pairing with its value contains one of these.
_KEYWORD_HINT = re.compile("|".join(DENYLIST), re.IGNORECASE)
_SECRET_KEY_NAME = re.compile(
    r"(?i)pass|pwd|secret|token|key|cred|auth|bearer|cookie|session|private|sign|salt|conn"
    r"|contrase"
)

_KEYWORD_HINT_NEEDLES = needles(_KEYWORD_HINT)


@cache
def _plugins() -> tuple[BasePlugin, ...]:
    # The library's return type names a TypeVar it never binds; these are its plugin classes.
    classes = cast("dict[str, type[BasePlugin]]", get_mapping_from_secret_type_to_class())
    return tuple(
        cls() for secret_type, cls in sorted(classes.items()) if secret_type not in _NOISY_PLUGINS
    )


# Plugins whose `analyze_string` yields nothing but matches of their regexes: the JWT
# detector only drops those that do not decode.
_ONLY_KEEPS_REGEX_MATCHES = (RegexBasedDetector.analyze_string, JwtTokenDetector.analyze_string)


@cache
def _plugin_haystack() -> Haystack:
    """The needles of each plugin's regexes (when only their matches count), in the order
    of `_plugins()`, then the keyword hint's."""
    return Haystack(
        [
            *(
                needles_of(plugin.denylist)
                if isinstance(plugin, RegexBasedDetector)
                and type(plugin).analyze_string in _ONLY_KEEPS_REGEX_MATCHES
                else Needles(known=False)
                for plugin in _plugins()
            ),
            _KEYWORD_HINT_NEEDLES,
        ]
    )


def _filtered_out(secret: str, line: str, plugin: BasePlugin) -> bool:
    """detect-secrets' own false-positive filters, the ones an ad-hoc scan applies."""
    return (
        heuristic.is_sequential_string(secret)
        or heuristic.is_potential_uuid(secret)
        or heuristic.is_likely_id_string(secret, line, plugin)
        or heuristic.is_templated_secret(secret)
        or heuristic.is_prefixed_with_dollar_sign(secret)
        or heuristic.is_not_alphanumeric_string(secret)
        or heuristic.is_indirect_reference(line)
        or is_placeholder(secret)
        or stands_for_a_key(secret)
    )


def _finding(kind: str, line: int, secret: str) -> SecretFinding:
    return SecretFinding(
        kind=kind, line=line, digest="sha256:" + hashlib.sha256(secret.encode()).hexdigest()
    )


def _scan_plugins(text: str) -> Iterator[SecretFinding]:
    plugins, haystack = _plugins(), _plugin_haystack()
    hint = len(plugins)
    for number, line in enumerate(text.splitlines(), start=1):
        # A plugin that only runs its regexes finds nothing where none can match.
        may_match = haystack.may_match(line)
        keyword_near = hint in may_match and bool(_KEYWORD_HINT.search(line))
        for index in may_match:
            if index == hint:
                continue
            plugin = plugins[index]
            if not keyword_near and isinstance(plugin, KeywordDetector):
                continue
            for secret in plugin.analyze_string(line):
                if secret and not _filtered_out(secret, line, plugin):
                    yield _finding(plugin.secret_type, number, secret)


def _scan_own(
    text: str, detectors: tuple[Detector, ...], haystack: Haystack, *, joined: bool
) -> Iterator[SecretFinding]:
    for index in haystack.may_match(text):
        detector = detectors[index]
        for match in detector.regex.finditer(text):
            secret = detector.accept(match)
            if secret:
                line = 1 if joined else text.count("\n", 0, match.start()) + 1
                yield _finding(detector.kind, line, secret)


_SPACE = re.compile(r"\s+")
# A run of short groups joined by one separator each: "AKIA-UJZD-EGXD-NCF3-2EPF",
# "ghp_.JBd0.Kh8o…". The first group may be a longer prefix.
_GROUPED = re.compile(
    r"(?<![\w.\-])[A-Za-z0-9_]{1,12}(?:[.\-][A-Za-z0-9_]{1,8}){3,}(?![\w\-]|\.\w)"
)
_SEPARATORS = str.maketrans("", "", ".-")
_GROUP_SEPARATOR = re.compile(r"[.\-]")
_GROUPS_HINT = re.compile(r"[.\-][A-Za-z0-9_]{1,8}[.\-][A-Za-z0-9_]{1,8}[.\-]")
# The same cut by underscores or slashes ("AKIA_UJZD_EGXD_…", "AKIA/UJZD/…"), where the
# groups themselves hold neither.
_GROUPED_BY_SLASHES = re.compile(
    r"(?<![\w/])[A-Za-z0-9]{2,12}(?:[_/][A-Za-z0-9]{2,8}){3,}(?![\w/])"
)
_SLASH_SEPARATORS = str.maketrans("", "", "_/")
_SLASH_SEPARATOR = re.compile(r"[_/]")
_SLASH_GROUPS_HINT = re.compile(r"[_/][A-Za-z0-9]{2,8}[_/][A-Za-z0-9]{2,8}[_/]")
_ROT13 = str.maketrans(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz",
    "NOPQRSTUVWXYZABCDEFGHIJKLMnopqrstuvwxyzabcdefghijklm",
)
# The prefixes of the keys most worth hiding, as rot13 spells them.
_ROT13_PREFIX = re.compile(
    "|".join(
        re.escape(prefix.translate(_ROT13))
        for prefix in (
            "github_pat_", "ghp_", "gho_", "ghs_", "ghu_", "ghr_", "AKIA", "ASIA", "AIza",
            "sk-proj-", "sk-ant-", "sk_live_", "rk_live_", "xoxb-", "xoxp-", "xoxa-", "glpat-",
            "npm_", "hf_", "eyJ", "SG.", "shpat_", "PRIVATE KEY", "pypi-",
        )
    )
)  # fmt: skip
# Names of credentials, in the languages agents relay; a text that holds one shifted by
# rot13 or written backwards is read shifted back or reversed by every detector.
_CREDENTIAL_NAMES = (
    "password", "passwd", "passphrase", "api_key", "apikey", "api-key", "secret", "token",
    "passwort", "kennwort", "contrase", "senha", "wachtwoord", "mot de passe", "parola",
    "haslo", "sifre", "sandi", "credential", "bearer", "authorization", "otpauth",
    "recovery code", "seed phrase", "mnemonic", "PIN ", "PIN:", "login:",
)  # fmt: skip
# Names of credentials as rot13 spells them (`ncv_xrl=…`): the rotated text is read by
# every detector, as the text itself is.
_ROT13_NAME = re.compile(
    "|".join(re.escape(name.translate(_ROT13)) for name in _CREDENTIAL_NAMES),
    re.IGNORECASE,
)
# The same prefixes written backwards (`AIKA…`, `…_phg`, `…_tap_buhtig`).
_REVERSED_PREFIX = re.compile(
    "|".join(
        re.escape(prefix[::-1])
        for prefix in (
            "github_pat_", "ghp_", "gho_", "ghs_", "ghu_", "ghr_", "AKIA", "ASIA", "AIza",
            "sk-proj-", "sk-ant-", "sk_live_", "rk_live_", "xoxb-", "xoxp-", "glpat-", "npm_",
            "hf_", "SG.", "shpat_", "PRIVATE KEY", "pypi-", "GOCSPX-", "dckr_pat_", "dop_v1_",
        )
    )
)  # fmt: skip
_REVERSED_NAME = re.compile(
    "|".join(re.escape(name[::-1]) for name in (*_CREDENTIAL_NAMES, "://")), re.IGNORECASE
)
# A string value of a JSON object; a key cut across several (`{"a": "AKIA…", "b": "…"}`)
# is read with the values joined.
_JSON_STRING_VALUE = re.compile(r"[:\[,]\s*\"([^\"\\\n]{1,200})\"(?!\s*:)")
_DIGIT = re.compile(r"\d")
# String literals joined in code ("AKIA" + "UJZD…", 'ghp_' . '…', "x" || "y"): read as one.
_CONCATENATION = re.compile(r"[\"']\s*(?:\+|\.|\|\|)\s*[\"']")
# Any run of groups cut by one separator, the key's own separators among them
# ("gith_ub_p_at_1_1VB6_…", "sk-p - roj- - _hsG - …", "AKIA6GH7-27EMH2GY-YV2K"): read
# joined when most of its inner groups share one size, with the key's prefix restored.
_RUN = re.compile(r"(?<![A-Za-z0-9_\-./+=])[A-Za-z0-9_\-./+=]{12,}")
_SPACED_RUN = re.compile(r"\S+(?: - \S+){2,}")
_RUN_SEPARATORS = ("-", ".", "_", "/")
_RESTORED_PREFIXES = tuple(
    sorted(
        (
            (prefix.replace("_", "").replace("-", ""), prefix)
            for prefix in (
                "github_pat_", "ghp_", "gho_", "ghs_", "ghu_", "ghr_", "sk-proj-", "sk-ant-",
                "sk-or-v1-", "sk_live_", "rk_live_", "sk_test_", "rk_test_", "xoxb-", "xoxp-",
                "glpat-", "npm_", "hf_", "pypi-", "shpat_", "dop_v1_", "GOCSPX-", "dckr_pat_",
                "whsec_", "sk-",
            )
        ),
        key=lambda pair: -len(pair[0]),
    )
)  # fmt: skip


def _compact(text: str) -> str:
    """NFKC, with format characters (zero-width, soft hyphen, tags) and invisible letters
    removed, not replaced: the key a reader sees in `AKIA\u200bUJZD…` or full-width letters."""
    if text.isascii():
        return text
    return strip_invisible(unicodedata.normalize("NFKC", text))


def _degroup(match: re.Match[str]) -> str:
    """A run of groups cut every few characters, without its separators; other runs
    ("ASIA-PACIFIC-REGION-2026", "2.14.0.20261130") as written."""
    run = match.group()
    interior = {len(group) for group in _GROUP_SEPARATOR.split(run)[1:-1]}
    return run.translate(_SEPARATORS) if len(interior) == 1 and _DIGIT.search(run) else run


def _degroup_slashes(match: re.Match[str]) -> str:
    run = match.group()
    interior = {len(group) for group in _SLASH_SEPARATOR.split(run)[1:-1]}
    return run.translate(_SLASH_SEPARATORS) if len(interior) == 1 and _DIGIT.search(run) else run


def _joined_groups(groups: list[str], *, evenly: bool = False) -> str | None:
    """The groups joined, if they read as a key cut every few characters (`evenly`: cut
    by a separator prose never uses, " - ", so a run without digits counts too)."""
    interior = [len(group) for group in groups[1:-1]]
    if not interior:
        return None
    size = max(set(interior), key=interior.count)
    if size > 12 or interior.count(size) < 0.6 * len(interior):
        return None
    joined = "".join(groups)
    if not _DIGIT.search(joined) and not evenly:
        return None
    if any(joined.startswith(prefix) for _, prefix in _RESTORED_PREFIXES):
        return joined
    for stripped, prefix in _RESTORED_PREFIXES:
        if joined.startswith(stripped):
            return prefix + joined[len(stripped) :]
    return joined


def _regrouped(text: str) -> str | None:
    """`text` with every run of evenly cut groups joined, or None when it holds none."""
    pieces: list[tuple[int, int, str]] = []
    for match in _SPACED_RUN.finditer(text) if " - " in text else ():
        joined = _joined_groups(match.group().split(" - "), evenly=True)
        if joined:
            pieces.append((match.start(), match.end(), joined))
    if not pieces:
        for match in _RUN.finditer(text):
            run = match.group()
            for separator in _RUN_SEPARATORS:
                if run.count(separator) >= 2:
                    joined = _joined_groups(run.split(separator))
                    if joined:
                        pieces.append((match.start(), match.end(), joined))
                        break
    if not pieces:
        return None
    out, at = [], 0
    for start, end, joined in pieces:
        out += [text[at:start], joined]
        at = end
    return "".join([*out, text[at:]])


def _scan(text: str) -> list[SecretFinding]:
    return [*_scan_plugins(text), *_scan_readings(text)]


def _scan_readings(text: str, *, compact: bool = True) -> list[SecretFinding]:
    """Our detectors on `text`, and the prefix-anchored ones on its other readings."""
    written, prefixed = own_detectors()
    written_needles, prefixed_needles = _own_haystacks()
    findings = list(_scan_own(text, written, written_needles, joined=False))
    if _SPACE.search(text):
        joined = _SPACE.sub("", text)
        findings.extend(_scan_own(joined, prefixed, prefixed_needles, joined=True))
    if compact:
        compacted = _compact(text)
        if compacted != text:
            # Its other readings are those of the compact reading.
            return findings + _scan_readings(compacted, compact=False)
    if _GROUPS_HINT.search(text):
        degrouped = _GROUPED.sub(_degroup, text)
        if degrouped != text:
            findings.extend(_scan_own(degrouped, prefixed, prefixed_needles, joined=False))
    if _SLASH_GROUPS_HINT.search(text):
        degrouped = _GROUPED_BY_SLASHES.sub(_degroup_slashes, text)
        if degrouped != text:
            findings.extend(_scan_own(degrouped, prefixed, prefixed_needles, joined=False))
    if _CONCATENATION.search(text):
        concatenated = _CONCATENATION.sub("", text)
        findings.extend(_scan_own(concatenated, prefixed, prefixed_needles, joined=False))
    regrouped = _regrouped(text)
    if regrouped:
        findings.extend(_scan_own(regrouped, prefixed, prefixed_needles, joined=False))
    if _ROT13_PREFIX.search(text) or _ROT13_NAME.search(text):
        # A key shifted by rot13 alone (`tuc_…`, `NXVN…`) reads as no language, so the
        # decode ladder leaves it; its prefix, shifted back, is as distinctive as the key's.
        rotated = text.translate(_ROT13)
        findings.extend(_scan_own(rotated, written, written_needles, joined=False))
    if _REVERSED_NAME.search(text):
        # Likewise a credential written backwards: the ladder keeps a reversal only if
        # it reads as language, and a password or a URL seldom does.
        findings.extend(_scan_own(text[::-1], written, written_needles, joined=False))
    elif _REVERSED_PREFIX.search(text):
        findings.extend(_scan_own(text[::-1], prefixed, prefixed_needles, joined=False))
    if '":' in text or '" :' in text:
        values = _JSON_STRING_VALUE.findall(text)
        if len(values) > 1:
            findings.extend(_scan_own("".join(values), prefixed, prefixed_needles, joined=True))
    return findings


def find_secrets_in_text(text: str) -> list[SecretFinding]:
    """Every credential in `text` and in whatever it hides, one finding per secret."""
    if not text or len(text) < 8:
        return []
    findings = _scan(text)
    for hidden in hidden_texts(text):
        findings.extend(_scan(hidden))
    unique: dict[str, SecretFinding] = {}
    for finding in findings:
        unique.setdefault(finding.digest, finding)
    return list(unique.values())


def find_secrets_in_value(
    value: Any, *, find: Callable[[str], list[SecretFinding]] = find_secrets_in_text
) -> list[SecretFinding]:
    """Scan every string inside a JSON-like value: scalars, keys, and credential-named pairs.

    `find` scans one string; a caller that remembers what it found passes its own.
    """
    findings: list[SecretFinding] = []
    for text in strings_in(value, pair_keys=_SECRET_KEY_NAME):
        findings.extend(find(text))
    return findings


def find_secrets_in_strings(strings: Iterable[str]) -> list[SecretFinding]:
    findings: list[SecretFinding] = []
    for text in strings:
        findings.extend(find_secrets_in_text(text))
    return findings
