"""Every string inside a JSON-like value, keys included, in a stable order."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

# A value nested deeper than this is judged as its JSON text instead.
MAX_DEPTH = 64


def strings_in(
    value: Any, *, pair_keys: re.Pattern[str] | None = None, _depth: int = 0
) -> Iterator[str]:
    """Yield every string in `value`: scalars and dict keys, depth first.

    With `pair_keys`, each `{"key": scalar}` whose key matches is yielded as JSON
    too: detectors such as `"password": "…"` recognise a credential only when
    its name and value are seen together.
    """
    if _depth > MAX_DEPTH:
        yield json.dumps(value, ensure_ascii=False, default=str)
    elif isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield str(key)
            if (
                pair_keys is not None
                and isinstance(item, str | int | float)
                and not isinstance(item, bool)
                and pair_keys.search(str(key))
            ):
                yield json.dumps({str(key): item}, ensure_ascii=False)
            yield from strings_in(item, pair_keys=pair_keys, _depth=_depth + 1)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from strings_in(item, pair_keys=pair_keys, _depth=_depth + 1)
