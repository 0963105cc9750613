"""The one place the client turns values into an API path.

Every value that becomes part of a URL path (a slug, a version number, an id,
a subject or task key, a file's path inside a skill) may come from a model or
an outside document. httpx resolves `.` and `..` segments before sending, so
an unchecked `../../recall/traces/<id>` would make the client fetch another
endpoint with the agent's token. Each kind of value is checked here against
what the API accepts, every segment is checked again and percent-encoded in
`api_path`, and a value that fails raises `UnsafePathSegment` before any
request is made.
"""

from __future__ import annotations

import re
import uuid
from urllib.parse import quote, unquote

from memdesk_client.errors import UnsafePathSegment

__all__ = [
    "API_PREFIX",
    "api_path",
    "label_segment",
    "resource_id",
    "skill_file_segments",
    "skill_slug",
    "version_number",
]

API_PREFIX = "/api/v1/"

# memdesk's skill slug rule (skills.models.SLUG_PATTERN) and length.
_SKILL_SLUG = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
_SKILL_SLUG_MAX = 64
# Labels travel in a Django `slug` path converter.
_LABEL = re.compile(r"[-a-zA-Z0-9_]+")


def _segment(value: str, what: str, whole: str | None = None) -> str:
    """`value` as one path segment, or `UnsafePathSegment` naming `whole` (default `value`).

    The value is checked as given and as a server or proxy would read it once
    percent-decoded, so `%2e%2e` or `..%2f` is refused like `..` and `../`.
    """
    for reading in (value, unquote(value)):
        if reading in ("", ".", ".."):
            raise UnsafePathSegment(what, whole or value, "has an empty, '.' or '..' segment")
        if "/" in reading or "\\" in reading:
            raise UnsafePathSegment(what, whole or value, "contains a slash or a backslash")
        if any(ord(char) < 32 or char == "\x7f" for char in reading):
            raise UnsafePathSegment(what, whole or value, "contains NUL or control characters")
    return value


def api_path(*segments: str) -> str:
    """`/api/v1/` and the segments, each checked and percent-encoded (`:` kept)."""
    return API_PREFIX + "/".join(
        quote(_segment(segment, "path segment"), safe=":") for segment in segments
    )


def skill_slug(value: str) -> str:
    if (
        not isinstance(value, str)
        or len(value) > _SKILL_SLUG_MAX
        or not _SKILL_SLUG.fullmatch(value)
    ):
        raise UnsafePathSegment(
            "skill slug", value, "is not lowercase letters and digits joined by single hyphens"
        )
    return value


def label_segment(value: str) -> str:
    if not isinstance(value, str) or not _LABEL.fullmatch(value):
        raise UnsafePathSegment("label", value, "is not letters, digits, '-' and '_'")
    return value


def version_number(value: int) -> str:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise UnsafePathSegment("version number", value, "is not a whole number")
    return str(value)


def resource_id(value: str | uuid.UUID, what: str = "id") -> str:
    """A memdesk id (events, claims, receipts, traces, deletions are UUIDs), canonical."""
    if isinstance(value, uuid.UUID):
        return str(value)
    try:
        return str(uuid.UUID(str(value)))
    except ValueError:
        raise UnsafePathSegment(what, value, "is not a UUID") from None


def skill_file_segments(path: str) -> tuple[str, ...]:
    """A file's path inside a skill as its segments: relative POSIX, no `..`, no encodings.

    A package's file names are literal (memdesk refuses `..`, backslashes,
    absolute and empty segments at upload), so a percent-encoded spelling is
    never one of them and is refused rather than decoded.
    """
    if not isinstance(path, str) or not path:
        raise UnsafePathSegment("file path", path, "is empty")
    if path.startswith("/") or re.match(r"[A-Za-z]:", path):
        raise UnsafePathSegment("file path", path, "is absolute")
    if unquote(path) != path:
        raise UnsafePathSegment("file path", path, "is percent-encoded")
    return tuple(_segment(segment, "file path", path) for segment in path.split("/"))
