"""Parse and check an uploaded skill package before it becomes a SkillVersion.

A package is a zip whose root holds ``SKILL.md`` (YAML frontmatter + markdown
body) and optionally ``scripts/``, ``references/``, ``assets/``, ``README.md``
and a licence file. ``parse_package`` either returns a ``ParsedPackage`` or
raises ``PackageError`` with a stable ``code``; the API turns that into a
``400`` problem.

The zip is read in memory only and nothing is ever extracted to disk, so a
hostile path (``../``, absolute, symlink) can do no harm here; it is still
rejected because agents that load the skill later may extract it.

Checks run in this order, and the first failure wins (members are visited in
path order, so the same zip always fails the same way):

1. ``package_invalid``: not a zip, corrupt, encrypted, duplicate paths.
2. ``package_too_large``: more than ``max_files`` files.
3. ``path_unsafe``: absolute, ``..``, backslash, drive letter, control
   characters, empty or ``.`` segments, symlink entries.
4. ``skill_md_missing``: no ``SKILL.md`` at the root.
5. ``file_not_allowed``: anything outside the layout above.
6. ``file_too_large`` / ``package_too_large``: declared sizes over the limits.
7. ``package_invalid``: a member that does not decompress to its declared size.
8. ``secret_detected``: a credential in any file; files that are not UTF-8
   are read as UTF-16 (with a byte-order mark) or Latin-1 for the scan.
9. ``file_not_allowed``: a file outside ``assets/`` that is not UTF-8 text.
10. ``frontmatter_invalid`` / ``name_mismatch``: the manifest.
11. ``capability_undeclared``: a script under ``scripts/`` that evidently uses
    a capability in ``DETECTABLE_CAPABILITIES`` the manifest does not declare.

Scanning is bounded by a ``ScanBudget`` (text lines, script size, AST nodes
and depth, wall time); a package beyond it fails with ``scan_budget_exceeded``
wherever the budget runs out, so hostile input costs seconds, never a worker.
``HTTP_STATUS`` gives the status the API answers for each code.

Secrets are scanned before the frontmatter is parsed so that no error detail
(YAML errors quote the offending key) can echo a credential back.
"""

from __future__ import annotations

import ast
import difflib
import hashlib
import io
import lzma
import math
import posixpath
import re
import shlex
import stat
import time
import zipfile
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import date
from typing import Any

import yaml

from common.screen import find_secrets_in_text, text_of_file

ERROR_CODES = frozenset(
    {
        "package_invalid",
        "package_too_large",
        "path_unsafe",
        "skill_md_missing",
        "file_not_allowed",
        "file_too_large",
        "secret_detected",
        "frontmatter_invalid",
        "name_mismatch",
        "capability_undeclared",
        "scan_budget_exceeded",
    }
)
# Size limits are 413 (the upload is too big), a scan that would cost too much
# is 422 (the content is refused), everything else is 400.
HTTP_STATUS = {"package_too_large": 413, "file_too_large": 413, "scan_budget_exceeded": 422}

SKILL_MD = "SKILL.md"
ALLOWED_ROOT_FILES = frozenset({SKILL_MD, "README.md", "LICENSE", "LICENSE.md", "LICENSE.txt"})
ALLOWED_FOLDERS = ("scripts", "references", "assets")
RISK_LEVELS = ("low", "medium", "high")

NETWORK = "network"
FILESYSTEM_WRITE = "filesystem:write"
# The capabilities memdesk can spot by reading a script. Declaring any other
# capability is allowed; memdesk just cannot check it statically.
DETECTABLE_CAPABILITIES = frozenset({NETWORK, FILESYSTEM_WRITE})

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

