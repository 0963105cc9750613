"""Why a package is refused: the stable codes, the exception, the HTTP status of each."""

from __future__ import annotations

ERROR_CODES = frozenset(
    {
        "package_invalid",
        "package_too_large",
        "path_unsafe",
        "skill_md_missing",
        "file_not_allowed",
        "file_too_large",
        "compression_ratio_exceeded",
        "secret_detected",
        "frontmatter_invalid",
        "name_mismatch",
        "spec_violation",
        "evals_invalid",
        "capability_undeclared",
        "scan_budget_exceeded",
    }
)
# Size limits are 413 (the upload is too big), a scan that would cost too much
# is 422 (the content is refused), everything else is 400.
HTTP_STATUS = {"package_too_large": 413, "file_too_large": 413, "scan_budget_exceeded": 422}


class PackageError(Exception):
    """A package memdesk refuses, with a stable ``code`` and a ``detail`` for people.

    ``detail`` says what is wrong and what to do; it never quotes a secret.
    ``path`` is the offending member inside the zip, when there is one.
    """

    def __init__(
        self,
        *,
        code: str,
        detail: str,
        path: str | None = None,
        field: str | None = None,
        rule: str | None = None,
    ) -> None:
        if code not in ERROR_CODES:
            raise ValueError(f"unknown package error code {code!r}")
        super().__init__(detail)
        self.code = code
        self.detail = detail
        self.path = path
        # For `spec_violation`: the frontmatter field and the Agent Skills rule it breaks.
        self.field = field
        self.rule = rule
