"""The Kubernetes CEL IP, CIDR and URL libraries (k8s.io/apiserver/pkg/cel/library ip.go,
cidr.go, urls.go) for device selectors.

IPs and prefixes follow Go's net/netip as those libraries use it: ParseAddr (no leading zeros,
exactly four IPv4 fields), zones and IPv4-mapped IPv6 addresses refused, RFC 5952 text;
ParsePrefix keeps the host bits (`cidr('10.0.0.1/8').ip()` is 10.0.0.1), refuses leading zeros
and signs in the length; `containsCIDR` is Overlaps and a length no shorter. Values travel as
messages holding their canonical text, so `==` compares what upstream's Equal compares."""

from __future__ import annotations

import ipaddress
from collections.abc import Callable
from functools import lru_cache
from typing import TYPE_CHECKING, TypeAlias

from . import gourl

if TYPE_CHECKING:
    from .library import Message, Overload, _Runtime

Address: TypeAlias = ipaddress.IPv4Address | ipaddress.IPv6Address
Prefix: TypeAlias = tuple[Address, int]  # an address (host bits kept) and a prefix length


def _address(text: str, context: str) -> Address:
    """netip.ParseAddr; a failure is worded with `context` first, as each library words it."""
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        raise ValueError(f"{context}: ParseAddr({text!r}): unable to parse IP") from None


def _no_mapped(address: Address, text: str) -> Address:
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        raise ValueError(f"IPv4-mapped IPv6 address {text!r} is not allowed")
    return address


@lru_cache(maxsize=4096)
def parse_ip(text: str) -> Address:
    """library.parseIPAddr: netip.ParseAddr, then no zone and no IPv4-mapped IPv6."""
    address = _address(text, f"IP Address {text!r} parse error during conversion from string")
    if getattr(address, "scope_id", None) is not None:
        raise ValueError(f"IP address {text!r} with zone value is not allowed")
    return _no_mapped(address, text)


@lru_cache(maxsize=4096)
def parse_cidr(text: str) -> Prefix:
    """library.parseCIDR: netip.ParsePrefix (address, then a plain decimal length within the
    family's bits), no IPv4-mapped IPv6. Returns (address, bits)."""
    context = f"network address parse error during conversion from string: netip.ParsePrefix({text!r})"
    address_text, slash, bits_text = text.rpartition("/")
    if not slash:
        raise ValueError(f"{context}: no '/'")
    address = _address(address_text, context)
    if getattr(address, "scope_id", None) is not None:
        raise ValueError(f"{context}: IPv6 zones cannot be present in a prefix")
    if not bits_text.isascii() or not bits_text.isdigit() or (len(bits_text) > 1 and bits_text[0] == "0"):
        raise ValueError(f"{context}: bad bits after slash: {bits_text!r}")
    bits = int(bits_text)
    if bits > address.max_prefixlen:
        raise ValueError(f"{context}: prefix length out of range")
    return _no_mapped(address, text), bits


def _network(address: Address, bits: int) -> ipaddress.IPv4Network | ipaddress.IPv6Network:
    return ipaddress.ip_network(f"{address}/{bits}", strict=False)


def _valid(parse: Callable[[str], object], text: str) -> bool:
    try:
        parse(text)
    except ValueError:
        return False
    return True


def _is_link_local_multicast(address: Address) -> bool:
    if address.version == 4:
        return address in ipaddress.ip_network("224.0.0.0/24")
    packed = address.packed
    return packed[0] == 0xFF and packed[1] & 0x0F == 0x02


def _is_global_unicast(address: Address) -> bool:
    """netip.Addr.IsGlobalUnicast: private and ULA addresses count, as in package net."""
    if address.version == 4 and str(address) in ("0.0.0.0", "255.255.255.255"):
        return False
    return not (address.is_unspecified or address.is_loopback or address.is_multicast or address.is_link_local)


def _contains_cidr(outer: Prefix, inner: Prefix) -> bool:
    (a, a_bits), (b, b_bits) = outer, inner
    return a.version == b.version and _network(a, a_bits).overlaps(_network(b, b_bits)) and a_bits <= b_bits