# A module counts as network access when it is one of these or inside one.
# urllib.parse is left out on purpose: quoting a URL is not a request.
_PY_NETWORK_MODULES = (
    "aiohttp",
    "ftplib",
    "http.client",
    "httpx",
    "imaplib",
    "poplib",
    "requests",
    "smtplib",
    "socket",
    "telnetlib",
    "urllib.request",
    "urllib3",
)
_PY_WRITE_CALLS = frozenset(
    {
        "os.link",
        "os.makedirs",
        "os.mkdir",
        "os.mkfifo",
        "os.remove",
        "os.removedirs",
        "os.rename",
        "os.renames",
        "os.replace",
        "os.rmdir",
        "os.symlink",
        "os.truncate",
        "os.unlink",
        "shutil.copy",
        "shutil.copy2",
        "shutil.copyfile",
        "shutil.copytree",
        "shutil.make_archive",
        "shutil.move",
        "shutil.rmtree",
        "shutil.unpack_archive",
    }
)
# Method names that write whatever object they are called on (pathlib.Path in
# practice). rename/replace are missing because str.replace and
# DataFrame.rename would flag nearly every script; os.rename/os.replace and
# shutil.move are caught as qualified calls above.
_PY_WRITE_METHODS = frozenset(
    {"hardlink_to", "mkdir", "rmdir", "symlink_to", "touch", "unlink", "write_bytes", "write_text"}
)
# open-like calls whose mode is the second positional argument.
_PY_OPEN_CALLS = frozenset({"open", "io.open", "codecs.open"})
_PY_DYNAMIC_IMPORTS = frozenset({"__import__", "importlib.import_module"})
# Calls whose first argument is a shell command line or argv list.
_PY_SHELL_CALLS = frozenset(
    {
        "os.popen",
        "os.system",
        "subprocess.Popen",
        "subprocess.call",
        "subprocess.check_call",
        "subprocess.check_output",
        "subprocess.getoutput",
        "subprocess.getstatusoutput",
        "subprocess.run",
    }
)
_PY_WRITE_MODE = re.compile(r"[rbtU]*[wax+][rwaxbtU+]*(?::\w*)?")

_SHELL_SUFFIXES = (".sh", ".bash", ".zsh", ".ksh")
_SHELL_SHEBANG = re.compile(r"\b(?:ba|da|k|z)?sh\b")
_SHELL_NETWORK_COMMANDS = frozenset(
    {"curl", "wget", "nc", "ncat", "netcat", "ssh", "scp", "sftp", "telnet", "ftp"}
)
_SHELL_WRITE_COMMANDS = frozenset(
    {"rm", "mv", "cp", "tee", "mkdir", "rmdir", "touch", "ln", "dd", "truncate"}
)
_SHELL_NETWORK_DEVICES = ("/dev/tcp/", "/dev/udp/")
_SHELL_WRITE_REDIRECTS = frozenset({">", ">>", ">|", "&>", "&>>"})
_SHELL_HARMLESS_TARGETS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr"})
_BIN_DIRS = frozenset({"/bin", "/sbin", "/usr/bin", "/usr/sbin", "/usr/local/bin"})

_DRIVE_LETTER = re.compile(r"[A-Za-z]:")
_SHA256 = re.compile(r"(?:sha256:)?([0-9a-fA-F]{64})")
_DEPENDENCY_KEYS = frozenset({"name", "version", "sha256"})

# Everything zipfile and its decompressors raise on damaged input. Encryption
# (RuntimeError) is checked up front from the header flags instead.
_ZIP_ERRORS = (
    zipfile.BadZipFile,
    zlib.error,
    lzma.LZMAError,
    EOFError,
    OSError,
    ValueError,
    NotImplementedError,
)


class PackageError(Exception):
    """A package memdesk refuses, with a stable ``code`` and a ``detail`` for people.

    ``detail`` says what is wrong and what to do; it never quotes a secret.
    ``path`` is the offending member inside the zip, when there is one.
    """

    def __init__(self, *, code: str, detail: str, path: str | None = None) -> None:
        if code not in ERROR_CODES:
            raise ValueError(f"unknown package error code {code!r}")
        super().__init__(detail)
        self.code = code
        self.detail = detail
        self.path = path


