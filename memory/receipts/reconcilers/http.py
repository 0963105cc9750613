"""Settle an unknown outcome by looking the effect up over HTTP — GET only.

The receipt says where to look: `lookup_url` with `{idempotency_key}`,
`{external_id}` or `{operation_id}` placeholders (or a registered `platform`
and a `lookup_path` under its base URL), and the JSON field holding the
platform's id. Whether a negative answer proves that the write never happened
is the platform's registration, never the receipt's: only a read of the
platform's registered lookup, filled with this receipt's key, can prove
absence (a 404 for `status_lookup`, `[]` for `search_by_key`). Anything else
the adapter cannot interpret is inconclusive, never "absent"; a search hit
counts as this receipt's effect only if it carries the receipt's intent.

Agents do not choose hosts: every read re-checks that the URL lies under the
receipt's registered platform, resolves the host itself, refuses internal
addresses unless the platform allows them, and connects to the very address
it checked (the name is sent as `Host` and TLS server name only), so a DNS
answer that changes between check and connect cannot redirect the read.
Redirects are not followed; the answer is capped in size and time, and only
an id of a conservative shape is taken from it.
"""

from __future__ import annotations

import functools
import json
import re
import ssl
import string
import threading
import time
from typing import Any
from urllib.parse import quote

import httpx
from django.conf import settings

from common.fingerprints import fingerprint, sha256_hex
from memory.receipts.models.platforms import KEY_NAME, AbsenceProof
from memory.receipts.models.receipts import ReadOutcome
from memory.receipts.reconcilers.addresses import (
    AddressRefused,
    IPAddress,
    Unresolvable,
    literal_address,
    resolve_checked,
)
from memory.receipts.reconcilers.base import LookupResult, LookupTarget, Reconciler
from memory.receipts.reconcilers.urls import PlatformURL, URLRefused, parse_platform_url

PLACEHOLDERS = (KEY_NAME, "external_id", "operation_id")
# What older agents send as the receipt's own `absence_proof`. Still accepted,
# so their requests keep working, and kept on the receipt, but it proves
# nothing: the platform's registration decides (AbsenceProof).
ABSENCE_PROOFS = ("status_404", "empty_list")
USER_AGENT = "memdesk-reconciler/1"
# Longest lookup_url or lookup_path accepted; real lookups are far shorter.
MAX_LOOKUP_LENGTH = 2000
# What may become a receipt's external_id: the platform's id for the effect,
# never free text (it is shown to people and handed back to agents).
EXTERNAL_ID_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,127}")
# Why a platform refuses a lookup at creation and at read time.
PLATFORM_NOT_REGISTERED = "platform_not_registered"
PLATFORM_ADDRESS_REFUSED = "platform_address_refused"


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


def lookup_url_probe(url: str) -> PlatformURL:
    """The lookup URL parsed with a stand-in for each placeholder, or `URLRefused`."""
    names = lookup_url_placeholders(url)
    return parse_platform_url(url.format_map(dict.fromkeys(names, "x")))


def _tls_verification() -> ssl.SSLContext:
    """Certificates are checked against RECONCILE_HTTP_CA_BUNDLE, or httpx's public roots."""
    bundle = settings.RECONCILE_HTTP_CA_BUNDLE
    return ssl.create_default_context(cafile=bundle) if bundle else httpx.create_ssl_context()


class LookupClients:
    """A process's HTTP clients for lookups: one per platform host name, all sharing one TLS setup.

    Connections are kept alive, so a worker's reads of one platform do not each
    pay a TCP (and TLS) handshake. A pooled connection is keyed by the address
    it was opened to, so each host name gets its own client: a connection
    opened (and TLS-verified) for one name is never reused for a read of
    another name that happens to share the address. Every read still resolves
    and checks its address first and is sent only to that address.
    """

    def __init__(self) -> None:
        # Building the TLS context (reading the CA bundle) is the costly part: once per process.
        self._verify = _tls_verification()
        self._lock = threading.Lock()
        self._clients: dict[tuple[str, str], httpx.Client] = {}

    def for_host(self, scheme: str, host: str) -> httpx.Client:
        key = (scheme, host)
        client = self._clients.get(key)
        if client is not None:
            return client
        with self._lock:
            client = self._clients.get(key)
            if client is None:
                client = self._clients[key] = self._build()
            return client

    def _build(self) -> httpx.Client:
        # Reads of one host are bounded by the platform gate; the pool need not bound them again.
        keep = max(1, settings.RECONCILE_PLATFORM_READS_IN_FLIGHT)
        return httpx.Client(
            follow_redirects=False,
            # Proxies and CA paths from the environment would change where reads go.
            trust_env=False,
            verify=self._verify,
            limits=httpx.Limits(max_connections=None, max_keepalive_connections=keep),
            timeout=settings.RECONCILE_HTTP_TIMEOUT_SECONDS,
        )


