"""memdesk settings: one file, every deployment difference comes from the environment."""

from __future__ import annotations

import os
from datetime import timedelta
from pathlib import Path
from typing import Any

import dj_database_url
from csp.constants import NONE as CSP_NONE
from csp.constants import SELF as CSP_SELF
from django.core.exceptions import ImproperlyConfigured

from config.api_settings import rest_framework_settings, spectacular_settings
from config.logging_config import logging_config

BASE_DIR = Path(__file__).resolve().parent.parent


def env_bool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def env_int(name: str, default: int) -> int:
    value = os.environ.get(name)
    return int(value) if value else default


def env_list(name: str, default: list[str]) -> list[str]:
    value = os.environ.get(name)
    if not value:
        return default
    return [item.strip() for item in value.split(",") if item.strip()]


DEBUG = env_bool("DEBUG", False)

SECRET_KEY = os.environ.get("SECRET_KEY", "")
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured("SECRET_KEY must be set when DEBUG is off.")
    SECRET_KEY = "insecure-development-key-only-used-with-DEBUG-on"  # noqa: S105

ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["127.0.0.1", "localhost", "[::1]", "testserver"])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.humanize",
    "django.contrib.postgres",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_filters",
    "django_htmx",
    "template_partials",
    "pgtrigger",
    "axes",
    "common",
    "accounts",
    "reviews",
    "memory",
    "memory.receipts",
    "memory.claims",
    "memory.privacy",
    "skills",
    "config",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "csp.middleware.CSPMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "common.middleware.RequestLogMiddleware",
    "common.middleware.ApiUrlGuardMiddleware",
    # After the session user is known, before DRF authenticates: see its docstring.
    "common.throttles.AddressThrottleMiddleware",
    # Last, as django-axes asks: it turns a locked-out login into the lockout page.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"
ASGI_APPLICATION = "config.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "accounts.context_processors.console",
                "reviews.context_processors.queue_nav",
            ],
        },
    }
]

DATABASE_URL = os.environ.get("DATABASE_URL", "")
if not DATABASE_URL:
    raise ImproperlyConfigured(
        "DATABASE_URL is not set. `make run` and `make test` start an embedded "
        "PostgreSQL and set it for you; otherwise point it at a PostgreSQL server."
    )
# Each process (runserver with its thread per request, a gunicorn worker, a
# Celery child) borrows connections from its own bounded psycopg pool, so a
# burst of concurrent requests waits up to DATABASE_POOL_TIMEOUT seconds for a
# free connection instead of opening one per request until PostgreSQL runs out
# (which also failed /healthz). Persistent connections (CONN_MAX_AGE) cannot be
# combined with a pool; they apply only with DATABASE_POOL_MAX_SIZE=0, e.g.
# behind an external pooler such as PgBouncer.
DATABASE_POOL_MAX_SIZE = env_int("DATABASE_POOL_MAX_SIZE", 10)
DATABASES = {
    "default": dj_database_url.parse(
        DATABASE_URL,
        conn_max_age=0 if DATABASE_POOL_MAX_SIZE else env_int("DATABASE_CONN_MAX_AGE", 0),
        conn_health_checks=True,
    )
}
if DATABASE_POOL_MAX_SIZE:
    DATABASES["default"].setdefault("OPTIONS", {})["pool"] = {
        "min_size": 0,
        "max_size": DATABASE_POOL_MAX_SIZE,
        "timeout": env_int("DATABASE_POOL_TIMEOUT", 20),
        # Give idle connections back to PostgreSQL after a quiet minute.
        "max_idle": 60,
    }
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

REDIS_URL = os.environ.get("REDIS_URL", "")
if not REDIS_URL:
    raise ImproperlyConfigured(
        "REDIS_URL is not set. `make run` and `make test` start an embedded Redis "
        "and set it for you; otherwise point it at a Redis server."
    )
CACHES = {
    "default": {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": REDIS_URL,
        "KEY_PREFIX": os.environ.get("CACHE_KEY_PREFIX", "memdesk"),
        "TIMEOUT": 3600,
    }
}

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "console:home"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = Path(os.environ.get("STATIC_ROOT", BASE_DIR / ".data" / "static"))
STATICFILES_DIRS = [BASE_DIR / "static"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": (
            "django.contrib.staticfiles.storage.StaticFilesStorage"
            if DEBUG
            else "whitenoise.storage.CompressedManifestStaticFilesStorage"
        )
    },
}
WHITENOISE_USE_FINDERS = DEBUG
# Read from DEBUG as the environment gives it, not as Django's test runner flips it at run time:
# otherwise each test client's middleware chain lists every static file through the finders
# (a tenth of a test's time); found on request instead, as in development.
WHITENOISE_AUTOREFRESH = DEBUG

