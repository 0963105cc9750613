"""How people write a credential into a sentence, in the languages agents relay.

"Her bank password is Tr0ub4dor&3", "我的密码是…", "Mein Passwort lautet …",
"the deploy token is 9fQ2…": no `=` and no vendor prefix, only a word that
names a credential, a short link ("is", "lautet", "是", "は", a colon) and
the value. The phrase finds where a value would stand; whether one stands
there is decided by how the value looks: a password mixes letters with
digits or symbols and is not a word ("the password is required") or a
placeholder (`<password>`, `${PASS}`, `****`); a token near a credential
word is long and random.
"""

from __future__ import annotations

import math
import re
from collections import Counter

# What may stand for a value: a run of printable ASCII, and the non-ASCII letters of
# Latin scripts, up to a space, a quote or CJK text and punctuation.
_VALUE = r"[\"'“\u2018«「『]?(?P<value>[!#-&(-~À-ɏ]{4,128})"

# Words for "password", Latin script, with the link that introduces the value in that
# language; a few words of context ("for the office wifi") may sit between.
_NOUNS = (
    r"password|passwd|passcode|passphrase|pass\s?word|passwort|kennwort|contraseña|contrasena"
    r"|mot\s+de\s+passe|senha|wachtwoord|hasło|haslo|m[aậ]t\s+kh[aẩ]u|kata\s+sandi"
    r"|parola|şifre(?:m|n|si|miz)?|sifre(?:m|n|si|miz)?"
)
# Links that may follow a few words of context, and short ones ("to", "e") that are
# links only right after the word: "password reset link sent to …" is no password.
_LINK = r"is|was|is\s+now|will\s+be|lautet|ist|war|es|era|est|était|é|è|luidt|là|adalah|ialah"
_LINK_NEAR = r"to|jest|to\s+jest|e|olarak"
_CONTEXT_WORD = r"(?!(?:" + _LINK + r")(?!\w))[^\s:=]{1,20}"
PASSWORD_LATIN = (
    r"(?i)(?<![\w-])(?:" + _NOUNS + r")(?![\w-])"
    r"(?:(?:\s+" + _CONTEXT_WORD + r"){0,4}?(?:\s*[:=\uff1a]|\s+(?:" + _LINK + r")(?!\w)\s*[:=]?)"
    r"|\s+(?:" + _LINK_NEAR + r")(?!\w))"
    r"\s*" + _VALUE
)
# Languages whose sentence needs no link: "şifrem X", "kata sandi saya X", "мой пароль X",
# "पासवर्ड X है", "비밀번호는 X", "パスワードは X", "密码是X".
PASSWORD_BARE = (
    r"(?i)(?<!\w)(?:şifre(?:m|n|si|miz)|sifre(?:m|n|si|miz)"
    r"|kata\s+sandi(?:\s+(?:saya|anda|kamu|ku|nya))?)(?!\w)\s*:?\s*" + _VALUE
)
PASSWORD_OTHER = (
    r"(?:(?:пароль|пароля|паролю|пароле|Пароль|ПАРОЛЬ)(?:\s+(?:это|—|-))?"
    r"|पासवर्ड(?:\s+है)?"
    r"|(?:비밀번호|패스워드|암호)(?:는|은)?"
    r"|(?:パスワード|暗証番号)(?:は|が)"
    r"|(?:密码|密碼|口令)(?:是|为|為)?(?=\s*[\uff1a:]|[是为為]|[!-~]))"
    r"\s*[:\uff1a]?\s*" + _VALUE
)

# Words that name a credential, strong (a random value beside one is a credential) and
# weak ("key" also names cache keys and primary keys: the value must look generated).
_GENERATED_VALUE = r"[\"'“\u2018«「『]?(?P<value>[A-Za-z0-9+/=_\-.~!#$%^&*@]{16,200})"
CREDENTIAL_NEAR = (
    r"(?i)(?<![\w-])(?:(?P<strong>token|secret|api[\s_-]?key|apikey|access[\s_-]?key|passphrase"
    r"|password|credentials?|auth[\s_-]?token|client[\s_-]?secret|api[\s_-]?schlüssel|jeton"
    r"|secreto)|(?P<weak>key|schlüssel|clé|cle|clave|chave|chiave|anahtar|klucz|sleutel|khóa"
    r"|kunci))(?![\w-])"
    r"(?:\s*[:=]\s*|\s+(?:is|was|ist|lautet|est|es|é|è|to|jest|luidt|là|adalah)\s+|\s+)"
    + _GENERATED_VALUE
)
CREDENTIAL_NEAR_OTHER = (
    r"(?:(?P<strong>令牌|密钥|秘钥|密鑰|トークン|シークレット|토큰|시크릿|टोकन|токен|Токен|секрет"
    r"|Секрет)|(?P<weak>キー|키|कुंजी|ключ|Ключ))"
    r"(?:\s*[:=\uff1a]\s*|\s*(?:是|为|為|は|는|은|это|—)?\s*)" + _GENERATED_VALUE
)

