"""The screen's labelled corpora: `train/` fits the learned heads, `heldout/` only measures.

Each file is TSV, one sample a line: `label<TAB>lang<TAB>text` (the secret set:
`label<TAB>text`). `#` starts a comment line; a header line `label<TAB>…` is
skipped. `\\uXXXX` and `\\UXXXXXXXX` escapes stand for characters that cannot be
seen and `\\n` for a line break. `public/<set>/` holds public corpora with their
own train and test splits, each with its source and licence.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
_ESCAPE = re.compile(r"\\u([0-9a-fA-F]{4})|\\U([0-9a-fA-F]{8})|\\n")


@dataclass(frozen=True)
class Sample:
    label: str
    lang: str
    text: str


def _unescape(text: str) -> str:
    return _ESCAPE.sub(
        lambda m: chr(int(m.group(1) or m.group(2), 16)) if m.group(1) or m.group(2) else "\n",
        text,
    )


def read(relative: str) -> list[Sample]:
    """The samples of `relative` (e.g. "train/injection.tsv"); none if it does not exist."""
    return read_file(HERE / relative)


def read_file(path: Path) -> list[Sample]:
    """The samples of a corpus file in this format, wherever it lies."""
    if not path.exists():
        return []
    samples = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#") or line.startswith("label\t"):
            continue
        fields = line.split("\t")
        if len(fields) == 2:
            label, text = fields
            lang = "und"
        else:
            label, lang, text = fields[0], fields[1], "\t".join(fields[2:])
        samples.append(Sample(label.strip(), lang.strip() or "und", _unescape(text)))
    return samples
