"""What a deletion does to the skill versions that hold a forgotten memory's words.

A draft built from experience memories copies their words into SKILL.md, and an
editor may have pasted a person's details into any package. Flagging such a
version (``drafts.drafts_flag_forgotten_sources``) stops its lifecycle but
leaves the words in the database, and a published version keeps serving them.
So, in the deletion's own transaction (memory's ``claims_forgotten`` hands the
distinctive words down; they are never stored here):

- every version whose body, manifest or files hold one of the words has those
  words replaced in place (its body, manifest and files admit exactly this
  rewrite, which moves their ``scrubbed_at`` on); a version drafted from a
  forgotten memory has its body and files replaced whole, since any line of it
  may be that memory's, distinctive word or not; both lose their discovery
  vector, which encodes the words;
- each such version that is not already final is revoked with the deletion as
  its reason (production falls back as on any revoke, and every load of it is
  refused from then on);
- for each skill, the newest of them that was in use or in the works is
  superseded by a new draft, authored by memdesk, which goes through review like
  any other version: a drafted version is drafted again from the memories that
  remain (with at least two successful runs left), any other is its scrubbed files.

The old version keeps its content hash: it names what was approved without
holding it, and the new draft's hash differs, so nothing could mistake one for
the other.
"""

from __future__ import annotations

import hashlib
import io
import re
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from django.db import transaction
from django.db.models import Exists, OuterRef, Q
from django.utils import timezone

from accounts.actors import Actor
from accounts.models import Tenant
from common.problems import Problem
from common.transitions import move_row
from memory.privacy.services.scrub import QUOTE_MARK
from memory.privacy.terms import quotable_terms, word_pattern, word_regex
from skills.models import (
    VERSION_MACHINE,
    DraftSource,
    SkillEmbedding,
    SkillFile,
    SkillVersion,
    VersionStatus,
)
from skills.services.base import audit, bump_after_commit
from skills.services.drafts import draft_package_again
from skills.services.labels import production_falls_back
from skills.services.uploads import skill_version_upload

_ZIP_TIME = (2025, 1, 1, 0, 0, 0)
# Versions a deletion leaves where they are: no load or review can reach them again.
_FINAL = frozenset({VersionStatus.REVOKED, VersionStatus.REJECTED})
# The versions whose successor a deletion proposes: the ones someone used or was working on.
_SUPERSEDED = frozenset(
    {
        VersionStatus.DRAFT,
        VersionStatus.IN_REVIEW,
        VersionStatus.APPROVED,
        VersionStatus.PUBLISHED,
        VersionStatus.DEPRECATED,
    }
)
DELETION_ACTOR = "deletion"


@dataclass
class VersionsForgotten:
    scrubbed: list[str] = field(default_factory=list)  # "<slug> v<number>"
    revoked: list[str] = field(default_factory=list)
    proposed: list[str] = field(default_factory=list)


def _scrubber(words: re.Pattern[str]) -> Callable[[str], str]:
    return lambda text: words.sub(QUOTE_MARK, text)


def _scrub_json(value: Any, scrub: Callable[[str], str]) -> Any:
    if isinstance(value, str):
        return scrub(value)
    if isinstance(value, dict):
        return {scrub(key): _scrub_json(item, scrub) for key, item in value.items()}
    if isinstance(value, list):
        return [_scrub_json(item, scrub) for item in value]
    return value


def _scrub_bytes(content: bytes, words: re.Pattern[str]) -> bytes:
    try:
        return words.sub(QUOTE_MARK, content.decode("utf-8")).encode("utf-8")
    except UnicodeDecodeError:
        # A binary file: the words' own bytes, ignoring case only where ASCII has one.
        raw = re.compile(words.pattern.encode("utf-8"), re.IGNORECASE)
        return raw.sub(QUOTE_MARK.encode(), content)


def _drafted_from(*, tenant_id: int, claim_ids: list[str]) -> set[int]:
    return set(
        DraftSource.objects.filter(tenant_id=tenant_id, claim_id__in=claim_ids).values_list(
            "version_id", flat=True
        )
    )


