"""Lifecycle rules of skills.services, checked on the data they leave behind."""

from __future__ import annotations

import pytest

from accounts.actors import Actor
from accounts.models import AuditEvent
from common.problems import InvalidTransition, Problem
from reviews.models import ItemStatus, Queue, ReviewItem
from reviews.services import review_decide
from skills import selectors, services
from skills.models import (
    EvaluationCategory,
    LabelMove,
    SkillFile,
    SkillLabel,
    SkillVersion,
    VersionStatus,
)
from tests.skills.conftest import SLUG, package, package_v2, run_environment


def problem_code(excinfo: pytest.ExceptionInfo[Problem]) -> tuple[int, str]:
    return excinfo.value.status_code, excinfo.value.code


# --- uploads ----------------------------------------------------------------------------------


def test_it_stores_every_file_with_its_digest(upload, ada):
    version = upload(package_v2(), actor=ada)
    files = {f.path: f for f in SkillFile.objects.filter(version=version)}
    assert sorted(files) == ["SKILL.md", "scripts/fetch.py"]
    assert bytes(files["scripts/fetch.py"].content).decode() == (
        "import httpx\n\nprint(httpx.get('https://example.com').status_code)\n"
    )
    assert version.manifest["capabilities"] == ["network"]
    assert version.content_hash.startswith("sha256:")
    assert (version.number, version.status, version.author_label) == (1, "draft", "ada")


def test_it_numbers_versions_per_skill_and_dedupes_identical_content(acme, skill, ada):
    first, created_first = services.skill_version_upload(
        tenant=acme, skill=skill, data=package(), actor=ada
    )
    again, created_again = services.skill_version_upload(
        tenant=acme, skill=skill, data=package(), actor=ada
    )
    second, _ = services.skill_version_upload(
        tenant=acme, skill=skill, data=package_v2(), actor=ada
    )
    assert (created_first, created_again) == (True, False)
    assert again.pk == first.pk
    assert [first.number, second.number] == [1, 2]
    assert SkillVersion.objects.filter(skill=skill).count() == 2


def test_it_turns_package_errors_into_problems_with_their_code(acme, skill, ada):
    with pytest.raises(Problem) as caught:
        services.skill_version_upload(
            tenant=acme, skill=skill, data=package("other-skill"), actor=ada
        )
    assert problem_code(caught) == (400, "name_mismatch")
    assert caught.value.extra == {"path": "SKILL.md"}
    assert not SkillVersion.objects.exists()


def test_it_refuses_a_duplicate_slug_in_the_same_tenant_only(acme, globex, skill, ada):
    with pytest.raises(Problem) as caught:
        services.skill_create(tenant=acme, slug=SLUG, actor=ada)
    assert problem_code(caught) == (409, "skill_exists")
    other = services.skill_create(tenant=globex, slug=SLUG, actor=Actor.system())
    assert other.tenant == globex


# --- submit and review queue ------------------------------------------------------------------


def test_it_opens_a_skill_publication_review_item_on_submit(acme, published_v1, upload, ada):
    version = upload(package_v2(), actor=ada)
    services.skill_version_submit(tenant=acme, version=version, actor=ada)
    item = ReviewItem.objects.get(queue=Queue.SKILL_PUBLICATION, target_id=str(version.pk))
    assert item.status == ItemStatus.OPEN
    assert item.target_type == "skill_version"
    assert item.reason_codes == ["capability_added"]
    assert item.priority == 1


def test_it_approves_through_the_review_queue_with_the_same_rules(acme, upload, ada, abe):
    version = upload(actor=ada)
    services.skill_version_submit(tenant=acme, version=version, actor=ada)
    item = ReviewItem.objects.get(queue=Queue.SKILL_PUBLICATION, target_id=str(version.pk))

    with pytest.raises(Problem) as caught:
        review_decide(tenant=acme, item_id=item.pk, actor=ada, verdict="approve")
    assert problem_code(caught) == (409, "author_cannot_approve")

    review_decide(tenant=acme, item_id=item.pk, actor=abe, verdict="approve", note="looks right")
    version.refresh_from_db()
    item.refresh_from_db()
    assert (version.status, version.approved_by_label) == ("approved", "abe")
    assert item.status == ItemStatus.DECIDED
    approval = AuditEvent.objects.get(verb="skill_version.approved", target_id=str(version.pk))
    assert approval.reason == "looks right"
    assert approval.data["review_item"] == item.pk


