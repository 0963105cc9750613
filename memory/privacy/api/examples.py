"""The request and response examples of the privacy domain's API area, for the schema."""

from __future__ import annotations

from typing import Any

from memory.privacy.api.me import examples as me

EXAMPLES: dict[str, dict[str, Any]] = {**me.EXAMPLES}
