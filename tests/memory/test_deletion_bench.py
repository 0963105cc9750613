"""The deletion benchmark's section runs at its smoke size on the rows it claims to change."""

from __future__ import annotations

import pytest

from bench.deletion import REVIEW_ITEMS_PER_CLAIM, SMOKE, markdown, measure
from memory.claims.models import Claim, ClaimStatus
from reviews.models import ItemStatus, ReviewItem


@pytest.mark.django_db
def test_the_deletion_bench_measures_both_paths_on_the_same_rows():
    section = measure(SMOKE)

    assert len(section.memdesk) == len(section.floor) == SMOKE.repetitions
    # The floor changed exactly the rows memdesk's report says it changed.
    assert section.rows["claims"] == SMOKE.claims
    assert section.rows["derived"] == SMOKE.claims // 50
    assert section.rows["review_items"] == round(SMOKE.claims * REVIEW_ITEMS_PER_CLAIM)
    assert f"erased {SMOKE.claims:,} claims + {SMOKE.claims // 50} derived" in section.detail
    assert f"cancelled {section.rows['review_items']} review items" in section.detail
    assert not ReviewItem.objects.filter(status=ItemStatus.OPEN, target_type="claim").exists()
    live = Claim.objects.exclude(status=ClaimStatus.ERASED)
    assert not live.filter(subject__kind="user").exists()

    text = markdown(section)
    assert text.startswith("## Deletion: one subject")
    assert "| memdesk: request → `completed`" in text and "≤ 3x" in text
