"""Sensitivity classes and values never worth remembering, as data.

The write gate (claims) and the ledger (events) both read what an agent sends
through these rules, on the canonical spelling of `common.screen.normalize`,
so a full-width or accented spelling is found like a plain one; on its
leetspeak reading; and on every payload it hides (base64, hex, URL-encoded).
The phrases, in fifteen languages, are in `memory.claims.sensitivity_terms`. Where they
find no class that needs consent, the learned head (`memory.claims.sensitivity_head`)
reads the content as well, and names the class of a fact phrased in a way no phrase
foresaw. An agent may name a class itself (`sensitivity`); the strongest of its hint,
the rules and the head wins, so a hint can raise a class, never lower what was found.

Sensitive classes are kept only with the subject's consent for that class;
ephemeral values (one-time codes, temporary paths, session ids) never.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache

from common.screen.decode import hidden_texts
from common.screen.needles import LabelledPatterns, alternatives, needles
from common.screen.normalize import canonical, fold_leet
from memory.claims import sensitivity_terms as terms
from memory.claims.models.ledger import Sensitivity
from memory.claims.sensitivity_head import sensitivity_head

# The classes that need the subject's consent, strongest first: when a text
# touches several, the first names the memory. The special categories of
# personal data (health, sex life, beliefs, origin, genetics, convictions) come
# before what is private but not special.
CONSENT_CLASSES: tuple[str, ...] = (
    Sensitivity.MINORS,
    Sensitivity.HEALTH,
    Sensitivity.GENETIC_BIOMETRIC,
    Sensitivity.SEXUAL_ORIENTATION,
    Sensitivity.CRIMINAL_RECORD,
    Sensitivity.RELIGION,
    Sensitivity.ETHNIC_ORIGIN,
    Sensitivity.POLITICAL,
    Sensitivity.TRADE_UNION,
    Sensitivity.CREDENTIALS_ADJACENT,
    Sensitivity.FINANCE,
    Sensitivity.LOCATION,
    Sensitivity.SENSITIVE,
)
_RANK = {Sensitivity.NORMAL: 0, Sensitivity.PERSONAL: 1} | {
    cls: 2 + len(CONSENT_CLASSES) - i for i, cls in enumerate(CONSENT_CLASSES)
}


@dataclass(frozen=True)
class SensitivityRule:
    sensitivity: str
    description: str
    patterns: tuple[str, ...]

    def __post_init__(self) -> None:
        # A space in a pattern matches the canonical text's one space between words; as a
        # class it keeps each word a needle of its own, and a haystack finds word needles
        # from the words of a text (looked up once) rather than by trying each phrase.
        spaced = tuple(p.replace("\\ ", r"\s").replace(" ", r"\s") for p in self.patterns)
        object.__setattr__(self, "patterns", spaced)


@dataclass(frozen=True)
class EphemeralRule:
    kind: str
    description: str
    patterns: tuple[str, ...]


# In the order of CONSENT_CLASSES.
SENSITIVITY_RULES: tuple[SensitivityRule, ...] = (
    SensitivityRule(
        Sensitivity.MINORS,
        "About a child: a stated age under 18, a school year, or the words for a minor.",
        terms.MINORS,
    ),
    SensitivityRule(
        Sensitivity.HEALTH,
        "Health: diagnoses, conditions, medication (by name too), treatment, pregnancy.",
        terms.HEALTH,
    ),
    SensitivityRule(
        Sensitivity.GENETIC_BIOMETRIC,
        "Genetic or biometric data: DNA tests and genes, fingerprints, face or iris templates.",
        terms.GENETIC_BIOMETRIC,
    ),
    SensitivityRule(
        Sensitivity.SEXUAL_ORIENTATION,
        "Sex life or sexual orientation: gay, lesbian, bisexual, transgender, coming out.",
        terms.SEXUAL_ORIENTATION,
    ),
    SensitivityRule(
        Sensitivity.CRIMINAL_RECORD,
        "Criminal record: convictions, sentences, prison, arrests, parole.",
        terms.CRIMINAL_RECORD,
    ),
    SensitivityRule(
        Sensitivity.RELIGION,
        "Religion or belief: a faith, a conversion, worship, atheism.",
        terms.RELIGION,
    ),
    SensitivityRule(
        Sensitivity.ETHNIC_ORIGIN,
        "Racial or ethnic origin: ethnicity, descent, a named ethnic group.",
        terms.ETHNIC_ORIGIN,
    ),
    SensitivityRule(
        Sensitivity.POLITICAL,
        "Political opinion: party membership, votes, political views.",
        terms.POLITICAL,
    ),
    SensitivityRule(
        Sensitivity.TRADE_UNION,
        "Trade-union membership: a union member, a shop steward, a named union.",
        terms.TRADE_UNION,
    ),
    SensitivityRule(
        Sensitivity.CREDENTIALS_ADJACENT,
        "Next to a credential: password hints, security questions and answers, recovery phrases.",
        terms.CREDENTIALS_ADJACENT,
    ),
    SensitivityRule(
        Sensitivity.FINANCE,
        "Money: accounts, cards, salary, income, debts, credit, taxes.",
        terms.FINANCE,
    ),
    SensitivityRule(
        Sensitivity.LOCATION,
        "A precise location: a home or street address, GPS coordinates (a city is not one).",
        terms.LOCATION,
    ),
    SensitivityRule(
        Sensitivity.PERSONAL,
        "Personal details: birthday, phone number, e-mail address.",
        terms.PERSONAL,
    ),
)

EPHEMERAL_RULES: tuple[EphemeralRule, ...] = (
    EphemeralRule(
        "one_time_code",
        "A one-time code (verification, login, 2FA): worthless tomorrow, dangerous today.",
        (
            r"\b(?:one[- ]time (?:pass)?code|otp|verification code|security code|2fa code|"
            r"auth(?:entication)? code|login code|confirmation code)\b\D{0,20}\d{4,8}\b",
            r"\b\d{4,8}\b\D{0,20}\b(?:is your|as your) (?:one[- ]time|verification|login|"
            r"security) code\b",
            r"(?:验证码|动态码|校验码)\D{0,8}\d{4,8}",
        ),
    ),
    EphemeralRule(
        "temporary_path",
        "A temporary file path: it is gone after the run that made it.",
        (
            r"(?:^|[\s'\"=:(\[]|file://)(?:/tmp|/var/tmp|/dev/shm|/private/var/folders)/",
            r"\b[a-z]:\\(?:users\\[^\\\s]+\\)?appdata\\local\\temp\\",
            r"%temp%",
        ),
    ),
    EphemeralRule(
        "session_id",
        "A session id: it names one login, not the person.",
        (
            r"\b(?:session[ _-]?id|sessionid|phpsessid|jsessionid|session token)\b"
            r"\s*(?:is|=|:)?\s*[a-z0-9_\-]{8,}",
            r"会话\s*id\D{0,4}[a-z0-9_\-]{8,}",
        ),
    ),
)

# Each class's patterns under its name, one set per script its needles are written in:
# a text holds the needles of few of them, and only those run (see `LabelledPatterns`).
# A haystack looks for needles outside ASCII one by one, so a Russian text is not made
# to look for the Arabic, Hindi, Korean and Chinese ones too.
_ASCII = "ascii"
_SCRIPT_BLOCKS = (
    (0x0400, 0x052F, "cyrillic"),
    (0x0590, 0x05FF, "hebrew"),
    (0x0600, 0x08FF, "arabic"),
    (0x0900, 0x0DFF, "indic"),
    (0x1100, 0x11FF, "hangul"),
    (0x2E80, 0x303F, "cjk"),
    (0x3040, 0x30FF, "kana"),
    (0x3100, 0x9FFF, "cjk"),
    (0xAC00, 0xD7AF, "hangul"),
    (0xF900, 0xFAFF, "cjk"),
    (0xFB50, 0xFEFF, "arabic"),
)


@lru_cache(maxsize=4096)
def _script(char: str) -> str:
    if char.isascii():
        return _ASCII
    code = ord(char)
    return next((name for low, high, name in _SCRIPT_BLOCKS if low <= code <= high), "other")


def _scripts_of(pattern: str) -> frozenset[str] | None:
    """The scripts a text must be written in for `pattern` to match it: one per needle
    (the script of its first letter outside ASCII), or None when it has no needles."""
    found = needles(re.compile(pattern))
    if not found.known:
        return None
    return frozenset(
        next((_script(c) for c in needle if not c.isascii()), _ASCII)
        for needle in found.exact | found.folded
    )


def _by_script(rules: Iterable[SensitivityRule]) -> dict[str | None, LabelledPatterns]:
    grouped: dict[str | None, list[tuple[str, str]]] = {}
    for rule in rules:
        for pattern in rule.patterns:
            for piece in alternatives(pattern):
                for script in _scripts_of(piece) or (None,):
                    grouped.setdefault(script, []).append((rule.sensitivity, piece))
    return {
        script: LabelledPatterns(pieces, remembers_words=script == _ASCII)
        for script, pieces in grouped.items()
    }


_SENSITIVITY_PATTERNS = _by_script(SENSITIVITY_RULES)
_UNSPACED = frozenset({"cjk", "kana", "hangul"})


def _labels_in(text: str, known: set[str]) -> set[str]:
    scripts = {None, *map(_script, set(text))}
    found: set[str] = set()
    for script in scripts:
        patterns = _SENSITIVITY_PATTERNS.get(script)
        if patterns is not None:
            found |= patterns.labels_in(text, known=known | found)
    return found


# Three rules of few patterns: searching them all costs less than looking for their
# needles first.
_COMPILED_EPHEMERAL = tuple(
    (rule.kind, re.compile("|".join(rule.patterns))) for rule in EPHEMERAL_RULES
)


def _readable(strings: Iterable[str]) -> list[str]:
    # Identifiers like `home_address` read as words.
    return [canonical(s.replace("_", " ")) for s in strings if s]


def _readings(strings: Iterable[str]) -> list[str]:
    """What a reader could take from `strings`: each as written, with leetspeak read as
    letters ("h1v p0s1t1v3"), and every payload it hides (base64, hex, URL-encoded)."""
    raw = [s for s in strings if s]
    texts = _readable([*raw, *(hidden for s in raw for hidden in hidden_texts(s))])
    leet = [folded for text in texts if (folded := fold_leet(text)) != text]
    return list(dict.fromkeys([*texts, *leet]))


def _a_sentence(text: str) -> bool:
    """Whether `text` reads as a sentence the head was fitted on: three words or more, or six
    characters of a script written without spaces. An identifier (`user_correction`, a
    predicate, a scope value) or a lone word is left to the rules: the head, fitted on
    sentences, has no grounds to judge it."""
    if len(text.split()) >= 3:
        return True
    return len(text) >= 6 and any(_script(char) in _UNSPACED for char in text)


def _head_readings(strings: Iterable[str]) -> list[tuple[str, str]]:
    """What the learned head reads of `strings`: each sentence and each payload one hides, as
    a (canonical, as written) pair; the meaning columns read the text as written."""
    raw = [s for s in strings if s]
    written = [*raw, *(hidden for s in raw for hidden in hidden_texts(s))]
    pairs = {(canonical(w), w): None for w in written if _a_sentence(w)}
    return [pair for pair in pairs if pair[0]]


@dataclass(frozen=True)
class Classification:
    """What the rules, the learned head and the hint say about one piece of content."""

    sensitivity: str
    # Every class found (or hinted) that needs consent, strongest first.
    consent_classes: tuple[str, ...]
    # Whether the learned head is still to read the content: the rules found no class that
    # needs consent in it, and the head has not read it yet.
    head_pending: bool = False


def _classification(found: set[str], *, head_pending: bool = False) -> Classification:
    consent = tuple(cls for cls in CONSENT_CLASSES if cls in found)
    strongest = max(found, key=lambda cls: _RANK[cls], default=Sensitivity.NORMAL)
    return Classification(strongest, consent, head_pending=head_pending)


def rule_classes(strings: Iterable[str]) -> set[str]:
    """The classes the phrase rules find in `strings`, on every reading of them."""
    found: set[str] = set()
    for text in _readings(strings):
        found |= _labels_in(text, found)
    return found


def classify(
    strings: Iterable[str], *, hint: str = Sensitivity.NORMAL, learned: bool = True
) -> Classification:
    """The sensitivity of `strings`: the strongest of what the rules find, what the learned
    head reads where the rules found nothing (`learned`), and the hint.

    Without `learned` the head's reading is left to `with_learned`, which reads many
    contents in one pass.
    """
    strings = [s for s in strings if s]
    found = rule_classes(strings)
    pending = not found & set(CONSENT_CLASSES)
    if hint:
        found.add(hint)
    classification = _classification(found, head_pending=pending)
    return with_learned([classification], [strings])[0] if learned else classification


def with_learned(
    classifications: Sequence[Classification], contents: Sequence[Iterable[str]]
) -> list[Classification]:
    """Each classification with what the learned head reads in its content, if it is still
    to read it: every reading of every content in one pass.

    The head speaks only where the rules found no class that needs consent: a phrase the
    rules know names its class exactly, and the head fills the gaps between them. What it
    finds adds to the rules' and the hint's classes; the strongest names the content.
    """
    head = sensitivity_head()
    pending = [i for i, c in enumerate(classifications) if c.head_pending]
    done = [replace(c, head_pending=False) for c in classifications]
    if head is None or not pending:
        return done
    contents = [list(content) for content in contents]
    read = head.classes_of([_head_readings(contents[i]) for i in pending])
    for i, classes in zip(pending, read, strict=True):
        if classes:
            found = {done[i].sensitivity, *done[i].consent_classes, *classes}
            done[i] = _classification(found)
    return done


def find_ephemeral(strings: Iterable[str]) -> tuple[str, ...]:
    """The kinds of ephemeral value in `strings`, in rule order."""
    texts = _readable(strings)
    return tuple(
        kind for kind, pattern in _COMPILED_EPHEMERAL if any(pattern.search(t) for t in texts)
    )


def needs_consent(sensitivity: str) -> bool:
    return sensitivity in CONSENT_CLASSES
