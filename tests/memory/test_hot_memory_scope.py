"""Hot memory takes a scope: claims of other scopes never mix in (fail closed), and on one
predicate the most specific claim wins."""

from __future__ import annotations

import pytest

from tests.memory.helpers import submit


def block(agent, *scope: str, status: int = 200) -> dict:
    query = "".join(f"&scope={pair}" for pair in scope)
    response = agent.get(f"/api/v1/subjects/user:alice/hot-memory?budget_chars=4000{query}")
    assert response.status_code == status, response.json()
    return response.json()


@pytest.mark.django_db
def test_the_specific_claim_wins_and_other_scopes_stay_out(agent):
    everywhere = submit(
        agent, predicate="tone", value="formal", text="Alice prefers formal messages"
    )
    crm = submit(
        agent,
        predicate="tone",
        value="casual",
        text="In the CRM, Alice prefers casual messages",
        scope={"project": "crm"},
    )
    blog = submit(
        agent,
        predicate="signature",
        value="A.",
        text="On the blog Alice signs as A.",
        scope={"project": "blog"},
    )
    home = submit(agent, predicate="home_city", value="Shanghai")

    unscoped = block(agent)
    assert set(unscoped["claims"]) == {everywhere["id"], home["id"]}
    assert "casual" not in unscoped["text"] and "signs" not in unscoped["text"]

    in_crm = block(agent, "project=crm")
    assert set(in_crm["claims"]) == {crm["id"], home["id"]}
    assert "casual" in in_crm["text"] and "formal" not in in_crm["text"]
    assert "signs" not in in_crm["text"]

    # A narrower request is not a wider one: crm+team still sees crm, never blog.
    in_crm_team = block(agent, "project=crm", "team=sales")
    assert set(in_crm_team["claims"]) == {crm["id"], home["id"]}
    assert blog["id"] in block(agent, "project=blog")["claims"]
    # Each read is traced on its own, with the claims of its own block.
    assert unscoped["trace_id"] != in_crm["trace_id"]


@pytest.mark.django_db
@pytest.mark.parametrize("pair", ["project", "=crm", "project=", "project=crm&scope=project=b"])
def test_a_malformed_scope_is_a_problem(agent, pair):
    problem = block(agent, pair, status=400)
    assert problem["code"] == "validation_error" and "scope" in problem["errors"]


@pytest.mark.django_db
def test_a_claim_handed_over_again_and_again_and_never_used_is_demoted(agent, settings):
    settings.HOT_MEMORY_DEMOTE_AFTER_UNUSED = 3
    home = submit(agent, predicate="home_city", value="Shanghai")
    pet = submit(agent, predicate="pet", value="cat", text="Alice has a cat")

    def read_and_use(*used: str) -> dict:
        hot = block(agent)
        response = agent.post(
            f"/api/v1/recall/traces/{hot['trace_id']}/used",
            {"items": [{"id": claim_id} for claim_id in used]},
            format="json",
        )
        assert response.status_code == 201
        return hot

    for _ in range(2):
        assert set(read_and_use(home["id"])["claims"]) == {home["id"], pet["id"]}
    # The third unused block still held it; after the third report it leaves.
    assert pet["id"] in read_and_use(home["id"])["claims"]
    after = block(agent)
    assert after["claims"] == [home["id"]] and "cat" not in after["text"]
    # Recall still finds it: demotion is about the block, not about memory.
    recalled = agent.post(
        "/api/v1/recall", {"subject": "user:alice", "query": "cat"}, format="json"
    )
    assert pet["id"] in [item["id"] for item in recalled.json()["items"]]
    # Off, it comes back.
    settings.HOT_MEMORY_DEMOTE_AFTER_UNUSED = 0
    assert pet["id"] in block(agent)["claims"]
