"""Every string inside a JSON-like value, keys included, in a stable order."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

# A value nested deeper than this is judged as its JSON text instead.
MAX_DEPTH = 64


def strings_in(value: Any, *, pairs: bool = False, _depth: int = 0) -> Iterator[str]:
    """Yield every string in `value`: scalars and dict keys, depth first.

    With `pairs`, each `{"key": scalar}` is yielded as JSON too: detectors such
    as `"password": "…"` recognise a credential only when its name and value
    are seen together.
    """
    if _depth > MAX_DEPTH:
        yield json.dumps(value, ensure_ascii=False, default=str)
    elif isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield str(key)
            if pairs and isinstance(item, str | int | float) and not isinstance(item, bool):
                yield json.dumps({str(key): item}, ensure_ascii=False)
            yield from strings_in(item, pairs=pairs, _depth=_depth + 1)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from strings_in(item, pairs=pairs, _depth=_depth + 1)
