"""Reading the zip safely: paths, layout, sizes, decompression, secrets and text.

The zip is read in memory only and nothing is ever extracted to disk, so a
hostile path (``../``, absolute, symlink) can do no harm here; it is still
rejected because agents that load the skill later may extract it.
"""

from __future__ import annotations

import hashlib
import io
import lzma
import posixpath
import re
import stat
import zipfile
import zlib
from collections.abc import Iterable
from dataclasses import dataclass

from common.screen import find_secrets_in_text, text_of_file
from skills.package.errors import PackageError

SKILL_MD = "SKILL.md"
ALLOWED_ROOT_FILES = frozenset({SKILL_MD, "README.md", "LICENSE", "LICENSE.md", "LICENSE.txt"})
ALLOWED_FOLDERS = ("scripts", "references", "assets", "evals")
_DRIVE_LETTER = re.compile(r"[A-Za-z]:")

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


@dataclass(frozen=True)
class PackageFile:
    """One file of the package. ``sha256`` is the bare hex digest of ``content``."""

    path: str
    sha256: str
    size: int
    content: bytes


def read_files(
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
        "LICENSE at the root and anything under scripts/, references/, assets/ or evals/.",
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


def decode_texts(files: Iterable[PackageFile]) -> dict[str, str]:
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


def reject_secrets(files: Iterable[PackageFile]) -> None:
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
