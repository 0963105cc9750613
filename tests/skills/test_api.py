"""The skills API: who may call what, tenant isolation, package errors, diffs and history."""

from __future__ import annotations

import io
import random
import uuid
import zipfile
from pathlib import Path

import pytest

from accounts.actors import Actor
from skills import services
from skills.models import EvaluationRun, Skill, SkillFile, SkillVersion
from tests.skills import hostile
from tests.skills.conftest import SLUG, build_zip, package, package_v2, skill_md, upload_file

BASE = "/api/v1/skills"
V1 = f"{BASE}/{SLUG}/versions/1"
ALL_CAPABILITIES = ["skills:read", "skills:write", "evaluations:write"]

# Every skill endpoint with a body that would be valid for it.
ENDPOINTS: list[tuple[str, str, object]] = [
    ("get", f"{BASE}/{SLUG}", None),
    ("get", f"{BASE}/{SLUG}/versions", None),
    ("post", f"{BASE}/{SLUG}/versions", "package"),
    ("get", V1, None),
    ("get", f"{V1}/files/SKILL.md", None),
    ("get", f"{V1}/evaluations", None),
    ("post", f"{V1}/evaluations", "evaluation"),
    ("post", f"{V1}/submit", {}),
    ("get", f"{BASE}/{SLUG}/resolve", None),
    ("get", f"{BASE}/{SLUG}/resolve?version=1", None),
    ("get", f"{BASE}/{SLUG}/versions/1/diff/1", None),
    ("get", f"{BASE}/{SLUG}/labels/production/history", None),
]
ADMIN_ENDPOINTS: list[tuple[str, str, object]] = [
    ("post", f"{V1}/approve", {"reason": "ok"}),
    ("post", f"{V1}/reject", {"reason": "no"}),
    ("post", f"{V1}/publish", {"reason": "go"}),
    ("post", f"{V1}/deprecate", {"reason": "old"}),
    ("post", f"{V1}/revoke", {"reason": "bad"}),
    ("post", f"{BASE}/{SLUG}/rollback", {"to": 1, "reason": "back"}),
]


def call(client, method: str, path: str, body):
    if body == "package":
        return client.post(path, {"package": upload_file(package())}, format="multipart")
    if body == "evaluation":
        body = {
            "category": "normal",
            "passed": True,
            "content_hash": "sha256:" + "a" * 64,
            "environment": {"model": "test-model", "tools": {}},
        }
    if method == "get":
        return client.get(path)
    return client.post(path, body, format="json")


@pytest.fixture
def globex_admin_api(globex_admin, session_api):
    return session_api(globex_admin)


# --- tenant isolation -------------------------------------------------------------------------


@pytest.mark.parametrize(("method", "path", "body"), ENDPOINTS)
def test_it_answers_404_for_another_tenants_skill_to_agents(
    published_v1, globex, make_agent, method, path, body
):
    outsider = make_agent(globex, name="outsider", capabilities=ALL_CAPABILITIES)
    response = call(outsider, method, path, body)
    assert response.status_code == 404, response.content
    assert response.json()["code"] == "not_found"


# Evaluations are recorded by agents only, so a person is refused before any lookup.
PEOPLE_ENDPOINTS = [endpoint for endpoint in ENDPOINTS if endpoint[2] != "evaluation"]


@pytest.mark.parametrize(("method", "path", "body"), PEOPLE_ENDPOINTS + ADMIN_ENDPOINTS)
def test_it_answers_404_for_another_tenants_skill_to_admins(
    published_v1, globex_admin_api, method, path, body
):
    response = call(globex_admin_api, method, path, body)
    assert response.status_code == 404, response.content
    assert response.json()["code"] == "not_found"
    assert SkillVersion.objects.get(pk=published_v1.pk).status == "published"


def test_it_lists_only_the_callers_tenants_skills(published_v1, globex, make_agent, reader):
    services.skill_create(tenant=globex, slug="globex-only", actor=Actor.system())
    outsider = make_agent(globex, name="outsider", capabilities=["skills:read"])
    assert [s["slug"] for s in outsider.get(BASE).json()["results"]] == ["globex-only"]
    listed = reader.get(BASE).json()["results"]
    assert [(s["slug"], s["production"]["number"]) for s in listed] == [(SLUG, 1)]


# --- who may call what ------------------------------------------------------------------------


