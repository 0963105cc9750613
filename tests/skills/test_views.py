"""Console pages under /skills/: lists, version pages, diffs and the admin action forms."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from rest_framework.test import APIClient

from accounts.models import Role
from skills import services
from skills.models import EvaluationCategory, Skill, SkillVersion, VersionStatus
from tests.skills import hostile
from tests.skills.conftest import SLUG, api_case, package, package_v2, upload_file

HTMX: dict[str, Any] = {"HTTP_HX_REQUEST": "true"}


def csrf(client: Client, page: str = "/skills/") -> str:
    client.get(page)
    return client.cookies["csrftoken"].value


def act(client: Client, action: str, *, number: int, reason: str = "", confirm: bool = True):
    """Post a version action form the way htmx does, with the form's prefixed fields."""
    data = {"csrfmiddlewaretoken": csrf(client), f"{action}-reason": reason}
    if confirm:
        data[f"{action}-confirm"] = "on"
    return client.post(f"/skills/{SLUG}/v{number}/{action}/", data, **HTMX)


def evaluate_all(evaluator: APIClient, number: int) -> None:
    content_hash = evaluator.get(f"/api/v1/skills/{SLUG}/versions/{number}").json()["content_hash"]
    for category in EvaluationCategory.values:
        evaluator.post(
            f"/api/v1/skills/{SLUG}/versions/{number}/evaluations",
            {
                "category": category,
                "passed": True,
                "content_hash": content_hash,
                "environment": {"model": "test-model", "tools": {}},
                "cases": [api_case(category)],
            },
            format="json",
        )


# --- reading ----------------------------------------------------------------------------------


def test_it_lists_skills_with_production_version_and_its_age(login, editor, published_v2):
    response = login(editor).get("/skills/")
    assert response.status_code == 200
    page = response.content.decode()
    assert f'href="/skills/{SLUG}/v2/"' in page
    assert "production for" in page
    assert "<html" in page


def test_it_renders_only_the_list_partial_for_htmx(login, editor, published_v1):
    response = login(editor).get("/skills/", **HTMX)
    page = response.content.decode()
    assert 'id="skill-list"' in page
    assert "<html" not in page


def test_it_lists_many_skills_in_a_fixed_number_of_queries(
    acme, login, editor, ada, django_assert_max_num_queries
):
    client = login(editor)
    for index in range(8):
        skill = services.skill_create(tenant=acme, slug=f"skill-{index}", actor=ada)
        services.skill_version_upload(
            tenant=acme, skill=skill, data=package(f"skill-{index}"), actor=ada
        )
    client.get("/skills/")  # warm the session
    # session, user, membership (view and navigation), the annotated skill list,
    # the queue depths for the navigation badges
    with django_assert_max_num_queries(6):
        response = client.get("/skills/")
    assert response.content.decode().count('href="/skills/skill-') == 16


def test_it_teaches_when_there_are_no_skills(login, editor, acme):
    page = login(editor).get("/skills/").content.decode()
    assert "No skills yet" in page


def test_it_refuses_end_users(login, alice):
    assert login(alice).get("/skills/").status_code == 403


def test_it_answers_404_for_another_tenants_skill(globex, make_member, login, published_v1):
    outsider = login(make_member(globex, "gus", Role.ADMIN))
    assert outsider.get(f"/skills/{SLUG}/").status_code == 404
    assert outsider.get(f"/skills/{SLUG}/v1/").status_code == 404
    assert outsider.get(f"/skills/{SLUG}/diff/?a=1&b=1").status_code == 404
    data = {"csrfmiddlewaretoken": csrf(outsider), "revoke-reason": "x", "revoke-confirm": "on"}
    assert outsider.post(f"/skills/{SLUG}/v1/revoke/", data).status_code == 404
    assert SkillVersion.objects.get(pk=published_v1.pk).status == VersionStatus.PUBLISHED


def test_it_shows_the_version_page_with_matrix_files_and_pins(
    login, editor, published_v2, reader, make_ready
):
    make_ready(reader)
    reader.get(f"/api/v1/skills/{SLUG}/resolve", HTTP_X_SKILL_INSTANCE="worker-7")
    page = login(editor).get(f"/skills/{SLUG}/v2/").content.decode()
    assert "all six categories passed" in page
    assert page.count('<td data-label="Result"><span class="chip passed">passed</span></td>') == 6
    assert "scripts/fetch.py" in page
    assert "worker-7" in page
    assert "1 instance loaded it in the last 24 h" in page
    assert published_v2.content_hash in page