@dataclass(frozen=True)
class PackageFile:
    """One file of the package. ``sha256`` is the bare hex digest of ``content``."""

    path: str
    sha256: str
    size: int
    content: bytes


@dataclass(frozen=True)
class ParsedPackage:
    """A package that passed every check.

    ``content_hash`` identifies the package by content alone (not zip order,
    timestamps or compression): ``"sha256:"`` + the hex SHA-256 of the UTF-8
    text made of one line ``f"{path}\\t{file_sha256_hex}\\n"`` per file,
    files sorted by path in code point order. Paths cannot contain tabs or
    newlines (``path_unsafe``), so the listing is unambiguous.
    """

    manifest: dict[str, Any]
    body: str
    files: tuple[PackageFile, ...]
    content_hash: str


@dataclass(frozen=True)
class ScanBudget:
    """What one package may cost to inspect, beyond the size limits.

    ``max_text_lines``: lines of text over all files (the secret scan's cost
    grows with lines). ``max_script_bytes``: a Python script parsed for its
    capabilities. ``max_ast_nodes`` / ``max_ast_depth``: its syntax tree.
    ``max_seconds``: wall time of the whole inspection.
    """

    max_text_lines: int = 20_000
    max_script_bytes: int = 256_000
    max_ast_nodes: int = 100_000
    max_ast_depth: int = 100
    max_seconds: float = 10.0


class _Deadline:
    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.at = time.monotonic() + seconds

    def check(self, path: str | None = None) -> None:
        if time.monotonic() > self.at:
            raise _over_budget(
                f"Inspecting the package took longer than {self.seconds:g} seconds.", path
            )


def _over_budget(detail: str, path: str | None = None) -> PackageError:
    return PackageError(
        code="scan_budget_exceeded",
        detail=f"{detail} memdesk inspects every file before a version can be stored; "
        "split the skill or shrink the files and upload again.",
        path=path,
    )


@dataclass(frozen=True)
class _Finding:
    capability: str
    line: int
    evidence: str


def parse_package(
    *,
    data: bytes,
    slug: str,
    max_file_bytes: int = 1_000_000,
    max_total_bytes: int = 10_000_000,
    max_files: int = 500,
    budget: ScanBudget | None = None,
) -> ParsedPackage:
    """Check the zip in ``data`` as the package of skill ``slug`` and parse it.

    Raises ``PackageError``; see the module docstring for the codes and the
    order in which they are checked.
    """
    budget = budget or ScanBudget()
    deadline = _Deadline(budget.max_seconds)
    files = _read_files(
        data=data,
        max_file_bytes=max_file_bytes,
        max_total_bytes=max_total_bytes,
        max_files=max_files,
    )
    _reject_secrets(files)
    deadline.check()
    texts = _decode_texts(files)
    _check_text_budget(texts, budget=budget)
    deadline.check()
    manifest, body = _parse_skill_md(texts[SKILL_MD], slug=slug)
    _reject_undeclared_capabilities(
        texts, declared=frozenset(manifest["capabilities"]), budget=budget, deadline=deadline
    )
    listing = "".join(f"{file.path}\t{file.sha256}\n" for file in files)
    return ParsedPackage(
        manifest=manifest,
        body=body,
        files=files,
        content_hash="sha256:" + hashlib.sha256(listing.encode("utf-8")).hexdigest(),
    )


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


# --- reading the zip -------------------------------------------------------


