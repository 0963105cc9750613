"""Example values several of memory's API areas share (see common/openapi_examples.py)."""

from __future__ import annotations

from common.openapi_examples import NOW

EVENT_ID = "0f6b8c2e-4c1d-4d8e-9a57-3b1e5d2c9a10"

TRACE_ID = "2b1a0f9e-8d7c-4b6a-9f4e-3d2c1b0a9f80"

SOURCE = {
    "event": EVENT_ID,
    "uri": "",
    "observed_at": None,
    "digest": "sha256:5e884898da28047151d0e56f8dc6292773603d0d6aabbdd62a11ef721d1542d8",
    "added_at": NOW,
}
