"""The request and response examples of every memory API area, gathered for the schema."""

from __future__ import annotations

from typing import Any

from memory.api.claims import examples as claims
from memory.api.ledger import examples as ledger
from memory.api.me import examples as me
from memory.api.platforms import examples as platforms
from memory.api.recall import examples as recall
from memory.api.receipts import examples as receipts

EXAMPLES: dict[str, dict[str, Any]] = {
    **ledger.EXAMPLES,
    **claims.EXAMPLES,
    **recall.EXAMPLES,
    **receipts.EXAMPLES,
    **platforms.EXAMPLES,
    **me.EXAMPLES,
}
ANSWER_SCHEMAS: dict[str, dict[str, Any]] = {**claims.ANSWER_SCHEMAS}