def _read_files(
    *, data: bytes, max_file_bytes: int, max_total_bytes: int, max_files: int
) -> tuple[PackageFile, ...]:
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except _ZIP_ERRORS as exc:
        raise PackageError(
            code="package_invalid",
            detail="The upload is not a readable zip archive. Upload the skill as a .zip file.",
        ) from exc
    with archive:
        entries = sorted(archive.infolist(), key=lambda info: info.filename)
        members = [info for info in entries if not info.is_dir()]
        if len(members) > max_files:
            raise PackageError(
                code="package_too_large",
                detail=f"The package holds {len(members)} files; the limit is {max_files}.",
            )
        seen: set[str] = set()
        for info in entries:
            _check_entry(info)
            if info.filename in seen:
                raise PackageError(
                    code="package_invalid",
                    detail=f"{info.filename} appears more than once in the zip. "
                    "Rebuild the zip so that every path occurs once.",
                    path=info.filename,
                )
            seen.add(info.filename)
        paths = [info.filename for info in members]
        _require_root_skill_md(paths)
        for path in paths:
            _check_allowed(path)
        _check_declared_sizes(
            members, max_file_bytes=max_file_bytes, max_total_bytes=max_total_bytes
        )
        return tuple(_read_member(archive, info) for info in members)


def _check_entry(info: zipfile.ZipInfo) -> None:
    name = info.filename
    problem = _path_problem(name)
    if problem is None and stat.S_ISLNK(info.external_attr >> 16):
        problem = "is a symbolic link; packages may hold regular files only"
    if problem is not None:
        raise PackageError(
            code="path_unsafe",
            detail=f"The zip entry {name!r} {problem}. Rebuild the zip from a plain folder.",
            path=name,
        )
    if info.flag_bits & 0x1:
        raise PackageError(
            code="package_invalid",
            detail=f"{name} is encrypted. Upload the zip without a password.",
            path=name,
        )


def _path_problem(name: str) -> str | None:
    if not name:
        return "has an empty path"
    if name.startswith("/"):
        return "has an absolute path"
    if "\\" in name:
        return "contains a backslash; use '/' between folders"
    if _DRIVE_LETTER.match(name):
        return "starts with a drive letter"
    if any(ord(char) < 32 or char == "\x7f" for char in name):
        return "contains control characters"
    segments = name.removesuffix("/").split("/")
    if ".." in segments:
        return "climbs out of the package with '..'"
    # Non-canonical spellings would let two names mean one file, and the
    # content hash must see one name per file.
    if any(segment in ("", ".") for segment in segments):
        return "contains an empty or '.' path segment"
    return None


def _require_root_skill_md(paths: list[str]) -> None:
    if SKILL_MD in paths:
        return
    near = [path for path in paths if posixpath.basename(path).casefold() == "skill.md"]
    found = f"Found {near[0]}, but " if near else ""
    raise PackageError(
        code="skill_md_missing",
        detail=f"{found}memdesk needs a file named exactly SKILL.md at the root of the zip "
        "(not inside a folder: a wrapping folder is not unwrapped). "
        "Zip the contents of the skill folder, not the folder itself.",
        path=near[0] if near else None,
    )


def _check_allowed(path: str) -> None:
    folder, _, rest = path.partition("/")
    if path in ALLOWED_ROOT_FILES or (folder in ALLOWED_FOLDERS and rest):
        return
    raise PackageError(
        code="file_not_allowed",
        detail=f"{path} is outside the package layout. Allowed are SKILL.md, README.md and "
        "LICENSE at the root and anything under scripts/, references/ or assets/.",
        path=path,
    )


def _check_declared_sizes(
    members: list[zipfile.ZipInfo], *, max_file_bytes: int, max_total_bytes: int
) -> None:
    total = 0
    for info in members:
        if info.file_size > max_file_bytes:
            raise PackageError(
                code="file_too_large",
                detail=f"{info.filename} is {info.file_size} bytes; the limit per file is "
                f"{max_file_bytes} bytes. Shrink it or keep it outside the package.",
                path=info.filename,
            )
        total += info.file_size
    if total > max_total_bytes:
        raise PackageError(
            code="package_too_large",
            detail=f"The package unpacks to {total} bytes; the limit is {max_total_bytes} bytes.",
        )


