"""Text hidden inside a string: a bounded ladder of decodings.

An instruction or a key can be sent encoded (base64, base32, base85, hex with
or without separators, `\\x..` and `\\u....` escapes, HTML entities, URL or
quoted-printable escapes), spelled in Unicode tag characters (U+E0020-U+E007E
mirror ASCII and render as nothing) or in a run of variation selectors (one byte
each, riding on a visible character), shifted (rot13 or another Caesar shift),
or written backwards. `hidden_readings` recovers each payload that decodes to
readable text, with the name of the decoding that found it, so the screens
judge it as well as the string around it, and say which reading fired.

The ladder is bounded three ways: nested encodings are followed `MAX_DEPTH`
deep, at most `MAX_READINGS` payloads are kept, and at most `MAX_RUN`
characters of one run are decoded. Runs are decoded only at a plausible length
and kept only when the result is mostly printable, so digests, ids and
ordinary words decode to nothing. A shift or a reversal is kept only when it
reads as more natural language than the text did.
"""

from __future__ import annotations

import base64
import binascii
import html
import quopri
import re
import unicodedata
from collections.abc import Callable, Iterator
from functools import cache, lru_cache
from urllib.parse import unquote_plus

import numpy as np

_BASE64_RUN = re.compile(r"[A-Za-z0-9+/_-]{16,}={0,2}")
# Base64 cut into groups of one size ("aWdu b3Jl IGFs bCBw"), the last possibly shorter.
_BASE64_GROUPS = re.compile(
    r"(?<![A-Za-z0-9+/=])(?:[A-Za-z0-9+/]{3,8}[ \t.\-]){3,}[A-Za-z0-9+/]+={0,2}"
)
_BASE32_RUN = re.compile(r"(?<![A-Za-z0-9])[A-Z2-7]{16,}={0,6}(?![A-Za-z0-9])")
_BASE85_RUN = re.compile(
    r"<~[!-u\s]{10,}~>|(?<![!-~])[0-9A-Za-z!#$%&()*+\-;<=>?@^_`{|}~]{20,}(?![!-~])"
)
_HEX_RUN = re.compile(r"(?<![0-9A-Fa-f])(?:[0-9A-Fa-f]{2}){8,}(?![0-9A-Fa-f])")
# Hex bytes apart: "69 67 6e", "69:67:6e", "0x69 0x67", "\\x69\\x67".
_SPACED_HEX = re.compile(r"(?:(?:0x|\\x)?[0-9A-Fa-f]{2}[\s,:]*){8,}")
_HEX_BYTE = re.compile(r"(?:0x|\\x)?([0-9A-Fa-f]{2})")
_U_ESCAPE = re.compile(r"\\u([0-9A-Fa-f]{4})|\\U([0-9A-Fa-f]{8})|\\u\{([0-9A-Fa-f]{1,6})\}")
_ENTITY = re.compile(r"&(?:#[0-9]{1,7}|#[xX][0-9A-Fa-f]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});")
_QP_BYTE = re.compile(r"=[0-9A-F]{2}")
_PERCENT = re.compile(r"%[0-9A-Fa-f]{2}")
_TAGS = re.compile("[\U000e0020-\U000e007e]+")
# Two or more variation selectors in a row select nothing: they are bytes. VS1-VS16
# (U+FE00-U+FE0F) carry 0-15 and VS17-VS256 (U+E0100-U+E01EF) 16-255, so a message
# can ride invisibly on one emoji. A single selector after a character is ordinary.
SELECTOR_RUN = re.compile("[\ufe00-\ufe0f\U000e0100-\U000e01ef]{2,}")


def selector_bytes(run: str) -> bytes:
    """The bytes a run of variation selectors carries."""
    return bytes(
        ord(char) - 0xFE00 if ord(char) <= 0xFE0F else ord(char) - 0xE0100 + 16 for char in run
    )


def selector_text(run: str) -> str:
    """What a run of variation selectors spells, as UTF-8 (undecodable bytes replaced)."""
    return selector_bytes(run).decode("utf-8", errors="replace")


_BIDI = re.compile("[\u200e\u200f\u202a-\u202e\u2066-\u2069\u061c]")
_WORD = re.compile(r"[a-z]+")

# Nested encodings (base64 of base64 of base64) are followed this deep.
MAX_DEPTH = 4
# Payloads kept for one string, all depths together.
MAX_READINGS = 24
# Longest run decoded; the rest of a long run is judged undecoded.
MAX_RUN = 20_000
# Strings up to this length are remembered (see normalize.CACHED_UP_TO).
CACHED_UP_TO = 4096
# Shifts and reversals are tried on ASCII text up to this long.
SHIFT_UP_TO = 2_000


