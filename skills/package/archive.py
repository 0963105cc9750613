"""Reading the zip safely: paths, layout, sizes, decompression, secrets and text.

The zip is read in memory only and nothing is ever extracted to disk, so a
hostile path (``../``, absolute, symlink) can do no harm here; it is still
rejected because agents that load the skill later may extract it, on any
system: a name Windows or macOS reads as another file, a device or a stream,
or one that shows a reviewer something other than what it is, is refused too.
"""

from __future__ import annotations

import hashlib
import io
import lzma
import posixpath
import re
import stat
import unicodedata
import zipfile
import zlib
from collections.abc import Iterable
from dataclasses import dataclass

from common.hidden_chars import has_hidden
from common.screen import find_secrets_in_text, text_of_file
from skills.package.errors import PackageError

SKILL_MD = "SKILL.md"
ALLOWED_ROOT_FILES = frozenset({SKILL_MD, "README.md", "LICENSE", "LICENSE.md", "LICENSE.txt"})
ALLOWED_FOLDERS = ("scripts", "references", "assets", "evals")
_DRIVE_LETTER = re.compile(r"[A-Za-z]:")
# Names Windows opens as devices whatever follows the first dot (`nul.txt` is NUL);
# the superscript digits count as digits there.
_WINDOWS_DEVICES = frozenset(
    {"con", "prn", "aux", "nul", "conin$", "conout$"}
    | {f"{port}{digit}" for port in ("com", "lpt") for digit in "0123456789\u00b9\u00b2\u00b3"}
)
# Control characters (C0, DEL, C1) and the Unicode line and paragraph separators.
_CONTROL_CATEGORIES = frozenset({"Cc", "Zl", "Zp"})

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
    *,
    data: bytes,
    max_file_bytes: int,
    max_total_bytes: int,
    max_files: int,
    max_compression_ratio: int,
    ratio_exempt_bytes: int,
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
        _check_one_spelling_per_file(info.filename for info in entries)
        paths = [info.filename for info in members]
        _require_root_skill_md(paths)
        for path in paths:
            _check_allowed(path)
        _check_declared_sizes(
            members, max_file_bytes=max_file_bytes, max_total_bytes=max_total_bytes
        )
        _check_compression(
            members,
            zip_bytes=len(data),
            max_ratio=max_compression_ratio,
            exempt_bytes=ratio_exempt_bytes,
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
    if any(unicodedata.category(char) in _CONTROL_CATEGORIES for char in name):
        return "contains control characters"
    if has_hidden(name):
        return (
            "contains characters that display as nothing or reorder the text (bidi "
            "controls, zero-width or tag characters), so it reads as another name"
        )
    if ":" in name:
        return "contains ':', which names an alternate data stream on Windows"
    segments = name.removesuffix("/").split("/")
    if ".." in segments:
        return "climbs out of the package with '..'"
    # Non-canonical spellings would let two names mean one file, and the
    # content hash must see one name per file.
    if any(segment in ("", ".") for segment in segments):
        return "contains an empty or '.' path segment"
    for segment in segments:
        if segment.endswith((".", " ")):
            return f"has {segment!r}, ending in a dot or space that Windows drops"
        if segment.split(".", 1)[0].rstrip(" ").casefold() in _WINDOWS_DEVICES:
            return f"has {segment!r}, a device name on Windows"
    return None


def _caseless(name: str) -> str:
    # Unicode's canonical caseless match: what case-insensitive, normalising
    # file systems (Windows, macOS) treat as one name.
    return unicodedata.normalize("NFD", unicodedata.normalize("NFD", name).casefold())


def _check_one_spelling_per_file(names: Iterable[str]) -> None:
    """Refuse two spellings of one file or folder (`Run.sh`/`run.sh`, NFC/NFD).

    Extracted where names fold, one would overwrite the other, so the files an
    agent runs would not be the files that were reviewed.
    """
    spellings: dict[str, str] = {}
    for name in names:
        segments = name.removesuffix("/").split("/")
        for depth in range(1, len(segments) + 1):
            spelling = "/".join(segments[:depth])
            first = spellings.setdefault(_caseless(spelling), spelling)
            if first != spelling:
                raise PackageError(
                    code="path_unsafe",
                    detail=f"The zip entries {first!r} and {spelling!r} differ only in case "
                    "or Unicode normalisation, so they are one file on Windows and macOS. "
                    "Rename one of them.",
                    path=name,
                )


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


def _check_compression(
    members: list[zipfile.ZipInfo], *, zip_bytes: int, max_ratio: int, exempt_bytes: int
) -> None:
    """Refuse a file, or a package, that unpacks to more than `max_ratio` times its
    compressed size, once it unpacks to more than `exempt_bytes`.

    Text compresses tenfold, rarely a hundredfold; beyond that the zip is built to
    cost memdesk far more to read than it cost to send. The package is measured
    against the bytes uploaded, so entries that share compressed data count once.
    """
    for info in members:
        if info.file_size > exempt_bytes and info.file_size > max_ratio * info.compress_size:
            raise PackageError(
                code="compression_ratio_exceeded",
                detail=f"{info.filename} unpacks to {info.file_size} bytes from "
                f"{info.compress_size}; above {exempt_bytes} bytes a file may unpack to at "
                f"most {max_ratio} times its compressed size.",
                path=info.filename,
            )
    total = sum(info.file_size for info in members)
    if total > exempt_bytes and total > max_ratio * zip_bytes:
        raise PackageError(
            code="compression_ratio_exceeded",
            detail=f"The package unpacks to {total} bytes from a {zip_bytes}-byte zip; above "
            f"{exempt_bytes} bytes a package may unpack to at most {max_ratio} times its size.",
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