def test_it_rejects_through_the_review_queue(acme, upload, ada, abe):
    version = upload(actor=ada)
    services.skill_version_submit(tenant=acme, version=version, actor=ada)
    item = ReviewItem.objects.get(queue=Queue.SKILL_PUBLICATION, target_id=str(version.pk))
    review_decide(
        tenant=acme,
        item_id=item.pk,
        actor=abe,
        verdict="reject",
        reason_code="unsupported",
        note="no failure handling",
    )
    version.refresh_from_db()
    assert version.status == VersionStatus.REJECTED
    assert version.reject_reason == "Not supported by its sources: no failure handling"


def test_it_cancels_the_review_item_when_approved_outside_the_queue(acme, upload, ada, abe):
    version = upload(actor=ada)
    services.skill_version_submit(tenant=acme, version=version, actor=ada)
    services.skill_version_approve(tenant=acme, version=version, actor=abe)
    item = ReviewItem.objects.get(queue=Queue.SKILL_PUBLICATION, target_id=str(version.pk))
    assert item.status == ItemStatus.CANCELLED


def test_it_refuses_a_queue_decision_once_the_version_moved_on(acme, upload, ada, abe):
    version = upload(actor=ada)
    services.skill_version_submit(tenant=acme, version=version, actor=ada)
    item = ReviewItem.objects.get(queue=Queue.SKILL_PUBLICATION, target_id=str(version.pk))
    # Services close the item whenever they move a version; a change behind
    # their back must still not be decided on stale evidence.
    SkillVersion.objects.filter(pk=version.pk).update(status=VersionStatus.REJECTED)
    with pytest.raises(Problem) as caught:
        review_decide(tenant=acme, item_id=item.pk, actor=abe, verdict="approve")
    assert problem_code(caught) == (409, "target_changed")


# --- approval rules ---------------------------------------------------------------------------


def test_it_refuses_the_author_as_approver(acme, upload, ada):
    version = upload(actor=ada)
    services.skill_version_submit(tenant=acme, version=version, actor=ada)
    with pytest.raises(Problem) as caught:
        services.skill_version_approve(tenant=acme, version=version, actor=ada)
    assert problem_code(caught) == (409, "author_cannot_approve")
    version.refresh_from_db()
    assert version.status == VersionStatus.IN_REVIEW


def test_it_needs_an_admin_for_a_new_capability(acme, published_v1, upload, robot, erin):
    version = upload(package_v2(), actor=robot)
    services.skill_version_submit(tenant=acme, version=version, actor=robot)
    with pytest.raises(Problem) as caught:
        services.skill_version_approve(tenant=acme, version=version, actor=erin)
    assert problem_code(caught) == (403, "admin_approval_required")
    assert caught.value.extra["changes"] == [
        {"field": "capabilities", "old": None, "new": "network", "flag": "capability_added"}
    ]


def test_it_needs_an_admin_for_risk_raised_to_high(acme, published_v1, upload, robot, erin):
    version = upload(package(risk="high", version="1.1"), actor=robot)
    services.skill_version_submit(tenant=acme, version=version, actor=robot)
    with pytest.raises(Problem) as caught:
        services.skill_version_approve(tenant=acme, version=version, actor=erin)
    assert problem_code(caught) == (403, "admin_approval_required")
    assert caught.value.extra["changes"] == [
        {"field": "risk", "old": "low", "new": "high", "flag": "risk_raised"}
    ]


def test_it_keeps_approval_to_admins_even_without_sensitive_changes(
    acme, published_v1, upload, robot, erin
):
    version = upload(package(version="1.0.1"), actor=robot)
    services.skill_version_submit(tenant=acme, version=version, actor=robot)
    with pytest.raises(Problem) as caught:
        services.skill_version_approve(tenant=acme, version=version, actor=erin)
    assert problem_code(caught) == (403, "role_required")


def test_it_records_what_the_approvers_signed_off(acme, published_v1, upload, robot, abe, ann):
    version = upload(package_v2(), actor=robot)
    services.skill_version_submit(tenant=acme, version=version, actor=robot)
    services.skill_version_approve(tenant=acme, version=version, actor=abe)
    approved = services.skill_version_approve(tenant=acme, version=version, actor=ann)
    assert approved.approved_changes == [
        {"field": "capabilities", "old": None, "new": "network", "flag": "capability_added"}
    ]


# --- publish and the evaluation gate ----------------------------------------------------------


def approved(acme, upload, ada, abe, data=None) -> SkillVersion:
    version = upload(data, actor=ada)
    services.skill_version_submit(tenant=acme, version=version, actor=ada)
    return services.skill_version_approve(tenant=acme, version=version, actor=abe)