@pytest.mark.parametrize(("method", "path", "body"), ADMIN_ENDPOINTS)
def test_it_refuses_agent_tokens_on_admin_actions(
    published_v1, acme, make_agent, method, path, body
):
    mighty = make_agent(acme, name="mighty", capabilities=ALL_CAPABILITIES)
    response = call(mighty, method, path, body)
    assert response.status_code == 403
    assert response.json()["code"] == "role_required"
    assert SkillVersion.objects.get(pk=published_v1.pk).status == "published"


@pytest.mark.parametrize(("method", "path", "body"), ADMIN_ENDPOINTS)
def test_it_refuses_editors_on_admin_actions(published_v1, editor, session_api, method, path, body):
    response = call(session_api(editor), method, path, body)
    assert (response.status_code, response.json()["code"]) == (403, "role_required")


@pytest.mark.parametrize(
    ("capabilities", "method", "path", "body", "missing"),
    [
        (["skills:read"], "post", f"{BASE}/{SLUG}/versions", "package", "skills:write"),
        (["skills:read"], "post", f"{V1}/submit", {}, "skills:write"),
        (["skills:write"], "post", f"{V1}/evaluations", "evaluation", "evaluations:write"),
        (["evaluations:write"], "get", f"{BASE}/{SLUG}/resolve", None, "skills:read"),
        (["skills:write"], "get", V1, None, "skills:read"),
    ],
)
def test_it_needs_the_matching_capability(
    skill, upload, ada, acme, make_agent, capabilities, method, path, body, missing
):
    upload(actor=ada)
    client = make_agent(acme, name="narrow", capabilities=capabilities)
    response = call(client, method, path, body)
    assert response.status_code == 403
    assert (response.json()["code"], response.json()["capability"]) == (
        "capability_required",
        missing,
    )


def test_it_lets_editors_read_but_not_write(published_v1, editor, session_api):
    client = session_api(editor)
    assert client.get(V1).status_code == 200
    refused = call(client, "post", f"{BASE}/{SLUG}/versions", "package")
    assert (refused.status_code, refused.json()["code"]) == (403, "role_required")


def test_it_refuses_end_users(published_v1, alice, session_api):
    response = session_api(alice).get(BASE)
    assert (response.status_code, response.json()["code"]) == (403, "role_required")


def test_it_refuses_anonymous_callers(published_v1, client):
    assert client.get(BASE).status_code in (401, 403)


# --- creating and uploading -------------------------------------------------------------------


def test_it_creates_a_skill_once_per_slug(writer):
    created = writer.post(BASE, {"slug": SLUG, "name": "PDF tools"}, format="json")
    assert created.status_code == 201
    assert created.json()["created_by"]["label"] == "uploader"
    duplicate = writer.post(BASE, {"slug": SLUG}, format="json")
    assert (duplicate.status_code, duplicate.json()["code"]) == (409, "skill_exists")
    bad = writer.post(BASE, {"slug": "PDF Tools"}, format="json")
    assert (bad.status_code, bad.json()["code"]) == (400, "validation_error")


def test_it_replays_a_create_with_the_same_idempotency_key(writer):
    first = writer.post(BASE, {"slug": SLUG}, format="json", HTTP_IDEMPOTENCY_KEY="k-1")
    replay = writer.post(BASE, {"slug": SLUG}, format="json", HTTP_IDEMPOTENCY_KEY="k-1")
    assert (first.status_code, replay.status_code) == (201, 201)
    assert replay["Idempotent-Replayed"] == "true"
    assert Skill.objects.count() == 1


def zip_with_member(name: str, content: bytes) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("SKILL.md", skill_md())
        archive.writestr(zipfile.ZipInfo(name), content)
    return buffer.getvalue()


MALFORMED = {
    "package_invalid": b"this is not a zip",
    "skill_md_missing": build_zip({"README.md": "# no manifest here\n"}),
    "frontmatter_invalid": build_zip({"SKILL.md": "# PDF tools\n\nNo frontmatter at all.\n"}),
    "name_mismatch": package("pdf-reader"),
    "path_unsafe": zip_with_member("../escape.txt", b"out of the package\n"),
    "file_not_allowed": build_zip({"SKILL.md": skill_md(), "notes/todo.txt": "stray file\n"}),
    "file_too_large": build_zip({"SKILL.md": skill_md(), "references/huge.md": "x" * 1_000_001}),
    "secret_detected": build_zip(
        {"SKILL.md": skill_md(), "references/setup.md": "aws_key = AKIAIOSFODNN7EXAMPLE\n"}
    ),
    "capability_undeclared": build_zip(
        {"SKILL.md": skill_md(), "scripts/fetch.sh": "#!/bin/sh\ncurl https://example.com\n"}
    ),
}


