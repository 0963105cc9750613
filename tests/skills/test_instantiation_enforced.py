"""Instantiation enforced: inputs checked against the manifest, tools and capabilities against
the token's grants, loads refused without a ready instance, instances invalidated when a
credential, a grant, a tool or the production label changes."""

from __future__ import annotations

import pytest
from django.db import IntegrityError, connection, transaction

from accounts.models import AuditEvent
from skills.models import SkillInstance
from tests.skills.conftest import instantiate_ready

BASE = "/api/v1/skills"
pytestmark = pytest.mark.django_db

REPORT = {
    "description": "Publish an approved report to the public site.",
    "inputs": {
        "report": {"type": "string", "description": "the report's id"},
        "site": "the target site",
        "pages": {"type": "integer", "required": False},
    },
    "credentials": [{"slot": "site_token", "purpose": "post to the site"}],
    "capabilities": ["network"],
    "allowed-tools": "http_post",
}
READY = {
    "bindings": {"site_token": "vault:site/token"},
    "inputs": {"report": "r-17", "site": "https://reports.example"},
}


@pytest.fixture
def report(publish):
    return publish("report-publish", **REPORT)


@pytest.fixture
def runner(acme, make_agent):
    return make_agent(acme, name="publisher", capabilities=["skills:read"])


def instantiate(client, payload, number=1):
    return client.post(
        f"{BASE}/report-publish/versions/{number}/instantiate", payload, format="json"
    )


def test_inputs_are_checked_against_the_manifest(runner, grant, report):
    grant(runner, tools=("http_post",), capabilities=("network",))
    response = instantiate(
        runner,
        {
            "bindings": READY["bindings"],
            "inputs": {"report": 17, "pages": 3, "colour": "blue"},
        },
    )

    assert response.status_code == 200
    body = response.json()
    assert body["state"] == "blocked"
    assert [(r["code"], r["input"]) for r in body["reasons"]] == [
        ("input_invalid", "report"),
        ("input_missing", "site"),
        ("input_unknown", "colour"),
    ]
    event = AuditEvent.objects.get(verb="skill_version.instantiated")
    assert event.data["inputs"] == ["colour", "pages", "report"]
    assert "blue" not in str(event.data)


def test_tools_and_capabilities_come_from_the_tokens_grants(runner, grant, report):
    # The agent says it has everything; the token was granted nothing.
    said = {**READY, "tools": ["http_post"], "capabilities": ["network"]}
    refused = instantiate(runner, said).json()
    assert [(r["code"], r["tool"] or r["capability"]) for r in refused["reasons"]] == [
        ("tool_not_granted", "http_post"),
        ("capability_not_granted", "network"),
    ]

    grant(runner, tools=("http_post",), capabilities=("network",))
    # Granted, but the runtime says the network is down in this run.
    offline = instantiate(runner, {**READY, "capabilities": []}).json()
    assert [r["code"] for r in offline["reasons"]] == ["capability_unavailable"]
    assert instantiate(runner, READY).json()["state"] == "ready"


def test_resolve_and_body_need_a_ready_instance_or_an_audited_override(runner, grant, report):
    refused = runner.get(f"{BASE}/report-publish/resolve")
    assert (refused.status_code, refused.json()["code"]) == (409, "not_instantiable")
    assert refused.json()["reasons"][0]["code"] == "not_instantiated"

    grant(runner, tools=("http_post",))
    blocked = instantiate(runner, READY).json()
    assert blocked["state"] == "blocked"
    body = runner.get(f"{BASE}/report-publish/versions/1/body")
    assert (body.status_code, body.json()["code"]) == (409, "not_instantiable")
    assert [r["code"] for r in body.json()["reasons"]] == ["capability_not_granted"]

    overridden = runner.get(
        f"{BASE}/report-publish/versions/1/body", {"override_reason": "reading it to plan"}
    )
    assert overridden.status_code == 200
    event = AuditEvent.objects.get(verb="skill_version.loaded_without_instance")
    assert (event.reason, event.data["reasons"]) == (
        "reading it to plan",
        ["capability_not_granted"],
    )

    grant(runner, capabilities=("network",))
    instantiate_ready(runner, "report-publish", **READY)
    assert runner.get(f"{BASE}/report-publish/resolve").status_code == 200
    assert runner.get(f"{BASE}/report-publish/versions/1/body").status_code == 200


