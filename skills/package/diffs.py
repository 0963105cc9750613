"""What changed between two versions of a skill: manifest fields and unified file diffs."""

from __future__ import annotations

import difflib
from typing import Any

from skills.package.manifest import MANIFEST_FIELDS, RISK_LEVELS


def manifest_diff(*, old: dict[str, Any], new: dict[str, Any]) -> list[dict[str, Any]]:
    """List the manifest fields that differ between two normalised manifests.

    Each change is ``{"field", "old", "new", "flag"}``. Capabilities get one
    entry per capability added (``old`` None, ``new`` the capability, flag
    ``capability_added``) or removed (the reverse, ``capability_removed``),
    because a reviewer must see each new power separately. A risk change is
    flagged ``risk_raised`` or ``risk_lowered``; other fields have flag None.
    Keys under ``extra`` are compared one by one as ``extra.<key>``. Fields
    come in manifest order, then the rest sorted; unchanged fields are left out.
    """
    before, after = _flatten_manifest(old), _flatten_manifest(new)
    names = before.keys() | after.keys()
    ordered = [field for field in MANIFEST_FIELDS if field in names]
    ordered += sorted(names - set(MANIFEST_FIELDS))
    changes: list[dict[str, Any]] = []
    for field in ordered:
        old_value, new_value = before.get(field), after.get(field)
        if field == "capabilities":
            old_caps, new_caps = set(old_value or ()), set(new_value or ())
            changes += [
                {"field": field, "old": None, "new": cap, "flag": "capability_added"}
                for cap in sorted(new_caps - old_caps)
            ]
            changes += [
                {"field": field, "old": cap, "new": None, "flag": "capability_removed"}
                for cap in sorted(old_caps - new_caps)
            ]
        elif old_value != new_value:
            flag = _risk_flag(old_value, new_value) if field == "risk" else None
            changes.append({"field": field, "old": old_value, "new": new_value, "flag": flag})
    return changes


def files_unified_diff(
    *, old_files: dict[str, str], new_files: dict[str, str]
) -> list[dict[str, str]]:
    """Unified diffs of every file that differs, sorted by path.

    Each entry is ``{"path", "change": "added" | "removed" | "modified",
    "diff"}``. Headers follow git (``a/path``, ``b/path``, ``/dev/null`` for
    the missing side) and a last line without newline is marked
    ``\\ No newline at end of file``. Callers pass text; for binary files pass
    something textual, such as the digest.
    """
    changes: list[dict[str, str]] = []
    for path in sorted(old_files.keys() | new_files.keys()):
        old_text, new_text = old_files.get(path), new_files.get(path)
        if old_text == new_text:
            continue
        if old_text is None:
            change = "added"
        elif new_text is None:
            change = "removed"
        else:
            change = "modified"
        diff = difflib.unified_diff(
            _diff_lines(old_text),
            _diff_lines(new_text),
            fromfile="/dev/null" if old_text is None else f"a/{path}",
            tofile="/dev/null" if new_text is None else f"b/{path}",
        )
        changes.append({"path": path, "change": change, "diff": "".join(diff)})
    return changes


def _flatten_manifest(manifest: dict[str, Any]) -> dict[str, Any]:
    flat = {key: value for key, value in manifest.items() if key != "extra"}
    flat.update({f"extra.{key}": value for key, value in (manifest.get("extra") or {}).items()})
    return flat


def _risk_flag(old: Any, new: Any) -> str | None:
    if old not in RISK_LEVELS or new not in RISK_LEVELS:
        return None
    return "risk_raised" if RISK_LEVELS.index(new) > RISK_LEVELS.index(old) else "risk_lowered"


def _diff_lines(text: str | None) -> list[str]:
    if not text:
        return []
    lines = [line + "\n" for line in text.split("\n")]
    if text.endswith("\n"):
        lines.pop()
    else:
        # Carrying git's marker inside the last line makes "a" and "a\n"
        # differ in the diff exactly as they differ on disk.
        lines[-1] += "\\ No newline at end of file\n"
    return lines
