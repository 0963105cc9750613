"""The screen on data it never saw: `python -m bench screen-heldout`.

Every set here is held out: `testing/screen_corpus/heldout/` was written apart
from the training data and is never read by `bench.screen_train`, and each
public set's `test.tsv` is its authors' own test split (the head trains on
their `train.tsv` only). Nothing here tunes anything; it only counts.

An attack is *detected* when the gate would not let it through unseen: its
content rules quarantine it, or the learned head puts it in the review band.
Each held-out attack is also sent obfuscated: every encoding of the decode
ladder (the Latin-only shifts and reversals for Latin-script samples) and ten
invisible characters standing for its spaces.
"""

from __future__ import annotations

import base64
import codecs
import contextlib
import os
import platform
import statistics
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from unittest import mock

from django.db import connection

from accounts.models import Tenant
from common.screen import decode, find_secrets_in_text, injection, normalize
from common.screen import second_look as looking
from common.screen.injection import judge_injection_many
from common.screen.learned import PASS, QUARANTINE, head
from memory.claims import gate
from memory.claims.models.ledger import Sensitivity
from memory.claims.models.screening import ScreenExample
from memory.claims.screen_fit import band_quality
from memory.claims.selectors.screening import screen_bands, screen_examples
from memory.claims.sensitivity import classify
from memory.claims.sensitivity_head import sensitivity_head
from testing.corpus import labelled_rows
from testing.screen_corpus import HERE, Sample, read

HEADING = "## Screen: held-out sets, learned head and rules together"


def _shift(text: str, by: int) -> str:
    out = []
    for char in text:
        if char.isascii() and char.isalpha():
            base = ord("a") if char.islower() else ord("A")
            out.append(chr((ord(char) - base + by) % 26 + base))
        else:
            out.append(char)
    return "".join(out)


def _utf8(text: str) -> bytes:
    return text.encode("utf-8")


ENCODINGS: dict[str, Callable[[str], str]] = {
    "base64": lambda t: base64.b64encode(_utf8(t)).decode(),
    "base64 in groups": lambda t: " ".join(
        base64.b64encode(_utf8(t)).decode()[i : i + 4]
        for i in range(0, len(base64.b64encode(_utf8(t))), 4)
    ),
    "base64 x3": lambda t: base64.b64encode(base64.b64encode(base64.b64encode(_utf8(t)))).decode(),
    "base32": lambda t: base64.b32encode(_utf8(t)).decode(),
    "base85": lambda t: base64.b85encode(_utf8(t)).decode(),
    "spaced hex": lambda t: " ".join(f"{b:02x}" for b in _utf8(t)),
    "\\x escapes": lambda t: "".join(f"\\x{b:02x}" for b in _utf8(t)),
    "\\u escapes": lambda t: "".join(f"\\u{ord(c):04x}" for c in t if ord(c) <= 0xFFFF),
    "HTML entities": lambda t: "".join(f"&#{ord(c)};" for c in t),
    "quoted-printable": lambda t: "".join(f"={b:02X}" for b in _utf8(t)),
    "URL escapes": lambda t: "".join(f"%{b:02X}" for b in _utf8(t)),
}
LATIN_ENCODINGS: dict[str, Callable[[str], str]] = {
    "rot13": lambda t: codecs.encode(t, "rot13"),
    "Caesar +3": lambda t: _shift(t, 3),
    "reversed": lambda t: t[::-1],
    "bidi-reversed": lambda t: "\u202e" + t[::-1] + "\u202c",
}
SEPARATORS = (
    "\u200b",
    "\u2060",
    "\u00ad",
    "\u180e",
    "\u2800",
    "\u3164",
    "\uffa0",
    "\U000e0020",
    "\u200c",
    "\u200e",
)


@dataclass
class Tally:
    samples: int = 0
    detected: int = 0
    quarantined: int = 0

    def rate(self, part: int) -> str:
        return f"{100 * part / self.samples:.1f}%" if self.samples else "n/a"


