"""What a question asks about, measured against what people are commonly asked about
(docs/recall.md, "Abstention").

A claim's topic similarity (`predicate_topics`) says how near the question is to what
the claim is about, but not whether something else is nearer: "who is their spouse" is
fairly near a subject's only family claim, `kids`, yet nearer still to "spouse", which
that subject never told. Recall compares each question with a fixed vocabulary of common
attributes of a person; the best of those similarities is the question's *asked
attribute* similarity, and a claim whose topic falls short of it is about something
other than what was asked (`recall_abstention`). The vocabulary's words are embedded
once per process and model, like predicates, so a recall pays one product of a small
matrix and no statement.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from memory.claims.selectors.predicate_topics import phrase_vectors

# Attributes agents ask about a person, in plain words. General on purpose: it names
# what could be asked, not what any subject holds, so a subject's own topics (its
# predicates) are compared on the same footing.
COMMON_ATTRIBUTES = (
    "age",
    "birthday",
    "home address",
    "home city",
    "country",
    "nationality",
    "native language",
    "languages spoken",
    "job",
    "employer",
    "salary",
    "income",
    "manager",
    "colleagues",
    "education",
    "school",
    "university degree",
    "spouse",
    "partner",
    "children",
    "siblings",
    "parents",
    "grandparents",
    "friends",
    "pet",
    "religion",
    "political views",
    "health condition",
    "allergy",
    "medication",
    "doctor",
    "blood type",
    "height",
    "weight",
    "eye colour",
    "hair colour",
    "shoe size",
    "clothing size",
    "tattoos",
    "glasses",
    "favourite colour",
    "favourite food",
    "favourite drink",
    "favourite music",
    "favourite band",
    "favourite movie",
    "favourite book",
    "favourite season",
    "hobby",
    "sport",
    "team supported",
    "musical instrument",
    "diet",
    "car",
    "commute",
    "phone",
    "email address",
    "phone number",
    "social media",
    "nickname",
    "middle name",
    "star sign",
    "bank",
    "credit score",
    "house",
    "vacation",
    "travel plans",
    "sleep schedule",
    "working hours",
    "time zone",
    "fears",
    "goals",
    "strengths",
    "weaknesses",
    "video games",
    "tv shows",
    "restaurants",
    "coffee order",
    "budget",
    "charity",
    "personality",
)


def asked_similarity(*, model_name: str, query_vector: Sequence[float]) -> float | None:
    """The question's similarity to the common attribute nearest it; none when the
    vocabulary could not be embedded with the query's model."""
    vectors = phrase_vectors(model_name, COMMON_ATTRIBUTES)
    query = np.asarray(query_vector, dtype=np.float32)
    usable = [v for v in vectors.values() if v.shape == query.shape]
    if len(usable) < len(COMMON_ATTRIBUTES):
        return None  # a partial vocabulary would understate what the question asks
    return float((np.stack(usable) @ query).max())