@pytest.mark.parametrize("code", sorted(MALFORMED))
def test_it_rejects_each_malformed_package_with_its_own_code(writer, skill, code):
    response = writer.post(
        f"{BASE}/{SLUG}/versions", {"package": upload_file(MALFORMED[code])}, format="multipart"
    )
    # Sizes over the limits are 413; everything else is wrong content, 400.
    assert response.status_code == (413 if code == "file_too_large" else 400)
    assert response["Content-Type"] == "application/problem+json"
    assert response.json()["code"] == code
    assert not SkillVersion.objects.exists()


def test_it_rejects_a_script_writing_files_without_the_capability(writer, skill):
    data = build_zip(
        {"SKILL.md": skill_md(), "scripts/save.py": "open('out.txt', 'w').write('x')\n"}
    )
    response = writer.post(
        f"{BASE}/{SLUG}/versions", {"package": upload_file(data)}, format="multipart"
    )
    assert response.json()["code"] == "capability_undeclared"
    assert "filesystem:write" in response.json()["detail"]


def test_it_writes_nothing_outside_storage_for_dot_dot_paths(writer, skill, tmp_path, settings):
    settings.MEDIA_ROOT = str(tmp_path / "media")
    victim = Path("/tmp") / f"memdesk-escape-{uuid.uuid4().hex}.txt"
    relative = "../" * 12 + str(victim).lstrip("/")
    response = writer.post(
        f"{BASE}/{SLUG}/versions",
        {"package": upload_file(zip_with_member(relative, b"pwned\n"))},
        format="multipart",
    )
    assert (response.status_code, response.json()["code"]) == (400, "path_unsafe")
    assert not victim.exists()
    assert not (tmp_path / "media").exists()
    assert not SkillFile.objects.exists()


def test_it_refuses_an_upload_without_a_package(writer, skill):
    response = writer.post(f"{BASE}/{SLUG}/versions", {}, format="multipart")
    assert (response.status_code, response.json()["code"]) == (400, "validation_error")
    assert "package" in response.json()["errors"]


# --- names that mean another file somewhere, and zip bombs -----------------------------------


def post_package(client, data: bytes):
    return client.post(
        f"{BASE}/{SLUG}/versions", {"package": upload_file(data)}, format="multipart"
    )


