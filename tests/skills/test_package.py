"""skills.package: parsing and checking skill zips, and diffing versions. No database."""

from __future__ import annotations

import hashlib
import io
import stat
import struct
import zipfile
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from skills.package import parse_package
from skills.package.capabilities import FILESYSTEM_WRITE, NETWORK
from skills.package.errors import PackageError

SLUG = "pdf-tools"
AWS_KEY = "AKIAIOSFODNN7EXAMPLE"
PRIVATE_KEY = (
    "-----BEGIN RSA PRIVATE KEY-----\n"
    "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun\n"
    "-----END RSA PRIVATE KEY-----\n"
)


def skill_md(*, body: str = "# PDF tools\n\nFill in PDF forms.\n", **fields: object) -> str:
    meta = {"name": SLUG, "description": "Fill in PDF forms.", **fields}
    return "---\n" + yaml.safe_dump(meta, sort_keys=False) + "---\n" + body


def build_zip(
    files: dict[str, str | bytes],
    *,
    order: list[str] | None = None,
    date_time: tuple[int, int, int, int, int, int] = (2024, 1, 1, 0, 0, 0),
    compression: int = zipfile.ZIP_DEFLATED,
) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for path in order or list(files):
            info = zipfile.ZipInfo(path, date_time=date_time)
            info.compress_type = compression
            archive.writestr(info, files[path])
    return buffer.getvalue()


def parse(files: dict[str, str | bytes], *, slug: str = SLUG, **limits: Any):
    return parse_package(data=build_zip(files), slug=slug, **limits)


# What the Agent Skills fields and memdesk's newer extensions read as when a package omits them.
SPEC_DEFAULTS: dict[str, Any] = {
    "license": None,
    "compatibility": None,
    "metadata": {},
    "allowed_tools": [],
    "tools": [],
    "credentials": [],
    "consumes": [],
    "produces": [],
    "evals": [],
}


def rejection(files: dict[str, str | bytes], **limits: Any) -> PackageError:
    with pytest.raises(PackageError) as caught:
        parse(files, **limits)
    return caught.value


def rejection_of(data: bytes) -> PackageError:
    with pytest.raises(PackageError) as caught:
        parse_package(data=data, slug=SLUG)
    return caught.value


# Offsets of a field inside the local file header and the central directory
# header, used to forge headers that zipfile would never write.
_LOCAL = (b"PK\x03\x04", 26, 30)  # signature, name-length offset, name offset
_CENTRAL = (b"PK\x01\x02", 28, 46)
_FIELDS = {"flags": ("<H", 6, 8), "size": ("<I", 22, 24)}


def forge_header(data: bytes, path: str, *, field: str, value: int) -> bytes:
    forged = bytearray(data)
    fmt, local_offset, central_offset = _FIELDS[field]
    name = path.encode()
    for (signature, length_at, name_at), offset in (
        (_LOCAL, local_offset),
        (_CENTRAL, central_offset),
    ):
        start = forged.find(signature)
        while start != -1:
            (length,) = struct.unpack_from("<H", forged, start + length_at)
            if forged[start + name_at : start + name_at + length] == name:
                struct.pack_into(fmt, forged, start + offset, value)
            start = forged.find(signature, start + 1)
    return bytes(forged)


def valid_files() -> dict[str, str | bytes]:
    return {
        "SKILL.md": skill_md(
            version="1.2.0",
            risk="medium",
            capabilities=[FILESYSTEM_WRITE, NETWORK],
            triggers=["fill a pdf form"],
            inputs={"pdf": "path to the form"},
            outputs=["filled pdf"],
            dependencies=["pypdf", {"name": "qpdf", "version": "11", "sha256": "AB" * 32}],
            homepage="https://example.com/pdf-tools",
        ),
        "scripts/fill.py": (
            "import requests\n\n"
            "def fill(url, out):\n"
            "    with open(out, 'wb') as fh:\n"
            "        fh.write(requests.get(url, timeout=5).content)\n"
        ),
        "references/forms.md": "# Forms\n\nField names are case-sensitive.\n",
        "assets/logo.png": b"\x89PNG\r\n\x1a\n\x00\xff\xfe binary",
        "README.md": "Read me.\n",
        "LICENSE": "MIT\n",
    }


# --- a valid package ----------------------------------------------------------


