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
MANIFEST_FIELDS = (
    "name",
    "description",
    "version",
    "risk",
    "capabilities",
    "triggers",
    "inputs",
    "outputs",
    "dependencies",
)
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
    return {
        "name": meta["name"],
        "description": meta["description"],
        "version": _version(meta.get("version"), field="version"),
        "risk": risk,
        "capabilities": sorted(set(capabilities)),
        "triggers": triggers,
        "inputs": io_fields["inputs"],
        "outputs": io_fields["outputs"],
        "dependencies": _dependencies(_optional(meta, "dependencies", [])),
        "extra": {key: value for key, value in meta.items() if key not in MANIFEST_FIELDS},
    }


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


def _frontmatter_invalid(detail: str) -> PackageError:
    return PackageError(code="frontmatter_invalid", detail=detail, path=SKILL_MD)