def _read_member(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> PackageFile:
    # The sizes were checked from the headers; reading at most one byte more
    # than declared keeps memory bounded even if a header lies (zip bombs),
    # and the comparison below catches the lie.
    try:
        with archive.open(info) as stream:
            content = stream.read(info.file_size + 1)
    except _ZIP_ERRORS as exc:
        raise PackageError(
            code="package_invalid",
            detail=f"{info.filename} cannot be decompressed; the zip is damaged. "
            "Rebuild it and upload again.",
            path=info.filename,
        ) from exc
    if len(content) != info.file_size:
        raise PackageError(
            code="package_invalid",
            detail=f"{info.filename} does not match the size its zip header declares. "
            "Rebuild the zip and upload again.",
            path=info.filename,
        )
    return PackageFile(
        path=info.filename,
        sha256=hashlib.sha256(content).hexdigest(),
        size=len(content),
        content=content,
    )


def _decode_texts(files: Iterable[PackageFile]) -> dict[str, str]:
    texts: dict[str, str] = {}
    for file in files:
        try:
            texts[file.path] = file.content.decode("utf-8")
        except UnicodeDecodeError as exc:
            # Images and fonts are hashed but can be neither scanned nor
            # diffed, so binary content is confined to assets/.
            if file.path.startswith("assets/"):
                continue
            raise PackageError(
                code="file_not_allowed",
                detail=f"{file.path} is not UTF-8 text. Only files under assets/ may be binary.",
                path=file.path,
            ) from exc
    return texts


def _reject_secrets(files: Iterable[PackageFile]) -> None:
    # Every file, binary ones too: a key in a non-UTF-8 asset is still a key.
    # Skills are instructions by nature, so they are screened for secrets only.
    for file in files:
        findings = find_secrets_in_text(text_of_file(file.content))
        if findings:
            first = findings[0]
            raise PackageError(
                code="secret_detected",
                detail=f"{file.path} line {first.line} holds what looks like a {first.kind}. "
                "Remove it and have the skill read credentials from its environment at run "
                "time; memdesk never stores secrets.",
                path=file.path,
            )


# --- SKILL.md --------------------------------------------------------------


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


def _parse_skill_md(text: str, *, slug: str) -> tuple[dict[str, Any], str]:
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


# --- capabilities used by scripts -------------------------------------------
# Static inspection is a tripwire for the evident cases (an import, a write
# call, a curl); it is not a sandbox. Review and the evaluation matrix cover
# what a determined script could hide.


def _check_text_budget(texts: dict[str, str], *, budget: ScanBudget) -> None:
    lines = 0
    for path, text in texts.items():
        lines += text.count("\n") + 1
        if lines > budget.max_text_lines:
            raise _over_budget(
                f"The package holds more than {budget.max_text_lines} lines of text.", path
            )


def _reject_undeclared_capabilities(
    texts: dict[str, str],
    *,
    declared: frozenset[str],
    budget: ScanBudget | None = None,
    deadline: _Deadline | None = None,
) -> None:
    budget = budget or ScanBudget()
    deadline = deadline or _Deadline(budget.max_seconds)
    for path, text in texts.items():
        if not path.startswith("scripts/"):
            continue
        deadline.check(path)
        undeclared: dict[str, _Finding] = {}
        findings = _inspect_script(path, text, budget=budget, deadline=deadline)
        for finding in sorted(findings, key=lambda f: f.line):
            if finding.capability not in declared:
                undeclared.setdefault(finding.capability, finding)
        if undeclared:
            uses = " and ".join(
                f"{cap} ({finding.evidence}, line {finding.line})"
                for cap, finding in sorted(undeclared.items())
            )
            raise PackageError(
                code="capability_undeclared",
                detail=f"{path} uses {uses}, which the manifest does not declare. Add "
                f"{', '.join(sorted(undeclared))} to `capabilities` in SKILL.md or remove the "
                "call.",
                path=path,
            )


def _inspect_script(
    path: str, text: str, *, budget: ScanBudget, deadline: _Deadline
) -> list[_Finding]:
    first_line = text.partition("\n")[0]
    shebang = first_line if first_line.startswith("#!") else ""
    if path.endswith(".py") or "python" in shebang:
        return _inspect_python(path, text, budget=budget, deadline=deadline)
    # Redirections only mean something in shell; in other languages `>` is
    # mostly a comparison, so only command names are matched there.
    is_shell = path.endswith(_SHELL_SUFFIXES) or bool(_SHELL_SHEBANG.search(shebang))
    return [
        _Finding(capability, number, evidence)
        for number, line in enumerate(text.splitlines(), start=1)
        for capability, evidence in _shell_capabilities(_shell_tokens(line), redirects=is_shell)
    ]


def _shell_tokens(line: str) -> list[str]:
    lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
    try:
        return list(lexer)
    except ValueError:
        # An unbalanced quote usually opens a multi-line string; plain words
        # still let the line be inspected.
        return line.split()


def _shell_capabilities(tokens: list[str], *, redirects: bool) -> Iterator[tuple[str, str]]:
    for index, token in enumerate(tokens):
        directory, base = posixpath.split(token)
        command = base if directory in _BIN_DIRS else token
        if command in _SHELL_NETWORK_COMMANDS:
            yield NETWORK, command
        elif token.startswith(_SHELL_NETWORK_DEVICES):
            yield NETWORK, f"/dev/{token.split('/')[2]} redirection"
        elif command in _SHELL_WRITE_COMMANDS:
            yield FILESYSTEM_WRITE, command
        elif redirects and token in _SHELL_WRITE_REDIRECTS:
            target = tokens[index + 1] if index + 1 < len(tokens) else ""
            if target not in _SHELL_HARMLESS_TARGETS:
                yield FILESYSTEM_WRITE, f"'{token}' redirection to a file"


def _inspect_python(
    path: str, text: str, *, budget: ScanBudget, deadline: _Deadline
) -> list[_Finding]:
    size = len(text.encode("utf-8"))
    if size > budget.max_script_bytes:
        raise _over_budget(
            f"{path} is {size} bytes; Python scripts are inspected up to "
            f"{budget.max_script_bytes} bytes.",
            path,
        )
    try:
        tree = ast.parse(text, filename=path)
    except (MemoryError, RecursionError) as exc:
        # CPython's parser gives up on deeply nested expressions (a long chain
        # of unary or binary operators) with one of these.
        raise _over_budget(f"{path} nests expressions too deeply to inspect.", path) from exc
    except (SyntaxError, ValueError) as exc:
        line = getattr(exc, "lineno", None)
        where = f" (line {line})" if line else ""
        raise PackageError(
            code="package_invalid",
            detail=f"{path} does not parse as Python 3{where}. memdesk inspects every script "
            "before it can be published; fix the script and upload again.",
            path=path,
        ) from exc
    _check_tree_budget(path, tree, budget=budget, deadline=deadline)
    aliases = _import_aliases(tree)
    findings: list[_Finding] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            modules = [
                node.module if alias.name == "*" else f"{node.module}.{alias.name}"
                for alias in node.names
            ]
        elif isinstance(node, ast.Call):
            findings += _inspect_python_call(node, aliases)
            continue
        else:
            continue
        findings += [
            _Finding(NETWORK, node.lineno, f"import of {network}")
            for network in map(_network_module, modules)
            if network
        ]
    return findings


def _check_tree_budget(
    path: str, tree: ast.AST, *, budget: ScanBudget, deadline: _Deadline
) -> None:
    # Iterative, so a deep tree cannot exhaust the stack while being measured.
    stack: list[tuple[ast.AST, int]] = [(tree, 1)]
    nodes = 0
    while stack:
        node, depth = stack.pop()
        nodes += 1
        if nodes > budget.max_ast_nodes:
            raise _over_budget(
                f"{path} has more than {budget.max_ast_nodes} syntax nodes to inspect.", path
            )
        if depth > budget.max_ast_depth:
            raise _over_budget(
                f"{path} nests code more than {budget.max_ast_depth} levels deep.", path
            )
        if nodes % 5_000 == 0:
            deadline.check(path)
        stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node))


