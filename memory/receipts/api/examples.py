"""The request and response examples of the receipts domain's API areas, for the schema."""

from __future__ import annotations

from typing import Any

from memory.receipts.api.platforms import examples as platforms
from memory.receipts.api.receipts import examples as receipts

EXAMPLES: dict[str, dict[str, Any]] = {**receipts.EXAMPLES, **platforms.EXAMPLES}
