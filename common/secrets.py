"""Secret detection shared by every write path that accepts free text.

memdesk never stores a credential: claims, receipt intents and skill packages
are scanned with detect-secrets' detector plugins before anything is written.
The high-entropy and public-IP plugins are left out on purpose: they flag
ordinary prose, hashes and commit ids, and a write gate that rejects every
sha256 would be useless.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from typing import Any

from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
from detect_secrets.core.scan import scan_line
from detect_secrets.settings import transient_settings

_NOISY_PLUGINS = {
    "Base64 High Entropy String",
    "Hex High Entropy String",
    "Public IP (ipv4)",
}


@cache
def _plugin_settings() -> dict[str, Any]:
    names = sorted(
        cls.__name__
        for secret_type, cls in get_mapping_from_secret_type_to_class().items()
        if secret_type not in _NOISY_PLUGINS
    )
    return {"plugins_used": [{"name": name} for name in names]}


@dataclass(frozen=True)
class SecretFinding:
    """Where a secret was found. Holds a digest of the secret, never the secret."""

    kind: str
    line: int
    digest: str


def find_secrets_in_text(text: str) -> list[SecretFinding]:
    findings: list[SecretFinding] = []
    if not text:
        return findings
    with transient_settings(_plugin_settings()):
        for number, line in enumerate(text.splitlines(), start=1):
            for potential in scan_line(line):
                secret = potential.secret_value or ""
                findings.append(
                    SecretFinding(
                        kind=potential.type,
                        line=number,
                        digest="sha256:" + hashlib.sha256(secret.encode()).hexdigest(),
                    )
                )
    return findings


def _strings_in(value: Any) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            # Keys matter too: {"password": "hunter2"} is caught by the keyword
            # detector only when key and value are seen together.
            if isinstance(item, str | int | float):
                yield json.dumps({str(key): item})
            yield from _strings_in(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _strings_in(item)


def find_secrets_in_value(value: Any) -> list[SecretFinding]:
    """Scan every string inside a JSON-like value (dicts, lists, scalars)."""
    findings: list[SecretFinding] = []
    for text in _strings_in(value):
        findings.extend(find_secrets_in_text(text))
    return findings
