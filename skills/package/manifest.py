"""SKILL.md: its YAML frontmatter parsed safely and normalised into the stored manifest."""

from __future__ import annotations

import math
import re
from datetime import date
from typing import Any

import yaml

from skills.package.archive import SKILL_MD
from skills.package.errors import PackageError

RISK_LEVELS = ("low", "medium", "high")
# The Agent Skills format's own fields (agentskills.io/specification), as
# written in the frontmatter; `allowed-tools` is stored as `allowed_tools`.
SPEC_FIELDS = ("name", "description", "license", "compatibility", "metadata", "allowed-tools")
# memdesk's extensions, read from the top level as the first agent API contract promised before the
# Agent Skills format settled; everything else lands in `extra`.
MEMDESK_FIELDS = (
    "version",
    "risk",
    "capabilities",
    "triggers",
    "inputs",
    "outputs",
    "dependencies",
    "credentials",
    "consumes",
    "produces",
)
MANIFEST_FIELDS = (*SPEC_FIELDS, *MEMDESK_FIELDS)
NAME_MAX = 64
DESCRIPTION_MAX = 1024
COMPATIBILITY_MAX = 500
_SPEC_NAME = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
TOOL_NAME = re.compile(r"[A-Za-z0-9_.:-]{1,100}")
# `Bash(git:*)` grants a tool with an argument pattern; the tool is `Bash`.
_ALLOWED_TOOL = re.compile(TOOL_NAME.pattern + r"(?:\([^()\s]{0,200}\))?")
SLOT_PATTERN = re.compile(r"[a-z][a-z0-9_]{0,63}")
# A data label: what the data is, and optionally how far it may travel.
DATA_CLASSES = ("public", "internal", "private")
_DATA_LABEL = re.compile(r"([a-z][a-z0-9_-]{0,63})(?::(" + "|".join(DATA_CLASSES) + r"))?")
_SHA256 = re.compile(r"(?:sha256:)?([0-9a-fA-F]{64})")
_DEPENDENCY_KEYS = frozenset({"name", "version", "sha256"})


class _FrontmatterLoader(yaml.SafeLoader):
    """SafeLoader that refuses aliases and duplicate keys.

    Aliases allow exponential "billion laughs" expansion once the manifest is
    walked or serialised; duplicate keys are resolved differently by different
    YAML parsers, so a reviewer could approve one value and an agent load another.
    """

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            raise yaml.composer.ComposerError(
                None, None, "aliases (*name) are not allowed", self.peek_event().start_mark
            )
        return super().compose_node(parent, index)

    def construct_mapping(self, node: Any, deep: bool = False) -> Any:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            if isinstance(key_node, yaml.ScalarNode):
                key = self.construct_object(key_node)
                if key in seen:
                    raise yaml.constructor.ConstructorError(
                        None, None, f"duplicate key {key!r}", key_node.start_mark
                    )
                seen.add(key)
        return super().construct_mapping(node, deep=deep)


def parse_skill_md(text: str, *, slug: str) -> tuple[dict[str, Any], str]:
    # python-frontmatter reports a missing block as empty metadata; parsing by
    # hand lets the detail tell "no frontmatter" apart from "missing name".
    lines = text.removeprefix("\ufeff").splitlines(keepends=True)
    if not lines or lines[0].rstrip() != "---":
        raise _frontmatter_invalid(
            "SKILL.md must start with YAML frontmatter: a '---' line, the fields "
            "(name, description, ...), and a closing '---' line."
        )
    closing = next((i for i in range(1, len(lines)) if lines[i].rstrip() == "---"), None)
    if closing is None:
        raise _frontmatter_invalid(
            "The SKILL.md frontmatter is never closed; end it with a '---' line."
        )
    try:
        # _FrontmatterLoader is a SafeLoader subclass; ruff cannot see that.
        meta = yaml.load("".join(lines[1:closing]), Loader=_FrontmatterLoader)  # noqa: S506
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at SKILL.md line {mark.line + 2}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or "syntax error"
        raise _frontmatter_invalid(
            f"The SKILL.md frontmatter is not valid YAML{where}: {problem}."
        ) from exc
    except RecursionError as exc:
        raise _frontmatter_invalid("The SKILL.md frontmatter is nested too deeply.") from exc
    if not isinstance(meta, dict):
        raise _frontmatter_invalid(
            "The SKILL.md frontmatter must be a YAML mapping of fields such as name: and "
            "description:."
        )
    try:
        plain = _plain(meta, field="")
    except RecursionError as exc:
        raise _frontmatter_invalid("The SKILL.md frontmatter is nested too deeply.") from exc
    return _normalise_manifest(plain, slug=slug), "".join(lines[closing + 1 :])