@functools.cache
def lookup_clients() -> LookupClients:
    """One set of lookup clients per process: a TLS context takes tens of ms to build."""
    return LookupClients()


def registered_proof(url: str, target: LookupTarget) -> str:
    """The platform's proof of absence if `url` is its registered lookup filled with this
    receipt's key; otherwise "" (a negative answer from `url` then proves nothing)."""
    platform = target.platform
    if (
        platform is None
        or platform.absence_proof not in (AbsenceProof.STATUS_LOOKUP, AbsenceProof.SEARCH_BY_KEY)
        or not target.idempotency_key
    ):
        return ""
    try:
        if KEY_NAME not in lookup_url_placeholders(platform.lookup_template):
            return ""
        registered = lookup_url_render(platform.base_url + platform.lookup_template, target)
        read, proving = parse_platform_url(url), parse_platform_url(registered)
    except (LookupValueMissing, ValueError):
        return ""
    same = (read.origin, read.path, read.url.query) == (
        proving.origin,
        proving.path,
        proving.url.query,
    )
    return platform.absence_proof if same else ""


def record_fingerprint(record: Any, intent: Any) -> str:
    """The fingerprint of `record` read as the intent it would carry: its values for the
    intent's keys (all of them), fingerprinted as the receipt's intent was; "" when the
    intent is not an object or the record lacks one of its keys."""
    if not isinstance(intent, dict) or not intent or not isinstance(record, dict):
        return ""
    if any(key not in record for key in intent):
        return ""
    return fingerprint({key: record[key] for key in intent})


def _dig(data: Any, path: str) -> Any:
    for part in path.split("."):
        if not isinstance(data, dict):
            return None
        data = data.get(part)
    return data


