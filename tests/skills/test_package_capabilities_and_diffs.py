"""A package's scripts declare what they do (capability_undeclared), and what a new
version changes: the manifest diff that flags capability and risk increases, the files'
unified diff, and the documented set of package errors."""

from __future__ import annotations

import pytest

from skills.package.capabilities import DETECTABLE_CAPABILITIES, NETWORK
from skills.package.diffs import files_unified_diff, manifest_diff
from skills.package.errors import ERROR_CODES, PackageError
from tests.skills.test_package import SLUG, parse, rejection, skill_md

PYTHON_NETWORK = [
    "import socket\n",
    "import urllib.request\n",
    "from urllib import request\n",
    "from http import client\n",
    "import http.client as hc\n",
    "import requests\n",
    "from httpx import AsyncClient\n",
    "import aiohttp\n",
    "import importlib\nimportlib.import_module('socket')\n",
    "import subprocess\nsubprocess.run(['curl', '-s', 'https://example.com'])\n",
]


PYTHON_FILESYSTEM_WRITE = [
    "open('out.txt', 'w')\n",
    "open('out.txt', mode='a')\n",
    "with open(path, 'wb') as fh:\n    pass\n",
    "open('log.txt', 'r+')\n",
    "import os\nos.remove('x')\n",
    "from os import unlink as drop\ndrop('x')\n",
    "import os as o\no.rename('a', 'b')\n",
    "import shutil\nshutil.rmtree('build')\n",
    "from shutil import *\nmove('a', 'b')\n",
    "from pathlib import Path\nPath('x').write_text('hi')\n",
    "from pathlib import Path\nPath('build').mkdir(parents=True)\n",
    "from pathlib import Path\nPath('x').open('w')\n",
    "import tarfile\ntarfile.open('out.tar', 'w:gz')\n",
    "import os\nos.system('rm -rf build')\n",
]


SHELL_NETWORK = [
    "curl -s https://example.com\n",
    "wget https://example.com/file\n",
    "echo ping | nc example.com 80\n",
    "/usr/bin/curl https://example.com\n",
    "body=$(curl -s https://example.com)\n",
    "exec 3<>/dev/tcp/example.com/80\n",
]


SHELL_FILESYSTEM_WRITE = [
    "echo hi > out.txt\n",
    "echo hi >> log.txt\n",
    'echo hi >"$OUT"\n',
    "ls &> listing.txt\n",
    "rm -rf build\n",
    "mv a b\n",
    "cp a b\n",
    "echo hi | tee out.txt\n",
    "mkdir -p build\n",
]


def script_package(path: str, script: str, *, capabilities: list[str] | None = None):
    return {"SKILL.md": skill_md(capabilities=capabilities or []), path: script}


@pytest.mark.parametrize("script", PYTHON_NETWORK)
def test_it_detects_network_use_in_python(script):
    error = rejection(script_package("scripts/run.py", script))

    assert error.code == "capability_undeclared"
    assert error.path == "scripts/run.py"
    assert "uses network" in error.detail


@pytest.mark.parametrize("script", PYTHON_FILESYSTEM_WRITE)
def test_it_detects_filesystem_writes_in_python(script):
    error = rejection(script_package("scripts/run.py", script))

    assert error.code == "capability_undeclared"
    assert "uses filesystem:write" in error.detail


@pytest.mark.parametrize("script", SHELL_NETWORK)
def test_it_detects_network_use_in_shell(script):
    error = rejection(script_package("scripts/run.sh", script))

    assert error.code == "capability_undeclared"
    assert error.path == "scripts/run.sh"
    assert "uses network" in error.detail


@pytest.mark.parametrize("script", SHELL_FILESYSTEM_WRITE)
def test_it_detects_filesystem_writes_in_shell(script):
    error = rejection(script_package("scripts/run.sh", script))

    assert error.code == "capability_undeclared"
    assert "uses filesystem:write" in error.detail


