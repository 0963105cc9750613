"""memdesk-client: the typed Python client of memdesk's agent API.

```python
from memdesk_client import Desk

with Desk("https://memdesk.example", token) as desk:
    event = desk.log_event("user:alice", "user_statement", "I moved to Shanghai")
    verdict = desk.propose("user:alice", "home_city", "Shanghai", sources=[event["id"]])
    for item in desk.recall("user:alice", "where does alice live").items:
        print(item.text, item.why.rank)
```

`AsyncDesk` is the same for asyncio. Errors are `memdesk_client.errors`.
"""

from memdesk_client._core import RetryPolicy
from memdesk_client.async_desk import AsyncDesk
from memdesk_client.desk import Desk
from memdesk_client.errors import (
    MemdeskError,
    ProblemError,
    ReceiptAlreadyUsed,
    TransportError,
    error_class_for,
)
from memdesk_client.receipts import AsyncReceiptScope, ReceiptScope
from memdesk_client.types import HotMemory, RecallItem, RecallResult, Why

__all__ = [
    "AsyncDesk",
    "AsyncReceiptScope",
    "Desk",
    "HotMemory",
    "MemdeskError",
    "ProblemError",
    "RecallItem",
    "RecallResult",
    "ReceiptAlreadyUsed",
    "ReceiptScope",
    "RetryPolicy",
    "TransportError",
    "Why",
    "error_class_for",
]
