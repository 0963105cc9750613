"""Which network addresses memdesk may contact for a platform, decided by memdesk alone.

A host name is only a claim about where a server is: memdesk resolves it
itself, judges every address the answer holds, and connects to one of the
addresses it judged (never to the name, which could resolve differently a
moment later). Loopback, private, link-local, multicast, unspecified and
reserved addresses are internal by nature; reading them needs a platform an
admin registered with `allow_private`.

The resolver is a setting (`PLATFORM_RESOLVER`, a dotted path) so that an
operator can put a policy-aware resolver in front and tests can stand in for
DNS without touching the machine's name service.
"""

from __future__ import annotations

import functools
import ipaddress
import re
import socket
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout

from django.conf import settings
from django.utils.module_loading import import_string

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
Resolver = Callable[[str, int], list[str]]


class AddressRefused(Exception):
    """The host resolves to an address memdesk may not contact for this platform."""

    def __init__(self, host: str, address: str) -> None:
        super().__init__(f"{host} resolves to {address}, an internal address")
        self.host = host
        self.address = address


class Unresolvable(Exception):
    """The host has no address (NXDOMAIN, no records, resolver failure, too slow an answer)."""


def system_resolve(host: str, port: int) -> list[str]:
    """Every address the operating system's resolver gives for `host`, in its order."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError) as exc:
        raise Unresolvable(host) from exc
    return [str(info[4][0]) for info in infos]


def _embedded_ipv4(address: ipaddress.IPv6Address) -> list[ipaddress.IPv4Address]:
    """IPv4 addresses an IPv6 address carries (mapped, 6to4, Teredo): they reach IPv4 hosts."""
    embedded = [address.ipv4_mapped, address.sixtofour]
    if address.teredo:
        embedded.extend(address.teredo)
    return [ip for ip in embedded if ip is not None]


def address_is_internal(address: IPAddress) -> bool:
    """True for anything that is not a public unicast address."""
    if isinstance(address, ipaddress.IPv6Address) and any(
        address_is_internal(ip) for ip in _embedded_ipv4(address)
    ):
        return True
    # `is_global` is false for loopback, private, link-local, shared (CGNAT),
    # unspecified, reserved and documentation ranges; multicast can be global.
    return not address.is_global or address.is_multicast


# The numeric spellings C resolvers accept for IPv4 (`2130706433`, `0x7f.1`, `127.1`).
_NUMERIC_IPV4 = re.compile(r"[0-9a-fA-FxX.]+")


def literal_address(host: str) -> IPAddress | None:
    """The address `host` spells out, in any form a resolver would read as one."""
    try:
        return ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        pass
    if _NUMERIC_IPV4.fullmatch(host):
        try:
            return ipaddress.IPv4Address(socket.inet_aton(host))
        except OSError:
            return None
    return None


# Special-use names (RFC 6761) answered here, whatever a resolver would say:
# `localhost` is loopback, `invalid` never exists.
_LOOPBACK = [ipaddress.ip_address("127.0.0.1"), ipaddress.ip_address("::1")]


def _special_use(host: str) -> list[IPAddress] | None:
    if host == "localhost" or host.endswith(".localhost"):
        return list(_LOOPBACK)
    if host == "invalid" or host.endswith(".invalid"):
        raise Unresolvable(host)
    return None


@functools.cache
def _resolver_pool() -> ThreadPoolExecutor:
    # A resolver call cannot be interrupted; a pool thread waits it out while
    # the caller gives up on time. Created on first use, in the worker process.
    return ThreadPoolExecutor(max_workers=4, thread_name_prefix="platform-resolver")


def resolve(host: str, port: int, *, timeout: float | None = None) -> list[IPAddress]:
    """The addresses of `host`: the literal itself, or what the configured resolver says
    within `timeout` seconds (`Unresolvable` when it says nothing in time)."""
    literal = literal_address(host)
    if literal is not None:
        return [literal]
    special = _special_use(host.lower().rstrip("."))
    if special is not None:
        return special
    resolver: Resolver = import_string(settings.PLATFORM_RESOLVER)
    if timeout is None:
        answer = resolver(host, port)
    else:
        try:
            answer = _resolver_pool().submit(resolver, host, port).result(timeout=timeout)
        except FutureTimeout:
            raise Unresolvable(host) from None
    addresses: list[IPAddress] = []
    for raw in answer:
        # A scope id (`fe80::1%eth0`) is not part of the address being judged.
        address = literal_address(raw.split("%", 1)[0])
        if address is not None and address not in addresses:
            addresses.append(address)
    if not addresses:
        raise Unresolvable(host)
    return addresses


def resolve_checked(
    host: str, port: int, *, allow_private: bool, timeout: float | None = None
) -> list[IPAddress]:
    """Resolve `host` and judge every address; one internal address refuses them all.

    Refusing the whole answer (not just skipping the bad address) stops a
    resolver that mixes a public and an internal address from winning by order.
    """
    addresses = resolve(host, port, timeout=timeout)
    if not allow_private:
        for address in addresses:
            if address_is_internal(address):
                raise AddressRefused(host, str(address))
    return addresses