@pytest.mark.parametrize(
    ("path", "script"),
    [("scripts/run.py", script) for script in PYTHON_NETWORK + PYTHON_FILESYSTEM_WRITE]
    + [("scripts/run.sh", script) for script in SHELL_NETWORK + SHELL_FILESYSTEM_WRITE],
)
def test_declared_capabilities_allow_what_scripts_use(path, script):
    files = script_package(path, script, capabilities=sorted(DETECTABLE_CAPABILITIES))

    assert parse(files).manifest["capabilities"] == ["filesystem:write", "network"]


@pytest.mark.parametrize(
    ("path", "script"),
    [
        ("scripts/run.py", "open('in.txt')\nopen('in.bin', 'rb')\n"),
        ("scripts/run.py", "import urllib.parse\nprint(urllib.parse.quote('a b'))\n"),
        ("scripts/run.py", "import http\nprint(http.HTTPStatus.OK)\n"),
        ("scripts/run.py", "from pathlib import Path\nprint(Path('x').read_text())\n"),
        ("scripts/run.py", "print('a-b'.replace('-', '_'))\n"),
        ("scripts/run.py", "# import socket\nprint('curl is a tool')\n"),
        ("scripts/run.sh", "echo hi\nls -la 2>&1\n"),
        ("scripts/run.sh", "grep x file > /dev/null 2>&1\necho oops >&2\n"),
        ("scripts/run.sh", "# curl https://example.com\necho 'never rm anything'\n"),
        ("scripts/check.js", "if (a > b) { console.log('bigger'); }\n"),
    ],
)
def test_it_accepts_scripts_that_only_read(path, script):
    assert parse(script_package(path, script)).manifest["capabilities"] == []


def test_it_names_capability_path_and_line_in_the_detail():
    script = "import json\n\nimport requests\n\nopen('out', 'w')\n"

    error = rejection(script_package("scripts/fetch.py", script))

    assert error.detail.startswith(
        "scripts/fetch.py uses filesystem:write (open() for writing, line 5) and "
        "network (import of requests, line 3)"
    )


def test_it_only_reports_the_capability_that_is_missing():
    script = "curl -s https://example.com > out.json\n"

    error = rejection(script_package("scripts/run.sh", script, capabilities=[NETWORK]))

    assert "filesystem:write" in error.detail
    assert "uses network" not in error.detail


def test_it_reads_the_shebang_of_scripts_without_suffix():
    python = rejection(script_package("scripts/run", "#!/usr/bin/env python3\nimport socket\n"))
    shell = rejection(script_package("scripts/build", "#!/bin/bash\necho done > status\n"))

    assert "network (import of socket" in python.detail
    assert "filesystem:write ('>' redirection" in shell.detail


def test_it_inspects_only_scripts():
    files = {
        "SKILL.md": skill_md(),
        "references/example.py": "import socket\nopen('x', 'w')\n",
        "references/setup.md": "Run `curl https://example.com > out` first.\n",
    }

    assert parse(files).manifest["capabilities"] == []


def manifest(**changes: object) -> dict:
    base = {
        "name": SLUG,
        "description": "Fill in PDF forms.",
        "version": "1.0.0",
        "risk": "low",
        "capabilities": ["filesystem:write"],
        "triggers": [],
        "inputs": [],
        "outputs": [],
        "dependencies": [],
        "extra": {},
    }
    return {**base, **changes}


def test_manifest_diff_flags_a_capability_added():
    changes = manifest_diff(
        old=manifest(), new=manifest(capabilities=["filesystem:write", "network"])
    )

    assert changes == [
        {"field": "capabilities", "old": None, "new": "network", "flag": "capability_added"}
    ]


def test_manifest_diff_flags_a_capability_removed():
    changes = manifest_diff(old=manifest(), new=manifest(capabilities=[]))

    assert changes == [
        {
            "field": "capabilities",
            "old": "filesystem:write",
            "new": None,
            "flag": "capability_removed",
        }
    ]


def test_manifest_diff_flags_risk_raised_and_lowered():
    raised = manifest_diff(old=manifest(), new=manifest(risk="high"))
    lowered = manifest_diff(old=manifest(risk="medium"), new=manifest())

    assert raised == [{"field": "risk", "old": "low", "new": "high", "flag": "risk_raised"}]
    assert lowered == [{"field": "risk", "old": "medium", "new": "low", "flag": "risk_lowered"}]