# Security. Every switch follows DEBUG so `check --deploy` is clean in
# production, and each can be turned off behind a TLS-terminating proxy.
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", not DEBUG)
# Health checks and scrapes come from inside the network over plain HTTP.
SECURE_REDIRECT_EXEMPT = [r"^healthz$", r"^metrics$"]
SESSION_COOKIE_SECURE = env_bool("SESSION_COOKIE_SECURE", not DEBUG)
CSRF_COOKIE_SECURE = env_bool("CSRF_COOKIE_SECURE", not DEBUG)
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 0 if DEBUG else 31536000)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", not DEBUG)
SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", not DEBUG)
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
SESSION_COOKIE_HTTPONLY = True
X_FRAME_OPTIONS = "DENY"
# Content-Security-Policy (django-csp) on every response: scripts and styles
# only from memdesk's own static files — no inline code, no eval — so markup
# that slipped into a page can neither run nor restyle it. A view may set its
# own, stricter header (skill files: `sandbox; default-src 'none'`); the API
# docs pages relax only what their bundled viewers need (config/urls.py).
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [CSP_SELF],
        "script-src": [CSP_SELF],
        "style-src": [CSP_SELF],
        "img-src": [CSP_SELF, "data:"],
        "object-src": [CSP_NONE],
        "base-uri": [CSP_NONE],
        "frame-ancestors": [CSP_NONE],
        "form-action": [CSP_SELF],
    }
}

REST_FRAMEWORK = rest_framework_settings()

# Limits ----------------------------------------------------------------------
# Requests per agent token, per signed-in person and per anonymous address,
# counted in the Redis cache so every web process shares the counts. The
# address's count ("anon") takes requests without credentials and those whose
# token fails, before authentication (common.throttles.AddressThrottleMiddleware).
# Scoped rates apply on top to the expensive endpoints that name a `throttle_scope`.
# Format: "<count>/<second|minute|hour|day>".
API_THROTTLE_RATES = {
    "agent": os.environ.get("API_THROTTLE_AGENT", "3000/minute"),
    "user": os.environ.get("API_THROTTLE_USER", "1200/minute"),
    "anon": os.environ.get("API_THROTTLE_ANON", "300/minute"),
    "claims_batch": os.environ.get("API_THROTTLE_CLAIMS_BATCH", "120/minute"),
    "skill_upload": os.environ.get("API_THROTTLE_SKILL_UPLOAD", "60/minute"),
    # /api/schema/ per address, signed in or not.
    "schema": os.environ.get("API_THROTTLE_SCHEMA", "60/minute"),
}
# Proxies in front of memdesk that append to X-Forwarded-For; 0 counts
# anonymous callers by REMOTE_ADDR alone, so the header cannot be spoofed.
REST_FRAMEWORK["NUM_PROXIES"] = env_int("API_NUM_PROXIES", 0)
# The largest JSON body the API reads (413 `payload_too_large` beyond it); Django
# refuses to buffer larger form bodies too.
API_MAX_BODY_BYTES = env_int("API_MAX_BODY_BYTES", 1024 * 1024)
DATA_UPLOAD_MAX_MEMORY_SIZE = API_MAX_BODY_BYTES
# The largest multipart upload (skill packages) the API reads.
API_MAX_UPLOAD_BYTES = env_int("API_MAX_UPLOAD_BYTES", 16 * 1024 * 1024)
# Deeper JSON is refused with 400 `nesting_too_deep` before any view walks it.
API_JSON_MAX_DEPTH = env_int("API_JSON_MAX_DEPTH", 64)
# How far ahead of memdesk's clock an event's `observed_at`, or a claim's
# `available_at` and `valid_from`, may lie (a caller's clock runs a little
# fast); later is 400 `time_in_future`.
MEMDESK_FUTURE_SKEW = timedelta(seconds=env_int("MEMDESK_FUTURE_SKEW_SECONDS", 300))

