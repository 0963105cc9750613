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
    r"password|passwd|passcode|passphrase|pass\s?word|p[a@4][s$]{2}w[o0]rd|passwort|kennwort|contraseña|contrasena"
    r"|mot\s+de\s+passe|senha|wachtwoord|hasło|haslo|m[aậ]t\s+kh[aẩ]u|kata\s+sandi"
    r"|parola|şifre(?:m|n|si|miz)?|sifre(?:m|n|si|miz)?|clave|sandi|mdp|pwd|pw"
    r"|(?:wi-?fi|wlan|wpa2?|network)\s+key|psk|lösenord(?:et)?|passord(?:et)?|adgangskode(?:n)?"
    r"|salasana|(?:wlan|wi-?fi|netzwerk)-?schlüssel|(?:clé|clave|chave|chiave)\s+(?:wi-?fi|wpa2?)"
)
# Links that may follow a few words of context, and short ones ("to", "e") that are
# links only right after the word: "password reset link sent to …" is no password.
_LINK = (
    r"(?:is|was|has\s+been|got|wurde|a\s+été|fue)\s+(?:changed|set|reset|updated|switched|geändert"
    r"|changé|cambiada|cambiado)\s+(?:to|auf|en|a|à)|is|was|is\s+now|will\s+be|it[\u2019']s|it\s+is|lautet|ist|war|es|era|est|était|é|è|luidt|là"
    r"|adalah|ialah|used\s+to\s+be|är|er"
)
_LINK_NEAR = r"to|jest|to\s+jest|e|olarak"
_CONTEXT_WORD = r"(?!(?:" + _LINK + r")(?!\w))[^\s:=]{1,20}"
# The noun may close a compound ("WLAN-Passwort", "admin-password") or a question
# ("my password? it's …"); an arrow links as a colon does.
PASSWORD_LATIN = (
    r"(?i)(?<!\w)(?:" + _NOUNS + r")(?![\w-])\??"
    r"(?:(?:\s+" + _CONTEXT_WORD + r"){0,6}?(?:\s*(?:[:=\uff1a]|->|=>|→)|\s+[-\u2013—]\s"
    r"|\s+(?:" + _LINK + r")(?!\w)\s*[:=]?)"
    r"|\s+(?:" + _LINK_NEAR + r")(?!\w))"
    r"\s*" + _VALUE
)
# Languages whose sentence needs no link: "şifrem X", "kata sandi saya X", "мой пароль X",
# "पासवर्ड X है", "비밀번호는 X", "パスワードは X", "密码是X".
PASSWORD_BARE = (
    r"(?i)(?<!\w)(?:şifre(?:m|n|si|miz)|sifre(?:m|n|si|miz)|parola(?:m|n|s\u0131|si|m\u0131z)"
    r"|kata\s+sandi(?:\s+(?:saya|anda|kamu|ku|nya))?|(?:kata\s+)?sandinya|password-?nya"
    r"|has[łl]o(?:\s+(?:do|od|dla)(?:\s+[^\s:]{1,20}){1,4}?)?\s+(?:to|jest))(?!\w)"
    r"(?:\s+(?:adalah|ialah|yaitu|yakni)(?!\w))?\s*:?\s*" + _VALUE
)
# The noun and the value with nothing between ("root with password Quartz*3495"):
# judged as a strong password only (`looks_like_strong_password`).
PASSWORD_SPACED = r"(?i)(?<!\w)(?:" + _NOUNS + r")(?![\w-])\s+" + _VALUE
# A passphrase in quotes after its name and a link: 'the password is "purple monkey
# dishwasher 42"'.
PASSPHRASE_QUOTED = (
    r"(?i)(?<!\w)(?:" + _NOUNS + r")(?![\w-])(?:\s+[^\s:=\"“]{1,20}){0,4}?"
    r"(?:\s*[:=\uff1a]|\s+(?:is|was|ist|lautet|est|es|é|è|is\s+now))\s*[\"“'\u2018«]"
    r"(?P<value>[^\"”'\u2019»\n]{12,80})[\"”'\u2019»]"
)
# "use Maple&7699 to log in", "log in as alice with Quartz!2783": strong passwords only.
PASSWORD_TO_LOG_IN = (
    r"(?i)(?<!\w)(?:use|enter|type|try)\s+" + _VALUE + r"\s+(?:to|for)\s+"
    r"(?:log\s*in|login|sign\s*in|connect|unlock|get\s+in)(?!\w)"
)
PASSWORD_LOG_IN_WITH = (
    r"(?i)(?<!\w)(?:log\s*in|login|sign\s*in|connect)(?!\w)[^\n]{0,40}?\swith\s+"
    + _VALUE
    + r"(?=\s*$|\s*[\n;)]|\s+(?:and|then|on|at|to)\s)"
)
# Where a clause ends: the noun is the last word ("… is the wifi password."), not the
# first of a name ("… is the password policy doc").
_CLAUSE_END = r"(?=\s*$|\s*[\n.,;:!?)]|\s+(?:for|of|to|on|at|in|and|but|so)\s)"
# The value first: "Zx8!kq2Lm is my password", "Zx8!kq2Lm 是我的密码", "… がパスワードです".
_VALUE_FIRST = (
    r"(?<![^\s\"'“\u2018«「『:\uff1a])(?P<value>[!#-&(-~À-ɏ]{6,128})[\"'\u201d\u2019»」』]?"
)
PASSWORD_FIRST = (
    r"(?i)" + _VALUE_FIRST + r"\s+(?:is|was|=|ist|est|es|é|è|là|adalah|jest|is\s+het|to)\s+"
    r"(?:[^\s:=]{1,20}\s+){0,3}?(?:" + _NOUNS + r")(?![\w-])" + _CLAUSE_END
)
PASSWORD_FIRST_OTHER = (
    _VALUE_FIRST
    + r"\s*(?:(?:是|为|為)[^\s\d]{0,6}?(?:密码|密碼|口令)|(?:が|は)(?:パスワード|暗証番号)"
    r"|(?:은|는|이|가)?\s*(?:비밀번호|패스워드|암호)|(?:—|-|это)\s*(?:мой\s+)?пароль)"
)
# "creds: admin/Cobalt!5718", "PIN and password: 4821 / Tulip$4996", "ログイン情報: admin / …":
# a user (or a PIN) and a strong password after a slash.
CREDENTIAL_PAIR = (
    r"(?i)(?<!\w)(?:creds?|credentials|logins?|log-in|account|identifiants|zugangsdaten"
    r"|wi-?fi|wlan|vpn|router|ssh|ftp|smtp|imap|e-?mail|gmail|outlook"
    r"|anmeldedaten|zugang|credenciales|credenciais|credenziali|inloggegevens|dane\s+logowania"
    r"|giriş\s+bilgileri|учетные\s+данные|учётные\s+данные|данные\s+для\s+входа|ログイン情報"
    r"|認証情報|登录信息|登錄資訊|账号密码|帳號密碼|로그인\s*정보|بيانات\s+الدخول|password|passwort"
    r"|pin)(?!\w)[^\n:=\uff1a]{0,30}?(?:\s*[:=\uff1a]|\s+(?:is|are|ist|sind|est|es|è|é|är|er))"
    r"\s*[A-Za-z0-9][^\s/]{0,63}\s*/\s*" + _VALUE
)
PASSWORD_OTHER = (
    r"(?:(?:пароль|пароля|паролю|пароле|Пароль|ПАРОЛЬ)(?:\s+(?:от|для|к)(?:\s+[^\s:—]{1,20}){1,4}?)?"
    r"(?:\s+(?:это|—|-))?"
    r"|كلمة\s+(?:ال)?(?:مرور|سر)(?:\s+(?!هي)[^\s:!-~]{1,15}){0,3}?(?:\s+هي)?"
    r"|पासवर्ड(?:\s+है)?"
    r"|(?:비밀번호|패스워드|암호)(?:는|은)?"
    r"|(?:パスワード|暗証番号)(?:は|が|(?=\s*[:\uff1a])|(?=\s+[!-~]))"
    r"|(?:密码|密碼|口令)(?:是|为|為)?(?=\s*[\uff1a:]|[是为為]|\s*[!-~]))"
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
    r"(?:\s*(?:[:=]|->|=>|→)\s*|\s+(?:is|was|ist|lautet|est|es|é|è|to|jest|luidt|là|adalah)\s+"
    r"|\s+)" + _GENERATED_VALUE
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
    r"|password\d*|passw0rd|p@ssw0rd|secret|example|your[_-].*|my[_-].*|env\(.*)$"
    # `myPassword`, `yourApiKey`: a name written where the value goes.
    r"|^(?-i:(?:my|your|some)[A-Z][a-z]+(?:[A-Z][a-z]+)*)$",
    re.IGNORECASE,
)
_TRAILING = ".,;:)]}\"'»”\u2019」』"
_WORD_SEPARATORS = re.compile(r"[-'\u2019.]")
_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[A-Za-z]{2,}$")
_NUMBER_AND_UNIT = re.compile(r"^\d+[-_]?[a-z]+$|^[a-z]{1,4}[-_]?\d{1,3}$")
# Groups of digits ("4471-9921"), not a date or a time: a code after a password word.
_DIGIT_GROUPS = re.compile(r"^\d{3,}(?:[-\s.]\d{3,})+$")
_UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$", re.I)
_HEX = re.compile(r"^[0-9a-fA-F]+$")
# Values that are public by design: SSH public-key bodies, lockfile integrity, digests.
# Code that reads a credential from elsewhere: `getpass.getpass()`, `process.env.TOKEN`,
# `read_secret()`; a version: `v2.3.1`, `1.4.0-rc1`; an identifier: `db_password`.
_CODE_REFERENCE = re.compile(
    r"^[A-Za-z_$]+(?:\.[A-Za-z_$]+)+(?:\(\)?)?;?$|^[A-Za-z_$][\w$.]*\((?:[^()]*[A-Za-z_][^()]*)?\)[;,]?$"
    r"|^[a-z_$][a-z_$.]*\($"
    r"|^(?:os\.environ|process\.env|env|ENV|settings|config)[.\[(]"
)
_VERSION = re.compile(r"^(?:v?|[A-Za-z]+)\d+(?:\.\d+)+(?:[-+][\w.]+)?$")
_IDENTIFIER = re.compile(r"^[a-z]+(?:_[a-z]+)+$")
# `orders_2026`, `release-2026-q4`: an identifier, not a password, without a word naming it.
_LOWER_IDENTIFIER = re.compile(r"^[a-z]+(?:[_-][a-z0-9]+)+$")
_PUBLIC_VALUE = re.compile(
    r"^(?:AAAA[A-Z]3NzaC|sha\d+[-:]|md5[-:]|ssh-|ecdsa-|pgp-|pk_(?:live|test)_)", re.I
)


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


