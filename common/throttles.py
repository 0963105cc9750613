"""API rate limits per agent token, per signed-in person and per anonymous address.

A rate "N/period" allows a burst of N requests, then one more each period/N
(the generic cell rate algorithm): the same N per period as a sliding log of
timestamps, kept as one number per caller. The number lives in the default
cache's Redis, so every web process shares it, and one script reads and moves
it atomically: one round trip per request, and concurrent requests cannot both
take the last slot. Rates come from `settings.API_THROTTLE_RATES`, read on each
request so that tests and operators can change them without re-importing this
module. Callers without a principal are counted per address before
authentication, so that floods of anonymous or bad-token requests get 429, not
an endless 401. A throttled request is answered `429` problem+json with `Retry-After`
by `common.problems`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.http import HttpRequest, HttpResponse
from rest_framework.request import Request
from rest_framework.throttling import SimpleRateThrottle

from common.problems import throttled_response
from common.redis import cache_redis

# KEYS[1]: the caller's key. ARGV: the emission interval and the burst window, in
# microseconds, and "1" to only look (count nothing). The stored value is the theoretical
# arrival time (TAT) of the next request; Redis's own clock is the only clock, so web
# hosts' clocks cannot disagree. Answers 0 when the request is allowed (and counted,
# unless only looking), else the microseconds to wait.
_GCRA = """
local now_parts = redis.call('TIME')
local now = tonumber(now_parts[1]) * 1000000 + tonumber(now_parts[2])
local interval = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local tat = tonumber(redis.call('GET', KEYS[1])) or now
if tat < now then tat = now end
local next_tat = tat + interval
local wait = next_tat - window - now
if wait > 0 then return wait end
if ARGV[3] == '1' then return 0 end
redis.call('SET', KEYS[1], next_tat, 'PX', math.ceil((next_tat - now) / 1000))
return 0
"""
_script: Any = None


def _gcra() -> Any:
    global _script
    if _script is None:
        # register_script sends EVALSHA, and the script itself only when Redis lacks it.
        _script = cache_redis().register_script(_GCRA)
    return _script


def _principal_key(request: Request) -> str | None:
    user = request.user
    if user is None or not getattr(user, "is_authenticated", False):
        return None
    # Agent principals carry "agent:<token id>"; people their user id.
    return str(user.pk) if isinstance(user.pk, str) else f"user:{user.pk}"


class _SettingsRateThrottle(SimpleRateThrottle):
    cache_format = "throttle:%(scope)s:%(ident)s"

    def __init__(self) -> None:
        # SimpleRateThrottle reads its rate in __init__ from a class attribute
        # fixed at import; look the rate up in settings instead.
        self.wait_seconds: float | None = None

    def get_rate(self) -> str | None:
        if self.scope is None:
            return None
        return settings.API_THROTTLE_RATES.get(self.scope)

    def allow_request(self, request: Request, view: Any) -> bool:
        return self._allow(request, view, spend=True)

    def _allow(self, request: HttpRequest, view: Any, *, spend: bool) -> bool:
        rate = self.get_rate()
        if rate is None:
            return True
        key = self.get_cache_key(request, view)  # type: ignore[arg-type]
        if key is None:
            return True
        requests, seconds = self.parse_rate(rate)
        if not requests or not seconds:
            # "0/minute" shuts the scope: wait a whole period.
            self.wait_seconds = float(seconds or 1)
            return False
        window = seconds * 1_000_000
        args = [window // requests, window, "0" if spend else "1"]
        waited = int(_gcra()(keys=[cache.make_key(key)], args=args))
        if waited:
            self.wait_seconds = waited / 1_000_000
            return False
        return True

    def wait(self) -> float | None:
        return self.wait_seconds


class AgentTokenThrottle(_SettingsRateThrottle):
    scope = "agent"

    def get_cache_key(self, request: Request, view: Any) -> str | None:
        key = _principal_key(request)
        if key is None or not key.startswith("agent:"):
            return None
        return self.cache_format % {"scope": self.scope, "ident": key}


class UserThrottle(_SettingsRateThrottle):
    scope = "user"

    def get_cache_key(self, request: Request, view: Any) -> str | None:
        key = _principal_key(request)
        if key is None or not key.startswith("user:"):
            return None
        return self.cache_format % {"scope": self.scope, "ident": key}


class AnonymousThrottle(_SettingsRateThrottle):
    """The budget of one address for the API requests no principal vouches for.

    Spent by `AddressThrottleMiddleware`, ahead of authentication, rather than
    by DRF, which checks throttles only once the caller is authenticated and
    permitted: an anonymous or bad-token request is answered 401 before any
    DRF throttle sees it, so a flood of them was never slowed.
    """

    scope = "anon"

    def get_cache_key(self, request: Request, view: Any) -> str | None:
        return self.cache_format % {"scope": self.scope, "ident": self.get_ident(request)}

    def spend(self, request: HttpRequest) -> bool:
        return self._allow(request, None, spend=True)

    def has_budget(self, request: HttpRequest) -> bool:
        return self._allow(request, None, spend=False)


class SchemaThrottle(_SettingsRateThrottle):
    """Per address, whoever asks: the OpenAPI schema is public and large."""

    scope = "schema"

    def get_cache_key(self, request: Request, view: Any) -> str | None:
        return self.cache_format % {"scope": self.scope, "ident": self.get_ident(request)}


class AddressThrottleMiddleware:
    """Throttles per address, before authentication, the API requests without a principal.

    A request with no credentials spends a slot of its address's budget. One
    with an `Authorization` header is only checked against it, so an address
    that has spent its budget is refused without a token lookup, and spends a
    slot when it is answered 401: bad tokens and anonymous calls share the
    address's budget. Valid tokens and signed-in people never spend it; their
    own throttles count them. Behind a proxy this counts the proxy's address
    unless `API_NUM_PROXIES` is set, as for every per-address count.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if not request.path.startswith("/api/"):
            return self.get_response(request)
        presents_credentials = "Authorization" in request.headers
        if not presents_credentials and request.user.is_authenticated:
            return self.get_response(request)
        throttle = AnonymousThrottle()
        allowed = throttle.has_budget(request) if presents_credentials else throttle.spend(request)
        if not allowed:
            return throttled_response(request, throttle.wait())
        response = self.get_response(request)
        if presents_credentials and response.status_code == 401:
            throttle.spend(request)
        return response


class ScopedPrincipalThrottle(_SettingsRateThrottle):
    """A second, tighter budget on the writes of views that set `throttle_scope`.

    Those are the expensive calls (a batch of candidates, a package scan);
    reads of the same view only count against the caller's general rate.
    """

    def allow_request(self, request: Request, view: Any) -> bool:
        self.scope = getattr(view, "throttle_scope", None)
        if not self.scope or request.method in ("GET", "HEAD", "OPTIONS"):
            return True
        return super().allow_request(request, view)

    def get_cache_key(self, request: Request, view: Any) -> str | None:
        ident = _principal_key(request) or self.get_ident(request)
        return self.cache_format % {"scope": self.scope, "ident": ident}