class HttpReconciler(Reconciler):
    name = "http"
    fields = frozenset(
        {
            "lookup_url",
            "platform",
            "lookup_path",
            "absence_proof",
            "external_id_field",
            "timeout_seconds",
        }
    )

    def validate_adapter(self, config: dict[str, Any], errors: dict[str, list[str]]) -> dict:
        """Check the shape; which platform the lookup belongs to is the receipt service's call."""
        normalised: dict[str, Any] = {}
        url = config.get("lookup_url")
        name = config.get("platform")
        path = config.get("lookup_path")
        if name is not None:
            if not isinstance(name, str) or not name.strip() or len(name) > 64:
                errors["platform"] = ["Name a registered platform."]
            else:
                normalised["platform"] = name
        if path is not None:
            if not isinstance(path, str) or name is None or len(path) > MAX_LOOKUP_LENGTH:
                errors["lookup_path"] = [
                    f"Give lookup_path as text of at most {MAX_LOOKUP_LENGTH} characters, "
                    "with `platform`."
                ]
            else:
                problem = self._placeholder_problem(path)
                if problem:
                    errors["lookup_path"] = [problem]
                normalised["lookup_path"] = path
        if url is not None and path is not None:
            errors["lookup_path"] = ["Give a lookup_url or a lookup_path, not both."]
        elif url is None and path is None:
            errors["lookup_url"] = [
                "The http reconciler needs a lookup_url, or a platform and a lookup_path."
            ]
        elif url is not None:
            if not isinstance(url, str) or not url.strip() or len(url) > MAX_LOOKUP_LENGTH:
                errors["lookup_url"] = [
                    f"Give the lookup_url as an absolute http(s) URL of at most "
                    f"{MAX_LOOKUP_LENGTH} characters."
                ]
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
    def _placeholder_problem(text: str) -> str:
        try:
            lookup_url_placeholders(text)
        except ValueError as exc:
            return str(exc)
        return ""

    @classmethod
    def _url_problem(cls, url: str) -> str:
        problem = cls._placeholder_problem(url)
        if problem:
            return problem
        try:
            lookup_url_probe(url)
        except URLRefused as exc:
            return str(exc)
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
        platform = target.platform
        try:
            parsed = parse_platform_url(url)
            registered = platform is not None and parsed.is_under(
                parse_platform_url(platform.base_url)
            )
        except URLRefused:
            registered = False
        if platform is None or not registered:
            # Created before platforms were registered, or a placeholder value
            # moved the URL out of the platform: only a person can tell.
            return LookupResult(
                ReadOutcome.NEEDS_PERSON, error_code=PLATFORM_NOT_REGISTERED, evidence=evidence
            )
        evidence["platform"] = platform.name
        timeout = min(
            config.get("timeout_seconds") or settings.RECONCILE_HTTP_TIMEOUT_SECONDS,
            settings.RECONCILE_HTTP_TIMEOUT_SECONDS,
        )
        # One budget for the whole read: resolving the name, connecting, the body.
        started = time.monotonic()
        try:
            addresses = resolve_checked(
                parsed.host, parsed.port, allow_private=platform.allow_private, timeout=timeout
            )
        except AddressRefused as refused:
            evidence["address"] = refused.address
            return self._inconclusive(PLATFORM_ADDRESS_REFUSED, evidence, started)
        except Unresolvable:
            return self._inconclusive("unresolvable", evidence, started)
        address = addresses[0]
        evidence["address"] = str(address)
        remaining = timeout - (time.monotonic() - started)
        if remaining <= 0:
            return self._inconclusive("timeout", evidence, started)
        try:
            status, body, complete = self._get(parsed, address, remaining)
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
        proof = registered_proof(url, target)
        evidence["absence_proof"] = proof or AbsenceProof.NONE
        return self._interpret(status, body, proof, target, evidence)

    @staticmethod
    def _get(url: PlatformURL, address: IPAddress, timeout: float) -> tuple[int, bytes, bool]:
        """GET `url` from `address` once; the body is capped in size and the read in time.

        The connection goes to the checked address; the name travels only as
        `Host` and as the TLS server name, against which the certificate is
        verified, so there is no second resolution to rebind.
        """
        limit = settings.RECONCILE_HTTP_MAX_RESPONSE_BYTES
        deadline = time.monotonic() + timeout
        headers = {
            "Host": url.host_header,
            "Accept": "application/json",
            # Raw bytes are counted against the limit; a compressed answer
            # could otherwise expand far past it inside one chunk.
            "Accept-Encoding": "identity",
            "User-Agent": USER_AGENT,
        }
        extensions = {}
        if url.scheme == "https" and literal_address(url.host) is None:
            extensions["sni_hostname"] = url.host
        request_url = url.url.copy_with(host=str(address))
        client = lookup_clients().for_host(url.scheme, url.host_header)
        with client.stream(
            "GET", request_url, headers=headers, extensions=extensions, timeout=timeout
        ) as response:
            declared = response.headers.get("Content-Length", "")
            if declared.isdigit() and int(declared) > limit:
                return response.status_code, b"", False
            body = bytearray()
            for chunk in response.iter_raw():
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
        status: int, body: bytes, proof: str, target: LookupTarget, evidence: dict[str, Any]
    ) -> LookupResult:
        if status == 404:
            if proof == AbsenceProof.STATUS_LOOKUP:
                return LookupResult(ReadOutcome.ABSENT, evidence=evidence)
            return LookupResult(
                ReadOutcome.UNDETERMINED, error_code="not_found_unproven", evidence=evidence
            )
        if 300 <= status < 400:
            # Following would let the platform (or whoever answers for it)
            # send the read to a host nobody registered.
            return LookupResult(
                ReadOutcome.UNDETERMINED, error_code="redirect_not_followed", evidence=evidence
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
                if proof == AbsenceProof.SEARCH_BY_KEY:
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
            # A search matches on what the platform indexed, which may be shared
            # with other effects: the hit must be the write this receipt planned.
            found = record_fingerprint(data, target.intent)
            evidence["intent_fingerprint"] = target.intent_fingerprint
            evidence["record_fingerprint"] = found
            if found != target.intent_fingerprint:
                return LookupResult(
                    ReadOutcome.NEEDS_PERSON,
                    error_code="intent_fingerprint_mismatch",
                    evidence=evidence,
                )
        value = _dig(data, target.config.get("external_id_field", "id"))
        if isinstance(value, bool) or not isinstance(value, str | int) or value == "":
            return LookupResult(
                ReadOutcome.UNDETERMINED, error_code="external_id_missing", evidence=evidence
            )
        external_id = str(value)
        if not EXTERNAL_ID_PATTERN.fullmatch(external_id):
            # Not an id: nothing of it is stored, only that it was refused.
            evidence["external_id_refused"] = {
                "length": len(external_id),
                "sha256": "sha256:" + sha256_hex(external_id.encode("utf-8", "replace")),
            }
            return LookupResult(
                ReadOutcome.UNDETERMINED, error_code="external_id_invalid", evidence=evidence
            )
        return LookupResult(ReadOutcome.FOUND, external_id=external_id, evidence=evidence)
