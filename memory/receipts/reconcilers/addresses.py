"""Which network addresses memdesk may contact for a platform, decided by memdesk alone.

A host name is only a claim about where a server is: memdesk resolves it
itself, judges every address the answer holds, and connects to one of the
addresses it judged (never to the name, which could resolve differently a
moment later). Loopback, private, link-local, multicast, unspecified and
reserved addresses are internal by nature, and so is an IPv6 address that
carries one (IPv4-mapped or -compatible, NAT64, 6to4, Teredo); reading them
needs a platform an admin registered with `allow_private`.

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


# IANA's special-purpose ranges, named here as well as through `ipaddress`'s
# flags because those flags change between Python patch releases (3.11 calls
# 192.0.0.8 and fec0::1 global). Documentation ranges count as internal: no
# public host is ever numbered in them, so one can only be a network's own use.
_SPECIAL_PURPOSE = {
    4: [
        ipaddress.ip_network(n)
        for n in (
            "0.0.0.0/8",  # "this network"
            "100.64.0.0/10",  # shared address space (carrier-grade NAT)
            "192.0.0.0/24",  # IETF protocol assignments
            "192.0.2.0/24",  # documentation
            "192.88.99.0/24",  # former 6to4 relay anycast
            "198.18.0.0/15",  # benchmarking
            "198.51.100.0/24",  # documentation
            "203.0.113.0/24",  # documentation
            "240.0.0.0/4",  # reserved, and the limited broadcast address
        )
    ],
    6: [
        ipaddress.ip_network(n)
        for n in (
            "64:ff9b:1::/48",  # local-use IPv4/IPv6 translation
            "100::/64",  # discard-only
            "2001::/23",  # IETF protocol assignments, Teredo among them
            "2001:db8::/32",  # documentation
            "3fff::/20",  # documentation
            "5f00::/16",  # segment routing
            "fec0::/10",  # site-local (deprecated, still routed by some networks)
        )
    ],
}

# IPv6 spellings of one IPv4 address: a connection to them reaches that address
# (a dual-stack socket for mapped ones, the local NAT64 gateway for the
# well-known prefix), so the IPv4 address alone is judged. IPv4-compatible
# addresses are deprecated but still accepted by stacks, and read the same way.
_IPV4_COMPATIBLE = ipaddress.ip_network("::/96")
_NAT64_WELL_KNOWN = ipaddress.ip_network("64:ff9b::/96")


def _translated_ipv4(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address in _IPV4_COMPATIBLE or address in _NAT64_WELL_KNOWN:
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return None


def _tunnelled_ipv4(address: ipaddress.IPv6Address) -> list[ipaddress.IPv4Address]:
    """IPv4 endpoints of a 6to4 or Teredo address (the Teredo client un-XORed by
    `ipaddress`): the packets end there, so they are judged beside the IPv6 address."""
    tunnelled = [address.sixtofour] if address.sixtofour is not None else []
    if address.teredo is not None:
        tunnelled.extend(address.teredo)
    return tunnelled


def _is_special(address: IPAddress) -> bool:
    flags = (
        address.is_private,
        address.is_loopback,
        address.is_link_local,
        # Multicast can be global; a platform is never a group.
        address.is_multicast,
        address.is_reserved,
        address.is_unspecified,
        isinstance(address, ipaddress.IPv6Address) and address.is_site_local,
    )
    return (
        not address.is_global
        or any(flags)
        or any(address in network for network in _SPECIAL_PURPOSE[address.version])
    )


def address_is_internal(address: IPAddress) -> bool:
    """True for anything that is not a public unicast address, however it is wrapped.

    The one judgement for registration and for every read.
    """
    if isinstance(address, ipaddress.IPv6Address):
        translated = _translated_ipv4(address)
        if translated is not None:
            return _is_special(translated)
        if any(_is_special(ip) for ip in _tunnelled_ipv4(address)):
            return True
    return _is_special(address)


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