# Skill packages: besides the size limits (SKILL_PACKAGE_MAX_FILE_BYTES,
# SKILL_PACKAGE_MAX_TOTAL_BYTES, SKILL_PACKAGE_MAX_FILES; 413 beyond them), the
# inspection of one package is bounded (422 `scan_budget_exceeded` beyond it).
SKILL_PACKAGE_MAX_FILE_BYTES = env_int("SKILL_PACKAGE_MAX_FILE_BYTES", 1_000_000)
SKILL_PACKAGE_MAX_TOTAL_BYTES = env_int("SKILL_PACKAGE_MAX_TOTAL_BYTES", 10_000_000)
SKILL_PACKAGE_MAX_FILES = env_int("SKILL_PACKAGE_MAX_FILES", 500)
# A file, or the whole package, unpacking to more than this many times its
# compressed size is refused (400 `compression_ratio_exceeded`) once it unpacks
# to more than SKILL_PACKAGE_RATIO_EXEMPT_BYTES.
SKILL_PACKAGE_MAX_COMPRESSION_RATIO = env_int("SKILL_PACKAGE_MAX_COMPRESSION_RATIO", 100)
SKILL_PACKAGE_RATIO_EXEMPT_BYTES = env_int("SKILL_PACKAGE_RATIO_EXEMPT_BYTES", 300_000)
SKILL_SCAN_MAX_TEXT_LINES = env_int("SKILL_SCAN_MAX_TEXT_LINES", 20_000)
SKILL_SCAN_MAX_SCRIPT_BYTES = env_int("SKILL_SCAN_MAX_SCRIPT_BYTES", 256_000)
SKILL_SCAN_MAX_AST_NODES = env_int("SKILL_SCAN_MAX_AST_NODES", 100_000)
SKILL_SCAN_MAX_AST_DEPTH = env_int("SKILL_SCAN_MAX_AST_DEPTH", 100)
SKILL_SCAN_MAX_SECONDS = env_int("SKILL_SCAN_MAX_SECONDS", 10)
# Publishing needs the normal category's cases to beat their no-skill baseline and to
# cost (mean tokens per case) at most this many times what the baseline cost.
SKILL_BASELINE_COST_FACTOR = float(os.environ.get("SKILL_BASELINE_COST_FACTOR", "1.5"))

# Login lockout (django-axes): after AXES_FAILURE_LIMIT failed logins for one
# username from one address, that pair is locked out for AXES_COOLOFF_MINUTES
# (and after AXES_ADDRESS_FAILURE_LIMIT from one address, whatever the usernames, the
# address), and the login page answers 429 saying when to try again.
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    # Django's ModelBackend, with the per-request user lookup as fixed SQL.
    "accounts.backends.ModelBackend",
]
# Django's database sessions, with the per-request load as fixed SQL.
SESSION_ENGINE = "accounts.sessions"
AXES_FAILURE_LIMIT = env_int("AXES_FAILURE_LIMIT", 5)
AXES_COOLOFF_MINUTES = env_int("AXES_COOLOFF_MINUTES", 15)
AXES_COOLOFF_TIME = timedelta(minutes=AXES_COOLOFF_MINUTES)
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
# One address trying many usernames is locked out too, at a higher count:
# accounts.lockout.AddressLockoutHandler.
AXES_HANDLER = "accounts.lockout.AddressLockoutHandler"
AXES_ADDRESS_FAILURE_LIMIT = env_int("AXES_ADDRESS_FAILURE_LIMIT", 30)
AXES_RESET_ON_SUCCESS = True
AXES_VERBOSE = False  # one start-up banner per process is noise in every command
AXES_LOCKOUT_CALLABLE = "accounts.lockout.lockout_response"
# Behind a proxy, tell axes which header carries the client address.
AXES_IPWARE_META_PRECEDENCE_ORDER = env_list("AXES_IP_HEADERS", ["REMOTE_ADDR"])
# -----------------------------------------------------------------------------

SPECTACULAR_SETTINGS = spectacular_settings()

# Celery: Redis wakes workers up; PostgreSQL holds the work (docs/architecture.md).
CELERY_BROKER_URL = REDIS_URL
CELERY_RESULT_BACKEND = None
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_TIME_LIMIT = env_int("CELERY_TASK_TIME_LIMIT", 300)
CELERY_TASK_SOFT_TIME_LIMIT = CELERY_TASK_TIME_LIMIT - 30
# The visibility timeout must outlive the hard time limit, or Redis hands a
# running task to a second worker.
CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": CELERY_TASK_TIME_LIMIT * 4}
CELERY_TASK_ALWAYS_EAGER = False
CELERY_BEAT_SCHEDULE: dict[str, dict[str, Any]] = {}


