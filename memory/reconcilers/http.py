"""Settle an unknown outcome by looking the effect up over HTTP — GET only.

The receipt says where to look: `lookup_url` with `{idempotency_key}`,
`{external_id}` or `{operation_id}` placeholders, the JSON field holding the
platform's id, and whether the platform can prove that a write never
happened (`absence_proof`). Only a configured proof of absence allows a
retry; anything the adapter cannot interpret is inconclusive, never "absent".
"""

from __future__ import annotations

import json
import string
import time
from typing import Any
from urllib.parse import quote, urlsplit

import httpx
from django.conf import settings

from common.fingerprints import sha256_hex
from memory.models.receipts import ReadOutcome
from memory.reconcilers.base import LookupResult, LookupTarget, Reconciler

PLACEHOLDERS = ("idempotency_key", "external_id", "operation_id")
# The platform guarantees a 404 from the lookup means "never written".
STATUS_404 = "status_404"
# The lookup is a search, and the platform guarantees `[]` means "never written".
EMPTY_LIST = "empty_list"
ABSENCE_PROOFS = (STATUS_404, EMPTY_LIST)
USER_AGENT = "memdesk-reconciler/1"


class LookupValueMissing(Exception):
    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.name = name


def lookup_url_placeholders(url: str) -> list[str]:
    """The placeholders a lookup URL uses; `ValueError` for anything else in braces."""
    names: list[str] = []
    for _, name, spec, conversion in string.Formatter().parse(url):
        if name is None:
            continue
        if name not in PLACEHOLDERS or spec or conversion:
            raise ValueError(f"{{{name}}} is not a placeholder; use {', '.join(PLACEHOLDERS)}")
        names.append(name)
    return names


def lookup_url_render(url: str, target: LookupTarget) -> str:
    """Fill the placeholders, each URL-encoded so a key cannot change the path or query."""
    values = {
        "idempotency_key": target.idempotency_key,
        "external_id": target.external_id,
        "operation_id": str(target.receipt_id),
    }
    for name in lookup_url_placeholders(url):
        if not values[name]:
            raise LookupValueMissing(name)
    return url.format_map({name: quote(value, safe="") for name, value in values.items()})


def host_allowed(url: str) -> bool:
    allowed = settings.RECONCILE_HTTP_ALLOWED_HOSTS
    host = (urlsplit(url).hostname or "").lower()
    return not allowed or host in {h.lower() for h in allowed}


def _dig(data: Any, path: str) -> Any:
    for part in path.split("."):
        if not isinstance(data, dict):
            return None
        data = data.get(part)
    return data


