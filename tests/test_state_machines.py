"""Every state machine is declared once, and the database guards it with what was declared.

Each machine's trigger is the one its `StateMachine` generates: were a table edited
without its trigger, or a trigger written by hand, the compiled SQL would differ. The
refusals themselves are proven per machine, through raw SQL, in each app's tests
(`tests/memory/test_claim_transitions.py`, `test_receipt_transitions.py`,
`test_transition_guards.py`, `tests/reviews/test_item_transitions.py`,
`tests/skills/test_models.py`, `test_instantiation_enforced.py`).
"""

from __future__ import annotations

import pgtrigger
import pytest

from common.transitions import StateMachine
from memory.claims.models import CLAIM_MACHINE, Claim
from memory.privacy.models import DELETION_MACHINE, EXPORT_MACHINE, DataExport, DeletionRequest
from memory.receipts.models import Receipt
from memory.receipts.models.receipts import RECEIPT_MACHINE
from reviews.models import REVIEW_ITEM_MACHINE, ReviewItem
from skills.models import VERSION_MACHINE, SkillVersion
from skills.usage_models import INSTANCE_MACHINE, SkillInstance

MACHINES = [
    (Claim, CLAIM_MACHINE, "claim_status_transition"),
    (Receipt, RECEIPT_MACHINE, "receipt_state_transition"),
    (DeletionRequest, DELETION_MACHINE, "deletion_status_transition"),
    (DataExport, EXPORT_MACHINE, "export_status_transition"),
    (ReviewItem, REVIEW_ITEM_MACHINE, "review_item_status_transition"),
    (SkillVersion, VERSION_MACHINE, "skill_version_status_transition"),
    (SkillInstance, INSTANCE_MACHINE, "skill_instance_state_transition"),
]


@pytest.mark.parametrize(("model", "machine", "name"), MACHINES, ids=lambda v: str(v)[:40])
def test_the_database_guards_each_machine_with_its_own_declaration(model, machine, name):
    installed = {
        trigger.name: trigger for found, trigger in pgtrigger.registered() if found is model
    }
    assert isinstance(machine, StateMachine)
    assert installed[name].compile(model).sql == machine.trigger(name).compile(model).sql


def test_every_state_column_has_a_machine():
    # A transition trigger not generated from a declared machine would be a machine
    # nobody declared.
    guarded = {
        (found, trigger.name)
        for found, trigger in pgtrigger.registered()
        if trigger.name.endswith("_transition")
    }
    assert guarded == {(model, name) for model, _machine, name in MACHINES}