def test_it_flags_a_new_capability_on_the_version_page(
    acme, login, admin2, published_v1, upload, ada
):
    upload(package_v2(), actor=ada)
    page = login(admin2).get(f"/skills/{SLUG}/v2/").content.decode()
    assert 'id="sensitive-changes"' in page
    assert "<code>network</code>" in page


def test_it_counts_only_results_for_this_hash_in_the_matrix(login, editor, upload, ada, evaluator):
    upload(actor=ada)
    evaluator.post(
        f"/api/v1/skills/{SLUG}/versions/1/evaluations",
        {
            "category": "normal",
            "passed": True,
            "content_hash": "sha256:" + "c" * 64,
            "environment": {"model": "test-model", "tools": {}},
        },
        format="json",
    )
    response = login(editor).get(f"/skills/{SLUG}/v1/", **HTMX)
    page = response.content.decode()
    assert 'id="evaluation-matrix"' in page and "<html" not in page
    assert page.count('<td data-label="Result"><span class="chip missing">missing</span></td>') == 6
    assert "1 result(s) were recorded against another content hash" in page


def test_it_shows_actions_to_admins_only(login, editor, admin2, upload, ada, acme):
    version = upload(actor=ada)
    services.skill_version_submit(tenant=acme, version=version, actor=ada)
    as_editor = login(editor).get(f"/skills/{SLUG}/v1/").content.decode()
    assert "approve-reason" not in as_editor
    assert "Only admins approve" in as_editor
    as_admin = login(admin2).get(f"/skills/{SLUG}/v1/").content.decode()
    assert 'name="approve-reason"' in as_admin
    assert 'name="reject-reason"' in as_admin
    assert 'name="revoke-reason"' in as_admin
    assert 'name="publish-reason"' not in as_admin


def test_it_refuses_action_posts_from_editors(login, editor, upload, ada, acme):
    version = upload(actor=ada)
    services.skill_version_submit(tenant=acme, version=version, actor=ada)
    response = act(login(editor), "approve", number=1, reason="fine")
    assert response.status_code == 403
    version.refresh_from_db()
    assert version.status == VersionStatus.IN_REVIEW


def test_it_requires_a_reason_and_a_confirmation(login, admin2, published_v1):
    client = login(admin2)
    no_reason = act(client, "revoke", number=1, reason="")
    assert no_reason.status_code == 200
    assert "Say why" in no_reason.content.decode()
    unconfirmed = act(client, "revoke", number=1, reason="leaks data", confirm=False)
    assert "Tick the box to confirm." in unconfirmed.content.decode()
    published_v1.refresh_from_db()
    assert published_v1.status == VersionStatus.PUBLISHED


def test_it_tells_the_author_another_admin_must_approve(login, admin_user, upload, ada, acme):
    version = upload(actor=ada)
    services.skill_version_submit(tenant=acme, version=version, actor=ada)
    client = login(admin_user)
    assert "another admin must approve it" in client.get(f"/skills/{SLUG}/v1/").content.decode()
    response = act(client, "approve", number=1, reason="mine")
    assert 'class="message error"' in response.content.decode()
    assert "another admin must approve it" in response.content.decode()
    version.refresh_from_db()
    assert version.status == VersionStatus.IN_REVIEW


def test_it_redirects_after_an_action_without_htmx(login, admin2, published_v1):
    client = login(admin2)
    data = {
        "csrfmiddlewaretoken": csrf(client),
        "deprecate-reason": "superseded by pdf-forms",
        "deprecate-confirm": "on",
    }
    response = client.post(f"/skills/{SLUG}/v1/deprecate/", data)
    assert (response.status_code, response["Location"]) == (302, f"/skills/{SLUG}/v1/")
    published_v1.refresh_from_db()
    assert (published_v1.status, published_v1.deprecate_reason) == (
        "deprecated",
        "superseded by pdf-forms",
    )


def test_it_answers_with_the_real_status_without_htmx(login, admin2, upload, ada):
    upload(actor=ada)
    client = login(admin2)
    data = {"csrfmiddlewaretoken": csrf(client), "publish-reason": "go", "publish-confirm": "on"}
    response = client.post(f"/skills/{SLUG}/v1/publish/", data)
    assert response.status_code == 409
    assert "cannot become published" in response.content.decode()