class HttpReconciler(Reconciler):
    name = "http"
    fields = frozenset({"lookup_url", "absence_proof", "external_id_field", "timeout_seconds"})

    def validate_adapter(self, config: dict[str, Any], errors: dict[str, list[str]]) -> dict:
        normalised: dict[str, Any] = {}
        url = config.get("lookup_url")
        if not isinstance(url, str) or not url.strip():
            errors["lookup_url"] = ["The http reconciler needs a lookup_url."]
        else:
            problem = self._url_problem(url)
            if problem:
                errors["lookup_url"] = [problem]
            normalised["lookup_url"] = url
        proof = config.get("absence_proof") or ""
        if proof not in ("", *ABSENCE_PROOFS):
            errors["absence_proof"] = [f"Choose one of: {', '.join(ABSENCE_PROOFS)}, or omit it."]
        normalised["absence_proof"] = proof
        id_field = config.get("external_id_field", "id")
        if not isinstance(id_field, str) or not id_field.strip() or len(id_field) > 200:
            errors["external_id_field"] = ["Name the JSON field holding the platform's id."]
        normalised["external_id_field"] = id_field
        timeout = config.get("timeout_seconds")
        if timeout is not None:
            limit = settings.RECONCILE_HTTP_TIMEOUT_SECONDS
            if isinstance(timeout, bool) or not isinstance(timeout, int | float):
                errors["timeout_seconds"] = ["Give a number of seconds."]
            elif not 0 < timeout <= limit:
                errors["timeout_seconds"] = [f"Give more than 0 and at most {limit} seconds."]
            else:
                normalised["timeout_seconds"] = timeout
        return normalised

    @staticmethod
    def _url_problem(url: str) -> str:
        try:
            names = lookup_url_placeholders(url)
        except ValueError as exc:
            return str(exc)
        probe = url.format_map(dict.fromkeys(names, "x"))
        try:
            parts = urlsplit(probe)
            parts.hostname  # noqa: B018 - raises on a malformed IPv6 host such as http://[::1/
        except ValueError:
            return "The lookup_url is not a valid URL."
        if parts.scheme not in ("http", "https") or not parts.hostname:
            return "The lookup_url must be an absolute http(s) URL."
        if parts.username or parts.password:
            # Credentials would be stored with the receipt; memdesk never keeps them.
            return "The lookup_url must not carry credentials."
        if not host_allowed(probe):
            return f"Reconciliation may not read from {parts.hostname}."
        return ""

    def lookup(self, target: LookupTarget) -> LookupResult:
        config = target.config
        evidence: dict[str, Any] = {
            "adapter": self.name,
            "method": "GET",
            "attempt": target.attempt,
        }
        try:
            url = lookup_url_render(config["lookup_url"], target)
        except LookupValueMissing as missing:
            evidence["missing"] = missing.name
            return LookupResult(
                ReadOutcome.NEEDS_PERSON, error_code="lookup_value_missing", evidence=evidence
            )
        evidence["url"] = url
        if not host_allowed(url):
            return LookupResult(
                ReadOutcome.NEEDS_PERSON, error_code="host_not_allowed", evidence=evidence
            )
        timeout = min(
            config.get("timeout_seconds") or settings.RECONCILE_HTTP_TIMEOUT_SECONDS,
            settings.RECONCILE_HTTP_TIMEOUT_SECONDS,
        )
        started = time.monotonic()
        try:
            status, body, complete = self._get(url, timeout)
        except httpx.TimeoutException:
            return self._inconclusive("timeout", evidence, started)
        except httpx.HTTPError as exc:
            evidence["error"] = type(exc).__name__
            return self._inconclusive("connection_error", evidence, started)
        evidence.update(
            status_code=status,
            response_sha256="sha256:" + sha256_hex(body),
            response_bytes=len(body),
            elapsed_ms=round((time.monotonic() - started) * 1000),
        )
        if not complete:
            return LookupResult(
                ReadOutcome.UNDETERMINED, error_code="response_too_large", evidence=evidence
            )
        return self._interpret(status, body, config, evidence)

    @staticmethod
    def _get(url: str, timeout: float) -> tuple[int, bytes, bool]:
        """GET `url` once; the body is capped in size and the whole read in time."""
        limit = settings.RECONCILE_HTTP_MAX_RESPONSE_BYTES
        deadline = time.monotonic() + timeout
        headers = {"Accept": "application/json", "User-Agent": USER_AGENT}
        with (
            httpx.Client(timeout=timeout, follow_redirects=False, headers=headers) as client,
            client.stream("GET", url) as response,
        ):
            body = bytearray()
            for chunk in response.iter_bytes():
                body.extend(chunk)
                if len(body) > limit:
                    return response.status_code, bytes(body[:limit]), False
                # Per-operation timeouts do not stop a server dripping bytes slowly.
                if time.monotonic() > deadline:
                    raise httpx.ReadTimeout("lookup exceeded its total time budget")
            return response.status_code, bytes(body), True

    @staticmethod
    def _inconclusive(code: str, evidence: dict[str, Any], started: float) -> LookupResult:
        evidence["elapsed_ms"] = round((time.monotonic() - started) * 1000)
        return LookupResult(ReadOutcome.UNDETERMINED, error_code=code, evidence=evidence)

    @staticmethod
    def _interpret(
        status: int, body: bytes, config: dict[str, Any], evidence: dict[str, Any]
    ) -> LookupResult:
        proof = config.get("absence_proof", "")
        if status == 404:
            if proof == STATUS_404:
                return LookupResult(ReadOutcome.ABSENT, evidence=evidence)
            return LookupResult(
                ReadOutcome.UNDETERMINED, error_code="not_found_unproven", evidence=evidence
            )
        if status != 200:
            return LookupResult(
                ReadOutcome.UNDETERMINED, error_code=f"http_{status}", evidence=evidence
            )
        try:
            data = json.loads(body)
        except ValueError:
            return LookupResult(
                ReadOutcome.UNDETERMINED, error_code="unparseable_response", evidence=evidence
            )
        if isinstance(data, list):
            if not data:
                if proof == EMPTY_LIST:
                    return LookupResult(ReadOutcome.ABSENT, evidence=evidence)
                return LookupResult(
                    ReadOutcome.UNDETERMINED, error_code="empty_result_unproven", evidence=evidence
                )
            if len(data) > 1:
                # Two effects answer to one key: which one is ours is a person's call.
                evidence["matches"] = len(data)
                return LookupResult(
                    ReadOutcome.NEEDS_PERSON, error_code="ambiguous_match", evidence=evidence
                )
            data = data[0]
        value = _dig(data, config.get("external_id_field", "id"))
        if isinstance(value, bool) or not isinstance(value, str | int) or value == "":
            return LookupResult(
                ReadOutcome.UNDETERMINED, error_code="external_id_missing", evidence=evidence
            )
        return LookupResult(ReadOutcome.FOUND, external_id=str(value)[:255], evidence=evidence)
