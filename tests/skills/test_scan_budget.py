"""A skill package costs a bounded amount of inspection: beyond it, a 422 problem, never a 500."""

from __future__ import annotations

import pytest

from skills.models import SkillVersion
from skills.package import parse_package
from skills.package.budget import ScanBudget
from skills.package.errors import PackageError
from tests.skills.conftest import SLUG, build_zip, skill_md, upload_file

pytestmark = pytest.mark.django_db

BASE = "/api/v1/skills"


def upload(writer, files: dict[str, str | bytes]):
    return writer.post(
        f"{BASE}/{SLUG}/versions",
        {"package": upload_file(build_zip({"SKILL.md": skill_md(), **files}))},
        format="multipart",
    )


def assert_over_budget(response, path: str) -> None:
    assert response.status_code == 422, response.content[:300]
    assert response["Content-Type"] == "application/problem+json"
    body = response.json()
    assert body["code"] == "scan_budget_exceeded"
    assert body["path"] == path
    assert not SkillVersion.objects.exists()


@pytest.mark.parametrize(
    "script",
    [
        "x = " + "-" * 100_000 + "1\n",  # CPython's parser: MemoryError
        "x = " + "1+" * 100_000 + "1\n",  # ... and RecursionError
        "x = " + "[" * 150 + "1" + "]" * 150 + "\n",  # parses, but 150 levels deep
    ],
    ids=["unary-chain", "binary-chain", "deep-lists"],
)
def test_a_script_too_deep_to_inspect_is_422(writer, skill, script):
    assert_over_budget(upload(writer, {"scripts/deep.py": script}), "scripts/deep.py")


def test_a_script_with_too_many_nodes_is_422(writer, skill, settings):
    settings.SKILL_SCAN_MAX_AST_NODES = 1_000
    script = "values = [" + "1, " * 2_000 + "]\n"
    assert_over_budget(upload(writer, {"scripts/big.py": script}), "scripts/big.py")


def test_a_script_over_the_inspection_size_is_422(writer, skill, settings):
    settings.SKILL_SCAN_MAX_SCRIPT_BYTES = 1_000
    script = "# padding\n" * 200
    assert_over_budget(upload(writer, {"scripts/long.py": script}), "scripts/long.py")


def test_too_many_lines_of_text_is_422(writer, skill, settings):
    # 160,000 short lines once took the secret scan about 20 seconds; the line
    # budget refuses them before any scanner reads them. The wall-time budget is
    # lifted so a loaded machine cannot answer for the line budget.
    settings.SKILL_SCAN_MAX_SECONDS = 600
    response = upload(writer, {"references/notes.md": "a = 1\n" * 160_000})
    assert_over_budget(response, "references/notes.md")


def test_the_wall_time_budget_stops_the_scan():
    data = build_zip({"SKILL.md": skill_md(), "scripts/ok.py": "print('hi')\n"})
    with pytest.raises(PackageError) as caught:
        parse_package(data=data, slug=SLUG, budget=ScanBudget(max_seconds=-1))
    assert caught.value.code == "scan_budget_exceeded"


def test_a_normal_package_fits_the_default_budget(writer, skill):
    script = "import json\n\n\ndef main():\n    print(json.dumps({'ok': True}))\n"
    response = upload(writer, {"scripts/main.py": script, "references/a.md": "note\n" * 500})
    assert response.status_code == 201, response.content[:300]


def test_a_package_over_the_size_limits_is_413(writer, skill, settings):
    settings.SKILL_PACKAGE_MAX_TOTAL_BYTES = 2_000
    response = upload(writer, {"references/a.md": "x" * 1_500, "references/b.md": "y" * 1_500})
    assert response.status_code == 413
    assert response.json()["code"] == "package_too_large"
