"""`Authorization: Bearer <token>` for agents. The token fixes the tenant and capabilities."""

from __future__ import annotations

from typing import Any

from rest_framework import authentication, exceptions
from rest_framework.request import Request

from accounts.actors import AgentPrincipal
from accounts.selectors import agent_token_by_secret_hash
from accounts.services import agent_token_touch, hash_token_secret


class BearerTokenAuthentication(authentication.BaseAuthentication):
    keyword = "Bearer"

    def authenticate(self, request: Request) -> tuple[AgentPrincipal, Any] | None:
        header = authentication.get_authorization_header(request).decode("latin-1")
        if not header:
            return None
        scheme, _, secret = header.partition(" ")
        if scheme.lower() != self.keyword.lower():
            return None
        secret = secret.strip()
        if not secret:
            raise exceptions.AuthenticationFailed("The bearer token is empty.")
        token = agent_token_by_secret_hash(secret_hash=hash_token_secret(secret))
        if token is None:
            # Unknown and revoked tokens answer the same, so a caller cannot
            # probe which tokens once existed.
            raise exceptions.AuthenticationFailed("The token is unknown or has been revoked.")
        agent_token_touch(token=token)
        return AgentPrincipal(token), token

    def authenticate_header(self, request: Request) -> str:
        return f'{self.keyword} realm="memdesk"'