def _plain(value: Any, *, field: str) -> Any:
    """Turn YAML values into JSON ones; the manifest is stored as JSON."""
    if isinstance(value, dict):
        result: dict[str, Any] = {}
        for key, item in value.items():
            if not isinstance(key, str):
                where = f" in `{field}`" if field else ""
                raise _frontmatter_invalid(
                    f"The frontmatter key {key!r}{where} is not a string; quote it."
                )
            result[key] = _plain(item, field=f"{field}.{key}" if field else key)
        return result
    if isinstance(value, list):
        return [_plain(item, field=f"{field}[{i}]") for i, item in enumerate(value)]
    if isinstance(value, float) and not math.isfinite(value):
        raise _frontmatter_invalid(f"`{field}` is not a finite number.")
    if value is None or isinstance(value, str | int | float):
        return value
    if isinstance(value, date):
        return value.isoformat()
    raise _frontmatter_invalid(
        f"`{field}` holds a YAML {type(value).__name__}, which memdesk cannot store; "
        "use strings, numbers, lists and mappings."
    )


def _normalise_manifest(meta: dict[str, Any], *, slug: str) -> dict[str, Any]:
    for field in ("name", "description"):
        value = meta.get(field)
        if not isinstance(value, str) or not value.strip():
            raise _frontmatter_invalid(
                f"The SKILL.md frontmatter needs `{field}` as a non-empty string."
            )
    _check_spec_fields(meta)
    if meta["name"] != slug:
        raise PackageError(
            code="name_mismatch",
            detail=f"SKILL.md names the skill {meta['name']!r}, but it is being uploaded to "
            f"{slug!r}. Set `name: {slug}` or upload it to the skill of that name.",
            path=SKILL_MD,
        )
    risk = _optional(meta, "risk", "low")
    if risk not in RISK_LEVELS:
        raise _frontmatter_invalid("`risk` must be one of low, medium, high.")
    capabilities = _optional(meta, "capabilities", [])
    if not isinstance(capabilities, list) or not all(
        isinstance(cap, str) and cap.strip() for cap in capabilities
    ):
        raise _frontmatter_invalid(
            "`capabilities` must be a list of strings, e.g. [network, filesystem:write]."
        )
    triggers = _optional(meta, "triggers", [])
    if not isinstance(triggers, list):
        raise _frontmatter_invalid("`triggers` must be a list.")
    io_fields = {field: _optional(meta, field, []) for field in ("inputs", "outputs")}
    for field, value in io_fields.items():
        if not isinstance(value, list | dict):
            raise _frontmatter_invalid(f"`{field}` must be a list or a mapping.")
    allowed_tools = _allowed_tools(meta.get("allowed-tools"))
    return {
        "name": meta["name"],
        "description": meta["description"],
        "license": meta.get("license"),
        "compatibility": meta.get("compatibility"),
        "metadata": meta.get("metadata") or {},
        "allowed_tools": allowed_tools,
        # The tools an agent must have to run the skill: each allowed tool's name.
        "tools": sorted({tool_name(entry) for entry in allowed_tools}),
        "version": _version(meta.get("version"), field="version"),
        "risk": risk,
        "capabilities": sorted(set(capabilities)),
        "triggers": triggers,
        "inputs": io_fields["inputs"],
        "outputs": io_fields["outputs"],
        "dependencies": _dependencies(_optional(meta, "dependencies", [])),
        "credentials": _credentials(_optional(meta, "credentials", [])),
        "consumes": _data_labels(_optional(meta, "consumes", []), field="consumes"),
        "produces": _data_labels(_optional(meta, "produces", []), field="produces"),
        "extra": {key: value for key, value in meta.items() if key not in MANIFEST_FIELDS},
    }


def _check_spec_fields(meta: dict[str, Any]) -> None:
    """The Agent Skills rules, one clear problem per violation."""
    name, description = meta["name"], meta["description"]
    if len(name) > NAME_MAX:
        raise _spec_violation(
            "name", "name_length", f"`name` is {len(name)} characters; at most {NAME_MAX}."
        )
    if not _SPEC_NAME.fullmatch(name):
        raise _spec_violation(
            "name",
            "name_format",
            "`name` must be lowercase letters, digits and single hyphens, neither starting "
            "nor ending with a hyphen (e.g. pdf-tools).",
        )
    if len(description) > DESCRIPTION_MAX:
        raise _spec_violation(
            "description",
            "description_length",
            f"`description` is {len(description)} characters; at most {DESCRIPTION_MAX}. "
            "Say what the skill does and when to use it; the body holds the rest.",
        )
    license_ = meta.get("license")
    if license_ is not None and (not isinstance(license_, str) or not license_.strip()):
        raise _spec_violation(
            "license", "license_type", "`license` must be a licence name or a file name."
        )
    compatibility = meta.get("compatibility")
    if compatibility is not None and (
        not isinstance(compatibility, str)
        or not compatibility.strip()
        or len(compatibility) > COMPATIBILITY_MAX
    ):
        raise _spec_violation(
            "compatibility",
            "compatibility_length",
            f"`compatibility` must be text of 1 to {COMPATIBILITY_MAX} characters.",
        )
    metadata = meta.get("metadata")
    if metadata is not None and (
        not isinstance(metadata, dict)
        or not all(isinstance(value, str) for value in metadata.values())
    ):
        raise _spec_violation(
            "metadata",
            "metadata_strings",
            "`metadata` must map string keys to string values; quote numbers and put "
            "memdesk's lists (capabilities, credentials…) at the top level.",
        )


