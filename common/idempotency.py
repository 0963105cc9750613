"""`Idempotency-Key` for creating POSTs, as one decorator every endpoint reuses.

A key that holds a credential is refused (`secret_in_header`) before anything
is stored. A key is claimed by inserting a row in its own committed transaction, so a
concurrent duplicate sees it at once and gets `409 request_in_progress`. The
endpoint then runs in a transaction that also stores the response: either the
work and its recorded answer both commit, or neither does and the key is freed.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from datetime import timedelta
from functools import cache, wraps
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.module_loading import import_string
from rest_framework.request import Request
from rest_framework.response import Response

from common.fingerprints import canonical_json, erased_marker, fingerprint
from common.models import IdempotencyRecord, IdempotencyState
from common.problems import Problem
from common.screen import find_secrets_in_text

HEADER = "Idempotency-Key"
REPLAYED_HEADER = "Idempotent-Replayed"
_KEPT_HEADERS = ("Location", "ETag", "Warning")


@cache
def _scope_resolver() -> Callable[[Request], tuple[int, str]]:
    return import_string(settings.IDEMPOTENCY_SCOPE_RESOLVER)


def _fingerprintable(value: Any) -> Any:
    """Uploaded files count by their content, everything else as parsed."""
    if not hasattr(value, "chunks"):
        return value
    digest = hashlib.sha256()
    for chunk in value.chunks():
        digest.update(chunk)
    value.seek(0)
    return "file:" + digest.hexdigest()


def request_fingerprint(request: Request) -> str:
    data = request.data
    payload = (
        {name: _fingerprintable(value) for name, value in data.items()}
        if hasattr(data, "items")
        else {"_": data}
    )
    body = canonical_json(payload).decode()
    return fingerprint({"method": request.method, "path": request.path, "body": body})


class _DoNotKeep(Exception):
    def __init__(self, response: Response) -> None:
        self.response = response


def _claim(*, tenant_id: int, principal: str, key: str, fp: str) -> IdempotencyRecord:
    # A deletion replaces a key holding the deleted words by its digest: the request
    # was still made, and a retry under the original key must not make it again.
    existing = IdempotencyRecord.objects.filter(
        tenant_id=tenant_id, principal=principal, key=erased_marker(key)
    ).first()
    if existing is not None:
        return _settled(existing, fp)
    try:
        with transaction.atomic():
            return IdempotencyRecord.objects.create(
                tenant_id=tenant_id,
                principal=principal,
                key=key,
                request_fingerprint=fp,
                state=IdempotencyState.IN_PROGRESS,
            )
    except IntegrityError:
        pass
    existing = IdempotencyRecord.objects.get(tenant_id=tenant_id, principal=principal, key=key)
    return _settled(existing, fp)


def _settled(existing: IdempotencyRecord, fp: str) -> IdempotencyRecord:
    """The key's record if its request is done (or was abandoned and is now taken over);
    a problem if the key names another request or its request is still running."""
    if existing.request_fingerprint != fp:
        raise Problem(
            "idempotency_key_reused",
            "This Idempotency-Key was already used with a different request. "
            "Use a new key for a new request.",
            status_code=409,
        )
    if existing.state == IdempotencyState.COMPLETE:
        return existing
    stale_before = timezone.now() - timedelta(seconds=settings.IDEMPOTENCY_IN_FLIGHT_SECONDS)
    if existing.started_at < stale_before:
        # The first request died mid-flight and its transaction rolled back:
        # take the key over, but only if nobody else did first.
        taken = IdempotencyRecord.objects.filter(
            pk=existing.pk,
            state=IdempotencyState.IN_PROGRESS,
            started_at=existing.started_at,
        ).update(started_at=timezone.now())
        if taken:
            existing.refresh_from_db()
            return existing
    raise Problem(
        "request_in_progress",
        "A request with this Idempotency-Key is still being processed. Retry shortly.",
        status_code=409,
    )


def _replay(record: IdempotencyRecord) -> Response:
    body = record.response_body
    if isinstance(body, dict) and body.get("redacted") is True:
        # The reply quoted content a deletion erased: answering with what is left would
        # look like a success with a broken body, and running the request again would
        # repeat what it did. The caller learns it was done, and which object it made.
        raise Problem(
            "idempotent_reply_erased",
            "The request with this Idempotency-Key was already done, but its stored reply "
            "held content that has since been deleted, so it cannot be replayed. It was not "
            "run again; read what it made by its id.",
            status_code=409,
            id=body.get("id"),
            original_status=record.response_status,
        )
    response = Response(record.response_body, status=record.response_status)
    for name, value in record.response_headers.items():
        response[name] = value
    response[REPLAYED_HEADER] = "true"
    return response


def idempotent(method: Callable[..., Response]) -> Callable[..., Response]:
    """Decorate a DRF view's `post` to honour the `Idempotency-Key` header."""

    @wraps(method)
    def wrapper(view: Any, request: Request, *args: Any, **kwargs: Any) -> Response:
        key = request.headers.get(HEADER)
        if key is None:
            return method(view, request, *args, **kwargs)
        key = key.strip()
        if not key or len(key) > 255:
            raise Problem(
                "idempotency_key_invalid",
                "An Idempotency-Key must be 1 to 255 characters.",
            )
        if find_secrets_in_text(key):
            # The key is stored as sent, and a deletion cannot find what it never read.
            raise Problem(
                "secret_in_header",
                "The Idempotency-Key looks like a credential, and keys are stored as sent. "
                "Use a random value such as a UUID.",
                header=HEADER,
            )
        tenant_id, principal = _scope_resolver()(request)
        record = _claim(
            tenant_id=tenant_id, principal=principal, key=key, fp=request_fingerprint(request)
        )
        if record.state == IdempotencyState.COMPLETE:
            return _replay(record)
        try:
            with transaction.atomic():
                response = method(view, request, *args, **kwargs)
                if response.status_code >= 500:
                    raise _DoNotKeep(response)
                IdempotencyRecord.objects.filter(pk=record.pk).update(
                    state=IdempotencyState.COMPLETE,
                    response_status=response.status_code,
                    response_body=response.data,
                    response_headers={h: response[h] for h in _KEPT_HEADERS if h in response},
                )
        except _DoNotKeep as failed:
            IdempotencyRecord.objects.filter(pk=record.pk).delete()
            return failed.response
        except BaseException:
            # Nothing was done, so the key is free for a corrected retry.
            IdempotencyRecord.objects.filter(pk=record.pk).delete()
            raise
        return response

    return wrapper


def idempotency_records_purge(*, older_than_hours: int | None = None) -> int:
    hours = older_than_hours or settings.IDEMPOTENCY_KEY_TTL_HOURS
    cutoff = timezone.now() - timedelta(hours=hours)
    deleted, _ = IdempotencyRecord.objects.filter(created_at__lt=cutoff).delete()
    return deleted
