"""Discovery by meaning: vectors stored at publish time, the token's grants as a filter,
ranking moved by use reports and negative transfer, and loading several skills within a
context budget."""

from __future__ import annotations

import pytest

from skills.models import SkillEmbedding, SkillUseReport
from tests.skills.conftest import instantiate_ready

BASE = "/api/v1/skills"
pytestmark = pytest.mark.django_db


@pytest.fixture
def shelf(publish):
    return {
        "db-backup": publish(
            "db-backup",
            description="Back up a PostgreSQL database to object storage and verify the dump.",
            body="# Back up\n\nRun pg_dump, upload the archive, verify its checksum.\n",
        ),
        "db-restore": publish(
            "db-restore",
            description="Restore a PostgreSQL database from a backup archive.",
            body="# Restore\n\nCreate the target, run pg_restore, compare row counts.\n",
        ),
        "k8s-deploy": publish(
            "k8s-deploy",
            description="Deploy a new version of a service to Kubernetes and watch the rollout.",
            body="# Deploy\n\nUpdate the image, apply, watch the rollout, roll back if needed.\n",
            capabilities=["network"],
            **{"allowed-tools": "kubectl"},
        ),
    }


def names(response):
    assert response.status_code == 200, response.json()
    return [entry["skill"] for entry in response.json()["results"]]


def test_a_paraphrase_finds_the_skill_by_meaning_and_an_unrelated_task_finds_nothing(reader, shelf):
    # No word of the task is in the skill's name, description or triggers.
    found = reader.get(f"{BASE}/catalog", {"q": "make a safety copy of our postgres data"})
    assert names(found)[0] == "db-backup"
    assert found.json()["semantic"] == "on"
    assert found.json()["results"][0]["why"]["matched"] == []
    assert (
        reader.get(f"{BASE}/catalog", {"q": "book a table for dinner in Lisbon"}).json()["results"]
        == []
    )
    # The vectors were computed once, at publish time, and stored.
    assert SkillEmbedding.objects.count() == 3


def test_skills_the_token_may_not_run_are_excluded_with_the_reason(reader, grant, shelf):
    body = reader.get(f"{BASE}/catalog", {"q": "ship the new release to the cluster"}).json()
    assert body["results"] == []
    assert body["excluded"] == [
        {
            "skill": "k8s-deploy",
            "version": 1,
            "reason": "tools_not_granted",
            "missing_tools": ["kubectl"],
            "missing_capabilities": [],
        }
    ]

    grant(reader, tools=("kubectl",))
    again = reader.get(f"{BASE}/catalog", {"q": "ship the new release to the cluster"}).json()
    assert again["excluded"][0]["reason"] == "capability_not_granted"
    assert again["excluded"][0]["missing_capabilities"] == ["network"]

    grant(reader, capabilities=("network",))
    assert names(reader.get(f"{BASE}/catalog", {"q": "ship the new release to the cluster"})) == [
        "k8s-deploy"
    ]


def test_negative_transfer_on_a_task_type_ranks_a_skill_lower(reader, make_ready, shelf):
    query = {"q": "take a copy of the postgres database", "task_type": "db-maintenance"}
    before = names(reader.get(f"{BASE}/catalog", query))
    assert before[0] == "db-backup"

    make_ready(reader, "db-backup")
    for _ in range(3):
        reported = reader.post(
            f"{BASE}/db-backup/versions/1/reports",
            {
                "task_type": "db-maintenance",
                "outcome": "failure",
                "without_skill": "success",
            },
            format="json",
        )
        assert reported.status_code == 201, reported.json()
        assert reported.json()["negative_transfer"] is True

    after = reader.get(f"{BASE}/catalog", query).json()["results"]
    assert after[0]["skill"] != "db-backup"
    backup = next(entry for entry in after if entry["skill"] == "db-backup")
    assert (backup["why"]["negative_transfer"], backup["why"]["reports"]) == (3, 3)
    # Another task type is not affected.
    other = names(reader.get(f"{BASE}/catalog", {**query, "task_type": "disaster-drill"}))
    assert other[0] == "db-backup"
    assert SkillUseReport.objects.count() == 3


def test_loading_several_skills_checks_the_context_budget(reader, make_ready, shelf):
    make_ready(reader, "db-backup")
    make_ready(reader, "db-restore")
    wanted = [{"skill": "db-backup"}, {"skill": "db-restore"}]
    sizes = {
        slug: len(version.manifest["description"]) + len(version.body)
        for slug, version in shelf.items()
    }

    tight = sizes["db-backup"] + sizes["db-restore"] - 1
    refused = reader.post(f"{BASE}/load", {"skills": wanted, "budget_chars": tight}, format="json")
    assert (refused.status_code, refused.json()["code"]) == (409, "context_budget_exceeded")
    assert refused.json()["fits"] == ["db-backup"]
    assert refused.json()["sizes"] == {
        "db-backup": sizes["db-backup"],
        "db-restore": sizes["db-restore"],
    }

    loaded = reader.post(
        f"{BASE}/load", {"skills": wanted, "budget_chars": tight + 1}, format="json"
    )
    assert loaded.status_code == 200, loaded.json()
    assert [skill["skill"] for skill in loaded.json()["skills"]] == ["db-backup", "db-restore"]
    assert loaded.json()["total_chars"] == tight + 1


def test_loading_needs_a_ready_instance_of_each_skill(reader, grant, shelf):
    grant(reader, tools=("kubectl",), capabilities=("network",))
    instantiate_ready(reader, "db-backup")
    refused = reader.post(
        f"{BASE}/load",
        {"skills": [{"skill": "db-backup"}, {"skill": "k8s-deploy"}], "budget_chars": 10_000},
        format="json",
    )
    assert (refused.status_code, refused.json()["code"]) == (409, "not_instantiable")
