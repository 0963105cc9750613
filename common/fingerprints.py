"""Canonical JSON and the sha256 fingerprints built on it.

Two requests that mean the same thing must fingerprint the same, whatever the
key order or whitespace, so fingerprints are taken over canonical JSON.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any


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
