"""Skill fixtures: package zips, agents with skill capabilities, admins' API clients."""

from __future__ import annotations

import copy
import io
import uuid
import zipfile
from collections.abc import Callable
from typing import Any

import pytest
import yaml
from rest_framework.test import APIClient

from accounts.actors import Actor
from accounts.models import Role, Tenant
from accounts.services import agent_token_create
from skills import services
from skills.models import EvaluationCategory, Skill, SkillVersion, TokenGrant, VersionStatus

SLUG = "pdf-tools"
NETWORK_SCRIPT = "import httpx\n\nprint(httpx.get('https://example.com').status_code)\n"


def skill_md(
    slug: str = SLUG, *, body: str = "# PDF tools\n\nFill in PDF forms.\n", **fields: Any
) -> str:
    meta = {"name": slug, "description": "Fill in PDF forms.", "version": "1.0", **fields}
    return "---\n" + yaml.safe_dump(meta, sort_keys=False) + "---\n" + body


def build_zip(files: dict[str, str | bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path, content in files.items():
            archive.writestr(zipfile.ZipInfo(path, date_time=(2024, 1, 1, 0, 0, 0)), content)
    return buffer.getvalue()


def package(
    slug: str = SLUG,
    *,
    body: str = "# PDF tools\n\nFill in PDF forms.\n",
    files: dict[str, str | bytes] | None = None,
    **fields: Any,
) -> bytes:
    return build_zip({"SKILL.md": skill_md(slug, body=body, **fields), **(files or {})})


def package_v2(slug: str = SLUG) -> bytes:
    """A second version that adds the network capability with a script using it."""
    return package(
        slug,
        body="# PDF tools\n\nFill in PDF forms, fetching templates.\n",
        capabilities=["network"],
        version="2.0",
        files={"scripts/fetch.py": NETWORK_SCRIPT},
    )


ALL_CHECKS = {
    "selection": True,
    "loading": True,
    "action_trajectory": True,
    "final_state": True,
    "safety_refusal": True,
}


def api_case(
    category: str = "normal", *, passed: bool = True, case_id: str | None = None, tokens: int = 900
) -> dict[str, Any]:
    """One evaluation case as an evaluator posts it."""
    case: dict[str, Any] = {
        "input": {"task": f"a {category} task"},
        "expected": {"outcome": "stops safely" if category != "normal" else "done"},
        "trajectory_summary": f"selected, loaded the body, handled the {category} case",
        "result": "passed" if passed else "failed",
        "checks": {**ALL_CHECKS, "final_state": passed},
        "cost": {"tokens": tokens, "seconds": 2.5, "tool_calls": 3},
    }
    if category == "normal":
        # Without the skill the agent fails the task at a little less cost: the skill wins.
        case["baseline"] = {
            "result": "failed",
            "cost": {"tokens": tokens - 100, "seconds": 2.0, "tool_calls": 3},
        }
    if case_id is not None:
        case["id"] = case_id
    return case


# What an API run names as its environment when the skill needs no tool.
API_ENVIRONMENT = {"model": "test-model", "tools": {}}


def service_case(category: str = "normal", *, tokens: int = 900) -> dict[str, Any]:
    """One passing case in the shape ``services.evaluation_record`` takes."""
    return {
        "case_id": "",
        "input": {"task": f"a {category} task"},
        "expected": {"outcome": "done"},
        "trajectory_summary": f"handled the {category} case",
        "passed": True,
        **ALL_CHECKS,
        "cost_tokens": tokens,
        "cost_seconds": 2.5,
        "cost_tool_calls": 3,
        **(NO_SKILL_BASELINE if category == "normal" else {}),
    }


# The normal case run without the skill: it fails, a little cheaper.
NO_SKILL_BASELINE = {
    "baseline_passed": False,
    "baseline_cost_tokens": 800,
    "baseline_cost_seconds": 2.0,
    "baseline_cost_tool_calls": 3,
}


def run_environment(version: SkillVersion) -> dict[str, Any]:
    """The environment a run names: the model and a version of every tool the skill needs."""
    return {"model": "test-model", "tools": dict.fromkeys(version.manifest["tools"], "1.0")}


def upload_file(data: bytes, name: str = "skill.zip") -> io.BytesIO:
    handle = io.BytesIO(data)
    handle.name = name
    return handle


@pytest.fixture(autouse=True)
def isolated_cache(settings: Any) -> None:
    """A key prefix per test, so cached resolves of a former test run never leak in.

    Test databases restart their id sequences, so tenant 1's skill in this run
    would otherwise find tenant 1's cache entries of the last run.
    """
    caches = copy.deepcopy(settings.CACHES)
    caches["default"]["KEY_PREFIX"] = f"test-skills-{uuid.uuid4().hex}"
    settings.CACHES = caches


@pytest.fixture
def ada(admin_user: Any) -> Actor:
    return Actor.for_user(admin_user, Role.ADMIN)


@pytest.fixture
def abe(admin2: Any) -> Actor:
    return Actor.for_user(admin2, Role.ADMIN)


@pytest.fixture
def ann(acme: Tenant, make_member: Callable[..., Any]) -> Actor:
    """A third admin: the second approver a capability or risk increase needs."""
    return Actor.for_user(make_member(acme, "ann", Role.ADMIN), Role.ADMIN)


@pytest.fixture
def erin(editor: Any) -> Actor:
    return Actor.for_user(editor, Role.EDITOR)


@pytest.fixture
def robot() -> Actor:
    return Actor(kind="agent", id="999", label="robot", capabilities=frozenset({"skills:write"}))


@pytest.fixture
def skill(acme: Tenant, ada: Actor) -> Skill:
    return services.skill_create(tenant=acme, slug=SLUG, name="PDF tools", actor=ada)


@pytest.fixture
def upload(acme: Tenant, skill: Skill) -> Callable[..., SkillVersion]:
    def make(data: bytes | None = None, *, actor: Actor) -> SkillVersion:
        version, _ = services.skill_version_upload(
            tenant=acme, skill=skill, data=data or package(), actor=actor
        )
        return version

    return make


@pytest.fixture
def eve(acme: Tenant, make_member: Callable[..., Any]) -> Any:
    """An editor who runs evaluations and writes no skills: the independent evaluator."""
    return make_member(acme, "eve", Role.EDITOR)


@pytest.fixture
def eves_token(acme: Tenant, eve: Any) -> Actor:
    """The evaluator's token, acting for eve, as the services see it."""
    token = agent_token_create(
        tenant=acme, name="matrix-runner", capabilities=["evaluations:write"], owner=eve
    ).token
    return Actor.for_token(token)


@pytest.fixture
def pass_all(acme: Tenant, eves_token: Actor) -> Callable[..., None]:
    """Record a passing run of every category on the version's own hash, by eve's token."""
    evaluator = eves_token

    def record(version: SkillVersion, *, skip: tuple[str, ...] = ()) -> None:
        for category in EvaluationCategory.values:
            if category in skip:
                continue
            services.evaluation_record(
                tenant=acme,
                version=version,
                actor=evaluator,
                category=category,
                passed=True,
                content_hash=version.content_hash,
                environment=run_environment(version),
                cases=[service_case(category)],
            )

    return record


@pytest.fixture
def published_v1(
    acme: Tenant, upload: Callable[..., SkillVersion], pass_all: Callable[..., None], ada, abe
) -> SkillVersion:
    """v1 uploaded by ada, approved by abe, six categories passed, published."""
    version = upload(actor=ada)
    pass_all(version)
    services.skill_version_submit(tenant=acme, version=version, actor=ada)
    services.skill_version_approve(tenant=acme, version=version, actor=abe)
    return services.skill_version_publish(tenant=acme, version=version, actor=abe)


@pytest.fixture
def published_v2(
    acme: Tenant,
    published_v1: SkillVersion,
    upload: Callable[..., SkillVersion],
    pass_all: Callable[..., None],
    ada,
    abe,
    ann,
) -> SkillVersion:
    """v2 adds the network capability: abe and ann both approve it."""
    version = upload(package_v2(), actor=ada)
    pass_all(version)
    services.skill_version_submit(tenant=acme, version=version, actor=ada)
    services.skill_version_approve(tenant=acme, version=version, actor=abe)
    services.skill_version_approve(tenant=acme, version=version, actor=ann)
    return services.skill_version_publish(tenant=acme, version=version, actor=abe)


@pytest.fixture
def writer(acme: Tenant, make_agent: Callable[..., APIClient]) -> APIClient:
    return make_agent(acme, name="uploader", capabilities=["skills:read", "skills:write"])


@pytest.fixture
def evaluator(acme: Tenant, make_agent: Callable[..., APIClient], eve: Any) -> APIClient:
    return make_agent(
        acme, name="evaluator", capabilities=["skills:read", "evaluations:write"], owner=eve
    )


@pytest.fixture
def reader(acme: Tenant, make_agent: Callable[..., APIClient]) -> APIClient:
    return make_agent(acme, name="runner", capabilities=["skills:read"])


@pytest.fixture
def ada_api(admin_user: Any, session_api: Callable[[Any], APIClient]) -> APIClient:
    return session_api(admin_user)


@pytest.fixture
def abe_api(admin2: Any, session_api: Callable[[Any], APIClient]) -> APIClient:
    return session_api(admin2)


@pytest.fixture
def globex_admin(globex: Tenant, make_member: Callable[..., Any]) -> Any:
    return make_member(globex, "gus", Role.ADMIN)


@pytest.fixture
def publish(
    acme: Tenant, ada: Actor, abe: Actor, ann: Actor, pass_all: Callable[..., None]
) -> Callable[..., SkillVersion]:
    """Create, upload, evaluate, approve (abe, and ann too when it declares capabilities or
    high risk) and publish a skill; return its production version."""

    def make(slug: str, **fields) -> SkillVersion:
        skill = services.skill_create(tenant=acme, slug=slug, actor=ada)
        version, _ = services.skill_version_upload(
            tenant=acme,
            skill=skill,
            data=package(slug, files=fields.pop("files", None), **fields),
            actor=ada,
        )
        pass_all(version)
        services.skill_version_submit(tenant=acme, version=version, actor=ada)
        version = services.skill_version_approve(tenant=acme, version=version, actor=abe)
        if version.status == VersionStatus.IN_REVIEW:
            services.skill_version_approve(tenant=acme, version=version, actor=ann)
        return services.skill_version_publish(tenant=acme, version=version, actor=abe)

    return make


@pytest.fixture
def grant(acme: Tenant, ada: Actor) -> Callable[..., None]:
    """An admin grants an agent client's token tools and runtime capabilities."""

    def make(client: Any, *, tools: tuple[str, ...] = (), capabilities: tuple[str, ...] = ()):
        for kind, names in (("tool", tools), ("capability", capabilities)):
            for name in names:
                services.token_grant_add(
                    tenant=acme, actor=ada, token=client.token, kind=kind, name=name
                )

    return make


def instantiate_ready(client: Any, slug: str = SLUG, number: int = 1, **payload: Any) -> str:
    """Instantiate a version for an agent and return its ready instance's id."""
    response = client.post(
        f"/api/v1/skills/{slug}/versions/{number}/instantiate", payload, format="json"
    )
    assert response.status_code == 200, response.json()
    assert response.json()["state"] == "ready", response.json()
    return response.json()["instance"]


@pytest.fixture
def make_ready(acme: Tenant, grant: Callable[..., None]) -> Callable[..., Any]:
    """Grant an agent what the test skills need and instantiate every loadable version of
    `slug` for it: the agent may then resolve and load them, as after a real check."""

    def make(client: Any, slug: str = SLUG, *, tools: tuple[str, ...] = (), **payload: Any) -> Any:
        if not TokenGrant.objects.filter(token=client.token, name="network").exists():
            grant(client, tools=tools, capabilities=("network",))
        numbers = SkillVersion.objects.filter(
            tenant=acme,
            skill__slug=slug,
            status__in=[VersionStatus.PUBLISHED, VersionStatus.DEPRECATED],
        ).values_list("number", flat=True)
        for number in numbers:
            instantiate_ready(client, slug, number, **payload)
        return client

    return make