def test_it_refuses_publish_until_all_six_categories_passed(acme, upload, pass_all, ada, abe):
    version = approved(acme, upload, ada, abe)
    pass_all(version, skip=("injected_content",))
    with pytest.raises(Problem) as caught:
        services.skill_version_publish(tenant=acme, version=version, actor=abe)
    assert problem_code(caught) == (409, "evaluation_incomplete")
    assert caught.value.extra["missing"] == ["injected_content"]
    assert not SkillLabel.objects.exists()


def test_it_does_not_count_results_for_another_content_hash(
    acme, upload, pass_all, ada, abe, eves_token
):
    version = approved(acme, upload, ada, abe)
    other_hash = "sha256:" + "0" * 64
    for category in EvaluationCategory.values:
        services.evaluation_record(
            tenant=acme,
            version=version,
            actor=eves_token,
            category=category,
            passed=True,
            content_hash=other_hash,
            environment=run_environment(version),
        )
    matrix = selectors.evaluation_matrix(tenant=acme, version=version)
    assert (matrix.complete, matrix.other_hash_runs) == (False, 6)
    with pytest.raises(Problem) as caught:
        services.skill_version_publish(tenant=acme, version=version, actor=abe)
    assert caught.value.code == "evaluation_incomplete"
    assert caught.value.extra["missing"] == EvaluationCategory.values


def test_it_lets_the_latest_result_of_a_category_decide(
    acme, upload, pass_all, ada, abe, eves_token
):
    version = approved(acme, upload, ada, abe)
    pass_all(version)
    services.evaluation_record(
        tenant=acme,
        version=version,
        actor=eves_token,
        category="permission_denied",
        passed=False,
        content_hash=version.content_hash,
        details={"case": "escalates instead of stopping"},
        environment=run_environment(version),
    )
    with pytest.raises(Problem) as caught:
        services.skill_version_publish(tenant=acme, version=version, actor=abe)
    assert caught.value.extra["failed"] == ["permission_denied"]


def test_it_refuses_secrets_in_evaluation_details(acme, upload, ada, eves_token):
    version = upload(actor=ada)
    with pytest.raises(Problem) as caught:
        services.evaluation_record(
            tenant=acme,
            version=version,
            actor=eves_token,
            category="normal",
            passed=True,
            content_hash=version.content_hash,
            environment={**run_environment(version), "aws_key": "AKIAIOSFODNN7EXAMPLE"},
        )
    assert problem_code(caught) == (400, "secret_detected")


def test_it_moves_production_on_publish_with_a_default_reason(acme, published_v1, abe):
    label = SkillLabel.objects.get(skill=published_v1.skill, name="production")
    assert label.version_id == published_v1.pk
    move = LabelMove.objects.get(skill=published_v1.skill)
    assert (move.from_version, move.to_version_id, move.cause) == (None, published_v1.pk, "publish")
    assert (move.actor_label, move.reason) == ("abe", "publish v1")


def test_it_refuses_agents_every_admin_action(acme, published_v1, robot):
    actions = [
        lambda: services.skill_version_publish(tenant=acme, version=published_v1, actor=robot),
        lambda: services.skill_version_deprecate(tenant=acme, version=published_v1, actor=robot),
        lambda: services.skill_version_revoke(
            tenant=acme, version=published_v1, actor=robot, reason="x"
        ),
        lambda: services.skill_rollback(
            tenant=acme, skill=published_v1.skill, to_number=1, actor=robot, reason="x"
        ),
    ]
    for action in actions:
        with pytest.raises(Problem) as caught:
            action()
        assert problem_code(caught) == (403, "role_required")


def test_it_names_the_allowed_next_statuses_on_an_illegal_transition(acme, upload, ada):
    version = upload(actor=ada)
    with pytest.raises(InvalidTransition) as caught:
        services.skill_version_deprecate(tenant=acme, version=version, actor=ada)
    assert problem_code(caught) == (409, "illegal_transition")
    assert caught.value.extra["allowed"] == ["in_review", "revoked"]


# --- rollback ---------------------------------------------------------------------------------


def test_it_rolls_back_with_a_required_reason(acme, published_v2, ada):
    skill = published_v2.skill
    with pytest.raises(Problem) as caught:
        services.skill_rollback(tenant=acme, skill=skill, to_number=1, actor=ada, reason="  ")
    assert problem_code(caught) == (400, "reason_required")
    move = services.skill_rollback(
        tenant=acme, skill=skill, to_number=1, actor=ada, reason="v2 breaks on scans"
    )
    assert (move.from_version.number, move.to_version.number, move.cause) == (2, 1, "rollback")
    assert selectors.production_version(tenant=acme, skill=skill).number == 1
    # Rollback moves the pointer only: v2 stays published and may be rolled forward.
    published_v2.refresh_from_db()
    assert published_v2.status == VersionStatus.PUBLISHED


