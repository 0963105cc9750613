"""The REST framework's and the schema's settings: the API's defaults in one place.

`config/settings.py` reads them from here; they hold dotted paths only, so nothing
is imported before Django is ready.
"""

from __future__ import annotations

from typing import Any


def rest_framework_settings() -> dict[str, Any]:
    """REST_FRAMEWORK: bearer tokens or sessions, JSON only, problems, cursor pages."""
    settings: dict[str, Any] = {
        "DEFAULT_AUTHENTICATION_CLASSES": [
            "accounts.authentication.BearerTokenAuthentication",
            "rest_framework.authentication.SessionAuthentication",
        ],
        "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
        "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
        # JSON bodies only (anything else is 415 `unsupported_media_type`): form values
        # are all strings, which the fields would coerce into what the schema refuses.
        # The skill package upload names its multipart parser itself.
        "DEFAULT_PARSER_CLASSES": ["common.parsers.SafeJSONParser"],
        "TEST_REQUEST_DEFAULT_FORMAT": "json",
        "DEFAULT_PAGINATION_CLASS": "common.pagination.CursorPage",
        "DEFAULT_FILTER_BACKENDS": ["django_filters.rest_framework.DjangoFilterBackend"],
        "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
        "EXCEPTION_HANDLER": "common.problems.problem_exception_handler",
        "UNAUTHENTICATED_USER": None,
        "DEFAULT_THROTTLE_CLASSES": [
            "common.throttles.AgentTokenThrottle",
            "common.throttles.UserThrottle",
            "common.throttles.ScopedPrincipalThrottle",
        ],
    }
    return settings


def spectacular_settings() -> dict[str, Any]:
    """SPECTACULAR_SETTINGS: the agent API's schema, its problems and its examples."""
    settings: dict[str, Any] = {
        "TITLE": "memdesk agent API",
        "DESCRIPTION": (
            "The review desk for AI-agent memory and skills. Errors are RFC 9457 problem "
            "details with a stable `code`."
        ),
        "VERSION": "1",
        "SERVE_INCLUDE_SCHEMA": False,
        "SWAGGER_UI_DIST": "SIDECAR",
        "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
        # Without deep links an operation's path is text inside its toggle button, not a
        # link nested in a button (which screen readers and keyboards cannot reach).
        "SWAGGER_UI_SETTINGS": {"deepLinking": False},
        "REDOC_DIST": "SIDECAR",
        "COMPONENT_SPLIT_REQUEST": True,
        "SCHEMA_PATH_PREFIX": r"/api/v1",
        "ENUM_NAME_OVERRIDES": {
            "ClaimKindEnum": "memory.claims.models.claims.ClaimKind.choices",
            "ClaimStatusEnum": "memory.claims.models.claims.ClaimStatus.choices",
            "ReviewItemStatusEnum": "reviews.models.ItemStatus.choices",
            "ReviewQueueEnum": "reviews.models.Queue.choices",
            "ReceiptStateEnum": "memory.receipts.models.receipts.ReceiptState.choices",
            "SensitivityEnum": "memory.claims.models.ledger.Sensitivity.choices",
        },
    }

    # The schema documents the problems each operation can answer (401, 403, 404,
    # 400, 413, 415, 429), and carries a request and a response example for every
    # operation.
    settings["POSTPROCESSING_HOOKS"] = [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "common.schema.document_problems",
        "config.openapi.attach_examples",
    ]
    return settings
