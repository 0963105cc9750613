"""The repository stands alone: code and docs cite memdesk's own docs pages, and those exist.

Every `docs/<page>.md` named in a comment, docstring, template or page must be a
page of the site (a renamed page would leave readers at a dead end), and nothing
points at design notes kept outside the repository.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# Labelled corpora (.txt) are data, notes agents might write, not citations.
SOURCES = (
    "accounts",
    "bench",
    "clients",
    "common",
    "config",
    "docs",
    "examples",
    "memory",
    "reviews",
    "skills",
    "templates",
    "testing",
    "tests",
)
# The design notes' own file names are upper case; memdesk's pages are lower case.
OUTSIDE = re.compile(r"\b(?:DESIGN|STYLE|API)\.md\b|\b[Ss]eeds?\s+00\d\b|shared/design")
CITED_PAGE = re.compile(r"\bdocs/([a-z0-9-]+\.md)\b")


def _files() -> list[Path]:
    found = [ROOT / "README.md"]
    for top in SOURCES:
        found += [
            path
            for path in (ROOT / top).rglob("*")
            if path.suffix in {".py", ".md", ".html", ".toml"}
            and "__pycache__" not in path.parts
            and path != Path(__file__)
        ]
    return found


def test_nothing_points_outside_the_repository():
    offenders = [
        f"{path.relative_to(ROOT)}: {match.group()}"
        for path in _files()
        for match in OUTSIDE.finditer(path.read_text(errors="replace"))
    ]
    assert offenders == []


def test_every_cited_docs_page_exists():
    pages = {page.name for page in (ROOT / "docs").glob("*.md")}
    cited = {
        (str(path.relative_to(ROOT)), page)
        for path in _files()
        for page in CITED_PAGE.findall(path.read_text(errors="replace"))
    }
    assert len(cited) > 20  # the check reads real citations
    assert sorted(c for c in cited if c[1] not in pages) == []


def test_every_page_is_in_the_site_navigation():
    navigation = (ROOT / "mkdocs.yml").read_text()
    pages = sorted(page.name for page in (ROOT / "docs").glob("*.md"))
    assert [page for page in pages if f": {page}" not in navigation] == []
