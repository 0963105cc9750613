"""Sensitive facts in many languages, through the agent API: rules and learned head together.

Every sentence here was written apart from the head's training corpus. Sent to
`/claims` without the subject's consent a fact is refused with `consent_required`
naming its class; with consent it is kept with its class; `claims:batch` classes it as
`/claims` does. Look-alikes are kept as normal. `HEAD_UNSURE` are facts the phrase
rules alone leave `normal` and the head reads right but not confidently: it names a
class only at `MIN_CONFIDENCE`, since short ordinary notes (`SHORT_NOTES`) score as
high as they do and a false class refuses a memory.
"""

from __future__ import annotations

import pytest

from memory.claims.models import Claim, ClaimStatus
from memory.claims.sensitivity import _head_readings, classify, with_learned
from memory.claims.sensitivity_head import MIN_CONFIDENCE, sensitivity_head
from testing.screen_corpus import read
from tests.dump import tables_containing
from tests.memory.helpers import candidate, submit

pytestmark = pytest.mark.django_db

# One sensitive fact per class, none in English, none in the training corpus.
UNSEEN_FACTS = [
    ("minors", "nl", "Haar dochtertje van 5 gaat sinds kort naar groep 1."),
    ("health", "it", "Da due mesi segue una terapia per la sua depressione."),
    ("genetic_biometric", "es", "El banco guarda la plantilla de su huella para pagar."),
    ("sexual_orientation", "pt", "A Carla namora uma mulher desde o verão passado."),
    ("criminal_record", "de", "Er hat drei Jahre im Gefängnis gesessen."),
    ("religion", "fr", "Chaque vendredi, Yassine prie à la mosquée du quartier."),
    ("ethnic_origin", "es", "La familia de Rosa es de origen gitano."),
    ("political", "it", "Alle ultime elezioni Paolo ha votato per i Verdi."),
    ("trade_union", "pt", "O Rui é sócio do sindicato dos enfermeiros."),
    ("location", "de", "Sie wohnt in der Lindenallee 14, 2. Stock rechts."),
    ("finance", "fr", "Son salaire net est de 3 400 euros par mois."),
]
HEAD_UNSURE = [
    ("minors", "de", "Sein Junge geht in die dritte Klasse."),
    ("political", "de", "Sie ist Mitglied bei den Grünen."),
    ("ethnic_origin", "en", "Her parents are Igbo from Nigeria."),
]
SHORT_NOTES = ["Alice had a dog", "Alice went in 2019", "Bob moved the sync to Friday"]
LOOK_ALIKES = [
    ("en", "The health-check endpoint now answers in 40 ms."),
    ("de", "Sie belegt dieses Semester eine Vorlesung in Politikwissenschaft."),
    ("fr", "Les nœuds enfants de l'arbre sont triés par date."),
    ("es", "Usa un algoritmo genético para optimizar las rutas."),
    ("ja", "TypeScriptのユニオン型でステータスを表す。"),
]


def claim(agent, text):
    body = candidate(authority="agent_inferred", basis="inference", predicate="note", text=text)
    body["value"] = text
    response = agent.post("/api/v1/claims", body, format="json")
    assert response.status_code == 201, response.json()
    return response.json()


def grant(session_api, user, cls):
    response = session_api(user).put(
        "/api/v1/me/consents", {"consents": {cls: True}}, format="json"
    )
    assert response.status_code == 200, response.json()


@pytest.mark.parametrize(("cls", "lang", "text"), UNSEEN_FACTS, ids=lambda v: str(v)[:24])
def test_a_sensitive_fact_is_classed_and_needs_consent(agent, cls, lang, text):
    verdict = claim(agent, text)

    assert (verdict["decision"], verdict["reasons"]) == ("rejected", ["consent_required"])
    assert verdict["consent_required"] == [cls]
    assert verdict["sensitivity"] == cls
    stored = Claim.objects.get(pk=verdict["id"])
    assert (stored.status, stored.value, stored.text) == (
        ClaimStatus.REJECTED,
        None,
        "[withheld: consent required]",
    )
    assert stored.consent_classes == [cls]
    assert tables_containing(text) == {}


@pytest.mark.parametrize(("cls", "lang", "text"), HEAD_UNSURE, ids=lambda v: str(v)[:24])
def test_the_head_names_a_class_only_when_it_is_confident(cls, lang, text):
    assert classify([text], learned=False).consent_classes == (), "the rules alone find it"
    head = sensitivity_head()
    assert head is not None
    probabilities = head.probabilities([text.lower()], [text])[0]
    best = int(probabilities.argmax())
    # It reads the class, but not surely enough to refuse the memory for it.
    assert head.classes[best] == cls and probabilities[best] < MIN_CONFIDENCE
    assert classify([text]).consent_classes == ()


