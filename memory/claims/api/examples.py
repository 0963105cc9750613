"""The request and response examples of the claims domain's API areas, for the schema."""

from __future__ import annotations

from typing import Any

from memory.claims.api.claims import examples as claims
from memory.claims.api.ledger import examples as ledger
from memory.claims.api.recall import examples as recall

EXAMPLES: dict[str, dict[str, Any]] = {**ledger.EXAMPLES, **claims.EXAMPLES, **recall.EXAMPLES}
ANSWER_SCHEMAS: dict[str, dict[str, Any]] = {**claims.ANSWER_SCHEMAS}
