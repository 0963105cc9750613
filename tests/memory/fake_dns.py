"""A stand-in for DNS: memdesk's platform resolver is a setting, so tests answer for it.

Names map to a list of addresses, or to a list of lists that is answered in
turn (the last answer repeats), which is how a rebinding name behaves: one
answer when it is checked, another when something asks again. Every question
is counted, so a test can prove how often memdesk asked.
"""

from __future__ import annotations

import time
from collections import Counter

from memory.receipts.reconcilers.addresses import Unresolvable

RECORDS: dict[str, list[list[str]]] = {}
ASKED: Counter[str] = Counter()
# Seconds a name's answer takes, for a resolver that is slow to say anything.
DELAYS: dict[str, float] = {}


def answer(host: str, *answers: list[str]) -> None:
    """Make `host` resolve to `answers[0]`, then `answers[1]`, … (the last one repeats)."""
    RECORDS[host] = [list(addresses) for addresses in answers]


def reset() -> None:
    RECORDS.clear()
    ASKED.clear()
    DELAYS.clear()


def resolve(host: str, port: int) -> list[str]:
    answers = RECORDS.get(host.lower())
    if not answers:
        raise Unresolvable(host)
    time.sleep(DELAYS.get(host.lower(), 0))
    asked = ASKED[host.lower()]
    ASKED[host.lower()] += 1
    return answers[min(asked, len(answers) - 1)]