def tool_name(entry: str) -> str:
    """`Bash(git:*)` → `Bash`: the tool an `allowed-tools` entry needs."""
    return entry.partition("(")[0]


def _allowed_tools(value: Any) -> list[str]:
    if value is None:
        return []
    # The format writes a space-separated string; a YAML list is read the same way.
    entries = value.split() if isinstance(value, str) else value
    if not isinstance(entries, list) or not all(
        isinstance(entry, str) and _ALLOWED_TOOL.fullmatch(entry) for entry in entries
    ):
        raise _spec_violation(
            "allowed-tools",
            "allowed_tools_format",
            "`allowed-tools` is a space-separated list of tool names, each optionally with "
            "an argument pattern, e.g. `Read Bash(git:*)`.",
        )
    return list(dict.fromkeys(entries))


def _credentials(value: Any) -> list[dict[str, str]]:
    """Named credential slots: what the skill needs, never a value."""
    if not isinstance(value, list):
        raise _frontmatter_invalid("`credentials` must be a list of slots.")
    slots: dict[str, dict[str, str]] = {}
    for index, item in enumerate(value):
        field = f"credentials[{index}]"
        if isinstance(item, str):
            item = {"slot": item}
        if not isinstance(item, dict):
            raise _frontmatter_invalid(f"`{field}` must be a slot name or a mapping.")
        unknown = sorted(item.keys() - {"slot", "purpose"})
        if unknown:
            # A `value:` here would be a credential written into the package.
            raise _frontmatter_invalid(
                f"`{field}` has unknown keys {', '.join(unknown)}; a slot has only `slot` "
                "and `purpose`. Credentials are bound at instantiation, never written here."
            )
        slot, purpose = item.get("slot"), item.get("purpose", "")
        if not isinstance(slot, str) or not SLOT_PATTERN.fullmatch(slot):
            raise _frontmatter_invalid(
                f"`{field}.slot` must be a lowercase name of letters, digits and underscores."
            )
        if not isinstance(purpose, str) or len(purpose) > 200:
            raise _frontmatter_invalid(f"`{field}.purpose` must be text of at most 200 characters.")
        if slot in slots:
            raise _frontmatter_invalid(f"`{field}` repeats the slot {slot!r}.")
        slots[slot] = {"slot": slot, "purpose": purpose}
    return sorted(slots.values(), key=lambda slot: slot["slot"])


def _data_labels(value: Any, *, field: str) -> list[str]:
    if not isinstance(value, list) or not all(
        isinstance(label, str) and _DATA_LABEL.fullmatch(label) for label in value
    ):
        raise _frontmatter_invalid(
            f"`{field}` must be a list of data labels such as `documents` or "
            f"`documents:internal` (classes: {', '.join(DATA_CLASSES)})."
        )
    return sorted(set(value))


def _optional(meta: dict[str, Any], field: str, default: Any) -> Any:
    # `risk:` with nothing after it is YAML null; read it as "not given".
    value = meta.get(field)
    return default if value is None else value


def _version(value: Any, *, field: str) -> str | None:
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if isinstance(value, float):
        raise _frontmatter_invalid(
            f"`{field}` reads as the number {value!r} and would lose digits (1.10 becomes "
            f'1.1); quote it, e.g. {field}: "1.10".'
        )
    raise _frontmatter_invalid(f"`{field}` must be a string.")


def _dependencies(value: Any) -> list[dict[str, str]]:
    if not isinstance(value, list):
        raise _frontmatter_invalid("`dependencies` must be a list.")
    result = []
    for index, item in enumerate(value):
        field = f"dependencies[{index}]"
        if isinstance(item, str):
            item = {"name": item}
        if not isinstance(item, dict):
            raise _frontmatter_invalid(
                f"`{field}` must be a name or a mapping with name, version and sha256."
            )
        unknown = sorted(item.keys() - _DEPENDENCY_KEYS)
        if unknown:
            # A typo such as `sha265` would otherwise drop the pin silently.
            raise _frontmatter_invalid(
                f"`{field}` has unknown keys {', '.join(unknown)}; "
                "allowed are name, version, sha256."
            )
        name = item.get("name")
        if not isinstance(name, str) or not name.strip():
            raise _frontmatter_invalid(f"`{field}` needs `name` as a non-empty string.")
        dependency = {"name": name}
        version = _version(item.get("version"), field=f"{field}.version")
        if version is not None:
            dependency["version"] = version
        if item.get("sha256") is not None:
            match = _SHA256.fullmatch(str(item["sha256"]))
            if match is None:
                raise _frontmatter_invalid(
                    f"`{field}.sha256` must be 64 hex digits, optionally prefixed 'sha256:'."
                )
            dependency["sha256"] = "sha256:" + match.group(1).lower()
        result.append(dependency)
    return result


def _spec_violation(field: str, rule: str, detail: str) -> PackageError:
    return PackageError(
        code="spec_violation",
        detail=f"Agent Skills format: {detail}",
        path=SKILL_MD,
        field=field,
        rule=rule,
    )


def _frontmatter_invalid(detail: str) -> PackageError:
    return PackageError(code="frontmatter_invalid", detail=detail, path=SKILL_MD)
