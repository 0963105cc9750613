"""Skill files an attacker with ``skills:write`` would plant for an admin to open.

Each starts with a byte that is not UTF-8, so the package stores it as a binary
asset; a browser that took its type from the name would render it and run the
script in memdesk's origin with the admin's session. When the script runs it
sets ``window.pwned`` and asks for ``/pwned-…``; the tests watch for both.
"""

from __future__ import annotations

from tests.skills.conftest import package

MARKER = "/pwned"
HTML = (
    b"\xff<html><body><h1>assets</h1><script>window.pwned = 'html'; "
    b"fetch('/pwned-html'); new Image().src = '/pwned-html-img';</script></body></html>"
)
SVG = (
    b'\xff<svg xmlns="http://www.w3.org/2000/svg" onload="fetch(\'/pwned-svg-onload\')">'
    b"<script>window.pwned = 'svg'; fetch('/pwned-svg');</script>"
    b'<rect width="10" height="10"/></svg>'
)
FILES = {"assets/x.html": HTML, "assets/y.svg": SVG}


def hostile_package(slug: str) -> bytes:
    return package(slug, files=dict(FILES))
