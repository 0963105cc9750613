"""Recall's counter-example set, one named case each, end to end through the API: two
users with look-alike facts, a later correction, never-provided information, a point in
time, an exact error code and its paraphrase. Each case stands alone and asserts data."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from tests.memory.helpers import recall, submit
from tests.memory.test_semantic_recall import embed_all

pytestmark = pytest.mark.django_db


def test_two_users_with_similar_but_different_facts_never_mix(agent):
    submit(agent, subject="user:alice", value="Shanghai", text="Alice lives in Shanghai")
    submit(agent, subject="user:alina", value="Shenzhen", text="Alina lives in Shenzhen")
    embed_all()

    alice = recall(agent, subject="user:alice", query="where does she live")
    alina = recall(agent, subject="user:alina", query="where does she live")

    assert [item["value"] for item in alice["items"]] == ["Shanghai"]
    assert [item["value"] for item in alina["items"]] == ["Shenzhen"]
    assert {item["subject"] for item in alice["items"] + alina["items"]} == {
        "user:alice",
        "user:alina",
    }


def test_a_fact_corrected_later_is_recalled_only_as_corrected(agent):
    old = submit(agent, value="Beijing", text="Alice lives in Beijing", authority="tool_verified")
    new = submit(agent, value="Shanghai", text="Alice lives in Shanghai")

    answer = recall(agent, query="where does alice live")

    assert [item["id"] for item in answer["items"]] == [new["id"]]
    assert old["id"] not in {item["id"] for item in answer["items"]}
    assert answer["excluded"]["inactive"] == 1


def test_never_provided_information_is_refused(agent):
    submit(agent, subject="user:ana", value="Lisbon", text="Ana lives in Lisbon")
    embed_all()

    answer = recall(agent, subject="user:ana", query="what is her favourite colour")

    assert answer["items"] == []
    assert answer["abstained"] is True
    assert answer["abstention"]["reason"] == "nothing_relevant"


def test_an_explicit_point_in_time_sees_what_was_valid_then(agent):
    now = timezone.now()
    claim = submit(agent, valid_from=(now - timedelta(days=10)).isoformat())

    then = recall(agent, as_of=(now - timedelta(days=20)).isoformat())
    today = recall(agent)

    assert then["items"] == [] and then["excluded"]["not_yet_valid"] == 1
    assert [item["id"] for item in today["items"]] == [claim["id"]]


def test_an_exact_error_code_and_a_paraphrase_of_it_find_the_same_claim(agent):
    error = submit(
        agent,
        predicate="deploy_error",
        value="ERR_4711",
        text="The nightly deploy fails with ERR_4711 when the build cache is cold",
        authority="tool_verified",
    )
    submit(agent, predicate="drink", value="tea", text="Alice drinks green tea")
    submit(agent, predicate="employer", value="Acme", text="Alice works at Acme")
    embed_all()

    by_code = recall(agent, query="ERR_4711")
    by_paraphrase = recall(agent, query="why does the overnight release break")

    assert by_code["items"][0]["id"] == error["id"]
    assert by_code["items"][0]["relevance"] == "strong"
    assert by_paraphrase["items"][0]["id"] == error["id"]
    assert by_paraphrase["abstained"] is False
