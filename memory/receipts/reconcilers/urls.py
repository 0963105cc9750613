"""One reading of a URL, shared by registration, receipt creation and the read itself.

Whether a lookup URL belongs to a registered platform is decided on parsed,
normalised parts (scheme, host, port, path), never on the raw string: a
string prefix test would let `https://api.example.com.evil.net/` or
`https://api.example.com@evil.net/` pass for `https://api.example.com`. The
parser is httpx's, the same one that later sends the request, so the check
and the connection cannot disagree about which host a URL names.
"""

from __future__ import annotations

from dataclasses import dataclass

import httpx

SCHEMES = ("http", "https")
DEFAULT_PORTS = {"http": 80, "https": 443}
# Characters no well-formed URL needs and parsers disagree on.
_FORBIDDEN = frozenset("\\\t\r\n ") | {chr(c) for c in range(0x20)} | {"\x7f"}


class URLRefused(ValueError):
    """The URL cannot name a platform; the message says why, for the person who sent it."""


@dataclass(frozen=True)
class PlatformURL:
    scheme: str
    host: str  # lower-case, IDNA-encoded, no trailing dot, IPv6 without brackets
    port: int
    path: str  # percent-decoded, dot segments resolved
    url: httpx.URL

    @property
    def origin(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        port = "" if DEFAULT_PORTS[self.scheme] == self.port else f":{self.port}"
        return f"{self.scheme}://{host}{port}"

    @property
    def host_header(self) -> str:
        """What `Host:` says when the connection goes to an address instead of the name."""
        return self.origin.split("://", 1)[1]

    def is_under(self, base: PlatformURL) -> bool:
        """Same scheme, host and port, and the path inside the base path (whole segments)."""
        if (self.scheme, self.host, self.port) != (base.scheme, base.host, base.port):
            return False
        return self.path.startswith(base.path) or f"{self.path}/" == base.path


def parse_platform_url(raw: str) -> PlatformURL:
    """Parse an absolute http(s) URL without credentials, or raise `URLRefused`."""
    if not isinstance(raw, str) or not raw:
        raise URLRefused("Give an absolute http(s) URL.")
    if any(char in _FORBIDDEN for char in raw):
        raise URLRefused("The URL contains spaces, control characters or backslashes.")
    try:
        url = httpx.URL(raw)
    except (httpx.InvalidURL, ValueError, UnicodeError) as exc:
        raise URLRefused(f"The URL cannot be parsed ({exc}).") from None
    if url.scheme not in SCHEMES or not url.raw_host:
        raise URLRefused("Give an absolute http(s) URL.")
    if url.userinfo:
        # Credentials would be stored and shown; memdesk never keeps them.
        raise URLRefused("The URL must not carry credentials.")
    if url.fragment:
        raise URLRefused("The URL must not have a #fragment.")
    try:
        host = url.raw_host.decode("ascii").lower().rstrip(".")
    except UnicodeDecodeError:
        raise URLRefused("The host name is not valid.") from None
    if not host:
        raise URLRefused("Give an absolute http(s) URL.")
    port = url.port if url.port is not None else DEFAULT_PORTS[url.scheme]
    if not 0 < port < 65536:
        raise URLRefused("The port is out of range.")
    path = url.path or "/"
    # httpx resolves literal `..`; encoded ones (`%2e%2e`) survive to the
    # server, which may decode them and leave the platform's base path.
    if any(segment in (".", "..") for segment in path.split("/")):
        raise URLRefused("The path must not contain `.` or `..` segments.")
    return PlatformURL(scheme=url.scheme, host=host, port=port, path=path, url=url)


def normalise_base_url(raw: str) -> str:
    """A platform's base URL in one spelling: origin plus a path ending in `/`."""
    parsed = parse_platform_url(raw.strip() if isinstance(raw, str) else raw)
    if parsed.url.query:
        raise URLRefused("A base URL has no query; lookups add their own.")
    path = parsed.path if parsed.path.endswith("/") else f"{parsed.path}/"
    return f"{parsed.origin}{httpx.URL(path=path).raw_path.decode('ascii')}"
