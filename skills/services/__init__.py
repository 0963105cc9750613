"""Every write to skills, one module per concern; callers use ``skills.services.<name>``.

- ``uploads``: creating a skill, uploading a version's package
- ``lifecycle``: submit, approve, reject, publish, roll back, revoke, deprecate
- ``labels``: how labels move between versions (used by the lifecycle and tool retirement)
- ``evaluations``: evaluation runs, pins, load counts
- ``tools``: retiring a tool
- ``instances``: instantiating a version, token grants, invalidating instances
- ``drafts``: drafts built from experience memories
- ``forgetting``: what a deletion does to the versions holding a forgotten memory's words
- ``base``: the guards, row locks, audit row and package limits they share

Every service locks what it changes, writes its audit row in the same transaction and
bumps the resolve cache generation after commit.
"""

from skills.services.base import (
    RESERVED_SLUGS,
    REVIEW_TARGET,
    allowed_next,
    is_author,
    upload_max_bytes,
)
from skills.services.discovery import skill_use_report, skill_versions_embed
from skills.services.drafts import (
    Draft,
    drafts_flag_forgotten_sources,
    skill_draft_from_experiences,
)
from skills.services.evaluations import evaluation_record, skill_loads_record, skill_pin_record
from skills.services.forgetting import VersionsForgotten, versions_forget
from skills.services.instances import (
    credential_changed,
    instances_invalidate,
    instances_of_version_invalidate,
    skill_load_override_record,
    skill_version_instantiate,
    token_grant_add,
    token_grant_remove,
)
from skills.services.lifecycle import (
    RevokeResult,
    skill_rollback,
    skill_version_approve,
    skill_version_deprecate,
    skill_version_publish,
    skill_version_reject,
    skill_version_revoke,
    skill_version_submit,
)
from skills.services.tools import ToolRetirement, tool_retire
from skills.services.uploads import skill_create, skill_version_upload

__all__ = [
    "RESERVED_SLUGS",
    "REVIEW_TARGET",
    "Draft",
    "RevokeResult",
    "ToolRetirement",
    "VersionsForgotten",
    "allowed_next",
    "credential_changed",
    "drafts_flag_forgotten_sources",
    "evaluation_record",
    "instances_invalidate",
    "instances_of_version_invalidate",
    "is_author",
    "skill_create",
    "skill_draft_from_experiences",
    "skill_load_override_record",
    "skill_loads_record",
    "skill_pin_record",
    "skill_rollback",
    "skill_use_report",
    "skill_version_approve",
    "skill_version_deprecate",
    "skill_version_instantiate",
    "skill_version_publish",
    "skill_version_reject",
    "skill_version_revoke",
    "skill_version_submit",
    "skill_version_upload",
    "skill_versions_embed",
    "token_grant_add",
    "token_grant_remove",
    "tool_retire",
    "upload_max_bytes",
    "versions_forget",
]