def _import_aliases(tree: ast.AST) -> dict[str, str]:
    """Map local names to what they import, so `from os import remove as rm` is seen.

    Scopes are ignored: a script rebinding an imported name is rare, and
    erring towards a finding is the safe side.
    """
    aliases: dict[str, str] = {}
    known = _PY_WRITE_CALLS | _PY_SHELL_CALLS | _PY_OPEN_CALLS | _PY_DYNAMIC_IMPORTS
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            aliases.update({alias.asname: alias.name for alias in node.names if alias.asname})
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                if alias.name == "*":
                    prefix = node.module + "."
                    aliases.update(
                        {
                            name.removeprefix(prefix): name
                            for name in known
                            if name.startswith(prefix)
                        }
                    )
                else:
                    aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return aliases


def _qualified_name(func: ast.expr, aliases: dict[str, str]) -> str | None:
    parts: list[str] = []
    while isinstance(func, ast.Attribute):
        parts.append(func.attr)
        func = func.value
    if not isinstance(func, ast.Name):
        return None
    parts.append(aliases.get(func.id, func.id))
    return ".".join(reversed(parts))


def _network_module(module: str) -> str | None:
    return next(
        (
            network
            for network in _PY_NETWORK_MODULES
            if module == network or module.startswith(network + ".")
        ),
        None,
    )