def _holding_versions(*, tenant_id: int, drafted: set[int], terms: list[str]) -> list[int]:
    """The versions drafted from a forgotten claim or holding one of the words anywhere."""
    held = Q(pk__in=drafted)
    if terms:
        regex = word_regex(terms)
        # Bytes cannot be matched ignoring case in SQL: the prefilter reads the file as
        # escaped text (non-ASCII bytes become \\ooo) and also looks for each word's exact
        # UTF-8 bytes; the scrub itself decodes the file and matches as the probes do.
        files = SkillFile.objects.filter(tenant_id=tenant_id, version=OuterRef("pk")).extra(
            where=[
                "(encode(content, 'escape') ~* %s OR EXISTS (SELECT 1 FROM unnest(%s::text[]) "
                "AS w(word) WHERE position(convert_to(w.word, 'UTF8') IN content) > 0))"
            ],
            params=[regex, terms],
        )
        held |= Q(body__iregex=regex) | Q(Exists(files))
        held |= Q(pk__in=_manifest_holding(tenant_id=tenant_id, regex=regex))
    return list(
        SkillVersion.objects.filter(held, tenant_id=tenant_id)
        .order_by("skill_id", "number")
        .values_list("pk", flat=True)
    )


def _manifest_holding(*, tenant_id: int, regex: str) -> list[int]:
    return list(
        SkillVersion.objects.filter(tenant_id=tenant_id)
        .extra(where=["manifest::text ~* %s"], params=[regex])
        .values_list("pk", flat=True)
    )


def _scrub_version(version: SkillVersion, words: re.Pattern[str], *, whole: bool, now: Any) -> bool:
    """Replace the words in the version's body, manifest and files. True if any held one.

    `whole`: the version was drafted from a forgotten memory, so any line of it may be
    that memory's, distinctive word or not: its body and files are replaced whole.
    """
    scrub = _scrubber(words)
    changed = False
    body = QUOTE_MARK if whole else scrub(version.body)
    manifest = _scrub_json(version.manifest, scrub)
    if (body, manifest) != (version.body, version.manifest):
        SkillVersion.objects.filter(pk=version.pk).update(
            body=body, manifest=manifest, scrubbed_at=now
        )
        version.body, version.manifest = body, manifest
        changed = True
    for file in SkillFile.objects.filter(version=version):
        content = bytes(file.content)
        scrubbed = QUOTE_MARK.encode() if whole else _scrub_bytes(content, words)
        if scrubbed != content:
            SkillFile.objects.filter(pk=file.pk).update(
                content=scrubbed,
                sha256=hashlib.sha256(scrubbed).hexdigest(),
                size=len(scrubbed),
                scrubbed_at=now,
            )
            changed = True
    # The discovery vector encodes the version's words; a revoked version is not discovered.
    SkillEmbedding.objects.filter(version=version).delete()
    return changed


def _revoke(
    *, tenant: Tenant, version: SkillVersion, actor: Actor, reason: str, deletion_id: Any
) -> None:
    move_row(
        VERSION_MACHINE,
        version,
        to=VersionStatus.REVOKED,
        tenant=tenant,
        actor=actor,
        changes={"revoked_at": timezone.now(), "revoke_reason": reason},
    )
    move = production_falls_back(
        tenant=tenant, skill=version.skill, leaving=version, actor=actor, reason=reason
    )
    audit(
        tenant=tenant,
        actor=actor,
        verb="skill_version.revoked",
        version=version,
        reason=reason,
        data={
            "deletion": str(deletion_id) if deletion_id else None,
            "label_move": move.pk if move else None,
        },
    )


def _package(version: SkillVersion) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path, content in (
            SkillFile.objects.filter(version=version)
            .order_by("path")
            .values_list("path", "content")
        ):
            archive.writestr(zipfile.ZipInfo(path, date_time=_ZIP_TIME), bytes(content))
    return buffer.getvalue()


def _refused(
    *, tenant: Tenant, version: SkillVersion, actor: Actor, reason: str, deletion_id: Any, code: str
) -> None:
    audit(
        tenant=tenant,
        actor=actor,
        verb="skill_version.successor_refused",
        version=version,
        reason=reason,
        data={"deletion": str(deletion_id) if deletion_id else None, "code": code},
    )


