"""SKILL.md's frontmatter: refused when missing, unparseable, without a required field,
named other than the skill, with invalid fields, or in YAML that cannot be reviewed as
JSON."""

from __future__ import annotations

import pytest

from tests.skills.test_package import SLUG, rejection, skill_md


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("# No frontmatter\n", "must start with YAML frontmatter"),
        ("---\nname: pdf-tools\ndescription: d\n", "never closed"),
        ("---\n---\nbody\n", "mapping"),
        ("---\n- name\n- description\n---\n", "mapping"),
        ("---\nname: [pdf-tools\ndescription: d\n---\n", "not valid YAML at SKILL.md line"),
    ],
)
def test_it_rejects_missing_or_unparseable_frontmatter(text, needle):
    error = rejection({"SKILL.md": text})

    assert error.code == "frontmatter_invalid"
    assert error.path == "SKILL.md"
    assert needle in error.detail


@pytest.mark.parametrize(
    ("text", "field"),
    [
        ("---\ndescription: d\n---\n", "name"),
        ("---\nname: ''\ndescription: d\n---\n", "name"),
        ("---\nname: pdf-tools\n---\n", "description"),
        ("---\nname: pdf-tools\ndescription: [a, b]\n---\n", "description"),
    ],
)
def test_it_rejects_frontmatter_without_a_required_field(text, field):
    error = rejection({"SKILL.md": text})

    assert error.code == "frontmatter_invalid"
    assert f"`{field}`" in error.detail


def test_it_rejects_a_name_other_than_the_slug():
    error = rejection({"SKILL.md": skill_md(name="pdf-filler")})

    assert error.code == "name_mismatch"
    assert "pdf-filler" in error.detail
    assert f"name: {SLUG}" in error.detail


@pytest.mark.parametrize(
    ("fields", "needle"),
    [
        ({"risk": "extreme"}, "`risk`"),
        ({"capabilities": "network"}, "`capabilities`"),
        ({"capabilities": ["network", 7]}, "`capabilities`"),
        ({"triggers": "when asked"}, "`triggers`"),
        ({"inputs": "a pdf"}, "`inputs`"),
        ({"version": 1.1}, 'version: "1.10"'),
        ({"version": True}, "`version`"),
        ({"dependencies": {"pypdf": "4"}}, "`dependencies`"),
        ({"dependencies": [{"name": "pypdf", "sha265": "ab" * 32}]}, "sha265"),
        ({"dependencies": [{"name": "pypdf", "sha256": "abc"}]}, "64 hex digits"),
        ({"dependencies": [{"version": "4"}]}, "`dependencies[0]` needs `name`"),
    ],
)
def test_it_rejects_invalid_manifest_fields(fields, needle):
    error = rejection({"SKILL.md": skill_md(**fields)})

    assert error.code == "frontmatter_invalid"
    assert needle in error.detail


@pytest.mark.parametrize(
    ("yaml_text", "needle"),
    [
        ("base: &b [a, b]\ncopy: *b\n", "aliases"),
        ("triggers: [a]\ntriggers: [b]\n", "duplicate key"),
        ("on: push\n", "not a string"),
        ("blob: !!binary aGVsbG8=\n", "cannot store"),
        ("limit: .nan\n", "finite"),
    ],
)
def test_it_rejects_yaml_that_cannot_be_reviewed_as_json(yaml_text, needle):
    text = f"---\nname: pdf-tools\ndescription: d\n{yaml_text}---\n"

    error = rejection({"SKILL.md": text})

    assert error.code == "frontmatter_invalid"
    assert needle in error.detail
