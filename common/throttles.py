"""API rate limits per agent token, per signed-in person and per anonymous address.

Counts live in the default cache (Redis), so every web process shares them.
Rates come from `settings.API_THROTTLE_RATES`, read on each request so that
tests and operators can change them without re-importing this module. A
throttled request is answered `429` problem+json with `Retry-After` by
`common.problems`.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from rest_framework.request import Request
from rest_framework.throttling import SimpleRateThrottle


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
        pass

    def get_rate(self) -> str | None:
        if self.scope is None:
            return None
        return settings.API_THROTTLE_RATES.get(self.scope)

    def _setup(self) -> bool:
        self.rate = self.get_rate()
        if self.rate is None:
            return False
        self.num_requests, self.duration = self.parse_rate(self.rate)
        return True

    def allow_request(self, request: Request, view: Any) -> bool:
        if not self._setup():
            return True
        return super().allow_request(request, view)


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
    scope = "anon"

    def get_cache_key(self, request: Request, view: Any) -> str | None:
        if _principal_key(request) is not None:
            return None
        return self.cache_format % {"scope": self.scope, "ident": self.get_ident(request)}


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