# Words a compound of prose holds ("state-of-the-art", "up-to-date") and a passphrase
# of random words seldom does.
_FUNCTION_WORDS = frozenset(
    ["of", "the", "a", "an", "to", "in", "on", "and", "or", "for", "with", "by", "at", "up"]
)


def looks_like_password(value: str) -> str | None:
    """`value` if it reads as a password: six or more characters mixing letters with
    digits or symbols (or six digits and more), not a word, a placeholder, an address
    or a path."""
    value = _clean(value)
    if len(value) < 6 or _PLACEHOLDER.match(value) or value.lower() in _NOT_A_PASSWORD:
        return None
    if value.startswith(("/", "~", "./", "http://", "https://", "www.")) or _EMAIL.match(value):
        return None
    if _CODE_REFERENCE.match(value) or _VERSION.match(value) or _IDENTIFIER.match(value):
        return None
    if value.isdigit():
        return value
    words = _WORD_SEPARATORS.split(value)
    if all(word.isalpha() for word in words if word):
        # Words ("required", "one-time", "Stored"); a change of case inside one is not prose,
        # and four or more joined ("correct-horse-battery-staple") make a passphrase.
        joined = [word.lower() for word in words if word]
        if len(joined) >= 4 and not _FUNCTION_WORDS.intersection(joined):
            return value
        return value if any(_mixed_case(word[1:]) for word in words) else None
    if _DIGIT_GROUPS.match(value):
        return value
    if not any(c.isalpha() for c in value):
        return None  # a number, a date, a time
    if _NUMBER_AND_UNIT.match(value):
        return None  # "12chars", "min-12", "v2"
    return value


def looks_like_strong_password(value: str) -> str | None:
    """`value` if it reads as a password even with no word linking it to its name: eight
    or more characters with a lower-case letter, a digit, and a capital or a symbol
    ("Quartz*3495", not "SEC-4421" or "reset")."""
    password = looks_like_password(value)
    if password is None or len(password) < 8 or _LOWER_IDENTIFIER.match(password):
        return None
    has = _classes(password)
    lower = any(c.islower() for c in password)
    digit = any(c.isdigit() for c in password)
    return password if has >= 3 and lower and digit else None


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