def _every(task: str, seconds: int, queue: str) -> dict[str, Any]:
    """A beat entry: `task` on `queue` every `seconds`; a run still queued when the next
    one is due expires rather than piling up behind it."""
    return {
        "task": task,
        "schedule": float(seconds),
        "options": {"queue": queue, "expires": seconds},
    }


IDEMPOTENCY_KEY_TTL_HOURS = env_int("IDEMPOTENCY_KEY_TTL_HOURS", 48)
# A request holding a key longer than this is taken to have died with its
# transaction rolled back, so the key may be used again.
IDEMPOTENCY_IN_FLIGHT_SECONDS = env_int("IDEMPOTENCY_IN_FLIGHT_SECONDS", 120)
# Keys are scoped per tenant and caller; accounts knows who that is, common does not.
IDEMPOTENCY_SCOPE_RESOLVER = "accounts.access.idempotency_scope"
# When set, /metrics answers only a scraper sending it as a bearer token; when
# empty, only a direct loopback client. Everyone else gets a 404.
METRICS_TOKEN = os.environ.get("METRICS_TOKEN", "")
AGENT_TOKEN_TOUCH_SECONDS = 60

LOG_LEVEL = os.environ.get("LOG_LEVEL", "INFO")
LOGGING = logging_config(LOG_LEVEL)
CELERY_BEAT_SCHEDULE["purge-idempotency-records"] = {
    "task": "common.purge_idempotency_records",
    "schedule": 3600.0,
}
REVIEW_LEASE_SECONDS = env_int("REVIEW_LEASE_SECONDS", 900)
# How long after a review decision its decider (or an admin) may take it back.
REVIEW_UNDO_SECONDS = env_int("REVIEW_UNDO_SECONDS", 30)