def _successor_package(
    *, tenant: Tenant, version: SkillVersion, drafted: bool, forgotten: set[str]
) -> tuple[bytes, list[str]] | None:
    """A drafted version is drafted again from the memories that remain; any other is
    its scrubbed files. None when too few memories remain for a procedure."""
    if not drafted:
        return _package(version), []
    remaining = [
        str(claim_id)
        for claim_id in DraftSource.objects.filter(version=version, source_deleted_at__isnull=True)
        .order_by("id")
        .values_list("claim_id", flat=True)
        if str(claim_id) not in forgotten
    ]
    return draft_package_again(
        tenant=tenant,
        slug=version.skill.slug,
        description=str(version.manifest.get("description") or ""),
        claim_ids=remaining,
    )


def _propose_successor(
    *,
    tenant: Tenant,
    version: SkillVersion,
    actor: Actor,
    drafted: bool,
    forgotten: set[str],
    deletion_id: Any,
) -> SkillVersion | None:
    """Upload the package without the words as a draft; None if there is none to make or
    it no longer passes the upload checks."""
    made = _successor_package(tenant=tenant, version=version, drafted=drafted, forgotten=forgotten)
    if made is None:
        _refused(
            tenant=tenant,
            version=version,
            actor=actor,
            reason="too few of the memories it was drafted from remain for a procedure",
            deletion_id=deletion_id,
            code="too_few_sources",
        )
        return None
    data, sources = made
    try:
        with transaction.atomic():
            successor, _ = skill_version_upload(
                tenant=tenant, skill=version.skill, data=data, actor=actor
            )
    except Problem as problem:
        _refused(
            tenant=tenant,
            version=version,
            actor=actor,
            reason="the package without the words no longer passes the upload checks",
            deletion_id=deletion_id,
            code=problem.code,
        )
        return None
    # The lineage that is left: the memories that were not forgotten.
    DraftSource.objects.bulk_create(
        [DraftSource(tenant=tenant, version=successor, claim_id=claim) for claim in sources],
        ignore_conflicts=True,
    )
    audit(
        tenant=tenant,
        actor=actor,
        verb="skill_version.superseded_by_deletion",
        version=version,
        reason="a memory this version held was deleted; its successor is a draft without it",
        data={
            "deletion": str(deletion_id) if deletion_id else None,
            "successor": successor.number,
        },
    )
    return successor


def versions_forget(
    *, tenant_id: int, claim_ids: list[str], terms: list[str], deletion_id: Any
) -> VersionsForgotten:
    """Scrub, revoke and supersede the versions holding what a deletion forgets.

    Runs inside the deletion's transaction, after the drafts were flagged. Locks each
    skill before its versions, as every skill service does.
    """
    words = quotable_terms(terms)
    result = VersionsForgotten()
    drafted = _drafted_from(tenant_id=tenant_id, claim_ids=claim_ids)
    version_ids = _holding_versions(tenant_id=tenant_id, drafted=drafted, terms=words)
    if not version_ids:
        return result
    tenant = Tenant.objects.get(pk=tenant_id)
    actor = Actor.system(DELETION_ACTOR)
    pattern = word_pattern(words) if words else re.compile(r"(?!)")
    reason = f"deletion {deletion_id}: it held a deleted memory's words"
    newest_in_use: dict[int, SkillVersion] = {}
    forgotten = {str(claim_id) for claim_id in claim_ids}
    with transaction.atomic():
        for version in (
            SkillVersion.objects.filter(pk__in=version_ids)
            .select_related("skill")
            .order_by("skill_id", "number")
        ):
            # Skill first, then the version, as lock_version orders them.
            type(version.skill).objects.select_for_update().get(pk=version.skill_id)
            version = (
                SkillVersion.objects.select_for_update().select_related("skill").get(pk=version.pk)
            )
            label = f"{version.skill.slug} v{version.number}"
            whole = version.pk in drafted
            if _scrub_version(version, pattern, whole=whole, now=timezone.now()):
                result.scrubbed.append(label)
            if version.status in _SUPERSEDED:
                newest_in_use[version.skill_id] = version
            if version.status not in _FINAL:
                _revoke(
                    tenant=tenant,
                    version=version,
                    actor=actor,
                    reason=reason,
                    deletion_id=deletion_id,
                )
                result.revoked.append(label)
            bump_after_commit(version.skill)
        for version in newest_in_use.values():
            successor = _propose_successor(
                tenant=tenant,
                version=version,
                actor=actor,
                drafted=version.pk in drafted,
                forgotten=forgotten,
                deletion_id=deletion_id,
            )
            if successor is not None:
                result.proposed.append(f"{version.skill.slug} v{successor.number}")
    return result
