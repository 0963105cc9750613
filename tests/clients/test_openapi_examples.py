"""Every operation of the OpenAPI schema carries examples, and each one fits its schema."""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest

pytestmark = pytest.mark.django_db

_METHODS = {"get", "post", "put", "patch", "delete"}


def _json_schema(node: Any) -> Any:
    """OpenAPI 3.0 schema objects as JSON Schema: `nullable` becomes a null alternative,
    and an object that lists its properties allows no others (a misspelt example field
    fails instead of passing unseen)."""
    if isinstance(node, list):
        return [_json_schema(item) for item in node]
    if not isinstance(node, dict):
        return node
    converted = {key: _json_schema(value) for key, value in node.items() if key != "example"}
    if "properties" in converted and "additionalProperties" not in converted:
        converted["additionalProperties"] = False
    if converted.pop("nullable", False):
        return {"anyOf": [converted, {"type": "null"}]}
    return converted


@pytest.fixture(scope="module")
def schema(django_db_blocker) -> dict[str, Any]:
    from django.test import Client

    with django_db_blocker.unblock():
        response = Client().get("/api/schema/?format=json")
    assert response.status_code == 200
    return response.json()


def _operations(schema: dict[str, Any]):
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            if method in _METHODS:
                yield f"{method.upper()} {path}", operation


def _check(schema: dict[str, Any], where: str, media: dict[str, Any]) -> None:
    assert "example" in media, f"{where}: no example"
    validator = jsonschema.Draft7Validator(
        {**_json_schema(media["schema"]), "components": _json_schema(schema["components"])},
        format_checker=jsonschema.Draft7Validator.FORMAT_CHECKER,
    )
    errors = [
        f"{'/'.join(map(str, e.absolute_path))}: {e.message}"
        for e in validator.iter_errors(media["example"])
    ]
    assert not errors, f"{where}: {errors}"


def test_every_operation_has_a_request_and_a_success_example(schema):
    missing = []
    for where, operation in _operations(schema):
        for media_type, media in operation.get("requestBody", {}).get("content", {}).items():
            if "example" not in media:
                missing.append(f"{where} request {media_type}")
        successes = {
            status: answer
            for status, answer in operation["responses"].items()
            if status.startswith("2")
        }
        if not successes:
            missing.append(f"{where}: no success answer")
        for status, answer in successes.items():
            content = answer.get("content") or {}
            if not content:
                missing.append(f"{where} {status}: no content")
            missing.extend(
                f"{where} {status} {media_type}"
                for media_type, media in content.items()
                if "example" not in media
            )
    assert not missing, missing


def test_every_example_fits_its_schema(schema):
    checked = 0
    for where, operation in _operations(schema):
        for media_type, media in operation.get("requestBody", {}).get("content", {}).items():
            _check(schema, f"{where} request {media_type}", media)
            checked += 1
        for status, answer in operation["responses"].items():
            if status.startswith("2"):
                for media_type, media in (answer.get("content") or {}).items():
                    _check(schema, f"{where} {status} {media_type}", media)
                    checked += 1
    assert checked > 80


def test_a_wrong_example_is_caught(schema):
    """The check above can fail: an example missing a required field does not fit."""
    media = schema["paths"]["/api/v1/events"]["post"]["responses"]["201"]["content"][
        "application/json"
    ]
    broken = {**media, "example": {k: v for k, v in media["example"].items() if k != "digest"}}
    with pytest.raises(AssertionError, match="digest"):
        _check(schema, "events 201", broken)
    misspelt = {**media, "example": {**media["example"], "recordedAt": "2026-01-01T00:00:00Z"}}
    with pytest.raises(AssertionError, match="recordedAt"):
        _check(schema, "events 201", misspelt)