def test_manifest_diff_lists_other_changes_unflagged_in_manifest_order():
    old = manifest(extra={"homepage": "a", "owner": "x"})
    new = manifest(
        description="Fill and sign PDF forms.",
        version="1.1.0",
        risk="medium",
        capabilities=["network"],
        extra={"homepage": "b", "owner": "x", "tags": ["pdf"]},
    )

    assert manifest_diff(old=old, new=new) == [
        {
            "field": "description",
            "old": "Fill in PDF forms.",
            "new": "Fill and sign PDF forms.",
            "flag": None,
        },
        {"field": "version", "old": "1.0.0", "new": "1.1.0", "flag": None},
        {"field": "risk", "old": "low", "new": "medium", "flag": "risk_raised"},
        {"field": "capabilities", "old": None, "new": "network", "flag": "capability_added"},
        {
            "field": "capabilities",
            "old": "filesystem:write",
            "new": None,
            "flag": "capability_removed",
        },
        {"field": "extra.homepage", "old": "a", "new": "b", "flag": None},
        {"field": "extra.tags", "old": None, "new": ["pdf"], "flag": None},
    ]


def test_manifest_diff_of_equal_manifests_is_empty():
    assert manifest_diff(old=manifest(), new=manifest()) == []


def test_manifest_diff_works_on_parsed_packages():
    old = parse({"SKILL.md": skill_md(), "scripts/run.sh": "echo hi\n"})
    new = parse(
        {"SKILL.md": skill_md(risk="high", capabilities=[NETWORK]), "scripts/run.sh": "curl x\n"}
    )

    flags = [change["flag"] for change in manifest_diff(old=old.manifest, new=new.manifest)]

    assert flags == ["risk_raised", "capability_added"]


def test_files_unified_diff_reports_added_removed_and_modified_files_by_path():
    old = {"SKILL.md": "a\nb\n", "scripts/old.sh": "echo old\n", "LICENSE": "MIT\n"}
    new = {"SKILL.md": "a\nc\n", "scripts/new.sh": "echo new\n", "LICENSE": "MIT\n"}

    changes = files_unified_diff(old_files=old, new_files=new)

    assert [(change["path"], change["change"]) for change in changes] == [
        ("SKILL.md", "modified"),
        ("scripts/new.sh", "added"),
        ("scripts/old.sh", "removed"),
    ]
    assert changes[0]["diff"] == ("--- a/SKILL.md\n+++ b/SKILL.md\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n")
    assert changes[1]["diff"] == "--- /dev/null\n+++ b/scripts/new.sh\n@@ -0,0 +1 @@\n+echo new\n"
    assert changes[2]["diff"] == "--- a/scripts/old.sh\n+++ /dev/null\n@@ -1 +0,0 @@\n-echo old\n"


def test_files_unified_diff_marks_a_missing_final_newline():
    changes = files_unified_diff(old_files={"a.md": "x\ny"}, new_files={"a.md": "x\ny\n"})

    assert changes[0]["diff"].splitlines()[-3:] == [
        "-y",
        "\\ No newline at end of file",
        "+y",
    ]


def test_files_unified_diff_of_equal_trees_is_empty():
    files = {"SKILL.md": "same\n"}

    assert files_unified_diff(old_files=files, new_files=dict(files)) == []


def test_package_error_carries_code_detail_and_path():
    error = PackageError(code="path_unsafe", detail="Bad path.", path="../x")

    assert (error.code, error.detail, error.path, str(error)) == (
        "path_unsafe",
        "Bad path.",
        "../x",
        "Bad path.",
    )


def test_package_error_refuses_an_unknown_code():
    with pytest.raises(ValueError, match="unknown package error code"):
        PackageError(code="oops", detail="x")


def test_error_codes_are_the_documented_set():
    assert {
        "package_invalid",
        "package_too_large",
        "path_unsafe",
        "skill_md_missing",
        "file_not_allowed",
        "file_too_large",
        "compression_ratio_exceeded",
        "secret_detected",
        "frontmatter_invalid",
        "name_mismatch",
        "spec_violation",
        "evals_invalid",
        "capability_undeclared",
        "scan_budget_exceeded",
    } == ERROR_CODES