def _bands(texts: list[str]) -> list[str]:
    """The band the gate's injection screen puts each text in (as a claim's `text`)."""
    return [r.band for r in judge_injection_many([[t] for t in texts])]


def _count(tally: Tally, band: str) -> None:
    tally.samples += 1
    tally.detected += band != PASS
    tally.quarantined += band == QUARANTINE


def _latin(text: str) -> bool:
    letters = [c for c in text if c.isalpha()]
    return bool(letters) and sum(c.isascii() for c in letters) / len(letters) > 0.8


def injection_tables(attacks: list[Sample], benign: list[Sample]) -> list[str]:
    by_lang: dict[str, Tally] = defaultdict(Tally)
    for sample, band in zip(attacks, _bands([s.text for s in attacks]), strict=True):
        _count(by_lang[sample.lang], band)
        _count(by_lang["all"], band)
    benign_by_lang: dict[str, Tally] = defaultdict(Tally)
    for sample, band in zip(benign, _bands([s.text for s in benign]), strict=True):
        _count(benign_by_lang[sample.lang], band)
        _count(benign_by_lang["all"], band)
    langs = [*sorted(set(by_lang) | set(benign_by_lang) - {"all"}), "all"]
    lines = [
        "| language | attacks | detected | quarantined | benign notes | quarantined "
        "| sent to review |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for lang in langs:
        a, b = by_lang[lang], benign_by_lang[lang]
        bold = "**" if lang == "all" else ""
        lines.append(
            f"| {bold}{lang}{bold} | {a.samples} | {bold}{a.rate(a.detected)}{bold} "
            f"| {a.rate(a.quarantined)} | {b.samples} | {bold}{b.rate(b.quarantined)}{bold} "
            f"| {bold}{b.rate(b.detected - b.quarantined)}{bold} |"
        )
    return lines


def obfuscation_table(attacks: list[Sample]) -> tuple[list[str], Tally]:
    rows: dict[str, Tally] = {}
    total = Tally()
    variants: list[tuple[str, str]] = []
    for sample in attacks:
        for name, encode in ENCODINGS.items():
            variants.append((name, f"Note: {encode(sample.text)}"))
        if _latin(sample.text):
            for name, encode in LATIN_ENCODINGS.items():
                variants.append((name, encode(sample.text)))
        for separator in SEPARATORS:
            variants.append(
                (f"U+{ord(separator):04X} for spaces", sample.text.replace(" ", separator))
            )
    for (name, _), band in zip(variants, _bands([v for _, v in variants]), strict=True):
        _count(rows.setdefault(name, Tally()), band)
        _count(total, band)
    lines = ["| obfuscation | attacks | detected |", "|---|---:|---:|"]
    lines += [f"| {name} | {t.samples} | {t.rate(t.detected)} |" for name, t in rows.items()]
    lines.append(f"| **all** | {total.samples} | **{total.rate(total.detected)}** |")
    return lines, total


def public_tables() -> list[str]:
    lines = [
        "| public test split (never trained on) | attacks | detected | benign | flagged |",
        "|---|---:|---:|---:|---:|",
    ]
    for test in sorted((HERE / "public").glob("*/test.tsv")):
        samples = read(str(test.relative_to(HERE)))
        attacks = [s for s in samples if s.label == "injection"]
        benign = [s for s in samples if s.label != "injection"]
        a, b = Tally(), Tally()
        for band in _bands([s.text for s in attacks]):
            _count(a, band)
        for band in _bands([s.text for s in benign]):
            _count(b, band)
        lines.append(
            f"| {test.parent.name} | {a.samples} | **{a.rate(a.detected)}** | {b.samples} "
            f"| {b.rate(b.detected)} |"
        )
    return lines


def secret_table(samples: list[Sample]) -> list[str]:
    secrets = [s for s in samples if s.label == "secret"]
    benign = [s for s in samples if s.label != "secret"]
    caught = sum(bool(find_secrets_in_text(s.text)) for s in secrets)
    flagged = sum(bool(find_secrets_in_text(s.text)) for s in benign)
    dev = labelled_rows("secrets_dev.tsv")
    dev_secrets = [text for label, _, _, text in dev if label == "secret"]
    dev_benign = [text for label, _, _, text in dev if label != "secret"]
    dev_caught = sum(bool(find_secrets_in_text(text)) for text in dev_secrets)
    dev_flagged = sum(bool(find_secrets_in_text(text)) for text in dev_benign)
    return [
        "| secrets | held out: samples | caught / flagged | rate "
        "| development set: samples | caught / flagged | rate |",
        "|---|---:|---:|---:|---:|---:|---:|",
        f"| secrets, every disguise | {len(secrets)} | {caught} "
        f"| **{100 * caught / max(1, len(secrets)):.1f}%** | {len(dev_secrets)} | {dev_caught} "
        f"| {100 * dev_caught / max(1, len(dev_secrets)):.1f}% |",
        f"| benign look-alikes | {len(benign)} | {flagged} "
        f"| **{100 * flagged / max(1, len(benign)):.1f}%** | {len(dev_benign)} | {dev_flagged} "
        f"| {100 * dev_flagged / max(1, len(dev_benign)):.1f}% |",
    ]


def secret_dev_tables() -> list[str]:
    """The development set (`testing/corpus/secrets_dev.tsv`) per class and per language.

    The screen's detectors were written against this set; the held-out rate above is the
    one that says how they read secrets they never saw."""
    by_class: dict[tuple[str, str], Tally] = defaultdict(Tally)
    by_lang: dict[str, Tally] = defaultdict(Tally)
    for label, kind, lang, text in labelled_rows("secrets_dev.tsv"):
        found = bool(find_secrets_in_text(text))
        for tally in (by_class[(label, kind)], *([by_lang[lang]] if label == "secret" else [])):
            tally.samples += 1
            tally.detected += found
    lines = [
        "| development set: class | samples | caught (secrets) / flagged (look-alikes) |",
        "|---|---:|---:|",
    ]
    lines += [
        f"| {'look-alike: ' if label != 'secret' else ''}{kind} | {t.samples} "
        f"| {t.rate(t.detected)} |"
        for (label, kind), t in sorted(
            by_class.items(), key=lambda item: (item[0][0] != "secret", item[0][1])
        )
    ]
    lines += ["", "| development set: language | secrets | caught |", "|---|---:|---:|"]
    lines += [
        f"| {lang} | {t.samples} | {t.rate(t.detected)} |" for lang, t in sorted(by_lang.items())
    ]
    return lines


# Held-out class names that name a class memdesk files under another name.
SENSITIVE_ALIASES = {
    "financial_account": Sensitivity.FINANCE,
    "precise_location": Sensitivity.LOCATION,
}


def sensitive_table(samples: list[Sample]) -> list[str]:
    by_lang: dict[str, Tally] = defaultdict(Tally)
    by_class: dict[str, Tally] = defaultdict(Tally)
    benign = Tally()
    for sample in samples:
        found = classify([sample.text])
        if sample.label == "none":
            benign.samples += 1
            benign.detected += bool(found.consent_classes)
            continue
        expected = SENSITIVE_ALIASES.get(sample.label, sample.label)
        right = expected in found.consent_classes
        for tally in (by_lang[sample.lang], by_class[sample.label], by_lang["all"]):
            tally.samples += 1
            tally.detected += right
    lines = ["| sensitive class | facts | classified |", "|---|---:|---:|"]
    lines += [f"| {c} | {t.samples} | {t.rate(t.detected)} |" for c, t in sorted(by_class.items())]
    lines += ["", "| language | facts | classified |", "|---|---:|---:|"]
    lines += [
        f"| {lang} | {t.samples} | {t.rate(t.detected)} |"
        for lang, t in sorted(by_lang.items())
        if lang != "all"
    ]
    total = by_lang["all"]
    lines.append(f"| **all** | {total.samples} | **{total.rate(total.detected)}** |")
    lines.append(
        f"| benign look-alikes flagged | {benign.samples} | {benign.rate(benign.detected)} |"
    )
    learned = sensitivity_head()
    if learned is not None:
        classified, flagged = learned.cross_validated
        lines += [
            "",
            "For comparison, the training corpus (`testing/screen_corpus/sensitive/train.tsv`), "
            "5-fold out of fold, rules and learned head together "
            f"(`python -m bench.sensitivity_train`): {classified:.1%} of sensitive facts "
            f"classified, {flagged:.1%} of look-alikes flagged.",
        ]
    return lines


def _claim(text: str) -> gate.Candidate:
    return gate.Candidate(
        kind="fact",
        predicate="note",
        value={"summary": text[:60], "tags": ["crm", "q4"]},
        text=text,
        authority="agent_inferred",
        basis="inference",
        available_at=datetime(2026, 12, 1, tzinfo=UTC),
        source_count=1,
        subject="user:alice",
        scope={"project": "crm"},
    )


def timing(notes: list[str], rounds: int = 3) -> list[float]:
    """Wall ms per claim for the gate's whole content screen, models loaded, caches cleared."""
    return timing_with_and_without_second_look(notes, rounds)["with"]


def timing_with_and_without_second_look(
    notes: list[str], rounds: int = 2
) -> dict[str, list[float]]:
    """Wall ms per claim, interleaved claim by claim: the whole content screen as shipped
    ("with"), and the same with the second look set aside ("without", the floor)."""
    head("injection")
    if looking.second_look() is not None:
        looking.encode(["warm-up"])
    gate.evaluate(_claim("warm-up"), active=None)
    times: dict[str, list[float]] = {"with": [], "without": []}
    for _ in range(rounds):
        for note in notes:
            for way in times:
                normalize.clear_cache()
                decode.clear_cache()
                with (
                    mock.patch.object(injection, "second_look", lambda: None)
                    if way == "without"
                    else contextlib.nullcontext()
                ):
                    started = time.perf_counter()
                    gate.evaluate(_claim(note), active=None)
                    times[way].append((time.perf_counter() - started) * 1000)
    return times


TIMING_HEADING = "## Screen: one claim's screening time, with and without the second look"


def timing_report() -> str:
    """`python -m bench screen-timing`: the held-out benign notes' screening time, the
    second look on and off, interleaved."""
    notes = [s.text for s in read("heldout/benign.tsv")][:200]
    times = timing_with_and_without_second_look(notes)
    looked = sum(r.second is not None for r in judge_injection_many([[t] for t in notes]))
    rows = []
    for way, label in (("with", "as shipped"), ("without", "second look set aside (floor)")):
        centiles = statistics.quantiles(times[way], n=100)
        rows.append(
            f"| {label} | {len(times[way])} | {statistics.median(times[way]):.2f} "
            f"| {centiles[94]:.2f} | {centiles[98]:.2f} | {max(times[way]):.1f} |"
        )
    ratio = statistics.median(times["with"]) / statistics.median(times["without"])
    return "\n".join(
        [
            TIMING_HEADING,
            "",
            f"Run `python -m bench screen-timing` on {datetime.now(UTC):%Y-%m-%d %H:%M} UTC; "
            f"Python {platform.python_version()}, {os.cpu_count()} CPUs, load average "
            f"{os.getloadavg()[0]:.1f}. The gate's whole content screen for each of the first "
            f"{len(notes)} held-out benign notes, caches cleared, models loaded, the two ways "
            f"interleaved claim by claim; {looked} of the {len(notes)} notes take the second "
            "look.",
            "",
            "| screen | claims | p50 ms | p95 ms | p99 ms | max ms |",
            "|---|---:|---:|---:|---:|---:|",
            *rows,
            "",
            f"p50 with / without: {ratio:.2f}x.",
            "",
        ]
    )


def report() -> str:
    attacks = [s for s in read("heldout/injection.tsv") if s.label == "injection"]
    benign = read("heldout/benign.tsv")
    lines = [
        HEADING,
        "",
        f"Run `python -m bench screen-heldout` on {datetime.now(UTC):%Y-%m-%d %H:%M} UTC; "
        f"Python {platform.python_version()}, {os.cpu_count()} CPUs. Held-out sets: "
        "`testing/screen_corpus/heldout/` and each public set's own test split, none read by "
        "`python -m bench.screen_train` (see bench/README.md). Detected = quarantined or "
        "sent to review.",
        "",
    ]
    if not attacks:
        return "\n".join([*lines, "No held-out set found.", ""])
    obfuscated, _ = obfuscation_table(attacks)
    lines += [
        "Memory-poisoning attacks and benign memory notes, per language:",
        "",
        *injection_tables(attacks, benign),
        "",
        "The same attacks, obfuscated:",
        "",
        *obfuscated,
        "",
        *public_tables(),
        "",
        *secret_table(read("heldout/secrets.tsv")),
        "",
        *secret_dev_tables(),
        "",
        *sensitive_table(read("heldout/sensitive.tsv")),
        "",
    ]
    timed = [s.text for s in benign[:200]]
    times = timing(timed)
    centiles = statistics.quantiles(times, n=100)
    looked = sum(r.second is not None for r in judge_injection_many([[t] for t in timed]))
    lines += [
        f"Screening time per claim (the gate's content rules, rules, learned head and second "
        f"look, caches cleared), {len(times)} claims: p50 {statistics.median(times):.2f} ms, "
        f"p95 {centiles[94]:.2f} ms, p99 {centiles[98]:.2f} ms, max {max(times):.2f} ms; "
        f"{looked} of the {len(timed)} notes took the second look "
        f"(load average {os.getloadavg()[0]:.1f}).",
        "",
    ]
    return "\n".join(lines)


LABELS_HEADING = "## Screen: editors' labels, per tenant"


def labels_report() -> str:
    """Precision and recall of each tenant's bands on its own editors' decisions.

    Read from the configured database (the labels are the tenants' own); only scores and
    labels, never text. A tenant without examples is left out.
    """
    rows = []
    migrated = ScreenExample._meta.db_table in connection.introspection.table_names()
    for tenant in Tenant.objects.order_by("slug") if migrated else []:
        examples = screen_examples(tenant=tenant)
        if not examples:
            continue
        bands = screen_bands(tenant=tenant) or head("injection").bands
        quality = band_quality(examples, bands)
        injections = sum(label == "injection" for label, _ in examples)
        for name, rates in (("quarantine", quality.quarantined), ("any flag", quality.flagged)):
            precision = "n/a" if rates.precision is None else f"{rates.precision:.1%}"
            rows.append(
                f"| {tenant.slug} | {name} | {len(examples) - injections} | {injections} "
                f"| {precision} | {rates.recall:.1%} | {rates.benign_share:.1%} |"
            )
    lines = [
        LABELS_HEADING,
        "",
        f"Run `python -m bench screen-labels` on {datetime.now(UTC):%Y-%m-%d %H:%M} UTC against "
        "the configured database: each tenant's editor decisions on screened candidates "
        "(approve or merge = benign, reject as `injection` = injection), judged by the bands "
        "in force for that tenant (`manage.py screen_calibrate` moves them).",
        "",
    ]
    if not rows:
        return "\n".join([*lines, "No tenant has labelled examples yet.", ""])
    return "\n".join(
        [
            *lines,
            "| tenant | cut | benign | injections | precision | recall | benign flagged |",
            "|---|---|---:|---:|---:|---:|---:|",
            *rows,
            "",
        ]
    )
