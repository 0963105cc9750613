"""Query strings read the way the schema describes them.

DRF validates a `QueryDict` as form input, where an empty value of an optional
field counts as absent: `?subject=` would list every subject although the
schema says the filter has at least one character. Validating a plain dict
refuses the empty value like any other value that breaks the schema. Each
parameter is read once; a repeated one keeps its last value, as DRF does.
"""

from __future__ import annotations

from rest_framework.request import Request


def query_values(request: Request) -> dict[str, str]:
    """The request's query parameters, for an input serializer."""
    return request.query_params.dict()
