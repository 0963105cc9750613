"""Liveness of the two things memdesk cannot work without."""

from __future__ import annotations

import redis
from django.conf import settings
from django.db import connection


def database_ok() -> tuple[bool, str]:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except Exception as exc:
        return False, type(exc).__name__
    return True, "ok"


def broker_ok() -> tuple[bool, str]:
    try:
        client = redis.Redis.from_url(
            settings.CELERY_BROKER_URL, socket_connect_timeout=1, socket_timeout=1
        )
        client.ping()
    except Exception as exc:
        return False, type(exc).__name__
    return True, "ok"
