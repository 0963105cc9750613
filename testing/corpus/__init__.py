"""The labelled screening corpus: attacks, secrets and the benign notes beside them.

Each data file holds one sample a line, `class<TAB>text` (benign files: the
text alone). `\\uXXXX` and `\\UXXXXXXXX` escapes stand for characters that
cannot be seen (zero-width, soft hyphen, tag characters) and `\\n` for a line
break; `#` starts a comment line. The benchmark (`python -m bench`) reads the same files.
"""

from __future__ import annotations

import re
from pathlib import Path

HERE = Path(__file__).resolve().parent
_ESCAPE = re.compile(r"\\u([0-9a-fA-F]{4})|\\U([0-9a-fA-F]{8})|\\n")


def _unescape(text: str) -> str:
    return _ESCAPE.sub(
        lambda m: chr(int(m.group(1) or m.group(2), 16)) if m.group(1) or m.group(2) else "\n",
        text,
    )


def _lines(name: str) -> list[str]:
    lines = (HERE / name).read_text(encoding="utf-8").splitlines()
    return [_unescape(line) for line in lines if line.strip() and not line.startswith("#")]


def labelled(name: str) -> list[tuple[str, str]]:
    """(class, text) pairs of an attack or secret file."""
    pairs = (line.split("\t", 1) for line in _lines(name))
    return [(label, text) for label, text in pairs]


def plain(name: str) -> list[str]:
    return _lines(name)


def labelled_rows(name: str) -> list[tuple[str, str, str, str]]:
    """(label, class, language, text) rows of a file with those four columns."""
    rows = (line.split("\t", 3) for line in _lines(name))
    return [(label, kind, lang, text) for label, kind, lang, text in rows]
