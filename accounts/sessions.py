"""Django's database sessions, with the read every console request makes written once.

`SESSION_ENGINE = "accounts.sessions"`: sessions live in the same table and rows as
with `django.contrib.sessions.backends.db` (creating, saving, expiring and deleting are
Django's own); only loading one, which every signed-in page does first, runs fixed SQL
instead of compiling the same ORM query per request.
"""

from __future__ import annotations

from typing import Any

from django.contrib.sessions.backends import db
from django.contrib.sessions.models import Session
from django.utils import timezone

from common.rows import RowReader

_SESSION = RowReader(Session, alias="s")
_LIVE_SESSION = f"""
    SELECT {_SESSION.columns} FROM {Session._meta.db_table} s
    WHERE s.session_key = %s AND s.expire_date > %s
"""  # noqa: S608 - the table name is a constant; every value is a parameter


class SessionStore(db.SessionStore):
    def _get_session_from_db(self) -> Any:
        # As Django's: an unknown or expired key leaves the store without a key, so the
        # next save makes a new session rather than reviving the old one.
        session = _SESSION.one(_LIVE_SESSION, [self.session_key, timezone.now()])
        if session is None:
            self._session_key = None
        return session