def function_table(rt: _Runtime) -> list[Overload]:
    """(name, overload id, return type, parameter types, is member, implementation)."""
    T, IP, CIDR, URL = rt.T, rt.IPT, rt.CIDRT, rt.URLT

    def ip(text: str) -> Message:
        return rt.IP(value=str(parse_ip(text)))

    def cidr(text: str) -> Message:
        address, bits = parse_cidr(text)
        return rt.CIDR(value=f"{address}/{bits}")

    def prefix(message: Message) -> Prefix:
        return parse_cidr(message.value)

    def address(message: Message) -> Address:
        return parse_ip(message.value)

    def url(text: str) -> Message:
        try:
            gourl.parse_request_uri(text)
        except gourl.URLError as exc:
            raise ValueError(f"URL parse error during conversion from string: parse {gourl.go_quote(text)}: {exc}") from None
        return rt.URL(value=text)

    def parsed(message: Message) -> gourl.URL:
        return gourl.parse(message.value, False)

    def contains_ip(cidr_message: Message, other: str | Message) -> bool:
        other_address = parse_ip(other) if isinstance(other, str) else address(other)
        outer, bits = prefix(cidr_message)
        return outer.version == other_address.version and other_address in _network(outer, bits)

    def contains_cidr(cidr_message: Message, other: str | Message) -> bool:
        return _contains_cidr(prefix(cidr_message), parse_cidr(other) if isinstance(other, str) else prefix(other))

    def masked(message: Message) -> Message:
        outer, bits = prefix(message)
        return rt.CIDR(value=f"{_network(outer, bits).network_address}/{bits}")

    return [
        ("ip", "string_to_ip", IP, [T.STRING], False, ip),
        ("family", "ip_family", T.INT, [IP], True, lambda m: address(m).version),
        ("ip.isCanonical", "ip_is_canonical", T.BOOL, [T.STRING], False, lambda text: str(parse_ip(text)) == text),
        ("isUnspecified", "ip_is_unspecified", T.BOOL, [IP], True, lambda m: address(m).is_unspecified),
        ("isLoopback", "ip_is_loopback", T.BOOL, [IP], True, lambda m: address(m).is_loopback),
        ("isLinkLocalMulticast", "ip_is_link_local_multicast", T.BOOL, [IP], True,
         lambda m: _is_link_local_multicast(address(m))),
        ("isLinkLocalUnicast", "ip_is_link_local_unicast", T.BOOL, [IP], True, lambda m: address(m).is_link_local),
        ("isGlobalUnicast", "ip_is_global_unicast", T.BOOL, [IP], True, lambda m: _is_global_unicast(address(m))),
        ("isIP", "is_ip", T.BOOL, [T.STRING], False, lambda text: _valid(parse_ip, text)),
        ("cidr", "string_to_cidr", CIDR, [T.STRING], False, cidr),
        # (cidr, string) and (cidr, message) are different argument kinds: each needs the impl
        ("containsIP", "cidr_contains_ip_string", T.BOOL, [CIDR, T.STRING], True, contains_ip),
        ("containsIP", "cidr_contains_ip_ip", T.BOOL, [CIDR, IP], True, contains_ip),
        ("containsCIDR", "cidr_contains_cidr_string", T.BOOL, [CIDR, T.STRING], True, contains_cidr),
        ("containsCIDR", "cidr_contains_cidr", T.BOOL, [CIDR, CIDR], True, contains_cidr),
        ("ip", "cidr_ip", IP, [CIDR], True, lambda m: rt.IP(value=str(prefix(m)[0]))),
        ("prefixLength", "cidr_prefix_length", T.INT, [CIDR], True, lambda m: prefix(m)[1]),
        ("masked", "cidr_masked", CIDR, [CIDR], True, masked),
        ("isCIDR", "is_cidr", T.BOOL, [T.STRING], False, lambda text: _valid(parse_cidr, text)),
        ("url", "string_to_url", URL, [T.STRING], False, url),
        ("getScheme", "url_get_scheme", T.STRING, [URL], True, lambda m: parsed(m).scheme),
        ("getHost", "url_get_host", T.STRING, [URL], True, lambda m: parsed(m).host),
        ("getHostname", "url_get_hostname", T.STRING, [URL], True, lambda m: parsed(m).hostname()),
        ("getPort", "url_get_port", T.STRING, [URL], True, lambda m: parsed(m).port()),
        ("getEscapedPath", "url_get_escaped_path", T.STRING, [URL], True, lambda m: parsed(m).escaped_path()),
        ("getQuery", "url_get_query", T.Map(T.STRING, T.List(T.STRING)), [URL], True, lambda m: parsed(m).query()),
        ("isURL", "is_url_string", T.BOOL, [T.STRING], False,
         lambda text: _valid(lambda t: gourl.parse(t, True), text)),
    ]

