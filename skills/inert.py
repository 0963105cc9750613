"""How a file of a skill package leaves memdesk: as inert bytes, never as a page.

A package comes from an agent, so its files are the agent's data. Served from
memdesk's origin with a type guessed from the name (``x.html`` → ``text/html``,
``y.svg`` → ``image/svg+xml``), a file would run its script with the session of
whoever opened the link — an admin could be made to approve the agent's own
version. So every raw answer is a download (``attachment``), carries only one
of two fixed types (text, or opaque bytes) that the browser may not second-guess
(``nosniff``), and a policy that forbids everything even if it were rendered
(``sandbox`` gives it an opaque origin without scripts; ``default-src 'none'``
loads nothing).
"""

from __future__ import annotations

from pathlib import PurePosixPath

from django.http import HttpResponse
from django.utils.http import content_disposition_header

TEXT_TYPE = "text/plain; charset=utf-8"
BINARY_TYPE = "application/octet-stream"
INERT_POLICY = "sandbox; default-src 'none'"


def is_text(content: bytes) -> bool:
    try:
        content.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def safe_content_type(content: bytes) -> str:
    """Text or opaque bytes, decided by the content and never by the file's name."""
    return TEXT_TYPE if is_text(content) else BINARY_TYPE


def inert_file_response(*, path: str, content: bytes, sha256: str) -> HttpResponse:
    response = HttpResponse(content, content_type=safe_content_type(content))
    disposition = content_disposition_header(as_attachment=True, filename=PurePosixPath(path).name)
    # Django leaves the header out only for an inline response without a file name.
    assert disposition is not None
    response["Content-Disposition"] = disposition
    response["X-Content-Type-Options"] = "nosniff"
    response["Content-Security-Policy"] = INERT_POLICY
    # Another site may not embed these bytes either (e.g. as an image or script).
    response["Cross-Origin-Resource-Policy"] = "same-origin"
    # A tenant's files are behind a login: no shared cache may keep a copy.
    response["Cache-Control"] = "private, no-cache"
    response["ETag"] = f'"sha256:{sha256}"'
    return response