def test_a_changed_credential_invalidates_the_instances_bound_to_it(
    acme, make_agent, runner, grant, report
):
    grant(runner, tools=("http_post",), capabilities=("network",))
    instance = instantiate_ready(runner, "report-publish", **READY)

    rotated = runner.post(
        f"{BASE}/credentials/changed",
        {"secret": "vault:site/token", "reason": "rotated after a leak"},
        format="json",
    )

    assert rotated.status_code == 200, rotated.json()
    assert rotated.json()["invalidated"] == [instance]
    again = runner.get(f"{BASE}/report-publish/resolve")
    assert (again.status_code, again.json()["reasons"][0]["code"]) == (
        409,
        "instance_invalidated",
    )
    assert "rotated after a leak" in again.json()["reasons"][0]["detail"]
    assert instantiate(runner, READY).json()["state"] == "ready"
    assert runner.get(f"{BASE}/report-publish/resolve").status_code == 200


def test_withdrawing_a_grant_invalidates_that_tokens_instances(ada_api, runner, grant, report):
    grant(runner, tools=("http_post",), capabilities=("network",))
    instantiate_ready(runner, "report-publish", **READY)
    grants = ada_api.get(f"{BASE}/grants", {"token": runner.token.pk}).json()["results"]
    network = next(g for g in grants if g["name"] == "network")

    withdrawn = ada_api.delete(f"{BASE}/grants/{network['id']}")

    assert withdrawn.status_code == 200, withdrawn.json()
    assert len(withdrawn.json()["invalidated"]) == 1
    assert runner.get(f"{BASE}/report-publish/resolve").status_code == 409
    refused = runner.post(
        f"{BASE}/grants",
        {"token": runner.token.pk, "kind": "capability", "name": "network"},
        format="json",
    )
    assert refused.status_code == 403


def test_a_label_move_and_a_retired_tool_invalidate_instances(
    acme, ada_api, abe, runner, grant, report, publish, pass_all, upload
):
    grant(runner, tools=("http_post",), capabilities=("network",))
    instantiate_ready(runner, "report-publish", **READY)
    # v2 is published: production leaves v1, and v1's instances with it.
    from skills import services
    from tests.skills.conftest import package

    skill = report.skill
    v2, _ = services.skill_version_upload(
        tenant=acme,
        skill=skill,
        data=package("report-publish", **{**REPORT, "version": "2.0"}),
        actor=abe,
    )
    assert SkillInstance.objects.get().state == "ready"
    retired = ada_api.post(
        f"{BASE}/tools/http_post/retire", {"reason": "replaced by http_client"}, format="json"
    )
    assert retired.status_code == 200, retired.json()
    instance = SkillInstance.objects.get()
    assert instance.state == "invalidated"
    assert "http_post" in instance.invalidated_reason
    assert v2.pk != report.pk


def test_an_invalidated_instance_never_comes_back_even_by_hand(ada_api, runner, grant, report):
    grant(runner, tools=("http_post",), capabilities=("network",))
    instantiate_ready(runner, "report-publish", **READY)
    grants = ada_api.get(f"{BASE}/grants", {"token": runner.token.pk}).json()["results"]
    ada_api.delete(f"{BASE}/grants/{next(g['id'] for g in grants if g['name'] == 'network')}")
    instance = SkillInstance.objects.get()
    assert instance.state == "invalidated"

    # The database refuses the move back (`INSTANCE_MACHINE`'s trigger), raw SQL included.
    with (
        pytest.raises(IntegrityError, match="illegal skill instance transition"),
        transaction.atomic(),
        connection.cursor() as cursor,
    ):
        cursor.execute(
            "UPDATE skills_skillinstance SET state = 'ready' WHERE id = %s", [instance.pk]
        )
    instance.refresh_from_db()
    assert instance.state == "invalidated"
