"""What each sensitive class sounds like, in fifteen languages: the data behind the rules.

The rules read the canonical spelling of a text (`common.screen.normalize.canonical`):
accents stripped, lower-case, and letters that look Latin folded to Latin, which
turns much Cyrillic, Greek and Arabic into a mix of scripts. A phrase here is
written as a person writes it and spelled the way the rules will see it by the
same `canonical`, in lower, upper and title case (a capital can fold to another
letter than its small one), so no pattern has to guess what the fold does.

Phrases name a fact about a person ("is HIV positive", "member of the … party",
"was convicted") rather than a topic, so the look-alikes an engineer writes
("health-check endpoint", "union of two sets", "party planning") stay normal.
Every pattern holds literal words, so `LabelledPatterns` runs it only on text
that holds one of them. In a phrase, `…` stands for up to three words, `#` for
a number, `§` for an age under 18, `-` for a hyphen, a space or nothing, and
`'` for either apostrophe or none.
"""

from __future__ import annotations

from memory.claims.sensitivity_terms import beliefs, broader, records
from memory.claims.sensitivity_terms.health import HEALTH, MEDICATIONS
from memory.claims.sensitivity_terms.spelling import anywhere, word_starts, words
from memory.claims.sensitivity_terms.whereabouts import (
    CREDENTIALS_ADJACENT,
    FINANCE,
    LOCATION,
    PERSONAL,
)

# Each class's own words, then what people say sideways (`broader`).
MINORS = records.MINORS + broader.MINORS
GENETIC_BIOMETRIC = records.GENETIC_BIOMETRIC + broader.GENETIC_BIOMETRIC
CRIMINAL_RECORD = records.CRIMINAL_RECORD + broader.CRIMINAL_RECORD
SEXUAL_ORIENTATION = beliefs.SEXUAL_ORIENTATION + broader.SEXUAL_ORIENTATION
RELIGION = beliefs.RELIGION + broader.RELIGION
ETHNIC_ORIGIN = beliefs.ETHNIC_ORIGIN + broader.ETHNIC_ORIGIN
POLITICAL = beliefs.POLITICAL + broader.POLITICAL
TRADE_UNION = beliefs.TRADE_UNION + broader.TRADE_UNION

__all__ = [
    "CREDENTIALS_ADJACENT",
    "CRIMINAL_RECORD",
    "ETHNIC_ORIGIN",
    "FINANCE",
    "GENETIC_BIOMETRIC",
    "HEALTH",
    "LOCATION",
    "MEDICATIONS",
    "MINORS",
    "PERSONAL",
    "POLITICAL",
    "RELIGION",
    "SEXUAL_ORIENTATION",
    "TRADE_UNION",
    "anywhere",
    "word_starts",
    "words",
]