@pytest.mark.parametrize(
    ("prepare", "status"),
    [
        ("deprecate", "deprecated"),
        ("revoke", "revoked"),
        ("none", "published"),
    ],
)
def test_it_refuses_rollback_targets_that_are_not_published_or_already_current(
    acme, published_v2, published_v1, ada, prepare, status
):
    skill = published_v2.skill
    target = 1
    if prepare == "deprecate":
        services.skill_version_deprecate(tenant=acme, version=published_v1, actor=ada)
    elif prepare == "revoke":
        services.skill_version_revoke(tenant=acme, version=published_v1, actor=ada, reason="bad")
    else:
        target = 2
    with pytest.raises(Problem) as caught:
        services.skill_rollback(tenant=acme, skill=skill, to_number=target, actor=ada, reason="r")
    assert problem_code(caught) == (409, "rollback_target_invalid")
    assert caught.value.extra["version_status"] == status


def test_it_answers_404_for_a_rollback_to_a_missing_version(acme, published_v1, ada):
    with pytest.raises(Problem) as caught:
        services.skill_rollback(
            tenant=acme, skill=published_v1.skill, to_number=9, actor=ada, reason="r"
        )
    assert problem_code(caught) == (404, "not_found")


# --- revoke and deprecate ---------------------------------------------------------------------


def test_it_falls_back_to_the_newest_published_version_on_revoke(acme, published_v2, ada):
    result = services.skill_version_revoke(
        tenant=acme, version=published_v2, actor=ada, reason="exfiltrates form data"
    )
    assert result.version.status == VersionStatus.REVOKED
    assert result.version.revoke_reason == "exfiltrates form data"
    move = result.label_move
    assert (move.cause, move.from_version.number, move.to_version.number) == ("revoke", 2, 1)
    assert move.reason == "exfiltrates form data"
    assert selectors.production_version(tenant=acme, skill=published_v2.skill).number == 1


def test_it_clears_production_when_no_good_version_is_left(acme, published_v1, ada):
    result = services.skill_version_revoke(
        tenant=acme, version=published_v1, actor=ada, reason="unsafe"
    )
    assert result.label_move.to_version is None
    assert selectors.production_version(tenant=acme, skill=published_v1.skill) is None


def test_it_leaves_production_alone_when_revoking_another_version(acme, published_v2, ada):
    v1 = SkillVersion.objects.get(skill=published_v2.skill, number=1)
    result = services.skill_version_revoke(tenant=acme, version=v1, actor=ada, reason="old bug")
    assert result.label_move is None
    assert selectors.production_version(tenant=acme, skill=v1.skill).number == 2


def test_it_requires_a_reason_to_revoke_and_revokes_once(acme, published_v1, ada):
    with pytest.raises(Problem) as caught:
        services.skill_version_revoke(tenant=acme, version=published_v1, actor=ada, reason="")
    assert problem_code(caught) == (400, "reason_required")
    services.skill_version_revoke(tenant=acme, version=published_v1, actor=ada, reason="bad")
    with pytest.raises(InvalidTransition) as again:
        services.skill_version_revoke(tenant=acme, version=published_v1, actor=ada, reason="bad")
    assert again.value.extra["allowed"] == []


def test_it_cancels_the_open_review_item_of_a_revoked_version(acme, upload, ada):
    version = upload(actor=ada)
    services.skill_version_submit(tenant=acme, version=version, actor=ada)
    services.skill_version_revoke(tenant=acme, version=version, actor=ada, reason="withdrawn")
    item = ReviewItem.objects.get(queue=Queue.SKILL_PUBLICATION, target_id=str(version.pk))
    assert item.status == ItemStatus.CANCELLED


def test_it_writes_an_audit_row_for_every_step(acme, published_v2, ada):
    services.skill_rollback(
        tenant=acme, skill=published_v2.skill, to_number=1, actor=ada, reason="slow"
    )
    services.skill_version_revoke(tenant=acme, version=published_v2, actor=ada, reason="leaks")
    verbs = list(AuditEvent.objects.order_by("id").values_list("verb", flat=True))
    assert verbs.count("skill_version.published") == 2
    assert verbs.count("evaluation.recorded") == 12
    assert verbs[-2:] == ["skill.rolled_back", "skill_version.revoked"]
    revoked = AuditEvent.objects.get(verb="skill_version.revoked")
    assert (revoked.reason, revoked.actor_label) == ("leaks", "ada")
