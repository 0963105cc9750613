"""Canonical JSON and the sha256 fingerprints built on it.

Two requests that mean the same thing must fingerprint the same, whatever the
key order or whitespace, so fingerprints are taken over canonical JSON.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from django.utils.crypto import salted_hmac


def canonical_json(value: Any) -> bytes:
    return json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str
    ).encode()


def sha256_hex(data: bytes | str) -> str:
    if isinstance(data, str):
        data = data.encode()
    return hashlib.sha256(data).hexdigest()


def fingerprint(value: Any) -> str:
    """`sha256:<hex>` over the canonical JSON of `value`."""
    return "sha256:" + sha256_hex(canonical_json(value))


# What replaces a string that held deleted content: a short keyed digest behind this prefix.
ERASED_PREFIX = "erased:"


def erased_marker(value: str) -> str:
    """What a deletion writes in place of a string that held deleted content: a short
    keyed digest of it. The same string always gets the same marker, so an identifier
    replaced this way is still found by whoever knows the original."""
    digest = salted_hmac("memdesk.deletion.scrub", value, algorithm="sha256").hexdigest()
    return f"{ERASED_PREFIX}{digest[:24]}"


def identifier_forms(value: str) -> list[str]:
    """An agent-chosen identifier as stored before and after a deletion replaced it."""
    return [value, erased_marker(value)]
