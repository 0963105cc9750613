"""The Agent Skills format's rules, and memdesk's extensions beside them."""

from __future__ import annotations

import json

import pytest

from skills.package.errors import PackageError
from tests.skills.test_package import SLUG, parse, rejection, skill_md

UPLOAD = "/api/v1/skills/pdf-tools/versions"


def raw_skill_md(frontmatter: str) -> str:
    return f"---\n{frontmatter}---\nBody\n"


def spec_rejection(frontmatter: str, *, slug: str = SLUG) -> PackageError:
    with pytest.raises(PackageError) as caught:
        parse({"SKILL.md": raw_skill_md(frontmatter)}, slug=slug)
    return caught.value


@pytest.mark.parametrize(
    ("frontmatter", "field", "rule"),
    [
        (f"name: {'a' * 65}\ndescription: d\n", "name", "name_length"),
        ("name: PDF-Tools\ndescription: d\n", "name", "name_format"),
        ("name: -pdf-tools\ndescription: d\n", "name", "name_format"),
        ("name: pdf--tools\ndescription: d\n", "name", "name_format"),
        ("name: pdf_tools\ndescription: d\n", "name", "name_format"),
        (f"name: pdf-tools\ndescription: {'d' * 1025}\n", "description", "description_length"),
        ("name: pdf-tools\ndescription: d\nlicense: 3\n", "license", "license_type"),
        (
            f"name: pdf-tools\ndescription: d\ncompatibility: {'c' * 501}\n",
            "compatibility",
            "compatibility_length",
        ),
        (
            "name: pdf-tools\ndescription: d\nmetadata:\n  tags: [a, b]\n",
            "metadata",
            "metadata_strings",
        ),
        ("name: pdf-tools\ndescription: d\nmetadata: [a]\n", "metadata", "metadata_strings"),
        (
            "name: pdf-tools\ndescription: d\nallowed-tools: 'Read Bash(git *)'\n",
            "allowed-tools",
            "allowed_tools_format",
        ),
    ],
)
def test_each_spec_rule_is_its_own_problem(frontmatter: str, field: str, rule: str):
    error = spec_rejection(frontmatter)

    assert (error.code, error.field, error.rule, error.path) == (
        "spec_violation",
        field,
        rule,
        "SKILL.md",
    )
    assert error.detail.startswith("Agent Skills format: ")


def test_a_name_of_64_characters_and_a_description_of_1024_are_allowed():
    name = "a" * 64
    parsed = parse(
        {"SKILL.md": raw_skill_md(f"name: {name}\ndescription: {'d' * 1024}\n")}, slug=name
    )

    assert parsed.manifest["name"] == name


def test_the_spec_fields_are_kept_and_allowed_tools_name_the_required_tools():
    parsed = parse(
        {
            "SKILL.md": raw_skill_md(
                "name: pdf-tools\ndescription: d\nlicense: Apache-2.0\n"
                "compatibility: Needs python 3.11 and network access\n"
                "metadata:\n  author: acme\n  revision: '3'\n"
                "allowed-tools: Read Bash(git:*) Bash(pdftk:*)\n"
            )
        }
    )

    manifest = parsed.manifest
    assert manifest["license"] == "Apache-2.0"
    assert manifest["compatibility"] == "Needs python 3.11 and network access"
    assert manifest["metadata"] == {"author": "acme", "revision": "3"}
    assert manifest["allowed_tools"] == ["Read", "Bash(git:*)", "Bash(pdftk:*)"]
    assert manifest["tools"] == ["Bash", "Read"]
    assert manifest["extra"] == {}


def test_credential_slots_are_names_with_a_purpose_never_values():
    parsed = parse(
        {
            "SKILL.md": skill_md(
                credentials=[{"slot": "site_token", "purpose": "publish to the blog"}, "smtp"]
            )
        }
    )
    assert parsed.manifest["credentials"] == [
        {"slot": "site_token", "purpose": "publish to the blog"},
        {"slot": "smtp", "purpose": ""},
    ]

    with_value = rejection(
        {"SKILL.md": skill_md(credentials=[{"slot": "site_token", "value": "hunter2"}])}
    )
    assert with_value.code == "frontmatter_invalid"
    assert "never written here" in with_value.detail
    bad_name = rejection({"SKILL.md": skill_md(credentials=["Site Token"])})
    assert bad_name.code == "frontmatter_invalid"
    twice = rejection({"SKILL.md": skill_md(credentials=["smtp", {"slot": "smtp"}])})
    assert "repeats" in twice.detail


def test_data_labels_name_what_flows_and_how_far():
    parsed = parse(
        {"SKILL.md": skill_md(consumes=["documents:internal"], produces=["report", "report"])}
    )
    assert (parsed.manifest["consumes"], parsed.manifest["produces"]) == (
        ["documents:internal"],
        ["report"],
    )
    bad = rejection({"SKILL.md": skill_md(produces=["report:secret"])})
    assert bad.code == "frontmatter_invalid"


def evals_json(*cases: dict, skill_name: str = SLUG) -> str:
    return json.dumps({"skill_name": skill_name, "evals": list(cases)})


def test_evals_json_brings_its_cases_with_categories():
    parsed = parse(
        {
            "SKILL.md": skill_md(),
            "evals/evals.json": evals_json(
                {"id": 1, "prompt": "Fill form.pdf", "expected_output": "filled.pdf"},
                {"id": "no-values", "prompt": "Fill it", "category": "missing_input"},
            ),
        }
    )

    assert parsed.manifest["evals"] == [
        {"id": "1", "category": "normal", "prompt": "Fill form.pdf", "expected": "filled.pdf"},
        {"id": "no-values", "category": "missing_input", "prompt": "Fill it", "expected": ""},
    ]


@pytest.mark.parametrize(
    ("content", "words"),
    [
        ("{not json", "not valid JSON"),
        ('{"cases": []}', '"evals" list'),
        (evals_json({"id": 1, "prompt": "x"}, skill_name="other"), "names the skill"),
        (evals_json({"id": 1, "prompt": ""}), "prompt"),
        (evals_json({"id": 1, "prompt": "x"}, {"id": 1, "prompt": "y"}), "repeats"),
        (evals_json({"id": 1, "prompt": "x", "category": "happy"}), "category"),
        (evals_json({"id": "../x", "prompt": "x"}), "id"),
    ],
)
def test_a_bad_evals_json_is_refused(content: str, words: str):
    error = rejection({"SKILL.md": skill_md(), "evals/evals.json": content})

    assert (error.code, error.path) == ("evals_invalid", "evals/evals.json")
    assert words in error.detail


@pytest.mark.django_db
def test_the_api_answers_a_spec_violation_with_field_and_rule(writer, skill):
    from tests.skills.conftest import build_zip, upload_file

    bad = build_zip({"SKILL.md": raw_skill_md(f"name: pdf-tools\ndescription: {'d' * 1100}\n")})
    response = writer.post(UPLOAD, {"package": upload_file(bad)}, format="multipart")

    assert response.status_code == 400
    body = response.json()
    assert (body["code"], body["field"], body["rule"], body["path"]) == (
        "spec_violation",
        "description",
        "description_length",
        "SKILL.md",
    )
    assert body["errors"]["description"]
    assert writer.get(UPLOAD).json()["results"] == []