def _inspect_python_call(call: ast.Call, aliases: dict[str, str]) -> list[_Finding]:
    name = _qualified_name(call.func, aliases)
    method = call.func.attr if isinstance(call.func, ast.Attribute) else None
    first = call.args[0] if call.args else None
    findings: list[_Finding] = []
    if name in _PY_WRITE_CALLS:
        findings.append(_Finding(FILESYSTEM_WRITE, call.lineno, f"{name}()"))
    elif method in _PY_WRITE_METHODS:
        findings.append(_Finding(FILESYSTEM_WRITE, call.lineno, f".{method}()"))
    # open(file, mode) takes the mode second; Path.open(mode) first, and
    # tarfile/gzip/zipfile .open(name, mode) second again.
    if name in _PY_OPEN_CALLS:
        positions: tuple[int, ...] = (1,)
    elif method == "open":
        positions = (0, 1)
    else:
        positions = ()
    if positions and _opens_for_writing(call, positions=positions):
        findings.append(_Finding(FILESYSTEM_WRITE, call.lineno, "open() for writing"))
    if name in _PY_DYNAMIC_IMPORTS and isinstance(first, ast.Constant):
        network = _network_module(str(first.value))
        if network:
            findings.append(_Finding(NETWORK, call.lineno, f"import of {network}"))
    if name in _PY_SHELL_CALLS and first is not None:
        findings += [
            _Finding(capability, call.lineno, f"{evidence} via {name}()")
            for capability, evidence in _python_shell_capabilities(first)
        ]
    return findings


def _opens_for_writing(call: ast.Call, *, positions: tuple[int, ...]) -> bool:
    candidates = [call.args[i] for i in positions if i < len(call.args)]
    candidates += [keyword.value for keyword in call.keywords if keyword.arg == "mode"]
    return any(
        isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and _PY_WRITE_MODE.fullmatch(node.value) is not None
        for node in candidates
    )


def _python_shell_capabilities(command: ast.expr) -> Iterator[tuple[str, str]]:
    if isinstance(command, ast.Constant) and isinstance(command.value, str):
        for line in command.value.splitlines():
            yield from _shell_capabilities(_shell_tokens(line), redirects=True)
    elif isinstance(command, ast.List | ast.Tuple):
        argv = [
            node.value
            for node in command.elts
            if isinstance(node, ast.Constant) and isinstance(node.value, str)
        ]
        # An argv list runs without a shell, so '>' in it is just an argument.
        yield from _shell_capabilities(argv, redirects=False)


# --- diffs -----------------------------------------------------------------


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
