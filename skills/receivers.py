"""What skills does when memory reports forgotten claims: flag the drafts built from them,
then scrub, revoke and supersede every version holding the forgotten words."""

from __future__ import annotations

from typing import Any

from skills.services import drafts_flag_forgotten_sources, versions_forget


def on_claims_forgotten(
    sender: Any,
    *,
    tenant_id: int,
    claim_ids: list[str],
    deletion_id: Any,
    terms: list[str] | None = None,
    **_: Any,
) -> None:
    drafts_flag_forgotten_sources(tenant_id=tenant_id, claim_ids=claim_ids, deletion_id=deletion_id)
    versions_forget(
        tenant_id=tenant_id, claim_ids=claim_ids, terms=terms or [], deletion_id=deletion_id
    )
