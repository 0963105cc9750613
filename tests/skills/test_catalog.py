"""Level 1 (catalog), level 2 (body), level 3 (files); each load counted per version and agent."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from skills.models import LoadLevel, SkillLoad, SkillVersion

BASE = "/api/v1/skills"
pytestmark = pytest.mark.django_db


@pytest.fixture
def reader(reader, grant):
    """The runner, granted every tool the shelf's skills need."""
    grant(reader, tools=("Read", "Bash", "http_post"))
    return reader


@pytest.fixture
def shelf(publish) -> dict[str, SkillVersion]:
    return {
        "pdf-forms": publish(
            "pdf-forms",
            description="Fill in a PDF form from field values.",
            body="# PDF forms\n\nList the fields, fill them, flatten the form.\n",
            triggers=["fill a pdf form"],
            **{"allowed-tools": "Read Bash(pdftk:*)"},
        ),
        "blog-publish": publish(
            "blog-publish",
            description="Publish an article to the company blog.",
            body="# Blog\n\nPost the article through the blog API as a draft, then publish.\n",
            credentials=[{"slot": "blog_token", "purpose": "post to the blog API"}],
            consumes=["report:public"],
            produces=["article"],
            **{"allowed-tools": "http_post"},
        ),
        "report-writer": publish(
            "report-writer",
            description="Write a report from experiment results.",
            body="# Report\n\nCollect the metrics, cite each source, write the summary.\n",
            produces=["report:internal"],
        ),
    }


def test_the_catalog_is_level_one_only_and_ranks_by_task_words(reader, shelf):
    response = reader.get(f"{BASE}/catalog", {"q": "Fill the PDF form please"})

    assert response.status_code == 200, response.json()
    (entry,) = response.json()["results"]
    version = shelf["pdf-forms"]
    why = entry.pop("why")
    assert why["matched"] == ["fill", "pdf", "form"]
    assert why["semantic"] > 0.5 and entry.pop("score") > why["semantic"]
    assert entry == {
        "skill": "pdf-forms",
        "name": "pdf-forms",
        "description": "Fill in a PDF form from field values.",
        "version": 1,
        "content_hash": version.content_hash,
        "status": "published",
        "risk": "low",
        "capabilities": [],
        "required_tools": ["Bash", "Read"],
        "credentials": [],
        "consumes": [],
        "produces": [],
        "body_url": f"{BASE}/pdf-forms/versions/1/body",
    }
    assert "body" not in entry and "files" not in entry


def test_a_task_no_skill_covers_finds_nothing(reader, shelf):
    assert reader.get(f"{BASE}/catalog", {"q": "book a flight"}).json()["results"] == []


def test_skills_needing_tools_the_agent_lacks_are_excluded_with_the_reason(reader, shelf):
    body = reader.get(f"{BASE}/catalog", {"tools": "Read,Bash"}).json()

    assert {entry["skill"] for entry in body["results"]} == {"pdf-forms", "report-writer"}
    assert body["excluded"] == [
        {
            "skill": "blog-publish",
            "version": 1,
            "reason": "tools_unavailable",
            "missing_tools": ["http_post"],
            "missing_capabilities": [],
        }
    ]
    # An agent that names no tools at all has none: only tool-free skills remain.
    nothing = reader.get(f"{BASE}/catalog", {"tools": ""}).json()
    assert [entry["skill"] for entry in nothing["results"]] == ["report-writer"]
    # Not saying what it has is not the same: no tool filter.
    unfiltered = reader.get(f"{BASE}/catalog").json()
    assert len(unfiltered["results"]) == 3 and unfiltered["excluded"] == []


def test_only_production_versions_are_listed(reader, shelf, acme, ada, upload):
    draft = upload(actor=ada)  # pdf-tools v1, a draft
    slugs = [entry["skill"] for entry in reader.get(f"{BASE}/catalog").json()["results"]]

    assert draft.skill.slug not in slugs


def test_the_catalog_warns_about_skills_that_conflict_when_loaded_together(reader, shelf):
    body = reader.get(f"{BASE}/catalog", {"q": "report blog"}).json()

    assert {entry["skill"] for entry in body["results"]} == {"blog-publish", "report-writer"}
    assert body["conflicts"] == [
        {
            "kind": "classification_mismatch",
            "skills": ["report-writer", "blog-publish"],
            "label": "report",
            "detail": "report-writer produces report as internal; blog-publish accepts report "
            "only as public. Do not pass it on.",
        }
    ]
    # Already loaded skills count as loaded together with what the catalog returns.
    with_loaded = reader.get(f"{BASE}/catalog", {"q": "blog", "loaded": "report-writer"}).json()
    assert [c["kind"] for c in with_loaded["conflicts"]] == ["classification_mismatch"]
    alone = reader.get(f"{BASE}/catalog", {"q": "blog"}).json()
    assert alone["conflicts"] == []