# Receipts and reconciliation ------------------------------------------------
# How long a `submitted` receipt waits for its agent to report the outcome
# before the sweep declares it `outcome_unknown`; an agent may ask for a
# different lease per call, up to the maximum.
RECEIPT_SUBMIT_LEASE_SECONDS = env_int("RECEIPT_SUBMIT_LEASE_SECONDS", 300)
RECEIPT_SUBMIT_LEASE_MAX_SECONDS = env_int("RECEIPT_SUBMIT_LEASE_MAX_SECONDS", 86400)
# The queue reconciliation tasks and their sweeps go to. The default is
# Celery's default queue, which every worker consumes; production may give
# reconciliation its own workers, and tests isolate each run with its own name.
RECONCILE_QUEUE = os.environ.get("RECONCILE_QUEUE", "celery")
# Reads (claims) per receipt before a person has to decide; a receipt that
# kills its worker every time stops here too.
RECONCILE_MAX_ATTEMPTS = env_int("RECONCILE_MAX_ATTEMPTS", 5)
# A worker's claim on one receipt; it must outlast one read (the HTTP timeout).
RECONCILE_LEASE_SECONDS = env_int("RECONCILE_LEASE_SECONDS", 60)
RECONCILE_CHUNK_SIZE = env_int("RECONCILE_CHUNK_SIZE", 50)
RECONCILE_BACKOFF_BASE_SECONDS = env_int("RECONCILE_BACKOFF_BASE_SECONDS", 30)
RECONCILE_BACKOFF_MAX_SECONDS = env_int("RECONCILE_BACKOFF_MAX_SECONDS", 3600)
# Platforms: an http lookup reads only from a platform an admin registered.
# One read (connect, wait, body) ends after RECONCILE_HTTP_TIMEOUT_SECONDS in
# total, and an answer larger than RECONCILE_HTTP_MAX_RESPONSE_BYTES is
# refused unread: a lookup answer is one small JSON document.
RECONCILE_HTTP_TIMEOUT_SECONDS = env_int("RECONCILE_HTTP_TIMEOUT_SECONDS", 10)
RECONCILE_HTTP_MAX_RESPONSE_BYTES = env_int("RECONCILE_HTTP_MAX_RESPONSE_BYTES", 64 * 1024)
# Resolves platform host names (a dotted path to `f(host, port) -> [address]`).
# memdesk judges every address it returns and connects to the one it judged.
PLATFORM_RESOLVER = os.environ.get(
    "PLATFORM_RESOLVER", "memory.receipts.reconcilers.addresses.system_resolve"
)
# CA certificates (a PEM file) platform certificates are verified against;
# empty: the public roots. Set it for platforms behind an internal CA.
RECONCILE_HTTP_CA_BUNDLE = os.environ.get("RECONCILE_HTTP_CA_BUNDLE", "")
RECONCILE_SWEEP_SECONDS = env_int("RECONCILE_SWEEP_SECONDS", 30)
# A checkpoint saved without `expires_at` lives this long, unless its tenant set
# its own default (`manage.py set_checkpoint_ttl`); expired ones are swept hourly.
CHECKPOINT_DEFAULT_TTL_SECONDS = env_int("CHECKPOINT_DEFAULT_TTL_SECONDS", 86_400)
CHECKPOINT_SWEEP_SECONDS = env_int("CHECKPOINT_SWEEP_SECONDS", 3600)
# How often beat reads each platform's verifier controls (docs/reconciliation.md).
VERIFIER_CONTROLS_SECONDS = env_int("VERIFIER_CONTROLS_SECONDS", 300)
# Concurrent reconciliation: each worker process keeps
# RECONCILE_READS_IN_FLIGHT reads in flight, with as many again claimed and
# queued behind them (bench/RESULTS.md shows why 12); per platform host it keeps at most
# RECONCILE_PLATFORM_READS_IN_FLIGHT reads open and starts at most
# RECONCILE_PLATFORM_READS_PER_SECOND (0: unpaced).
# Both platform limits are per worker process: a platform sees at most
# CELERY_WORKER_CONCURRENCY times them from one worker host.
RECONCILE_READS_IN_FLIGHT = env_int("RECONCILE_READS_IN_FLIGHT", 12)
RECONCILE_PLATFORM_READS_IN_FLIGHT = env_int("RECONCILE_PLATFORM_READS_IN_FLIGHT", 16)
RECONCILE_PLATFORM_READS_PER_SECOND = env_int("RECONCILE_PLATFORM_READS_PER_SECOND", 0)
# Worker processes per Celery worker (`--concurrency` overrides it).
CELERY_WORKER_CONCURRENCY = env_int("CELERY_WORKER_CONCURRENCY", os.cpu_count() or 2)
if RECONCILE_LEASE_SECONDS <= RECONCILE_HTTP_TIMEOUT_SECONDS:
    raise ImproperlyConfigured(
        "RECONCILE_LEASE_SECONDS must exceed RECONCILE_HTTP_TIMEOUT_SECONDS, or a slow "
        "read loses its claim to another worker before it can settle."
    )
if CELERY_BROKER_TRANSPORT_OPTIONS["visibility_timeout"] < 2 * CELERY_TASK_TIME_LIMIT:
    raise ImproperlyConfigured(
        "The broker visibility timeout must be at least twice CELERY_TASK_TIME_LIMIT, or Redis "
        "hands a running task to a second worker."
    )
# Stable enum names for receipts and recovery: another app's `kind` or `decision` cannot collide.
SPECTACULAR_SETTINGS["ENUM_NAME_OVERRIDES"].update(
    {
        "ReconciliationReadOutcomeEnum": "memory.receipts.models.receipts.ReadOutcome.choices",
        "RecoveryDecisionEnum": "memory.receipts.services.recovery.RecoveryDecision.choices",
        "RecoveryReasonEnum": "memory.receipts.services.recovery.RecoveryReason.choices",
        "ReceiptKindEnum": "memory.receipts.models.receipts.ReceiptKind.choices",
    }
)
# Sweeps are the safety net behind the on-commit enqueue: they find work from
# database state alone, so a lost message or a killed worker only delays it.
# `expires` drops sweeps that piled up while no worker was listening.
CELERY_BEAT_SCHEDULE["receipts-expire-submit-leases"] = _every(
    "memory.receipts_expire_submit_leases", RECONCILE_SWEEP_SECONDS, RECONCILE_QUEUE
)
CELERY_BEAT_SCHEDULE["checkpoints-sweep-expired"] = _every(
    "memory.checkpoints_sweep_expired", CHECKPOINT_SWEEP_SECONDS, RECONCILE_QUEUE
)
CELERY_BEAT_SCHEDULE["platforms-check-verifier-controls"] = _every(
    "memory.platforms_check_controls", VERIFIER_CONTROLS_SECONDS, RECONCILE_QUEUE
)
CELERY_BEAT_SCHEDULE["receipts-dispatch-due-reconciliations"] = _every(
    "memory.receipts_dispatch_due", RECONCILE_SWEEP_SECONDS, RECONCILE_QUEUE
)
# ---------------------------------------------------------------------------

