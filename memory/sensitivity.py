"""Sensitivity classes and values never worth remembering, as data.

The write gate (claims) and the ledger (events) both read what an agent sends
through these rules, on the canonical spelling of `common.screen.normalize`,
so a full-width or accented spelling is found like a plain one. An agent may
name a class itself (`sensitivity`); the stronger of its hint and the rules
wins, so a hint can raise a class, never lower what the rules found.

Sensitive classes are kept only with the subject's consent for that class;
ephemeral values (one-time codes, temporary paths, session ids) never.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from common.screen.needles import LabelledPatterns
from common.screen.normalize import canonical
from memory.models.ledger import Sensitivity

# The classes that need the subject's consent, strongest first: when a text
# touches several, the first names the memory.
CONSENT_CLASSES: tuple[str, ...] = (
    Sensitivity.MINORS,
    Sensitivity.HEALTH,
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


@dataclass(frozen=True)
class EphemeralRule:
    kind: str
    description: str
    patterns: tuple[str, ...]


SENSITIVITY_RULES: tuple[SensitivityRule, ...] = (
    SensitivityRule(
        Sensitivity.MINORS,
        "About a child: a stated age under 18, a school year, or the words for a minor.",
        (
            r"\b(?:[1-9]|1[0-7])[- ]years?[- ]old\b",
            r"\b(?:my|her|his|their) (?:son|daughter|kid|kids|child|children|toddler|baby)\b",
            r"\b(?:minor|underage|kindergarten|primary school|grade [1-9])\b",
            r"未成年|孩子|儿子|女儿|小学|幼儿园",
        ),
    ),
    SensitivityRule(
        Sensitivity.HEALTH,
        "Health: diagnoses, conditions, medication, treatment, pregnancy.",
        (
            r"\b(?:diagnos\w*|diabet\w*|cancer|hiv|aids|depression|depressed|anxiety disorder|"
            r"bipolar|schizophreni\w*|medication|prescri\w+|chemotherapy|pregnan\w*|"
            r"therapist|psychiatr\w*|blood pressure|insulin|allerg\w+|disabilit\w+|"
            r"asthma|epilep\w+|migraines?|disease|illness|surgery)\b",
            r"糖尿病|癌症|抑郁|诊断|处方|药物|怀孕|艾滋|病历|高血压|过敏|残疾|哮喘|疾病|手术",
        ),
    ),
    SensitivityRule(
        Sensitivity.CREDENTIALS_ADJACENT,
        "Next to a credential: password hints, security questions and answers, recovery phrases.",
        (
            r"\b(?:password hint|security question|security answer|mother'?s maiden name|"
            r"pin code|recovery phrase|seed phrase|backup codes?|recovery codes?)\b",
            r"密码提示|安全问题|密保|助记词|恢复码",
        ),
    ),
    SensitivityRule(
        Sensitivity.FINANCE,
        "Money: accounts, cards, salary, income, debts, credit, taxes.",
        (
            r"\b(?:bank account|account number|iban|credit card|debit card|salary|income|"
            r"debt|debts|loan|mortgage|credit score|tax return|net worth|overdraft)\b",
            r"\b[a-z]{2}\d{2}(?: [a-z0-9]{4}){3,7}\b",
            r"银行账户|银行卡|信用卡|工资|薪水|收入|贷款|债务|存款|税单",
        ),
    ),
    SensitivityRule(
        Sensitivity.LOCATION,
        "A precise location: a home or street address, GPS coordinates (a city is not one).",
        (
            r"\b(?:home address|street address|lives at|gps|coordinates|geolocation)\b",
            r"-?\b\d{1,2}\.\d{4,}\s*,\s*-?\d{1,3}\.\d{4,}\b",
            r"住址|家庭地址|门牌号|经纬度|定位",
        ),
    ),
    SensitivityRule(
        Sensitivity.PERSONAL,
        "Personal details: birthday, phone number, e-mail address.",
        (
            r"\b(?:birthday|date of birth|phone number|mobile number|e-?mail address)\b",
            r"生日|出生日期|电话号码|手机号|邮箱",
        ),
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

# Each class's patterns under its name: benign text holds the needles of few of them,
# and only those run (see `LabelledPatterns`).
_SENSITIVITY_PATTERNS = LabelledPatterns(
    ((rule.sensitivity, pattern) for rule in SENSITIVITY_RULES for pattern in rule.patterns),
    remembers_words=True,
)
# Three rules of few patterns: searching them all costs less than looking for their
# needles first.
_COMPILED_EPHEMERAL = tuple(
    (rule.kind, re.compile("|".join(rule.patterns))) for rule in EPHEMERAL_RULES
)


def _readable(strings: Iterable[str]) -> list[str]:
    # Identifiers like `home_address` read as words.
    return [canonical(s.replace("_", " ")) for s in strings if s]


@dataclass(frozen=True)
class Classification:
    """What the rules and the hint say about one piece of content."""

    sensitivity: str
    # Every class found (or hinted) that needs consent, strongest first.
    consent_classes: tuple[str, ...]


def classify(strings: Iterable[str], *, hint: str = Sensitivity.NORMAL) -> Classification:
    """The sensitivity of `strings`: the stronger of what the rules find and the hint."""
    texts = _readable(strings)
    found: set[str] = set()
    for text in texts:
        found |= _SENSITIVITY_PATTERNS.labels_in(text, known=found)
    if hint:
        found.add(hint)
    consent = tuple(cls for cls in CONSENT_CLASSES if cls in found)
    strongest = max(found, key=lambda cls: _RANK[cls], default=Sensitivity.NORMAL)
    return Classification(sensitivity=strongest, consent_classes=consent)


def find_ephemeral(strings: Iterable[str]) -> tuple[str, ...]:
    """The kinds of ephemeral value in `strings`, in rule order."""
    texts = _readable(strings)
    return tuple(
        kind for kind, pattern in _COMPILED_EPHEMERAL if any(pattern.search(t) for t in texts)
    )


def needs_consent(sensitivity: str) -> bool:
    return sensitivity in CONSENT_CLASSES