@pytest.mark.parametrize("text", SHORT_NOTES)
def test_a_short_ordinary_note_is_stored_as_normal(agent, text):
    verdict = submit(agent, predicate="note", value=text, text=text)

    assert (verdict["decision"], verdict["sensitivity"]) == ("accepted", "normal")


@pytest.mark.parametrize(("cls", "lang", "text"), UNSEEN_FACTS[:4], ids=lambda v: str(v)[:24])
def test_with_consent_the_fact_is_kept_with_the_class_the_head_read(
    agent, alice, session_api, cls, lang, text
):
    grant(session_api, alice, cls)

    verdict = submit(agent, predicate="note", value=text, text=text)

    assert (verdict["decision"], verdict["sensitivity"]) == ("accepted", cls)
    stored = Claim.objects.get(pk=verdict["id"])
    assert (stored.status, stored.sensitivity, stored.text) == (ClaimStatus.ACTIVE, cls, text)
    assert stored.consent_classes == [cls]


@pytest.mark.parametrize(("lang", "text"), LOOK_ALIKES, ids=lambda v: str(v)[:24])
def test_a_look_alike_is_stored_as_normal(agent, lang, text):
    verdict = submit(agent, predicate="note", value=text, text=text)

    assert (verdict["decision"], verdict["sensitivity"]) == ("accepted", "normal")
    stored = Claim.objects.get(pk=verdict["id"])
    assert (stored.status, stored.sensitivity, stored.consent_classes) == (
        ClaimStatus.ACTIVE,
        "normal",
        [],
    )


def test_the_batch_classes_every_item_as_one_by_one_does_in_one_pass(agent):
    facts = UNSEEN_FACTS
    texts = [text for _, _, text in facts] + [text for _, text in LOOK_ALIKES]
    items = []
    for text in texts:
        body = candidate(authority="agent_inferred", basis="inference", predicate="note")
        body.update(text=text, value=text)
        items.append(body)

    response = agent.post("/api/v1/claims:batch", {"items": items}, format="json")

    assert response.status_code == 200, response.json()
    results = response.json()["results"]
    expected = [cls for cls, _, _ in facts] + ["normal"] * len(LOOK_ALIKES)
    assert [r["sensitivity"] for r in results] == expected
    decisions = [r["decision"] for r in results]
    assert decisions[: len(facts)] == ["rejected"] * len(facts)
    assert [r["reasons"] for r in results[: len(facts)]] == [["consent_required"]] * len(facts)
    # The look-alikes pass the consent check (the rest of the gate decides the rest).
    assert not any("consent_required" in r["reasons"] for r in results[len(facts) :])
    assert Claim.objects.filter(consent_classes=[]).count() == len(LOOK_ALIKES)


def test_the_head_reads_only_where_the_rules_found_nothing_and_a_hint_still_raises():
    contents = [["Kenji is HIV positive"], [HEAD_UNSURE[1][2]], ["Team lunch on Friday"]]
    by_rules = [classify(content, learned=False) for content in contents]
    assert [c.head_pending for c in by_rules] == [False, True, True]

    read = with_learned(by_rules, contents)

    assert [c.sensitivity for c in read] == ["health", "normal", "normal"]
    assert not any(c.head_pending for c in read)
    assert classify([LOOK_ALIKES[0][1]], hint="finance").consent_classes == ("finance",)
    # A base64 payload is read by the head as the text it hides.
    hidden = "U2llIGlzdCBNaXRnbGllZCBiZWkgZGVuIEdyw7xuZW4u"
    assert classify([hidden], learned=False).consent_classes == ()
    assert HEAD_UNSURE[1][2] in [written for _, written in _head_readings([hidden])]


def test_the_head_is_shipped_with_its_card_and_its_corpus_covers_twelve_languages():
    head = sensitivity_head()
    assert head is not None
    assert {"none", "health", "minors", "religion", "ethnic_origin"} <= set(head.classes)
    assert 0.0 < head.threshold < 1.0
    samples = read("sensitive/train.tsv")
    langs_per_class: dict[str, set[str]] = {}
    for sample in samples:
        langs_per_class.setdefault(sample.label, set()).add(sample.lang)
    assert all(len(langs) >= 12 for langs in langs_per_class.values()), langs_per_class
