"""The demo seed and the Prometheus families skills contributes."""

from __future__ import annotations

from common.metrics import render_metrics
from config.demo.skills import SLUG, seed_skills
from reviews.models import ItemStatus, Queue, ReviewItem
from skills import selectors
from skills.models import SkillVersion
from tests.skills.conftest import SLUG as TEST_SLUG


def test_it_seeds_a_published_v1_and_a_v2_waiting_in_review(acme, admin_user, admin2):
    seed_skills(tenant=acme, author=admin_user, approver=admin2)
    seed_skills(tenant=acme, author=admin_user, approver=admin2)  # a second run changes nothing

    v1, v2 = SkillVersion.objects.filter(skill__slug=SLUG).order_by("number")
    assert (v1.status, v1.author_label, v1.approved_by_label) == ("published", "ada", "abe")
    assert selectors.evaluation_matrix(tenant=acme, version=v1).complete
    assert v2.status == "in_review"
    assert v2.manifest["capabilities"] == ["network"]
    assert selectors.evaluation_matrix(tenant=acme, version=v2).failed == ["injected_content"]
    item = ReviewItem.objects.get(queue=Queue.SKILL_PUBLICATION, target_id=str(v2.pk))
    assert (item.status, item.reason_codes) == (ItemStatus.OPEN, ["capability_added"])
    skill = selectors.skill_get(tenant=acme, slug=SLUG)
    assert selectors.production_version(tenant=acme, skill=skill).number == 1


def test_it_exports_versions_by_status_and_active_instances(published_v2, reader, make_ready):
    make_ready(reader, TEST_SLUG)
    reader.get(f"/api/v1/skills/{TEST_SLUG}/resolve", HTTP_X_SKILL_INSTANCE="worker-1")
    text = render_metrics().decode()
    assert 'memdesk_skill_versions{status="published"} 2.0' in text
    assert 'memdesk_skill_versions{status="revoked"} 0.0' in text
    assert 'memdesk_skill_instances_active{status="published"} 1.0' in text
