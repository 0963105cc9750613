"""Parse and check an uploaded skill package before it becomes a SkillVersion.

A package is a zip whose root holds ``SKILL.md`` (YAML frontmatter + markdown
body) and optionally ``scripts/``, ``references/``, ``assets/``, ``evals/``,
``README.md`` and a licence file. ``parse_package`` either returns a ``ParsedPackage`` or
raises ``PackageError`` with a stable ``code``; the API turns that into a
``400`` problem.

Each concern has its module: ``archive`` reads the zip (paths, layout, sizes,
secrets, text), ``manifest`` parses SKILL.md, ``capabilities`` inspects
scripts, ``budget`` bounds the inspection, ``errors`` holds ``PackageError``
and its codes; ``diffs`` compares two versions for review.

Checks run in this order, and the first failure wins (members are visited in
path order, so the same zip always fails the same way):

1. ``package_invalid``: not a zip, corrupt, encrypted, duplicate paths.
2. ``package_too_large``: more than ``max_files`` files.
3. ``path_unsafe``: absolute, ``..``, backslash, drive letter, ``:``, control,
   bidi, zero-width or tag characters, empty or ``.`` segments, a segment
   ending in a dot or space, Windows device names (``CON``, ``nul.txt``,
   ``COM1``), symlink entries, two names for one file once case and Unicode
   normalisation are folded (``Run.sh``/``run.sh``).
4. ``skill_md_missing``: no ``SKILL.md`` at the root.
5. ``file_not_allowed``: anything outside the layout above.
6. ``file_too_large`` / ``package_too_large``: declared sizes over the limits;
   ``compression_ratio_exceeded``: a file, or the package, unpacking to more than
   ``max_compression_ratio`` times its compressed size (beyond
   ``ratio_exempt_bytes``).
7. ``package_invalid``: a member that does not decompress to its declared size.
8. ``secret_detected``: a credential in any file; files that are not UTF-8
   are read as UTF-16 (with a byte-order mark) or Latin-1 for the scan.
9. ``file_not_allowed``: a file outside ``assets/`` that is not UTF-8 text.
10. ``frontmatter_invalid`` / ``spec_violation`` / ``name_mismatch``: the
    manifest. ``spec_violation`` names the Agent Skills rule broken (``field``
    and ``rule``: name format and length, description and compatibility
    length, metadata of strings, allowed-tools syntax).
10a. ``evals_invalid``: ``evals/evals.json`` (see ``evals``).
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

import hashlib
from dataclasses import dataclass
from typing import Any

from skills.package.archive import (
    SKILL_MD,
    PackageFile,
    decode_texts,
    read_files,
    reject_secrets,
)
from skills.package.budget import Deadline, ScanBudget, check_text_budget
from skills.package.capabilities import reject_undeclared_capabilities
from skills.package.evals import parse_evals
from skills.package.manifest import parse_skill_md


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


def parse_package(
    *,
    data: bytes,
    slug: str,
    max_file_bytes: int = 1_000_000,
    max_total_bytes: int = 10_000_000,
    max_files: int = 500,
    max_compression_ratio: int = 100,
    ratio_exempt_bytes: int = 300_000,
    budget: ScanBudget | None = None,
) -> ParsedPackage:
    """Check the zip in ``data`` as the package of skill ``slug`` and parse it.

    Raises ``PackageError``; see the module docstring for the codes and the
    order in which they are checked.
    """
    budget = budget or ScanBudget()
    deadline = Deadline(budget.max_seconds)
    files = read_files(
        data=data,
        max_file_bytes=max_file_bytes,
        max_total_bytes=max_total_bytes,
        max_files=max_files,
        max_compression_ratio=max_compression_ratio,
        ratio_exempt_bytes=ratio_exempt_bytes,
    )
    reject_secrets(files)
    deadline.check()
    texts = decode_texts(files)
    check_text_budget(texts, budget=budget)
    deadline.check()
    manifest, body = parse_skill_md(texts[SKILL_MD], slug=slug)
    manifest["evals"] = parse_evals(texts, slug=slug)
    reject_undeclared_capabilities(
        texts, declared=frozenset(manifest["capabilities"]), budget=budget, deadline=deadline
    )
    listing = "".join(f"{file.path}\t{file.sha256}\n" for file in files)
    return ParsedPackage(
        manifest=manifest,
        body=body,
        files=files,
        content_hash="sha256:" + hashlib.sha256(listing.encode("utf-8")).hexdigest(),
    )
