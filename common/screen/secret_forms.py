"""Credentials that are not a vendor's key: PINs, recovery codes, seed phrases, OTP seeds,
`.netrc` entries, tokens named in any language, webhook URLs, vendor prefixes.

Each form is a phrase that says where a credential stands and a judgement of what
stands there, as in `credential_phrases`: "my PIN is 4821" is a PIN, "the PIN is 4
digits" is not; "recovery codes: 8f3k2-m9x4q …" are codes, "recovery codes were
regenerated" is prose. The words that name a credential in each language are data
(`NAMES_OF_GENERATED_CREDENTIALS`, `API_KEY_WORDS`, `PIN_WORDS`, …): a language is
added by adding its words.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable

from common.screen.credential_phrases import (
    PASSPHRASE_QUOTED,
    entropy,
    is_placeholder,
    looks_generated,
    looks_like_password,
)

Accept = Callable[[re.Match[str]], str | None]

# Keys whose prefix names their vendor; read in every reading, the joined ones included.
VENDOR_PREFIXED: tuple[tuple[str, str], ...] = (
    ("Square OAuth Secret", r"sq0csp-[A-Za-z0-9_\-]{43}"),
    ("Stripe Test Key", r"(?:sk|rk)_test_[0-9A-Za-z]{24,}"),
    ("OpenAI Token", r"sk-[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}"),
    ("OpenRouter Key", r"sk-or-v1-[a-f0-9]{64}"),
    ("Doppler Token", r"\bdp\.(?:st|sa|ct|pt|scim|audit)\.[A-Za-z0-9_.\-]{40,}"),
    ("Databricks Token", r"\bdapi[a-f0-9]{32}(?:-\d)?"),
    ("Mapbox Secret Token", r"\bsk\.eyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{20,}"),
    ("PlanetScale Token", r"pscale_(?:tkn|pw|oauth)_[A-Za-z0-9_\-=.]{32,}"),
    ("Groq API Key", r"gsk_[A-Za-z0-9]{48,}"),
    ("Sentry Token", r"sntry[su]_[A-Za-z0-9_=+/\-]{40,}"),
    ("Contentful Token", r"CFPAT-[A-Za-z0-9_\-]{43}"),
    ("Figma Token", r"figd_[A-Za-z0-9_\-]{38,}"),
    ("Alibaba Access Key", r"\bLTAI[A-Za-z0-9]{12,20}(?![A-Za-z0-9])"),
    ("Tencent Secret Id", r"\bAKID[A-Za-z0-9]{32}(?![A-Za-z0-9])"),
    ("Pinecone API Key", r"pcsk_[A-Za-z0-9]{4,8}_[A-Za-z0-9]{40,}"),
    ("LangSmith Key", r"lsv2_(?:pt|sk)_[a-f0-9]{32}_[a-f0-9]{10}"),
    ("xAI API Key", r"\bxai-[A-Za-z0-9]{70,}"),
    ("Perplexity API Key", r"\bpplx-[A-Za-z0-9]{48}"),
    ("Tavily API Key", r"\btvly-(?:dev-|prod-)?[A-Za-z0-9]{32}"),
    ("Bitbucket Token", r"ATBB[A-Za-z0-9_=.\-]{32,}"),
    ("Airtable Token", r"\bpat[A-Za-z0-9]{14}\.[a-f0-9]{64}"),
    ("Dropbox Token", r"\bsl\.(?:u\.)?[A-Za-z0-9_\-]{130,}"),
    ("Fly.io Token", r"\bfm[12][ar]?_[A-Za-z0-9_+/=\-]{40,}"),
    ("Terraform Cloud Token", r"\b[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_\-=]{60,}"),
    ("Pulumi Token", r"\bpul-[a-f0-9]{40}"),
    ("Supabase Token", r"\bsbp_[a-f0-9]{40}|\bsb_secret_[A-Za-z0-9_\-]{20,}"),
    ("Buildkite Token", r"\bbkua_[a-f0-9]{40}"),
    ("CircleCI Token", r"\bCCIPAT_[A-Za-z0-9]{22}_[a-f0-9]{40}"),
    ("Netlify Token", r"\bnfp_[A-Za-z0-9]{36}"),
    ("Sourcegraph Token", r"\bsgp_(?:[a-f0-9]{16}_)?[a-f0-9]{40}"),
    ("Render API Key", r"\brnd_[A-Za-z0-9]{32}"),
    ("Adafruit IO Key", r"\baio_[A-Za-z0-9]{28}"),
    ("Typeform Token", r"\btfp_[A-Za-z0-9_\-.=]{59}"),
    ("Prefect Token", r"\bpnu_[A-Za-z0-9]{36}"),
    ("Flutterwave Secret Key", r"FLWSECK(?:_TEST)?-[a-f0-9]{32}-X"),
    ("Shippo Token", r"\bshippo_live_[a-f0-9]{40}"),
    ("EasyPost Key", r"\bEZ[AT]K[a-f0-9]{54}"),
    ("SonarQube Token", r"\bsq[uap]_[a-f0-9]{40}"),
    ("1Password Token", r"\bops_eyJ[A-Za-z0-9_\-]{40,}"),
    ("JFrog Token", r"\bAKCp[A-Za-z0-9]{69}"),
    ("Yandex Token", r"\bAQVN[A-Za-z0-9_\-]{35,38}|\by[0-3]_[A-Za-z0-9_\-]{55}"),
    ("Mailchimp API Key", r"\b[0-9a-f]{32}-us\d{1,2}\b"),
    (
        "Discord Bot Token",
        r"\b[MNO][A-Za-z0-9_\-]{23,25}\.[A-Za-z0-9_\-]{6}\.[A-Za-z0-9_\-]{27,38}",
    ),
    ("Zapier Webhook", r"hooks\.zapier\.com/hooks/catch/\d{4,}/[A-Za-z0-9]{5,}"),
    (
        "IFTTT Webhook",
        r"maker\.ifttt\.com/(?:trigger/[^\s/]+/with/)?(?:key|use)/[A-Za-z0-9_\-]{20,}",
    ),
    (
        "Google Chat Webhook",
        r"chat\.googleapis\.com/v1/spaces/[A-Za-z0-9_\-]+/messages\?[^\s]*token=[A-Za-z0-9_\-%]{20,}",
    ),
)  # fmt: skip

# A key's body made of a vendor's prefix (`abc_`, `abc_live_`, `abc-`) and a long random
# run: the shape most new key formats share. Ids (`cus_…`, `pi_…`) are shorter and
# publishable keys say so (`pk_`, `pub_`).
_VENDOR_RUN = (
    r"(?<![\w.\-/+])(?!(?:pk|pub|public|id|ch|cus|pi|in|tok|src|ip|sub|evt|req|acct|prod|price"
    r"|sha\d*|md5|blake\d*|xxh\d*|crc\d*)[_\-])([a-z][a-z0-9]{1,9}(?:_(?:live|prod|test|sk|pk|api|key|pat|tkn|v\d))?[_\-]"
    r"[A-Za-z0-9]{32,120})(?![\w\-+/=])"
)


def _prefixed_token(match: re.Match[str]) -> str | None:
    token = match.group(1)
    body = re.split(r"[_\-]", token)[-1]
    if not (
        any(c.isupper() for c in body)
        and any(c.islower() for c in body)
        and any(c.isdigit() for c in body)
    ):
        return None
    return token if entropy(body) >= 4.3 else None


# Words for a PIN or a short numeric code, in the languages agents relay.
PIN_WORDS = (
    r"pin(?:[\s\-]?(?:code|number|nummer|numero|número|kod|kodu|no))?|pincode|pinkod|code\s+pin"
    r"|code\s+de\s+(?:la\s+)?carte|passcode|(?:door|gate|alarm|unlock|garage|safe|locker)\s+code"
    r"|türcode|tür-code|codice\s+pin|código\s+pin|numer\s+pin|ПИН(?:-код)?|пин(?:-код)?"
    r"|पिन|รหัส\s*PIN|mã\s+pin|code\s+secret|[şs]ifre(?:m|si|n|miz)?|الرقم\s+السري"
    r"|رمز\s+(?:ال)?PIN|رمز\s+التعريف\s+الشخصي"
)
PIN_WORDS_CJK = (
    r"暗証番号|PIN\s*码|PIN\s*碼|取款密码|支付密码|银行卡密码|密码|密碼|비밀번호|핀\s*번호"
    r"|PIN\s*번호"
)
_PIN_LINK = (
    r"(?:\s*[:=\uff1a]|\s+(?:is|was|lautet|ist|est|es|è|é|é\s+o|to|jest|is\s+het|là|adalah"
    r"|это|—|-|हैं?|هو|olarak))"
)
PIN_LATIN = (
    # A one-time passcode is an ephemeral value, refused as one (`ephemeral_value`).
    r"(?i)(?<![\w-])(?<!one-time\s)(?<!one\stime\s)(?:" + PIN_WORDS + r")(?![\w-])"
    r"(?:\s+[^\s\d:=]{1,15}){0,3}?" + _PIN_LINK
    + r"\s*(?P<value>\d{4,8})(?![\d,:/\-]|\.\d|\s*(?:digits?|chars?|characters|ziffern|stellen"
    r"|chiffres|dígitos|cifre|cyfr|цифр|桁|位|자리|times|tries|attempts|mal|fois))"
)  # fmt: skip
# "Bank PIN 4471 (don't tell anyone)", "PIN saya 4471", "मेरा पिन 4471 है": no link, the
# number closes the clause.
PIN_BARE = (
    r"(?i)(?<![\w-])(?:" + PIN_WORDS + r")(?![\w-])(?:\s+[^\s\d:=]{1,15}){0,3}?"
    r"\s+(?P<value>\d{4,8})(?=\s*(?:$|[.,;!)(\n]|है))"
)
PIN_CJK = (
    r"(?:" + PIN_WORDS_CJK + r")\s*(?:是|为|為|は|는|은|:|\uff1a)?\s*(?P<value>\d{4,8})"
    r"(?![\d.,:/\-]|\s*(?:位|桁|자리))"
)


def _pin(match: re.Match[str]) -> str | None:
    value = match.group("value")
    if len(set(value)) == 1 and len(value) > 4:
        return None  # "000000" stands for a PIN
    if 1900 <= int(value) <= 2100 and len(value) == 4:
        before = match.string[max(0, match.start("value") - 12) : match.start("value")].lower()
        if re.search(r"\b(?:in|since|seit|depuis|desde|year|jahr)\b", before):
            return None  # "PIN changed in 2024"
    return value


# Words for recovery or backup codes and seed phrases.
RECOVERY_WORDS = (
    r"(?:2fa\s+|mfa\s+|github\s+|google\s+|account\s+)?(?:recovery|backup|rescue|emergency"
    r"|scratch)\s+codes?|wiederherstellungs-?codes?|backup-?codes?|notfallcodes?"
    r"|codes?\s+de\s+(?:secours|récupération|recuperación|recuperação|backup)"
    r"|códigos?\s+de\s+(?:recuperación|respaldo|recuperação|backup)|codici\s+di\s+(?:backup|recupero)"
    r"|kody\s+(?:zapasowe|odzyskiwania)|herstelcodes?|kurtarma\s+kodlar\u0131|mã\s+khôi\s+phục"
    r"|kode\s+pemulihan|коды?\s+восстановления|резервные\s+коды|恢复码|备用码|恢復碼|備用碼"
    r"|リカバリーコード|バックアップコード|복구\s*코드|백업\s*코드|رموز\s+الاسترداد|रिकवरी\s+कोड"
)
RECOVERY_CODES = (
    r"(?i)(?:" + RECOVERY_WORDS + r")(?:\s+[^\s\d:=\uff1a]{1,15}){0,3}?"
    r"(?:\s+(?:are|is|sind|sont|son|são|sono|to|là|adalah|—|-))?"
    r"\s*[:\uff1a=\n]?\s*(?P<value>(?=[A-Za-z\-]*\d)"
    r"(?:[A-Za-z0-9]{4,12}(?:-[A-Za-z0-9]{3,12})*[\s,;]+){0,15}"
    r"[A-Za-z0-9]{4,12}(?:-[A-Za-z0-9]{3,12})*)"
)


def _recovery_codes(match: re.Match[str]) -> str | None:
    codes = re.split(r"[\s,;]+", match.group("value"))
    generated = [
        code
        for code in codes
        if (any(c.isdigit() for c in code) and any(c.isalpha() for c in code)) or code.isdigit()
    ]
    if len(generated) >= 2:
        return match.group("value")
    # One code: long enough, and mixed, not to be a word or a count ("8F3K-2M9X-Q7LP-4RTZ").
    (code,) = codes[:1] or [""]
    alphanumeric = code.replace("-", "")
    return code if len(codes) == 1 and len(alphanumeric) >= 12 and code in generated else None


SEED_WORDS = (
    r"(?:\d{2}-word\s+)?seed(?:(?:\s+|-)?(?:phrase|words))?|(?:secret\s+)?recovery\s+phrase"
    r"|mnemonic(?:\s+phrase)?"
    r"|wallet\s+(?:seed|words)|wiederherstellungsphrase|phrase\s+de\s+récupération"
    r"|frase\s+(?:semilla|de\s+recuperación|de\s+recuperação)|seed-phrase|助记词|助記詞"
    r"|シードフレーズ|복구\s*구문|сид-фраза|мнемоническая\s+фраза"
)
SEED_PHRASE = (
    r"(?i)(?:" + SEED_WORDS + r")(?:\s+(?:is|are|was|ist|est|es|é|è|—|-))?\s*[:\uff1a=]?\s*"
    r"(?P<value>(?:[a-z]{3,8}[\s,]+){11,23}[a-z]{3,8})"
)
# Words that BIP-39 lists never hold: a run of prose is not a seed phrase.
_FUNCTION_WORDS = frozenset(
    [
        "the",
        "and",
        "for",
        "you",
        "are",
        "with",
        "this",
        "that",
        "from",
        "your",
        "not",
        "but",
        "have",
        "was",
        "keep",
        "its",
        "our",
        "they",
        "them",
        "store",
        "never",
        "write",
        "down",
        "paper",
        "safe",
        "place",
        "away",
        "only",
        "into",
        "should",
        "must",
        "will",
        "can",
        "has",
        "been",
        "phrase",
        "seed",
        "words",
        "wallet",
    ]
)


def _seed_phrase(match: re.Match[str]) -> str | None:
    words = re.split(r"[\s,]+", match.group("value"))
    if len(words) < 12 or any(word in _FUNCTION_WORDS for word in words):
        return None
    return match.group("value")


OTP_URI = r"otpauth(?:-migration)?://[^\s\"'<>]*?[?&](?:secret|data)=([A-Za-z0-9%+/=]{16,})"
OTP_SEED = (
    r"(?i)\b(?:2fa|mfa|totp|hotp|otp|authenticator|google\s+authenticator|authy|2-step"
    r"|two-factor)(?:[\s\-]+(?:app|setup|shared|seed|secret|key|code|backup|recovery)){0,2}"
    r"[\s\-]+(?:seed|secret|key"
    r"|setup\s+key|clé|schlüssel|clave|chave|chiave|密钥|キー|키)"
    r"(?:\s+(?:is|was|ist|est|es|é|è))?\s*[:\uff1a=]?\s*"
    r"(?P<value>[A-Za-z2-7]{16,}=*|(?:[A-Za-z2-7]{4}[ \-]){3,}[A-Za-z2-7]{2,4})(?![A-Za-z0-9])"
)


def _otp_uri(match: re.Match[str]) -> str | None:
    secret = match.group(1)
    return (
        None
        if is_placeholder(secret)
        or (secret.isalpha() and secret.isupper() and len(set(secret)) < 6)
        else secret
    )


def _otp_seed(match: re.Match[str]) -> str | None:
    value = re.sub(r"[ \-]", "", match.group("value")).rstrip("=")
    if len(value) < 16 or is_placeholder(value):
        return None
    upper = value.upper()
    return value if any(c in "234567" for c in upper) and len(set(upper)) >= 8 else None


# `.netrc`: `machine HOST login USER password SECRET`, on one line or several.
NETRC = r"\bmachine\s+\S+\s+login\s+\S+\s+password\s+(\S{4,})"

# A JDBC thin URL: `jdbc:oracle:thin:user/password@host`.
JDBC_THIN = r"\bjdbc:oracle:(?:thin|oci):([^\s/@:\"']{1,64})/([^\s@\"']{4,128})@"

# Words for a token or an API key, in the languages agents relay. A generated value after
# one (within a few words, through a colon or a copula) is the credential.
NAMES_OF_GENERATED_CREDENTIALS = (
    r"(?:(?:erişim\s+)?(?:token|tokens|token\u0131|tokenu|tokena|tokenul)|jeton|jetons|gettone|токен"
    r"|توكن|टोकन|令牌|トークン"
    r"|토큰|mã\s+thông\s+báo|رمز\s+(?:ال)?(?:وصول|دخول|مميز|الوصول)|secret|secreto|segreto|sekret"
    r"|секрет|シークレット|시크릿|秘钥|密钥|密鑰)(?:\s+(?:de\s+acceso|de\s+acesso|d['\u2019]accès"
    r"|di\s+accesso|dostępu|доступа|akses|de\s+acces|für\s+den\s+zugang))?"
)
API_KEY_WORDS = (
    r"api[\s_\-]?(?:key|schlüssel|sleutel|ключ|anahtar\u0131?|kulcs|nyckel|nøgle|avain|klíč)"
    r"|(?:clé|cle|chiave|chave|clave|klucz|khóa|kunci|ключ|مفتاح|anahtar|anahtar\u0131|sleutel"
    r"|schlüssel|कुंजी)(?:\s+(?:d[eai]|do|da|dell'|de\s+la|de\s+l'|od|к|для))?\s*(?:'|\u2019)?\s*"
    r"(?:api|d'api|ال?api|एपीआई)|(?:api|एपीआई)\s*(?:キー|키|密钥|密鑰|कुंजी|ключ|klucz|anahtar\u0131)"
    r"|access[\s_\-]?key|secret[\s_\-]?key|client[\s_\-]?secret|app[\s_\-]?secret"
)
_NEAR_LINK = (
    r"(?:\s*[:=\uff1a]|\s+(?:is|was|are|ist|lautet|est|es|é|è|to|jest|luidt|is\s+het|là|adalah"
    r"|ialah|yaitu|это|—|-|هو|هي|है|d\u0131r|dir|olarak|是|为|為|は|는|은))\s*"
)
TOKEN_NEAR = (
    r"(?i)(?<![\w-])(?:(?:" + NAMES_OF_GENERATED_CREDENTIALS + r")|" + API_KEY_WORDS + r")(?![\w-])"
    r"(?P<context>(?:\s+[^\s:=\uff1a.!?]{1,20}){0,4}?)(?:" + _NEAR_LINK + r"|\s+)"
    + r"[\"'“\u2018«「『]?(?P<value>[A-Za-z0-9+/=_\-.~]{16,200})"
)  # fmt: skip


def _token_near(match: re.Match[str]) -> str | None:
    value = looks_generated(match.group("value"), strong=True)
    if value and match.group("context") and _HEX.match(value):
        return None  # "the token in the log was 4bf9…": a hex id a few words on is an id
    return value


_HEX = re.compile(r"^[0-9a-fA-F]+$")


def _group(number: int) -> Accept:
    def accept(match: re.Match[str]) -> str | None:
        value = match.group(number)
        return None if is_placeholder(value) else value

    return accept


def _netrc(match: re.Match[str]) -> str | None:
    value = match.group(1)
    return None if is_placeholder(value) or len(set(value)) < 4 else value


def _xml_setting(match: re.Match[str]) -> str | None:
    """`<add key="Password" value="…"/>`: a .NET or Java properties setting."""
    return looks_like_password(match.group("value"))


# An armoured OpenPGP secret key without its BEGIN line: a secret-key or secret-subkey
# packet (old format tag 5 or 7, or the new format) holding a version 4 to 6 key.
PGP_BODY = r"(?<![A-Za-z0-9+/])(?:l[A-Za-z0-9+/]|x[A-Za-z0-9+/])[A-Za-z0-9+/]{60,}"


def _pgp_secret_key(match: re.Match[str]) -> str | None:
    run = match.group()
    try:
        raw = base64.b64decode(run[:16])
    except (binascii.Error, ValueError):
        return None
    tag = raw[0]
    if tag in (0x94, 0x95, 0x96, 0x9C, 0x9D, 0x9E):
        version_at = 1 + (1, 2, 4)[tag & 0x03]
    elif tag in (0xC5, 0xC7):
        version_at = 2 if raw[1] < 192 else 3 if raw[1] < 224 else 6
    else:
        return None
    return run if raw[version_at] in (4, 5, 6) else None


def _quoted_passphrase(match: re.Match[str]) -> str | None:
    value = match.group("value").strip()
    return value if len(value.split()) >= 3 and not is_placeholder(value) else None


# (kind, pattern, accept): read on the text as written and its compact reading.
FORMS: tuple[tuple[str, str, Accept], ...] = (
    ("Prefixed Token", _VENDOR_RUN, _prefixed_token),
    ("PIN", PIN_LATIN, _pin),
    ("PIN", PIN_CJK, _pin),
    ("PIN", PIN_BARE, _pin),
    ("Recovery Codes", RECOVERY_CODES, _recovery_codes),
    ("Seed Phrase", SEED_PHRASE, _seed_phrase),
    ("OTP Seed", OTP_URI, _otp_uri),
    ("OTP Seed", OTP_SEED, _otp_seed),
    ("Netrc Password", NETRC, _netrc),
    ("Password in Prose", PASSPHRASE_QUOTED, _quoted_passphrase),
    ("URL Credentials", JDBC_THIN, _group(2)),
    ("Credential Near Its Name", TOKEN_NEAR, _token_near),
    (
        "High Entropy Assignment",
        r"(?i)\bkey=[\"'][^\"'\n]{0,30}(?:passw(?:or)?d|pwd|secret|token|api_?key)[^\"'\n]{0,30}[\"']"
        r"\s+value=[\"'](?P<value>[^\"'\n]{6,200})[\"']",
        _xml_setting,
    ),
    ("Private Key", PGP_BODY, _pgp_secret_key),
    (
        "Mattermost Webhook",
        r"(?i)\bhttps?://[^\s/]+/hooks/([a-z0-9]{26})(?![A-Za-z0-9])",
        _group(1),
    ),
)