def test_it_shows_a_side_by_side_diff_with_capability_changes_highlighted(
    login, editor, published_v2
):
    page = login(editor).get(f"/skills/{SLUG}/diff/?a=1&b=2").content.decode()
    assert 'id="diff-flags"' in page
    assert '<span class="chip capability_added">+ network</span>' in page
    assert 'class="flag-row"' in page
    assert "scripts/fetch.py" in page
    assert '<td class="new">import httpx</td>' in page


def test_it_renders_the_diff_partial_for_htmx(login, editor, published_v2):
    response = login(editor).get(f"/skills/{SLUG}/diff/?a=2&b=1", **HTMX)
    page = response.content.decode()
    assert page.startswith('\n<div id="diff">') or page.lstrip().startswith('<div id="diff">')
    assert "capability_removed" in page


def test_it_refuses_a_diff_without_two_numbers(login, editor, published_v1):
    response = login(editor).get(f"/skills/{SLUG}/diff/?a=1")
    assert response.status_code == 400


def test_it_shows_a_file_in_a_partial(login, editor, published_v2):
    response = login(editor).get(f"/skills/{SLUG}/v2/files/scripts/fetch.py", **HTMX)
    page = response.content.decode()
    assert "import httpx" in page and "<html" not in page


def test_it_pages_the_label_history_partial(acme, login, editor, published_v2, ada):
    for number in [1, 2] * 11:
        services.skill_rollback(
            tenant=acme,
            skill=published_v2.skill,
            to_number=number,
            actor=ada,
            reason=f"to v{number}",
        )
    client = login(editor)
    skill_page = client.get(f"/skills/{SLUG}/").content.decode()
    assert skill_page.count('class="why"') == 20
    older = skill_page.split('hx-get="/skills/pdf-tools/history/?before=')[1].split('"')[0]
    rest = client.get(f"/skills/{SLUG}/history/?before={older}", **HTMX).content.decode()
    assert "<html" not in rest
    assert "publish v1" in rest and "publish v2" in rest


# --- the whole flow through the console -------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_it_walks_the_publication_flow_through_the_console(
    acme, login, admin_user, admin2, evaluator, reader, make_member, make_ready
):
    ada, abe = login(admin_user), login(admin2)
    ann = login(make_member(acme, "ann", Role.ADMIN))

    created = ada.post("/skills/", {"csrfmiddlewaretoken": csrf(ada), "slug": SLUG, "name": "PDF"})
    assert (created.status_code, created["Location"]) == (302, f"/skills/{SLUG}/")
    uploaded = ada.post(
        f"/skills/{SLUG}/upload/",
        {"csrfmiddlewaretoken": csrf(ada), "package": upload_file(package())},
    )
    assert (uploaded.status_code, uploaded["Location"]) == (302, f"/skills/{SLUG}/v1/")
    evaluate_all(evaluator, 1)
    assert "Submitted v1" in act(ada, "submit", number=1).content.decode()
    approved = act(abe, "approve", number=1, reason="clear steps, safe stop on missing input")
    assert "Approved v1" in approved.content.decode()
    assert 'id="version-state"' in approved.content.decode()
    assert "<html" not in approved.content.decode()
    assert "Published v1" in act(abe, "publish", number=1, reason="first release").content.decode()
    make_ready(reader)
    assert reader.get(f"/api/v1/skills/{SLUG}/resolve").json()["number"] == 1

    ada.post(
        f"/skills/{SLUG}/upload/",
        {"csrfmiddlewaretoken": csrf(ada), "package": upload_file(package_v2())},
    )
    act(ada, "submit", number=2)
    refused = act(abe, "publish", number=2, reason="too early")
    assert "cannot become published" in refused.content.decode()
    assert (
        "another admin must approve" in act(ada, "approve", number=2, reason="x").content.decode()
    )
    first = act(abe, "approve", number=2, reason="network use reviewed").content.decode()
    assert "1 of 2 approvals" in first and "one more admin" in first
    act(ann, "approve", number=2, reason="network use reviewed too")
    incomplete = act(abe, "publish", number=2, reason="ship it")
    assert "needs all six evaluation categories" in incomplete.content.decode()
    evaluate_all(evaluator, 2)
    assert "Published v2" in act(abe, "publish", number=2, reason="ship it").content.decode()
    make_ready(reader)
    assert reader.get(f"/api/v1/skills/{SLUG}/resolve").json()["number"] == 2

    rolled = ada.post(
        f"/skills/{SLUG}/rollback/",
        {
            "csrfmiddlewaretoken": csrf(ada),
            "to": "1",
            "reason": "v2 times out",
            "confirm": "on",
        },
        **HTMX,
    )
    page = rolled.content.decode()
    assert 'id="production"' in page and "<html" not in page
    assert "Production moved from v2 to v1." in page
    # The form now offers v2, which is newer than production: no "Roll back" any more.
    assert '<option value="2">v2</option>' in page
    assert ">Move production</button>" in page and ">Roll back</button>" not in page
    assert reader.get(f"/api/v1/skills/{SLUG}/resolve").json()["number"] == 1

    revoked = act(abe, "revoke", number=2, reason="fetches from an untrusted host").content
    assert "Revoked v2" in revoked.decode()
    assert reader.get(f"/api/v1/skills/{SLUG}/resolve?version=2").status_code == 410

    history = ada.get(f"/skills/{SLUG}/history/").content.decode()
    for text in ("v2 times out", "ship it", "first release", "ada", "abe", "rollback", "publish"):
        assert text in history
    skill = Skill.objects.get(slug=SLUG)
    assert skill.label_moves.count() == 3


