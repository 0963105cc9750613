"""Text hidden inside a string: encoded runs and invisible tag characters.

An instruction or a key can be sent base64-, hex- or URL-encoded, or spelled
in Unicode tag characters (U+E0020-U+E007E mirror ASCII and render as
nothing). `hidden_texts` recovers each such payload that decodes to readable
text, so the screen judges it as well as the string around it. Runs are
decoded only at a plausible length and kept only when the result is mostly
printable, so digests, ids and ordinary words decode to nothing.
"""

from __future__ import annotations

import base64
import binascii
import re
from functools import lru_cache
from urllib.parse import unquote_plus

_BASE64_RUN = re.compile(r"[A-Za-z0-9+/_-]{16,}={0,2}")
_HEX_RUN = re.compile(r"(?<![0-9A-Fa-f])(?:[0-9A-Fa-f]{2}){8,}(?![0-9A-Fa-f])")
_PERCENT = re.compile(r"%[0-9A-Fa-f]{2}")
_TAGS = re.compile("[\U000e0020-\U000e007e]+")
# Nested encodings (base64 of base64) are followed this deep.
MAX_DEPTH = 2
# Longest run decoded; the rest of a long run is judged undecoded.
MAX_RUN = 20_000
# Strings up to this length are remembered (see normalize.CACHED_UP_TO).
CACHED_UP_TO = 4096


def _readable(raw: bytes) -> str | None:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if not text:
        return None
    printable = sum(1 for c in text if c.isprintable() or c in "\n\r\t")
    return text if printable / len(text) >= 0.9 else None


def _from_base64(run: str) -> str | None:
    if run.isalpha() and (run.islower() or run.isupper()):
        return None  # a word, not an encoding
    body = run.rstrip("=")
    padded = body + "=" * (-len(body) % 4)
    alphabet = b"-_" if ("-" in body or "_" in body) else None
    try:
        raw = base64.b64decode(padded, altchars=alphabet, validate=alphabet is None)
    except (binascii.Error, ValueError):
        return None
    return _readable(raw)


def _from_hex(run: str) -> str | None:
    try:
        return _readable(bytes.fromhex(run))
    except ValueError:
        return None


def _decoded_once(text: str) -> list[str]:
    found: list[str] = []
    tags = "".join(chr(ord(c) - 0xE0000) for run in _TAGS.findall(text) for c in run)
    if tags:
        found.append(tags)
    for match in _HEX_RUN.finditer(text):
        decoded = _from_hex(match.group()[:MAX_RUN])
        if decoded:
            found.append(decoded)
    for match in _BASE64_RUN.finditer(text):
        decoded = _from_base64(match.group()[:MAX_RUN])
        if decoded:
            found.append(decoded)
    if _PERCENT.search(text):
        unquoted = unquote_plus(text)
        if unquoted != text:
            found.append(unquoted)
    return found


def hidden_texts(text: str) -> tuple[str, ...]:
    """Every readable payload encoded inside `text`, nested ones included."""
    return _hidden_cached(text) if len(text) <= CACHED_UP_TO else _hidden(text)


def clear_cache() -> None:
    _hidden_cached.cache_clear()


# The injection and the secret screens both ask about the same strings.
@lru_cache(maxsize=1024)
def _hidden_cached(text: str) -> tuple[str, ...]:
    return _hidden(text)


def _hidden(text: str) -> tuple[str, ...]:
    found: list[str] = []
    frontier = [text]
    for _ in range(MAX_DEPTH):
        frontier = [decoded for item in frontier for decoded in _decoded_once(item)]
        if not frontier:
            break
        found.extend(frontier)
    return tuple(found)


# Printable ASCII runs long enough to hold a credential, as `strings(1)` finds them.
_PRINTABLE_RUN = re.compile(r"[\x20-\x7e\t]{8,}")


def text_of_file(content: bytes) -> str:
    """A file's bytes as text to scan: UTF-8, UTF-16 with a byte-order mark, else Latin-1.

    Latin-1 maps every byte to a character, so an ASCII key inside a binary or
    otherwise-encoded file is still found; only its printable runs are kept
    (one per line), so a large image costs little to scan.
    """
    if content.startswith((b"\xff\xfe", b"\xfe\xff")):
        try:
            return content.decode("utf-16")
        except UnicodeDecodeError:
            pass
    try:
        return content.decode("utf-8-sig")
    except UnicodeDecodeError:
        return "\n".join(_PRINTABLE_RUN.findall(content.decode("latin-1")))
