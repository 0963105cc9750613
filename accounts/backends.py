"""Django's model authentication backend, with the user lookup every request makes written
once.

Signing in (passwords, `is_active`, permissions) is Django's `ModelBackend` unchanged;
`get_user`, which the authentication middleware calls for each signed-in request, reads
the user with fixed SQL instead of compiling the same ORM query each time.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth import backends, get_user_model

from common.rows import RowReader

User = get_user_model()
_USER = RowReader(User, alias="u")
_USER_BY_ID = f"""
    SELECT {_USER.columns} FROM {User._meta.db_table} u WHERE u.{User._meta.pk.column} = %s
"""  # noqa: S608 - names from the model's metadata; the id is a parameter


class ModelBackend(backends.ModelBackend):
    def get_user(self, user_id: Any) -> Any:
        user = _USER.one(_USER_BY_ID, [user_id])
        return user if user is not None and self.user_can_authenticate(user) else None