# --- files leave the console inert ------------------------------------------------------------


@pytest.mark.parametrize("path", sorted(hostile.FILES))
def test_it_downloads_a_hostile_file_inert(login, editor, upload, robot, path):
    """An agent's non-UTF-8 .html/.svg comes back as opaque bytes to save, never as a page."""
    upload(hostile.hostile_package(SLUG), actor=robot)
    response = login(editor).get(f"/skills/{SLUG}/v1/download/{path}")
    assert response.status_code == 200
    assert response.content == hostile.FILES[path]
    assert response["Content-Type"] == "application/octet-stream"
    name = path.rsplit("/", 1)[1]
    assert response["Content-Disposition"] == f'attachment; filename="{name}"'
    assert response["X-Content-Type-Options"] == "nosniff"
    assert response["Content-Security-Policy"] == "sandbox; default-src 'none'"
    assert response["Cache-Control"] == "private, no-cache"


def test_it_downloads_a_text_file_as_plain_text(login, editor, published_v2):
    response = login(editor).get(f"/skills/{SLUG}/v2/download/scripts/fetch.py")
    assert response["Content-Type"] == "text/plain; charset=utf-8"
    assert response["Content-Disposition"] == 'attachment; filename="fetch.py"'
    assert response["Content-Security-Policy"] == "sandbox; default-src 'none'"
    assert response.content.startswith(b"import httpx")


def test_it_shows_a_hostile_file_only_as_binary_with_a_download_link(login, editor, upload, robot):
    upload(hostile.hostile_package(SLUG), actor=robot)
    client = login(editor)
    for htmx in (HTMX, {}):
        response = client.get(f"/skills/{SLUG}/v1/files/assets/x.html", **htmx)
        page = response.content.decode()
        assert response["Content-Type"] == "text/html; charset=utf-8"
        assert f"binary, {len(hostile.HTML)} bytes" in page
        assert f'href="/skills/{SLUG}/v1/download/assets/x.html"' in page
        # Not one byte of the file reaches the page, escaped or not.
        assert "pwned" not in page and "<script>window" not in page


def test_it_shows_text_files_escaped(login, editor, upload, robot):
    upload(package(SLUG, files={"assets/page.html": "<script>alert(1)</script>"}), actor=robot)
    page = login(editor).get(f"/skills/{SLUG}/v1/files/assets/page.html", **HTMX).content.decode()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "<script>alert" not in page


def test_it_refuses_downloads_to_end_users_and_other_tenants(
    login, alice, globex, make_member, upload, robot
):
    upload(hostile.hostile_package(SLUG), actor=robot)
    assert login(alice).get(f"/skills/{SLUG}/v1/download/assets/x.html").status_code == 403
    outsider = login(make_member(globex, "olga", Role.ADMIN))
    assert outsider.get(f"/skills/{SLUG}/v1/download/assets/x.html").status_code == 404
    assert outsider.get(f"/skills/{SLUG}/v1/files/assets/x.html").status_code == 404


def test_a_person_of_no_tenant_finds_no_skills(login, outsider, published_v1):
    client = login(outsider)
    assert client.get("/skills/").status_code == 404
    assert client.get(f"/skills/{SLUG}/v1/").status_code == 404
    client.get("/accounts/login/")
    data = {"csrfmiddlewaretoken": client.cookies["csrftoken"].value, "revoke-reason": "x"}
    assert client.post(f"/skills/{SLUG}/v1/revoke/", data).status_code == 404
    assert SkillVersion.objects.get(skill__slug=SLUG, number=1).status == VersionStatus.PUBLISHED