def test_it_parses_a_valid_package():
    parsed = parse(valid_files())

    assert parsed.manifest == {
        "name": SLUG,
        "description": "Fill in PDF forms.",
        "version": "1.2.0",
        "risk": "medium",
        "capabilities": [FILESYSTEM_WRITE, NETWORK],
        "triggers": ["fill a pdf form"],
        "inputs": {"pdf": "path to the form"},
        "outputs": ["filled pdf"],
        "dependencies": [
            {"name": "pypdf"},
            {"name": "qpdf", "version": "11", "sha256": "sha256:" + "ab" * 32},
        ],
        "extra": {"homepage": "https://example.com/pdf-tools"},
        **SPEC_DEFAULTS,
    }
    assert parsed.body == "# PDF tools\n\nFill in PDF forms.\n"


def test_it_lists_every_file_sorted_with_digest_and_size():
    files = valid_files()
    parsed = parse(files)

    assert [file.path for file in parsed.files] == sorted(files)
    for file in parsed.files:
        raw = files[file.path]
        content = raw if isinstance(raw, bytes) else raw.encode()
        assert file.content == content
        assert file.size == len(content)
        assert file.sha256 == hashlib.sha256(content).hexdigest()


def test_it_computes_the_content_hash_as_documented():
    parsed = parse(valid_files())

    listing = "".join(f"{file.path}\t{file.sha256}\n" for file in parsed.files)
    assert parsed.content_hash == "sha256:" + hashlib.sha256(listing.encode()).hexdigest()


def test_it_fills_manifest_defaults():
    parsed = parse({"SKILL.md": skill_md()})

    assert parsed.manifest == {
        "name": SLUG,
        "description": "Fill in PDF forms.",
        "version": None,
        "risk": "low",
        "capabilities": [],
        "triggers": [],
        "inputs": [],
        "outputs": [],
        "dependencies": [],
        "extra": {},
        **SPEC_DEFAULTS,
    }
    assert [file.path for file in parsed.files] == ["SKILL.md"]


def test_it_reads_null_optional_fields_as_not_given():
    parsed = parse(
        {"SKILL.md": "---\nname: pdf-tools\ndescription: d\nrisk:\ncapabilities:\n---\n"}
    )

    assert parsed.manifest["risk"] == "low"
    assert parsed.manifest["capabilities"] == []


def test_it_sorts_and_deduplicates_capabilities():
    parsed = parse({"SKILL.md": skill_md(capabilities=["network", "email:send", "network"])})

    assert parsed.manifest["capabilities"] == ["email:send", "network"]


def test_it_reads_an_integer_version_as_a_string():
    parsed = parse({"SKILL.md": "---\nname: pdf-tools\ndescription: d\nversion: 2\n---\n"})

    assert parsed.manifest["version"] == "2"


def test_it_stores_yaml_dates_as_iso_strings():
    parsed = parse(
        {"SKILL.md": "---\nname: pdf-tools\ndescription: d\nreleased: 2024-05-01\n---\n"}
    )

    assert parsed.manifest["extra"] == {"released": "2024-05-01"}


def test_it_accepts_a_byte_order_mark_and_crlf_line_ends():
    text = "\ufeff---\r\nname: pdf-tools\r\ndescription: d\r\n---\r\nBody\r\n"

    parsed = parse({"SKILL.md": text.encode()})

    assert parsed.manifest["name"] == SLUG
    assert parsed.body == "Body\r\n"


def test_it_ignores_directory_entries():
    files = {"SKILL.md": skill_md(), "scripts/": "", "scripts/run.sh": "echo hi\n"}

    parsed = parse(files)

    assert [file.path for file in parsed.files] == ["SKILL.md", "scripts/run.sh"]


def test_it_accepts_binary_assets():
    parsed = parse({"SKILL.md": skill_md(), "assets/font.ttf": bytes(range(256))})

    assert parsed.files[1].content == bytes(range(256))


# --- content hash -----------------------------------------------------------


def test_content_hash_ignores_zip_order_timestamps_and_compression():
    files = valid_files()
    first = parse_package(data=build_zip(files), slug=SLUG)
    second = parse_package(
        data=build_zip(
            files,
            order=sorted(files, reverse=True),
            date_time=(2031, 12, 24, 18, 30, 0),
            compression=zipfile.ZIP_STORED,
        ),
        slug=SLUG,
    )

    assert first.content_hash == second.content_hash
    assert first.files == second.files


def test_content_hash_changes_with_a_file_content():
    files = valid_files()
    changed = {**files, "references/forms.md": "# Forms\n\nField names are not case-sensitive.\n"}

    assert parse(files).content_hash != parse(changed).content_hash


def test_content_hash_changes_with_a_file_path():
    files = valid_files()
    moved = {**files}
    moved["references/fields.md"] = moved.pop("references/forms.md")

    assert parse(files).content_hash != parse(moved).content_hash


