"""How memdesk logs: one JSON object per line on stderr, with what a caller sent kept out.

Database errors quote the rows they refused, i.e. what a caller sent, and a request path
can hold a credential: both are stripped from every record by the filters in
`common.log_redaction`, on the loggers that report errors (so every handler, test
capture included, sees the clean record) and on the handler (for every other logger).
"""

from __future__ import annotations

from typing import Any


def logging_config(level: str) -> dict[str, Any]:
    """The LOGGING setting, the root logger at `level`."""
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {
            "json": {
                "()": "pythonjsonlogger.json.JsonFormatter",
                "fmt": "%(asctime)s %(levelname)s %(name)s %(message)s",
                "rename_fields": {"asctime": "time", "levelname": "level", "name": "logger"},
            }
        },
        # Database errors quote the rows they refused, i.e. what a caller sent:
        # strip them from every record. On the loggers that report errors (so
        # every handler, test capture included, sees the clean record) and on the
        # handler (for the records of every other logger).
        # A request path can hold a credential: Django's lines about a request quote it.
        "filters": {
            "redact_database_errors": {"()": "common.log_redaction.RedactDatabaseErrors"},
            "redact_secrets_in_paths": {"()": "common.log_redaction.RedactSecretsInPaths"},
        },
        "handlers": {
            "console": {
                "class": "logging.StreamHandler",
                "formatter": "json",
                "filters": ["redact_database_errors", "redact_secrets_in_paths"],
            }
        },
        "root": {"handlers": ["console"], "level": level},
        "loggers": {
            "django.server": {"level": "WARNING"},
            "django.request": {
                "level": "ERROR",
                "filters": ["redact_database_errors", "redact_secrets_in_paths"],
            },
            "django.db.backends": {"filters": ["redact_database_errors"]},
            "celery.app.trace": {"filters": ["redact_database_errors"]},
            # One INFO line per request: reconciliation records every read it makes
            # (with its URL, status and timing) in its own table already.
            "httpx": {"level": "WARNING"},
        },
    }