# Memory lifecycle -------------------------------------------------------------
# The queue deletion propagation and consolidation go to (tests isolate it).
LIFECYCLE_QUEUE = os.environ.get("LIFECYCLE_QUEUE", "celery")
# How often beat runs a consolidation pass over every tenant, and how often
# it looks for deletion requests whose message was lost or whose worker died.
CONSOLIDATE_SWEEP_SECONDS = env_int("CONSOLIDATE_SWEEP_SECONDS", 900)
DELETION_SWEEP_SECONDS = env_int("DELETION_SWEEP_SECONDS", 30)
# Recalls that must have returned a stale claim (asked with include_stale)
# before consolidation opens a `stale` review item for it.
STALE_ASK_THRESHOLD = env_int("STALE_ASK_THRESHOLD", 3)
# The window of the stale-claim use rate metric.
STALE_USE_WINDOW_SECONDS = env_int("STALE_USE_WINDOW_SECONDS", 86400)
# Who writes a recall's trace and use counts: `outbox` (a pending row, written after commit by
# a task or by beat's sweep), `worker` (the task alone: a lost message loses it) or `inline`.
RECALL_TRACE_WRITE = os.environ.get("RECALL_TRACE_WRITE", "outbox").strip().lower()
if RECALL_TRACE_WRITE not in {"outbox", "worker", "inline"}:
    raise ImproperlyConfigured("RECALL_TRACE_WRITE must be outbox, worker or inline.")
RECALL_TRACE_QUEUE = os.environ.get("RECALL_TRACE_QUEUE", "celery")
CELERY_BEAT_SCHEDULE["recall-traces"] = _every("memory.recall_traces_sweep", 30, RECALL_TRACE_QUEUE)
# The hot-memory block consolidation renders again for each subject it changed.
HOT_MEMORY_BUDGET_CHARS = env_int("HOT_MEMORY_BUDGET_CHARS", 4000)
# A claim agents keep receiving in hot memory and never report using leaves the block.
HOT_MEMORY_DEMOTE_AFTER_UNUSED = env_int("HOT_MEMORY_DEMOTE_AFTER_UNUSED", 5)
HOT_MEMORY_DEMOTE_DAYS = env_int("HOT_MEMORY_DEMOTE_DAYS", 30)
# A worker's claim on one deletion request; it must outlive the hard time
# limit, or a slow erasure loses its request to a second worker mid-pass.
DELETION_LEASE_SECONDS = env_int("DELETION_LEASE_SECONDS", CELERY_TASK_TIME_LIMIT + 60)
DELETION_MAX_ATTEMPTS = env_int("DELETION_MAX_ATTEMPTS", 5)
DELETION_RETRY_BASE_SECONDS = env_int("DELETION_RETRY_BASE_SECONDS", 30)
# Distinctive words of the deleted content the probes search for.
DELETION_PROBE_TERMS = env_int("DELETION_PROBE_TERMS", 24)
# How long backups are kept: a deletion report says until when a copy of the
# deleted content may survive in one.
DELETION_BACKUP_RETENTION_DAYS = env_int("DELETION_BACKUP_RETENTION_DAYS", 30)
# VACUUM the touched tables after each deletion, so old row versions go at once.
DELETION_VACUUM = env_bool("DELETION_VACUUM", True)
if DELETION_LEASE_SECONDS <= CELERY_TASK_TIME_LIMIT:
    raise ImproperlyConfigured(
        "DELETION_LEASE_SECONDS must exceed CELERY_TASK_TIME_LIMIT, or a running erasure "
        "loses its request to a second worker."
    )