def deflated_zip(files: dict[str, str]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        for path, content in files.items():
            archive.writestr(path, content)
    return buffer.getvalue()


def assert_refused_and_nothing_stored(response, code: str) -> dict:
    assert response.status_code == 400, response.content[:300]
    assert response["Content-Type"] == "application/problem+json"
    body = response.json()
    assert body["code"] == code
    assert not SkillVersion.objects.exists()
    assert not SkillFile.objects.exists()
    return body


# Each pair is one file once extracted where case and Unicode normalisation fold.
COLLIDING = {
    "case": ("scripts/Run.sh", "scripts/run.sh"),
    "case-of-a-folder": ("references/Notes/a.md", "references/notes/b.md"),
    "nfc-nfd": ("references/caf\u00e9.md", "references/cafe\u0301.md"),
}


@pytest.mark.parametrize("first, second", COLLIDING.values(), ids=COLLIDING.keys())
def test_it_refuses_two_names_for_one_file(writer, skill, first, second):
    data = build_zip({"SKILL.md": skill_md(), first: "echo one\n", second: "echo two\n"})
    body = assert_refused_and_nothing_stored(post_package(writer, data), "path_unsafe")
    assert body["path"] in (first, second)
    assert "case or Unicode normalisation" in body["detail"]


UNSAFE_NAMES = {
    "con": "scripts/CON",
    "nul-with-extension": "references/nul.txt",
    "com1": "scripts/COM1",
    "lpt-superscript": "assets/lpt\u00b9.bin",
    "device-folder": "references/aux/notes.md",
    "trailing-dot": "scripts/run.sh.",
    "trailing-space": "scripts/run.sh ",
    "alternate-stream": "scripts/a.sh:stream",
    "colon": "references/a:b.md",
    "right-to-left-override": "scripts/\u202ehs.exe",
    "bidi-isolate": "references/\u2067notes.md",
    "zero-width": "scripts/run\u200b.sh",
    "tag-character": "references/a\U000e0041.md",
    "c0-control": "references/a\x01b.md",
    "c1-control": "references/a\x85b.md",
    "delete": "references/a\x7fb.md",
    "line-separator": "references/a\u2028b.md",
}


@pytest.mark.parametrize("name", UNSAFE_NAMES.values(), ids=UNSAFE_NAMES.keys())
def test_it_refuses_names_that_mean_something_else_elsewhere(writer, skill, name):
    data = build_zip({"SKILL.md": skill_md(), name: "echo hi\n"})
    body = assert_refused_and_nothing_stored(post_package(writer, data), "path_unsafe")
    assert body["path"] == name


def test_it_refuses_a_file_that_unpacks_to_over_a_hundred_times_its_size(writer, skill):
    files = {f"references/{n}.md": "a" * 990_000 for n in range(10)}
    data = deflated_zip({"SKILL.md": skill_md(), **files})
    assert len(data) < 15_000  # 9.9 MB in a few kilobytes, within every size limit
    body = assert_refused_and_nothing_stored(
        post_package(writer, data), "compression_ratio_exceeded"
    )
    assert body["path"] == "references/0.md"


def test_it_refuses_a_package_that_unpacks_to_over_a_hundred_times_its_size(writer, skill):
    # Each file is small enough to be exempt; together they are a bomb.
    files = {f"references/{n}.md": "a" * 220_000 for n in range(45)}
    data = deflated_zip({"SKILL.md": skill_md(), **files})
    body = assert_refused_and_nothing_stored(
        post_package(writer, data), "compression_ratio_exceeded"
    )
    assert "path" not in body
    assert "100 times" in body["detail"]


def test_a_package_with_unusual_but_harmless_names_and_a_large_file_is_accepted(writer, skill):
    words = [f"w{n:x}" for n in range(4096)]
    picker = random.Random(7)
    prose = "".join(" ".join(picker.choice(words) for _ in range(16)) + "\n" for _ in range(4_000))
    assert len(prose) > 300_000  # over the exempt size: the ratio is judged, and passes
    files = {
        "references/caf\u00e9.md": "accents are fine\n",
        "references/console.md": "a device name only as a whole name\n",
        "references/com10.md": "and COM10 is no device\n",
        "references/notes/prose.md": prose,
        "scripts/run.sh": "echo hi\n",
    }
    response = post_package(writer, deflated_zip({"SKILL.md": skill_md(), **files}))
    assert response.status_code == 201, response.content[:300]
    assert SkillFile.objects.filter(path="references/caf\u00e9.md").exists()


# --- evaluations, version detail, files, diff -------------------------------------------------


def test_it_stores_but_does_not_count_an_evaluation_for_another_hash(evaluator, upload, ada):
    version = upload(actor=ada)
    stale = evaluator.post(
        f"{V1}/evaluations",
        {
            "category": "normal",
            "passed": True,
            "content_hash": "sha256:" + "b" * 64,
            "environment": {"model": "test-model", "tools": {}},
        },
        format="json",
    )
    assert (stale.status_code, stale.json()["counts"]) == (201, False)
    matrix = evaluator.get(V1).json()["evaluation_matrix"]
    assert matrix["other_hash_runs"] == 1
    assert matrix["missing"][0] == "normal"
    assert EvaluationRun.objects.filter(version=version).count() == 1


def test_it_validates_evaluation_input(evaluator, upload, ada):
    upload(actor=ada)
    response = evaluator.post(
        f"{V1}/evaluations",
        {"category": "vibes", "passed": True, "content_hash": "md5:123"},
        format="json",
    )
    assert response.status_code == 400
    assert set(response.json()["errors"]) == {"category", "content_hash"}


def test_it_shows_a_version_with_files_matrix_and_instances(reader, published_v2):
    detail = reader.get(f"{BASE}/{SLUG}/versions/2").json()
    assert detail["status"] == "published"
    assert detail["allowed_next"] == ["deprecated", "revoked"]
    assert [f["path"] for f in detail["files"]] == ["SKILL.md", "scripts/fetch.py"]
    assert detail["evaluation_matrix"]["complete"] is True
    assert [c["state"] for c in detail["evaluation_matrix"]["categories"]] == ["passed"] * 6
    assert detail["instances_last_24h"] == 0
    # A new capability: abe approved first, ann's second approval approved it.
    assert detail["approved_by"]["label"] == "ann"
    assert [a["label"] for a in detail["approvals"]] == ["abe", "ann"]
    assert detail["approvals_required"] == 2
    assert detail["approved_changes"][0]["flag"] == "capability_added"


def test_it_serves_a_draft_file_to_evaluators(evaluator, upload, ada):
    upload(package_v2(), actor=ada)
    response = evaluator.get(f"{V1}/files/scripts/fetch.py")
    assert response.status_code == 200
    assert response["Content-Type"] == "text/plain; charset=utf-8"
    assert response.content.startswith(b"import httpx")
    assert evaluator.get(f"{V1}/files/scripts/missing.py").status_code == 404


INERT_POLICY = "sandbox; default-src 'none'"


@pytest.mark.parametrize("path", sorted(hostile.FILES))
def test_it_serves_an_agents_hostile_file_inert_to_an_admin(writer, ada_api, reader, path):
    """A non-UTF-8 .html/.svg never comes back with a type taken from its name."""
    writer.post(BASE, {"slug": SLUG, "name": "PDF tools"}, format="json")
    uploaded = writer.post(
        f"{BASE}/{SLUG}/versions",
        {"package": upload_file(hostile.hostile_package(SLUG))},
        format="multipart",
    )
    assert uploaded.status_code == 201, uploaded.content
    for client in (ada_api, reader):
        response = client.get(f"{V1}/files/{path}")
        assert response.status_code == 200
        assert response.content == hostile.FILES[path]
        assert response["Content-Type"] == "application/octet-stream"
        name = path.rsplit("/", 1)[1]
        assert response["Content-Disposition"] == f'attachment; filename="{name}"'
        assert response["X-Content-Type-Options"] == "nosniff"
        assert response["Content-Security-Policy"] == INERT_POLICY
    # JSON lists a file by path and digest; its bytes only travel through the endpoint above.
    listed = {file["path"]: file for file in reader.get(V1).json()["files"]}
    assert set(listed[path]) == {"path", "sha256", "size"}


def test_it_serves_text_files_as_plain_text_attachments(evaluator, upload, ada):
    upload(package(files={"assets/page.html": "<script>alert(1)</script>"}), actor=ada)
    response = evaluator.get(f"{V1}/files/assets/page.html")
    assert response["Content-Type"] == "text/plain; charset=utf-8"
    assert response["Content-Disposition"] == 'attachment; filename="page.html"'
    assert response["X-Content-Type-Options"] == "nosniff"
    assert response["Content-Security-Policy"] == INERT_POLICY
    assert response.content == b"<script>alert(1)</script>"


def test_it_diffs_two_versions_with_capability_changes_flagged(reader, published_v2):
    diff = reader.get(f"{BASE}/{SLUG}/versions/1/diff/2").json()
    assert (diff["from_version"]["number"], diff["to_version"]["number"]) == (1, 2)
    assert diff["capabilities_added"] == ["network"]
    assert diff["flags"] == ["capability_added"]
    assert diff["risk"] is None
    assert {"field": "version", "old": "1.0", "new": "2.0", "flag": None} in diff["manifest"]
    files = {f["path"]: f for f in diff["files"]}
    assert files["scripts/fetch.py"]["change"] == "added"
    assert "+import httpx" in files["scripts/fetch.py"]["diff"]
    assert files["SKILL.md"]["change"] == "modified"
    assert "--- a/SKILL.md" in files["SKILL.md"]["diff"]


def test_it_flags_risk_raised_in_the_diff(acme, reader, published_v1, upload, ada):
    upload(package(risk="high", version="1.1"), actor=ada)
    diff = reader.get(f"{BASE}/{SLUG}/versions/1/diff/2").json()
    assert diff["risk"] == {"field": "risk", "old": "low", "new": "high", "flag": "risk_raised"}


def test_it_lists_versions_newest_first(reader, published_v2):
    listed = reader.get(f"{BASE}/{SLUG}/versions").json()
    assert [v["number"] for v in listed["results"]] == [2, 1]
    assert listed["next"] is None


def test_it_pages_label_history_with_a_cursor(acme, reader, published_v2, ada):
    for number in (1, 2, 1):
        services.skill_rollback(
            tenant=acme,
            skill=published_v2.skill,
            to_number=number,
            actor=ada,
            reason=f"to v{number}",
        )
    first = reader.get(f"{BASE}/{SLUG}/labels/production/history?limit=3").json()
    assert [m["reason"] for m in first["results"]] == ["to v1", "to v2", "to v1"]
    rest = reader.get(first["next"]).json()
    assert [m["reason"] for m in rest["results"]] == ["publish v2", "publish v1"]


def test_it_withholds_the_body_of_a_revoked_version(acme, reader, published_v2, ada):
    services.skill_version_revoke(tenant=acme, version=published_v2, actor=ada, reason="leaks")
    detail = reader.get(f"{BASE}/{SLUG}/versions/2").json()
    assert (detail["status"], detail["body"], detail["revoke_reason"]) == ("revoked", None, "leaks")
    assert reader.get(f"{BASE}/{SLUG}/versions/1").json()["body"].startswith("# PDF tools")
