"""Django's model authentication backend, with the user lookup every request makes written
once.

Signing in (passwords, `is_active`, permissions) is Django's `ModelBackend` unchanged;
`get_user`, which the authentication middleware calls for each signed-in request, reads
the user with fixed SQL instead of compiling the same ORM query each time, and their first
membership with them (the console's next question on every page).
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth import backends

from accounts.selectors import user_with_first_membership


class ModelBackend(backends.ModelBackend):
    def get_user(self, user_id: Any) -> Any:
        user = user_with_first_membership(user_id=user_id)
        return user if user is not None and self.user_can_authenticate(user) else None
