"""Keep request content out of the logs when the database reports an error.

PostgreSQL explains an error with the row it refused: `DETAIL: Key
(slug)=(…) already exists`, `Failing row contains (…)`, `invalid input
syntax for type integer: "…"`. psycopg puts that text in the exception, and
Django's request logger, Celery and our own `exc_info=True` warnings would
write it to the log with the traceback, so what an agent sent (a claim's
text, a subject, possibly a secret the screen was about to refuse) would end
up in log storage that erasure never reaches.

`RedactDatabaseErrors` rewrites such records before any handler sees them:
every database exception in the chain is reduced to its class, SQLSTATE and
the names of the constraint, table and column involved, which is what an
operator needs to find the bug. Query logging (`django.db.backends`, only
under DEBUG) loses its SQL and parameters the same way.

A request path can hold a credential too (a token pasted into a URL): the
request log writes `path_for_log(path)`, each segment holding a secret
replaced by `[redacted]`, and `RedactSecretsInPaths` does the same for the
error lines Django writes about a request.
"""

from __future__ import annotations

import logging
import re
import traceback
from collections.abc import Iterator

import psycopg
from django.db import Error as DjangoDatabaseError

# Lines PostgreSQL adds to a message, as printed (newline) and inside a
# repr() (an escaped newline), e.g. in Celery's "raised unexpected: …".
_EXTRA_LINES = re.compile(
    r"(?m)^(DETAIL|CONTEXT|HINT|QUERY|STATEMENT|WHERE|LINE \d+):.*$"
    r"|\\n(DETAIL|CONTEXT|HINT|QUERY|STATEMENT|WHERE|LINE \d+):.*?(?=\\n|['\"]\)|$)"
)
WITHHELD = "[withheld]"
REDACTED = "[redacted]"


def _chain(exc: BaseException | None) -> Iterator[BaseException]:
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        yield exc
        exc = exc.__cause__ or exc.__context__


def _is_database_error(exc: BaseException) -> bool:
    return isinstance(exc, DjangoDatabaseError | psycopg.Error)


def database_error_summary(exc: BaseException) -> str:
    """What an operator may know about a database error: no values, only names."""
    source = next((e for e in _chain(exc) if isinstance(e, psycopg.Error)), None)
    parts = [f"{type(exc).__name__} (details withheld: they may hold request content)"]
    if source is not None:
        diag = source.diag
        if source.sqlstate:
            parts.append(f"sqlstate={source.sqlstate}")
        for label, value in (
            ("constraint", diag.constraint_name),
            ("table", diag.table_name),
            ("column", diag.column_name),
        ):
            if value:
                parts.append(f"{label}={value}")
    return " ".join(parts)


def _scrub(text: str, replacements: list[tuple[str, str]]) -> str:
    for original, summary in replacements:
        text = text.replace(original, summary)
        # The same text as it appears inside a repr().
        escaped = repr(original)[1:-1]
        if escaped != original:
            text = text.replace(escaped, summary)
    return _EXTRA_LINES.sub(WITHHELD, text)


class RedactDatabaseErrors(logging.Filter):
    """Rewrite a record so that no database error text (and so no request content) survives."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.name.startswith("django.db.backends"):
            self._redact_query(record)
        replacements = []
        if record.exc_info and record.exc_info[1] is not None:
            replacements = [
                (str(exc), database_error_summary(exc))
                for exc in _chain(record.exc_info[1])
                if _is_database_error(exc) and str(exc)
            ]
            if replacements:
                formatted = "".join(traceback.format_exception(*record.exc_info)).rstrip("\n")
                record.exc_text = _scrub(formatted, replacements)
                record.exc_info = None
        message = record.getMessage()
        scrubbed = _scrub(message, replacements)
        if scrubbed != message:
            record.msg, record.args = scrubbed, ()
        return True

    @staticmethod
    def _redact_query(record: logging.LogRecord) -> None:
        # Django's debug query log interpolates the parameters into the SQL.
        for attribute in ("sql", "params"):
            if hasattr(record, attribute):
                setattr(record, attribute, WITHHELD)
        record.msg = "database query (%s s) on %s: sql withheld"
        record.args = (getattr(record, "duration", "?"), getattr(record, "alias", "?"))


def path_for_log(path: str) -> str:
    """`path` with every segment that holds a credential replaced by `[redacted]`."""
    # Imported here: logging is configured before the apps the screen may need are ready.
    from common.screen import find_secrets_in_text

    if not find_secrets_in_text(path):
        return path
    segments = [REDACTED if find_secrets_in_text(part) else part for part in path.split("/")]
    if REDACTED not in segments:
        # The credential spans segments (`/x/https://user:pw@host`): keep the first one.
        return "/".join([*segments[:2], REDACTED])
    return "/".join(segments)


class RedactSecretsInPaths(logging.Filter):
    """Django's request error lines quote the path, and carry the request itself."""

    def filter(self, record: logging.LogRecord) -> bool:
        path = getattr(getattr(record, "request", None), "path", None)
        if not isinstance(path, str):
            return True
        safe = path_for_log(path)
        if safe != path:
            message = record.getMessage()
            for written in (path, path.encode("unicode_escape").decode("ascii")):
                message = message.replace(written, safe)
            record.msg, record.args = message, ()
            record.request = f"<request {safe}>"
        return True