def test_bad_catalog_parameters_are_problems(reader, shelf):
    for params in ({"tools": "Read,$(rm -rf)"}, {"loaded": "../x"}, {"limit": 0}):
        response = reader.get(f"{BASE}/catalog", params)
        assert (response.status_code, response.json()["code"]) == (400, "validation_error")
    assert SkillLoad.objects.count() == 0


def test_levels_two_and_three_load_on_demand_and_every_load_is_counted(
    reader, evaluator, publish, make_ready
):
    version = publish(
        "pdf-forms",
        body="# Fill\n\nSee references/fields.md.\n",
        files={"references/fields.md": "Text fields take strings.\n"},
    )

    reader.get(f"{BASE}/catalog")
    reader.get(f"{BASE}/catalog", {"q": "pdf"})
    make_ready(reader, "pdf-forms")
    body = reader.get(f"{BASE}/pdf-forms/versions/1/body")
    assert body.status_code == 200, body.json()
    assert body.json()["body"] == "# Fill\n\nSee references/fields.md.\n"
    assert [f["path"] for f in body.json()["files"]] == ["SKILL.md", "references/fields.md"]
    url = body.json()["files"][1]["url"]
    assert url == f"{BASE}/pdf-forms/versions/1/files/references/fields.md"
    assert reader.get(url).content == b"Text fields take strings.\n"
    make_ready(evaluator, "pdf-forms")
    evaluator.get(f"{BASE}/pdf-forms/versions/1/body")

    counts = {
        (load.loader_label, load.level): load.count
        for load in SkillLoad.objects.filter(version=version)
    }
    assert counts == {
        ("runner", LoadLevel.CATALOG): 2,
        ("runner", LoadLevel.BODY): 1,
        ("runner", LoadLevel.FILE): 1,
        ("evaluator", LoadLevel.BODY): 1,
    }
    detail = reader.get(f"{BASE}/pdf-forms/versions/1").json()
    assert detail["loads"] == {"catalog": 2, "body": 2, "file": 1}
    loads = reader.get(f"{BASE}/pdf-forms/versions/1/loads").json()["results"]
    assert {(load["loader"]["label"], load["level"], load["count"]) for load in loads} == {
        ("runner", 1, 2),
        ("runner", 2, 1),
        ("runner", 3, 1),
        ("evaluator", 2, 1),
    }


def test_the_body_of_a_draft_is_not_served(reader, upload, ada):
    upload(actor=ada)
    response = reader.get(f"{BASE}/pdf-tools/versions/1/body")

    assert (response.status_code, response.json()["code"]) == (409, "version_not_published")
    assert SkillLoad.objects.count() == 0


def test_another_tenants_skill_is_not_found(globex, make_agent, shelf):
    stranger = make_agent(globex, name="stranger", capabilities=["skills:read"])

    assert stranger.get(f"{BASE}/catalog").json()["results"] == []
    response = stranger.get(f"{BASE}/pdf-forms/versions/1/body")
    assert response.status_code == 404
    assert stranger.get(f"{BASE}/pdf-forms/versions/1/loads").status_code == 404


def test_a_catalog_listing_costs_a_fixed_number_of_queries(reader, shelf, publish):
    def queries() -> int:
        with CaptureQueriesContext(connection) as captured:
            assert reader.get(f"{BASE}/catalog").status_code == 200
        return len(captured)

    queries()  # the first request of a token also stamps its last use
    before = queries()
    publish("extra-skill", description="Another one.")
    assert queries() == before


def test_reserved_slugs_cannot_name_a_skill(writer):
    response = writer.post(BASE, {"slug": "catalog"}, format="json")

    assert (response.status_code, response.json()["code"]) == (400, "validation_error")


def test_composition_finds_shared_outputs_and_downgraded_classes_only():
    from skills.composition import conflicts_between

    conflicts = conflicts_between(
        {
            "collect": {"produces": ["documents:private"]},
            "summarise": {"consumes": ["documents:internal"], "produces": ["summary"]},
            "digest": {"consumes": ["documents"], "produces": ["summary:public"]},
            "archive": {"consumes": ["documents:private"]},
        }
    )

    assert [(c.kind, c.skills, c.label) for c in conflicts] == [
        ("classification_mismatch", ("collect", "summarise"), "documents"),
        ("shared_output", ("digest", "summarise"), "summary"),
    ]


def test_chinese_task_words_match_by_substring(reader, publish):
    publish("report-cn", description="把实验结果整理成公开报告", triggers=["整理实验报告"])
    publish("deploy-cn", description="部署服务到生产环境")

    results = reader.get(f"{BASE}/catalog", {"q": "整理实验"}).json()["results"]
    assert [entry["skill"] for entry in results] == ["report-cn"]