CELERY_BEAT_SCHEDULE["memory-consolidate"] = _every(
    "memory.consolidate", CONSOLIDATE_SWEEP_SECONDS, LIFECYCLE_QUEUE
)
CELERY_BEAT_SCHEDULE["memory-deletions-dispatch-due"] = _every(
    "memory.deletions_dispatch_due", DELETION_SWEEP_SECONDS, LIFECYCLE_QUEUE
)
# How often beat asks for the deletion of claims past their tenant's retention period.
RETENTION_SWEEP_SECONDS = env_int("RETENTION_SWEEP_SECONDS", 3600)
CELERY_BEAT_SCHEDULE["memory-retention-sweep"] = _every(
    "memory.retention_sweep", RETENTION_SWEEP_SECONDS, LIFECYCLE_QUEUE
)
SPECTACULAR_SETTINGS["ENUM_NAME_OVERRIDES"].update(
    {
        "DeletionStatusEnum": "memory.privacy.models.lifecycle.DeletionStatus.choices",
        "DeletionScopeEnum": "memory.privacy.models.lifecycle.DeletionScope.choices",
    }
)

# Semantic recall ---------------------------------------------------------------
# Who turns memories into vectors: `local` (the packaged all-MiniLM-L6-v2 model,
# on CPU, never downloaded), `http` (an OpenAI-compatible embeddings endpoint) or
# `none` (recall ranks lexically only).
MEMDESK_EMBEDDER = os.environ.get("MEMDESK_EMBEDDER", "local").strip().lower()
if MEMDESK_EMBEDDER not in {"local", "http", "none"}:
    raise ImproperlyConfigured("MEMDESK_EMBEDDER must be local, http or none.")
# The `http` embedder: the full URL of the embeddings endpoint, the model it
# should use, and its key (read from the environment only, never stored).
MEMDESK_EMBEDDER_URL = os.environ.get("MEMDESK_EMBEDDER_URL", "")
MEMDESK_EMBEDDER_MODEL = os.environ.get("MEMDESK_EMBEDDER_MODEL", "text-embedding-3-small")
MEMDESK_EMBEDDER_KEY = os.environ.get("MEMDESK_EMBEDDER_KEY", "")
MEMDESK_EMBEDDER_TIMEOUT_SECONDS = env_int("MEMDESK_EMBEDDER_TIMEOUT_SECONDS", 30)
if MEMDESK_EMBEDDER == "http" and not MEMDESK_EMBEDDER_URL:
    raise ImproperlyConfigured("MEMDESK_EMBEDDER=http needs MEMDESK_EMBEDDER_URL.")
# Claims embedded per model call, and how often beat looks for active claims
# still without an embedding (a lost message or a dead worker only delays them).
EMBED_BATCH_SIZE = env_int("EMBED_BATCH_SIZE", 64)
EMBED_SWEEP_SECONDS = env_int("EMBED_SWEEP_SECONDS", 60)
# The sweep looks for events without a vector among those recorded this many hours ago
# or later (the ledger only grows; `manage.py embed_backfill` embeds older ones).
EMBED_EVENT_SWEEP_HOURS = env_int("EMBED_EVENT_SWEEP_HOURS", 24)
# Embedding is bulk work: it has a queue of its own (docs/operations.md, "Queues and
# workers"), so a backlog of it never sits in front of deletions, reconciliation and
# exports on the default queue. A worker must consume it (`make run` starts one).
EMBED_QUEUE = os.environ.get("EMBED_QUEUE", "bulk")
# Claims (and events) one run of the pending sweep embeds at most; with more pending it
# enqueues itself again rather than holding a worker for minutes.
EMBED_SWEEP_SLICE = env_int("EMBED_SWEEP_SLICE", 500)
# CPU threads the local model may use per process (EMBED_TORCH_THREADS, its name when
# the model ran in torch, is still read).
EMBED_THREADS = env_int("EMBED_THREADS", env_int("EMBED_TORCH_THREADS", 1))
# The local model's weights in its matrix products: `fp32` (the package's own) or
# `int8` (quantized when the model loads: faster, vectors kept under their own name).
EMBED_PRECISION = os.environ.get("EMBED_PRECISION", "fp32").strip().lower()
if EMBED_PRECISION not in {"fp32", "int8"}:
    raise ImproperlyConfigured("EMBED_PRECISION must be fp32 or int8.")