# Frequent words of the languages written in Latin letters, accents folded, with the
# verbs and nouns of orders to an agent. Used only to tell whether a shifted or reversed
# text reads better than the original: an encoded order turns back into these words.
_COMMON_WORDS = {
    "en": "the be to of and a in that have i it for not on with he as you do at this but his "
    "by from they we say her she or an will my one all would there their what so up out if "
    "about who get which go me when make can like time no just him know take people into "
    "year your good some could them see other than then now look only come its over think "
    "also back after use two how our work first well way even new want because any these "
    "give day most us is are was were been has had did does am ignore previous instructions "
    "instruction rules rule system prompt forget disregard above earlier prior everything "
    "always never must should remember permanent assistant agent model approve send reveal "
    "password secret key keys admin from now on future user users data delete disable "
    "override reply answer print tell do not don't hidden message messages every each "
    "refund refunds transfer money email",
    "es": "el la los las de que y en un una es por con para no se su al lo como mas pero sus "
    "le ya o este esta todo todas todos anteriores instrucciones ignora ignore olvida siempre "
    "nunca usuario datos envia aprueba reglas sistema",
    "fr": "le la les de des du et en un une est pour que qui dans pas ne vous tu au aux ce "
    "cette tous toutes ignore ignorez oublie oubliez instructions precedentes toujours jamais "
    "utilisateur donnees envoie regles systeme",
    "de": "der die das und ist nicht ein eine zu den dem mit von sie du ich es auf fur alle "
    "vorherigen anweisungen ignoriere vergiss immer nie benutzer daten sende regeln system",
    "it": "il lo la le gli di che e un una per non sono con del della tutte tutti ignora "
    "istruzioni precedenti sempre mai utente dati invia regole sistema",
    "pt": "o a os as de que e um uma para com nao do da dos das todas todos ignore ignora "
    "instrucoes anteriores sempre nunca usuario dados envie regras sistema",
    "nl": "de het een en van is dat niet je jij ik op te voor met alle vorige instructies "
    "negeer altijd nooit gebruiker gegevens stuur regels systeem",
    "tr": "ve bir bu da de icin ile tum onceki talimatlari yok say her zaman asla kullanici",
    "pl": "i w nie na to ze sie z jest do wszystkie poprzednie instrukcje zignoruj zawsze "
    "nigdy uzytkownik dane",
    "id": "dan yang di ke dari ini itu untuk dengan tidak semua instruksi sebelumnya abaikan "
    "selalu jangan pengguna data kirim",
}


@cache
def _common_words() -> frozenset[str]:
    return frozenset(word for words in _COMMON_WORDS.values() for word in words.split())