@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_content_hash_is_independent_of_member_order(data):
    references = data.draw(
        st.dictionaries(
            st.from_regex(r"references/[a-z]{1,8}\.md", fullmatch=True),
            st.text(alphabet="abc xyz\n", max_size=40),
            max_size=6,
        )
    )
    files: dict[str, str | bytes] = {"SKILL.md": skill_md(), **references}
    order = data.draw(st.permutations(list(files)))
    stamp = data.draw(st.tuples(st.integers(1980, 2100), st.integers(1, 12), st.integers(1, 28)))

    shuffled = parse_package(
        data=build_zip(files, order=order, date_time=(*stamp, 0, 0, 0)), slug=SLUG
    )

    assert shuffled.content_hash == parse(files).content_hash


# --- package_invalid ----------------------------------------------------------


@pytest.mark.parametrize("data", [b"", b"not a zip at all", b"PK\x03\x04 truncated"])
def test_it_rejects_data_that_is_not_a_zip(data):
    error = rejection_of(data)

    assert error.code == "package_invalid"
    assert "zip" in error.detail


def test_it_rejects_a_truncated_zip():
    data = build_zip(valid_files())

    assert rejection_of(data[: len(data) // 2]).code == "package_invalid"


def test_it_rejects_a_member_whose_bytes_do_not_match_its_checksum():
    data = build_zip(
        {"SKILL.md": skill_md(), "references/a.md": "original text\n"},
        compression=zipfile.ZIP_STORED,
    )

    error = rejection_of(data.replace(b"original text", b"tampered text"))

    assert error.code == "package_invalid"
    assert error.path == "references/a.md"


def test_it_rejects_a_member_whose_header_understates_its_size():
    # A zip bomb announces a few bytes and inflates to gigabytes; only the
    # declared bytes are ever decompressed and the checksum then fails.
    data = build_zip({"SKILL.md": skill_md(), "assets/bomb.bin": bytes(1_000_000)})

    error = rejection_of(forge_header(data, "assets/bomb.bin", field="size", value=10))

    assert error.code == "package_invalid"
    assert error.path == "assets/bomb.bin"


def test_it_rejects_duplicate_paths():
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive, pytest.warns(UserWarning, match="Duplicate"):
        archive.writestr("SKILL.md", skill_md())
        archive.writestr("scripts/run.sh", "echo one\n")
        archive.writestr("scripts/run.sh", "echo two\n")

    error = rejection_of(buffer.getvalue())

    assert error.code == "package_invalid"
    assert error.path == "scripts/run.sh"
    assert "more than once" in error.detail


def test_it_rejects_encrypted_members():
    data = build_zip({"SKILL.md": skill_md(), "references/a.md": "text\n"})

    error = rejection_of(forge_header(data, "references/a.md", field="flags", value=0x1))

    assert error.code == "package_invalid"
    assert "encrypted" in error.detail


def test_it_rejects_a_python_script_that_does_not_parse():
    error = rejection({"SKILL.md": skill_md(), "scripts/run.py": "def broken(:\n"})

    assert error.code == "package_invalid"
    assert error.path == "scripts/run.py"
    assert "line 1" in error.detail


# --- path_unsafe ----------------------------------------------------------------


def test_it_rejects_path_traversal():
    error = rejection({"SKILL.md": skill_md(), "../evil": "x"})

    assert error.code == "path_unsafe"
    assert error.path == "../evil"


def test_it_rejects_an_absolute_path():
    error = rejection({"SKILL.md": skill_md(), "/etc/cron.d/evil": "x"})

    assert error.code == "path_unsafe"
    assert error.path == "/etc/cron.d/evil"


def test_it_rejects_a_symlink_entry():
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("SKILL.md", skill_md())
        link = zipfile.ZipInfo("references/passwd")
        link.create_system = 3
        link.external_attr = (stat.S_IFLNK | 0o777) << 16
        archive.writestr(link, "/etc/passwd")

    error = rejection_of(buffer.getvalue())

    assert error.code == "path_unsafe"
    assert error.path == "references/passwd"
    assert "symbolic link" in error.detail


@pytest.mark.parametrize(
    "path",
    [
        "scripts/../../evil.sh",
        "scripts\\evil.py",
        "C:/Windows/evil.txt",
        "scripts/./run.sh",
        "scripts//run.sh",
        "references/a\tb.md",
        "references/a\nb.md",
    ],
)
def test_it_rejects_unsafe_or_ambiguous_paths(path):
    error = rejection({"SKILL.md": skill_md(), path: "x"})

    assert error.code == "path_unsafe"
    assert error.path == path


# --- skill_md_missing -------------------------------------------------------


def test_it_rejects_a_package_without_skill_md():
    error = rejection({"references/a.md": "text\n"})

    assert error.code == "skill_md_missing"
    assert error.path is None


def test_it_rejects_skill_md_inside_a_wrapping_folder():
    error = rejection({"pdf-tools/SKILL.md": skill_md(), "pdf-tools/scripts/run.sh": "echo\n"})

    assert error.code == "skill_md_missing"
    assert error.path == "pdf-tools/SKILL.md"
    assert "root" in error.detail
    assert "contents of the skill folder" in error.detail


def test_it_rejects_a_lowercase_skill_md():
    error = rejection({"skill.md": skill_md()})

    assert error.code == "skill_md_missing"
    assert "exactly SKILL.md" in error.detail


# --- file_not_allowed -------------------------------------------------------------


@pytest.mark.parametrize("path", ["notes.txt", "src/main.py", "__MACOSX/._SKILL.md", "scripts"])
def test_it_rejects_files_outside_the_layout(path):
    error = rejection({"SKILL.md": skill_md(), path: "x"})

    assert error.code == "file_not_allowed"
    assert error.path == path


def test_it_rejects_binary_files_outside_assets():
    error = rejection({"SKILL.md": skill_md(), "references/manual.pdf": b"%PDF-1.7\n\xff\xfe\x00"})

    assert error.code == "file_not_allowed"
    assert error.path == "references/manual.pdf"
    assert "UTF-8" in error.detail


# --- file_too_large / package_too_large -------------------------------------


def test_it_rejects_a_file_over_the_size_limit():
    error = rejection(
        {"SKILL.md": skill_md(), "assets/big.bin": bytes(2_001)}, max_file_bytes=2_000
    )

    assert error.code == "file_too_large"
    assert error.path == "assets/big.bin"
    assert "2001" in error.detail


def test_it_rejects_a_highly_compressed_file_by_its_declared_size():
    data = build_zip({"SKILL.md": skill_md(), "assets/zeros.bin": bytes(5_000_000)})
    assert len(data) < 50_000

    with pytest.raises(PackageError) as caught:
        parse_package(data=data, slug=SLUG, max_file_bytes=1_000_000)

    assert caught.value.code == "file_too_large"


def test_it_rejects_a_package_over_the_total_limit():
    files = {"SKILL.md": skill_md(), "assets/a.bin": bytes(600), "assets/b.bin": bytes(600)}

    error = rejection(files, max_total_bytes=1_000)

    assert error.code == "package_too_large"


def test_it_rejects_too_many_files():
    files = {"SKILL.md": skill_md(), **{f"references/{i}.md": "x\n" for i in range(3)}}

    error = rejection(files, max_files=3)

    assert error.code == "package_too_large"
    assert "4 files" in error.detail


def test_it_does_not_count_directory_entries_as_files():
    files = {"SKILL.md": skill_md(), "references/": "", "references/a.md": "x\n"}

    assert len(parse(files, max_files=2).files) == 2


# --- secret_detected ------------------------------------------------------------


def test_it_detects_an_aws_key_in_a_script():
    script = f'import os\n\nKEY = "{AWS_KEY}"\n'

    error = rejection({"SKILL.md": skill_md(), "scripts/upload.py": script})

    assert error.code == "secret_detected"
    assert error.path == "scripts/upload.py"
    assert "line 3" in error.detail
    assert "AWS" in error.detail
    assert AWS_KEY not in error.detail


def test_it_detects_a_private_key_in_a_reference():
    reference = "# Setup\n\nPaste this:\n\n" + PRIVATE_KEY

    error = rejection({"SKILL.md": skill_md(), "references/setup.md": reference})

    assert error.code == "secret_detected"
    assert error.path == "references/setup.md"
    assert "line 5" in error.detail
    assert "PRIVATE KEY-----" not in error.detail


def test_it_detects_a_secret_in_skill_md():
    error = rejection({"SKILL.md": skill_md(body=f"Use key {AWS_KEY}.\n")})

    assert error.code == "secret_detected"
    assert error.path == "SKILL.md"


def test_it_checks_secrets_before_echoing_frontmatter_errors():
    error = rejection({"SKILL.md": f"---\n{AWS_KEY}: [\n---\n"})

    assert error.code == "secret_detected"


# --- frontmatter_invalid / name_mismatch ----------------------------------------


# --- capability_undeclared --------------------------------------------------------


# --- manifest_diff --------------------------------------------------------------


# --- files_unified_diff -----------------------------------------------------------


# --- PackageError -------------------------------------------------------------------