# Reciprocal rank fusion inside the legal set: score = sum(weight / (k + rank)).
# A subject's legal set is small, so a small k keeps the head of each list
# apart; recency and authority weigh little, so they order near-equals
# without overruling what matches the question.
RECALL_RRF_K = env_int("RECALL_RRF_K", 10)
RECALL_WEIGHTS = {
    "fulltext": float(os.environ.get("RECALL_WEIGHT_FULLTEXT", 1.0)),
    "ngram": float(os.environ.get("RECALL_WEIGHT_NGRAM", 1.0)),
    "vector": float(os.environ.get("RECALL_WEIGHT_VECTOR", 1.5)),
    "recency": float(os.environ.get("RECALL_WEIGHT_RECENCY", 0.05)),
    "authority": float(os.environ.get("RECALL_WEIGHT_AUTHORITY", 0.05)),
}
# How much a claim's likeness to its nearest neighbours in the subject (templated notes
# that resemble every question) lowers its similarity to a query; 0 turns it off.
RECALL_HUB_PENALTY = float(os.environ.get("RECALL_HUB_PENALTY", 0.5))
# Abstention (docs/recall.md): a question whose best legal claim is less relevant than
# the floor gets nothing back; an item this relevant is `strong`. Relevance: cosine, plus
# RECALL_TOPIC_WEIGHT times the question's likeness to the predicate's words, less
# RECALL_ATTRIBUTE_WEIGHT times how far that falls short of its nearest common attribute.
# Fitted by `python -m bench abstain` on the tuning half; -1 as the floor turns it off.
RECALL_ABSTAIN_FLOOR = float(os.environ.get("RECALL_ABSTAIN_FLOOR", 0.134))
RECALL_STRONG_RELEVANCE = float(os.environ.get("RECALL_STRONG_RELEVANCE", 0.208))
RECALL_TOPIC_WEIGHT = float(os.environ.get("RECALL_TOPIC_WEIGHT", 0.0))
RECALL_ATTRIBUTE_WEIGHT = float(os.environ.get("RECALL_ATTRIBUTE_WEIGHT", 0.5))
# Ledger discovery by meaning: the similarities of the legal set's most recent events
# with a vector (at most this many), the closest of them kept as hits (at most
# LEDGER_SEMANTIC_HITS, each at least this alike: MiniLM puts a paraphrase of an event
# at 0.35-0.8 and unrelated text below 0.25).
LEDGER_SEMANTIC_EVENTS = env_int("LEDGER_SEMANTIC_EVENTS", 2000)
LEDGER_SEMANTIC_HITS = env_int("LEDGER_SEMANTIC_HITS", 50)
LEDGER_SEMANTIC_MIN_SIMILARITY = float(os.environ.get("LEDGER_SEMANTIC_MIN_SIMILARITY", 0.35))
# Recent queries' vectors kept per process (agents repeat their questions); 0: none.
RECALL_QUERY_CACHE_SIZE = env_int("RECALL_QUERY_CACHE_SIZE", 1024)
# /healthz reports how recall ranks by meaning; common cannot import memory.
SEMANTIC_MODE_PROBE = "memory.claims.embedders.semantic_mode"
CELERY_BEAT_SCHEDULE["memory-embed-pending"] = _every(
    "memory.embed_pending", EMBED_SWEEP_SECONDS, EMBED_QUEUE
)

# Download my data ---------------------------------------------------------------
# An export of at most this many rows (claims, events, deletions) is answered at
# once by `GET /api/v1/me/export`; a larger one is made by a lifecycle worker.
EXPORT_INLINE_MAX_ROWS = env_int("EXPORT_INLINE_MAX_ROWS", 2000)
# Rows a worker reads between two progress reports.
EXPORT_CHUNK_ROWS = env_int("EXPORT_CHUNK_ROWS", 500)
# How long a finished export can be downloaded before beat empties it.
EXPORT_RETENTION_HOURS = env_int("EXPORT_RETENTION_HOURS", 24)
# A worker's claim on one export; it must outlive the task's hard time limit.
EXPORT_LEASE_SECONDS = env_int("EXPORT_LEASE_SECONDS", CELERY_TASK_TIME_LIMIT + 60)
EXPORT_MAX_ATTEMPTS = env_int("EXPORT_MAX_ATTEMPTS", 3)
EXPORT_SWEEP_SECONDS = env_int("EXPORT_SWEEP_SECONDS", 300)
CELERY_BEAT_SCHEDULE["memory-exports-sweep"] = _every(
    "memory.exports_sweep", EXPORT_SWEEP_SECONDS, LIFECYCLE_QUEUE
)
SPECTACULAR_SETTINGS["ENUM_NAME_OVERRIDES"].update(
    {"ExportStatusEnum": "memory.privacy.models.exports.ExportStatus.choices"}
)