def _fold_accents(text: str) -> str:
    decomposed = unicodedata.normalize("NFD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def word_score(text: str) -> float:
    """The share of `text`'s letter runs that are common words of a Latin-script language."""
    lower = text.lower() if text.isascii() else _fold_accents(text.lower())
    # Single letters ("a", "e", "y") are words in several languages and in any hex run.
    words = [w for w in _WORD.findall(lower) if len(w) >= 2]
    if not words:
        return 0.0
    common = _common_words()
    return sum(1 for w in words if w in common) / len(words)


def _letters(text: str) -> str:
    lower = text.lower()
    return lower if lower.isascii() else _fold_accents(lower)


def letter_fit(text: str) -> tuple[float, int]:
    """How closely `text`'s letter frequencies follow Latin-script prose (cosine), and how
    many letters it has."""
    folded = _letters(text)
    counts = np.array([folded.count(letter) for letter in _LETTERS], dtype=np.float64)
    total = int(counts.sum())
    if not total:
        return 0.0, 0
    shape = np.array(_LATIN)
    return float(counts @ shape / (np.linalg.norm(counts) * np.linalg.norm(shape))), total


def forwardness(text: str) -> float:
    """The mean weight of `text`'s bigrams read forward: above 0 it runs as prose does."""
    pairs = [w[i : i + 2] for w in _WORD.findall(_letters(text)) for i in range(len(w) - 1)]
    if not pairs:
        return 0.0
    return sum(_FORWARD.get(p, 0.0) - _FORWARD.get(p[::-1], 0.0) for p in pairs) / len(pairs)


def _prose_shaped(text: str) -> bool:
    """Several words and many distinct letters: what a shape can be read from (a digest
    or an encoded run is one word of few letters)."""
    words = [
        token
        for token in _letters(text).split()
        if len(token) >= 2 and sum(c.isalpha() for c in token) >= 0.7 * len(token)
    ]
    return len(words) >= 3 and len({c for w in words for c in w if c.isalpha()}) >= 10


def _mostly_ascii_letters(text: str) -> bool:
    letters = [c for c in text if c.isalpha()]
    return bool(letters) and sum(c.isascii() for c in letters) >= 0.8 * len(letters)


def _readable(raw: bytes) -> str | None:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if not text:
        return None
    printable = sum(1 for c in text if c.isprintable() or c in "\n\r\t")
    return text if printable / len(text) >= 0.9 else None


def _from_base64(run: str) -> str | None:
    if run.isalpha() and (run.islower() or run.isupper()):
        return None  # a word, not an encoding
    body = run.rstrip("=")
    padded = body + "=" * (-len(body) % 4)
    alphabet = b"-_" if ("-" in body or "_" in body) else None
    try:
        raw = base64.b64decode(padded, altchars=alphabet, validate=alphabet is None)
    except (binascii.Error, ValueError):
        return None
    return _readable(raw)


def _from_base64_groups(run: str) -> str | None:
    groups = re.split(r"[ \t.\-]", run)
    # Groups of one size, as a writer who splits an encoding cuts it; words in prose vary.
    if len({len(g) for g in groups[:-1]}) != 1 or len(groups[-1].rstrip("=")) > len(groups[0]):
        return None
    return _from_base64("".join(groups))


def _from_base32(run: str) -> str | None:
    body = run.rstrip("=")
    try:
        raw = base64.b32decode(body + "=" * (-len(body) % 8))
    except (binascii.Error, ValueError):
        return None
    return _readable(raw)


def _from_base85(run: str) -> str | None:
    if run.isalnum() and (run.isalpha() or run.isdigit()):
        return None
    try:
        if run.startswith("<~"):
            raw = base64.a85decode(run, adobe=True, ignorechars=b" \t\n\r\v")
        else:
            raw = base64.b85decode(run)
    except (binascii.Error, ValueError):
        try:
            raw = base64.a85decode(run)
        except (binascii.Error, ValueError):
            return None
    return _readable(raw)


def _from_hex(run: str) -> str | None:
    try:
        return _readable(bytes.fromhex(run))
    except ValueError:
        return None


def _from_spaced_hex(run: str) -> str | None:
    pairs = _HEX_BYTE.findall(run)
    if len(pairs) < 8:
        return None
    return _readable(bytes.fromhex("".join(pairs)))


def _from_u_escapes(text: str) -> str | None:
    def char(match: re.Match[str]) -> str:
        code = int(match.group(1) or match.group(2) or match.group(3), 16)
        return chr(code) if code <= 0x10FFFF and not 0xD800 <= code <= 0xDFFF else ""

    return _U_ESCAPE.sub(char, text)


def _from_quoted_printable(text: str) -> str | None:
    try:
        return _readable(quopri.decodestring(text.encode("utf-8", "replace")))
    except (ValueError, binascii.Error):
        return None


def _shifted(text: str) -> tuple[str, str] | None:
    """The Caesar shift (rot13 among them) of `text` that reads best, if it reads better."""
    if not 20 <= len(text) <= SHIFT_UP_TO or not _mostly_ascii_letters(text):
        return None
    before = word_score(text)
    if before >= 0.5:
        return None
    # Letter frequencies pick the three likeliest shifts; only those are read word by word.
    lower = text.lower()
    counts = np.array([lower.count(letter) for letter in _LETTERS], dtype=np.float64)
    fit = _shift_fit() @ counts
    fit[0] = -1.0
    likely = [int(shift) for shift in np.argsort(-fit)[:3]]
    best: tuple[float, int, str] = (before, 0, text)
    for shift in likely:
        candidate = text.translate(_shift_table(shift))
        score = word_score(candidate)
        if score > best[0]:
            best = (score, shift, candidate)
    score, shift, candidate = best
    if shift and score >= 0.4 and score >= before + 0.25:
        return ("rot13" if shift == 13 else f"caesar{shift}", candidate)
    # Few common words either way (a language the word lists lack): the letters' shape.
    fit_before, letters = letter_fit(text)
    if letters < SHAPE_LETTERS or fit_before >= LETTER_FIT or not _prose_shaped(text):
        return None
    shift = likely[0]
    candidate = text.translate(_shift_table(shift))
    fit_after, _ = letter_fit(candidate)
    if (
        fit_after >= LETTER_FIT
        and fit_after >= fit_before + LETTER_GAIN
        and (forwardness(candidate) >= FORWARD_AFTER)
    ):
        return ("rot13" if shift == 13 else f"caesar{shift}", candidate)
    return None


# Letter frequencies (percent, a to z) and bigrams read far more often one way than
# the other (weight: log of forward over backward count), both read off the benign
# Latin-script memory notes of the training corpus (17 languages, accents folded). A
# shifted text regains the letters' shape; a reversed one turns its bigrams round.
_LATIN = (
    10.53, 1.47, 3.16, 4.41, 12.76, 1.16, 2.17, 2.04, 7.77, 0.63, 1.67, 4.58, 3.09,
    7.43, 6.55, 2.77, 0.27, 6.6, 6.23, 6.73, 3.48, 1.16, 0.96, 0.22, 1.23, 0.92,
)  # fmt: skip
_FORWARD = {
    "qu": 5.32, "mb": 4.85, "ch": 4.69, "xp": 4.58, "eq": 4.56, "wi": 4.47, "nv": 4.03,
    "rz": 3.94, "ea": 3.78, "nt": 3.76, "nc": 3.7, "cj": 3.51, "mp": 3.46, "nf": 3.43,
    "ns": 3.41, "pr": 3.36, "rl": 3.34, "tw": 3.21, "rs": 3.16, "gh": 3.12, "pl": 3.06,
    "rm": 3.0, "sz": 2.93, "nd": 2.7, "sh": 2.58, "ph": 2.56, "gs": 2.54, "he": 2.44,
    "xt": 2.36, "ry": 2.35, "ho": 2.29, "ct": 2.26, "ex": 2.09, "rn": 2.07, "ck": 2.05,
    "zy": 1.99, "nk": 1.99, "cl": 1.98, "cz": 1.94, "by": 1.87, "nb": 1.85, "ou": 1.82,
    "fr": 1.82, "ng": 1.79, "st": 1.79, "ld": 1.77, "xa": 1.77, "sc": 1.76, "hi": 1.76,
    "ft": 1.73, "sv": 1.63, "ny": 1.61, "wa": 1.61, "io": 1.54, "wy": 1.52, "ha": 1.51,
    "iy": 1.42, "br": 1.42, "de": 1.41, "co": 1.4, "hr": 1.4, "yo": 1.39, "kh": 1.35,
    "ui": 1.32, "pt": 1.28, "ze": 1.27, "nh": 1.27, "fi": 1.2, "je": 1.2, "pd": 1.19,
    "bl": 1.18, "un": 1.17, "py": 1.17, "kt": 1.14, "sp": 1.12, "en": 1.11, "th": 1.11,
    "fo": 1.1, "ri": 1.1, "wn": 1.07, "nl": 1.06,
}  # fmt: skip
# A shifted text is read back when its letters fit this well, and this much better than
# before; a reversed one when its bigrams run forward this much, and ran backward before.
# On the training notes: 95% of plain texts fit ≥ 0.80, 99% of rot13 texts < 0.77; plain
# texts score 0.43 forward at the median, 99% above 0.037.
LETTER_FIT = 0.8
LETTER_GAIN = 0.1
FORWARD_AFTER = 0.15
BACKWARD_BEFORE = -0.05
# Fewer letters than this say too little about their shape.
SHAPE_LETTERS = 25


_LETTERS = "abcdefghijklmnopqrstuvwxyz"


@cache
def _shift_fit() -> np.ndarray:
    """Row s, column i: how English the letter i reads after a shift by s."""
    return np.array([[_LATIN[(i + s) % 26] for i in range(26)] for s in range(26)])


@cache
def _shift_table(shift: int) -> dict[int, int]:
    table: dict[int, int] = {}
    for base in (ord("a"), ord("A")):
        for i in range(26):
            table[base + i] = base + (i + shift) % 26
    return table


def _reversed(text: str) -> str | None:
    """`text` backwards (bidi controls dropped), when that reads better than forwards."""
    plain = _BIDI.sub("", text)
    if not 20 <= len(plain) <= SHIFT_UP_TO or not _WORD.search(plain.lower()):
        return None
    before = word_score(plain)
    if before >= 0.5:
        return None  # prose that reads forward already
    backwards = plain[::-1]
    after = word_score(backwards)
    if after >= 0.4 and after >= before + 0.25:
        return backwards
    # Bigrams turned round: "ts" before "st", "eh" before "he".
    if (
        _prose_shaped(plain)
        and forwardness(plain) <= BACKWARD_BEFORE
        and forwardness(backwards) >= FORWARD_AFTER
    ):
        return backwards
    return None


def _runs(
    pattern: re.Pattern[str], decode: Callable[[str], str | None], text: str
) -> Iterator[str]:
    for match in pattern.finditer(text):
        decoded = decode(match.group()[:MAX_RUN])
        if decoded:
            yield decoded


def _decoded_once(text: str) -> list[tuple[str, str]]:
    """Every (decoding, payload) one step of the ladder finds in `text`."""
    found: list[tuple[str, str]] = []
    tags = "".join(chr(ord(c) - 0xE0000) for run in _TAGS.findall(text) for c in run)
    if tags:
        found.append(("tags", tags))
    found += [("selectors", selector_text(run)) for run in SELECTOR_RUN.findall(text[:MAX_RUN])]
    found += [("hex", d) for d in _runs(_HEX_RUN, _from_hex, text)]
    if " " in text or ":" in text or "\\x" in text or "0x" in text:
        found += [
            ("hex", d)
            for d in _runs(_SPACED_HEX, _from_spaced_hex, text)
            if not _HEX_RUN.fullmatch(d)
        ]
    found += [("base64", d) for d in _runs(_BASE64_RUN, _from_base64, text)]
    found += [("base64", d) for d in _runs(_BASE64_GROUPS, _from_base64_groups, text)]
    found += [("base32", d) for d in _runs(_BASE32_RUN, _from_base32, text)]
    found += [("base85", d) for d in _runs(_BASE85_RUN, _from_base85, text)]
    if "\\u" in text or "\\U" in text:
        unescaped = _from_u_escapes(text)
        if unescaped and unescaped != text:
            found.append(("escapes", unescaped))
    if "&" in text and _ENTITY.search(text):
        unescaped = html.unescape(text)
        if unescaped != text:
            found.append(("html", unescaped))
    if _PERCENT.search(text):
        unquoted = unquote_plus(text)
        if unquoted != text:
            found.append(("url", unquoted))
    if len(_QP_BYTE.findall(text)) >= 3:
        decoded = _from_quoted_printable(text)
        if decoded and decoded != text:
            found.append(("quoted_printable", decoded))
    shifted = _shifted(text)
    if shifted:
        found.append(shifted)
    backwards = _reversed(text)
    if backwards:
        found.append(("reversed", backwards))
    return found


def hidden_readings(text: str) -> tuple[tuple[str, str], ...]:
    """Every readable payload hidden in `text`, nested ones included, with how it was found.

    A nested payload is named by its path ("base64>base64>rot13").
    """
    return _hidden_cached(text) if len(text) <= CACHED_UP_TO else _hidden(text)


def hidden_texts(text: str) -> tuple[str, ...]:
    """Every readable payload encoded inside `text`, nested ones included."""
    return tuple(payload for _, payload in hidden_readings(text))


def clear_cache() -> None:
    _hidden_cached.cache_clear()


# The injection and the secret screens both ask about the same strings.
@lru_cache(maxsize=1024)
def _hidden_cached(text: str) -> tuple[tuple[str, str], ...]:
    return _hidden(text)


def _hidden(text: str) -> tuple[tuple[str, str], ...]:
    found: dict[str, str] = {}
    frontier = [("", text)]
    for _ in range(MAX_DEPTH):
        step: list[tuple[str, str]] = []
        for path, item in frontier:
            for how, payload in _decoded_once(item):
                if payload in found or payload == text:
                    continue
                name = f"{path}>{how}" if path else how
                found[payload] = name
                step.append((name, payload))
                if len(found) >= MAX_READINGS:
                    return tuple((name, payload) for payload, name in found.items())
        if not step:
            break
        frontier = step
    return tuple((name, payload) for payload, name in found.items())


# Printable ASCII runs long enough to hold a credential, as `strings(1)` finds them.
_PRINTABLE_RUN = re.compile(r"[\x20-\x7e\t]{8,}")


def text_of_file(content: bytes) -> str:
    """A file's bytes as text to scan: UTF-8, UTF-16 with a byte-order mark, else Latin-1.

    Latin-1 maps every byte to a character, so an ASCII key inside a binary or
    otherwise-encoded file is still found; only its printable runs are kept
    (one per line), so a large image costs little to scan.
    """
    if content.startswith((b"\xff\xfe", b"\xfe\xff")):
        try:
            return content.decode("utf-16")
        except UnicodeDecodeError:
            pass
    try:
        return content.decode("utf-8-sig")
    except UnicodeDecodeError:
        return "\n".join(_PRINTABLE_RUN.findall(content.decode("latin-1")))
