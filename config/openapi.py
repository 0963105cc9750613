"""Every operation's request and response examples, attached to the OpenAPI schema.

A drf-spectacular post-processing hook (`SPECTACULAR_SETTINGS`) puts them in by
operationId, so the views stay as they are and each app keeps the examples of its
own operations beside its serializers: one request example per body and one per
success answer.
"""

from __future__ import annotations

import copy
from typing import Any

from memory.claims.api import examples as claims_examples
from memory.privacy.api import examples as privacy_examples
from memory.receipts.api import examples as receipts_examples
from reviews.api import examples as reviews_examples
from skills.api import examples as skills_examples

EXAMPLES: dict[str, dict[str, Any]] = {
    **claims_examples.EXAMPLES,
    **receipts_examples.EXAMPLES,
    **privacy_examples.EXAMPLES,
    **reviews_examples.EXAMPLES,
    **skills_examples.EXAMPLES,
}
# Answers that have no serializer: the schema their example goes under.
ANSWER_SCHEMAS: dict[str, dict[str, Any]] = {**claims_examples.ANSWER_SCHEMAS}


def attach_examples(result: dict[str, Any], generator: Any, request: Any, public: Any) -> dict:
    """Put each operation's request and response examples into the schema."""
    for operations in result.get("paths", {}).values():
        for operation in operations.values():
            if not isinstance(operation, dict):
                continue
            operation_id = operation.get("operationId", "")
            examples = EXAMPLES.get(operation_id)
            if examples is None:
                continue
            body = operation.get("requestBody", {}).get("content", {})
            if "request" in examples:
                for media in body.values():
                    media["example"] = copy.deepcopy(examples["request"])
            for status, example in examples.get("responses", {}).items():
                answer = operation.get("responses", {}).get(status)
                if answer is None:
                    continue
                content = answer.setdefault("content", {})
                if not content and operation_id in ANSWER_SCHEMAS:
                    schema = copy.deepcopy(ANSWER_SCHEMAS[operation_id])
                    content["application/json"] = {"schema": schema}
                for media in content.values():
                    media["example"] = copy.deepcopy(example)
    return result