# Words that follow "password is" in prose about passwords, not a password.
_NOT_A_PASSWORD = frozenset(
    [
        "required",
        "optional",
        "needed",
        "missing",
        "wrong",
        "incorrect",
        "correct",
        "invalid",
        "valid",
        "expired",
        "expiring",
        "reset",
        "changed",
        "change",
        "set",
        "unset",
        "stored",
        "saved",
        "kept",
        "hidden",
        "encrypted",
        "hashed",
        "salted",
        "empty",
        "blank",
        "long",
        "short",
        "weak",
        "strong",
        "secure",
        "insecure",
        "too",
        "not",
        "never",
        "always",
        "the",
        "a",
        "an",
        "in",
        "on",
        "at",
        "for",
        "of",
        "to",
        "be",
        "being",
        "been",
        "managed",
        "rotated",
        "disabled",
        "enabled",
        "locked",
        "unlocked",
        "sent",
        "shared",
        "known",
        "unknown",
        "same",
        "different",
        "case",
        "sensitive",
        "case-sensitive",
        "protected",
        "generated",
        "random",
        "lost",
        "forgotten",
        "updated",
    ]
)
# Words before "key" that make it a key of another kind.
_OTHER_KEYS = frozenset(
    [
        "cache",
        "primary",
        "foreign",
        "public",
        "host",
        "sort",
        "partition",
        "idempotency",
        "lookup",
        "dedup",
        "dedupe",
        "row",
        "object",
        "routing",
        "map",
        "dict",
        "hash",
        "index",
        "composite",
        "unique",
        "natural",
        "surrogate",
        "shard",
        "license",
    ]
)
_PLACEHOLDER = re.compile(
    r"^(?:\$\{.*\}?|\$\(.*\)?|\$[A-Za-z_]\w*|\{\{.*\}?\}?|<.*>?|%[A-Za-z_]\w*%?|%\(.*\)s|\*+"
    r"|x+|X+|\.+|-+|_+|#+|\?+|null|none|nil|true|false|redacted|changeme|change-me|hunter2"
    r"|password\d*|passw0rd|p@ssw0rd|secret|example|your[_-].*|my[_-].*|env\(.*)$",
    re.IGNORECASE,
)
_TRAILING = ".,;:)]}\"'»”\u2019」』"
_WORD_SEPARATORS = re.compile(r"[-'\u2019.]")
_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[A-Za-z]{2,}$")
_NUMBER_AND_UNIT = re.compile(r"^\d+[-_]?[a-z]+$|^[a-z]{1,4}[-_]?\d+$")
_UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$", re.I)
_HEX = re.compile(r"^[0-9a-fA-F]+$")
# Values that are public by design: SSH public-key bodies, lockfile integrity, digests.
_PUBLIC_VALUE = re.compile(r"^(?:AAAA[A-Z]3NzaC|sha\d+[-:]|md5[-:]|ssh-|ecdsa-|pgp-)", re.I)


def _clean(value: str) -> str:
    return value.rstrip(_TRAILING)


def _classes(value: str) -> int:
    return sum(
        (
            any(c.islower() for c in value),
            any(c.isupper() for c in value),
            any(c.isdigit() for c in value),
            any(not c.isalnum() for c in value),
        )
    )


def entropy(value: str) -> float:
    counts = Counter(value)
    return -sum(n / len(value) * math.log2(n / len(value)) for n in counts.values())


def looks_like_password(value: str) -> str | None:
    """`value` if it reads as a password: six or more characters mixing letters with
    digits or symbols (or six digits and more), not a word, a placeholder, an address
    or a path."""
    value = _clean(value)
    if len(value) < 6 or _PLACEHOLDER.match(value) or value.lower() in _NOT_A_PASSWORD:
        return None
    if value.startswith(("/", "~", "./", "http://", "https://", "www.")) or _EMAIL.match(value):
        return None
    if value.isdigit():
        return value
    words = _WORD_SEPARATORS.split(value)
    if all(word.isalpha() for word in words if word):
        # Words ("required", "one-time", "Stored"); a change of case inside one is not prose.
        return value if any(_mixed_case(word[1:]) for word in words) else None
    if not any(c.isalpha() for c in value):
        return None  # a number, a date, a time
    if _NUMBER_AND_UNIT.match(value):
        return None  # "12chars", "min-12", "v2"
    return value


def _mixed_case(word: str) -> bool:
    return any(c.isupper() for c in word) and any(c.islower() for c in word)


def looks_generated(value: str, *, strong: bool) -> str | None:
    """`value` if it reads as a generated credential: long, random, not an id or digest."""
    value = _clean(value)
    if len(value) < 16 or _PLACEHOLDER.match(value) or _UUID.match(value):
        return None
    if _PUBLIC_VALUE.match(value) or value.startswith(("/", "~", "./", "http", "www.")):
        return None
    if _HEX.match(value):
        # A hex run beside "key" is as often a digest or an id; beside "token" or
        # "secret" it is the credential.
        return value if strong and len(value) >= 32 and entropy(value) >= 3.3 else None
    if not any(c.isdigit() for c in value) or not any(c.isalpha() for c in value):
        return None
    classes = _classes(value)
    if strong:
        return value if classes >= 3 or entropy(value) >= 3.8 else None
    return value if classes >= 3 and entropy(value) >= 3.5 else None


_LAST_WORD = re.compile(r"(\w+)[\s_-]*$")


def other_kind_of_key(text_before: str) -> bool:
    """Whether the word before "key" names another kind of key: "cache key", "primary key"."""
    last = _LAST_WORD.search(text_before[-30:])
    return last is not None and last.group(1).lower() in _OTHER_KEYS


def is_placeholder(value: str) -> bool:
    """`${PASS}`, `<password>`, `****`, `xxxx`, `changeme`: a value that stands for one."""
    return bool(_PLACEHOLDER.match(_clean(value)))
