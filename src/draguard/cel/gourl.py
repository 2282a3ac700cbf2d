"""URLs as Go's net/url (Go 1.26) parses them, for the Kubernetes CEL URL library
(k8s.io/apiserver/pkg/cel/library/urls.go: `url()` and `isURL()` accept what ParseRequestURI
accepts; the getters read what url.Parse builds).

A port of the parts that library reaches: scheme detection, authority and host validation
(bracketed IPv6 literals, strict colons for http/https, port digits, %-escapes allowed in
hosts), path unescaping and EscapedPath, and ParseQuery. Go walks bytes, so this does too."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

_ALNUM = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
_HOST, _ZONE, _PATH, _USER, _QUERY = "host", "zone", "path", "user", "query"
_HEX = b"0123456789ABCDEF"


class URLError(ValueError):
    pass


def _should_escape(c: int, mode: str) -> bool:
    """net/url shouldEscape (gen_encoding_table.go)."""
    if c in _ALNUM:
        return False
    if mode in (_HOST, _ZONE) and c in b"!$&'()*+,;=:[]<>\"":
        return False
    if c in b"-_.~":
        return False
    if c in b"$&+,/:;=?@":
        return {_PATH: c == ord("?"), _USER: c in b"@/?:", _QUERY: True}.get(mode, True)
    return True


def _ishex(c: int) -> bool:
    return c in b"0123456789abcdefABCDEF"


def _unescape(s: bytes, mode: str) -> bytes:
    i = 0
    while i < len(s):
        c = s[i]
        if c == ord("%"):
            if i + 2 >= len(s) or not _ishex(s[i + 1]) or not _ishex(s[i + 2]):
                raise URLError(f'invalid URL escape "{s[i:i + 3].decode("utf-8", "replace")}"')
            if mode == _HOST and int(chr(s[i + 1]), 16) < 8 and s[i:i + 3] != b"%25":
                raise URLError(f'invalid URL escape "{s[i:i + 3].decode()}"')
            if mode == _ZONE:
                value = int(s[i + 1:i + 3], 16)
                if s[i:i + 3] != b"%25" and value != 0x20 and _should_escape(value, _HOST):
                    raise URLError(f'invalid URL escape "{s[i:i + 3].decode()}"')
            i += 3
            continue
        if mode in (_HOST, _ZONE) and c < 0x80 and c != ord("+") and _should_escape(c, mode):
            raise URLError(f'invalid character "{chr(c)}" in host name')
        i += 1
    out, i = bytearray(), 0
    while i < len(s):
        if s[i] == ord("%"):
            out.append(int(s[i + 1:i + 3], 16))
            i += 3
            continue
        out.append(0x20 if s[i] == ord("+") and mode == _QUERY else s[i])
        i += 1
    return bytes(out)


def _escape(s: bytes, mode: str) -> bytes:
    out = bytearray()
    for c in s:
        if c == 0x20 and mode == _QUERY:
            out.append(ord("+"))
        elif _should_escape(c, mode):
            out += b"%" + bytes((_HEX[c >> 4], _HEX[c & 15]))
        else:
            out.append(c)
    return bytes(out)


def _valid_optional_port(port: bytes) -> bool:
    return port == b"" or (port[:1] == b":" and all(48 <= b <= 57 for b in port[1:]))


@dataclass
class URL:
    scheme: str = ""
    host: str = ""
    path: str = ""
    raw_path: str = ""
    raw_query: str = ""

    def hostname(self) -> str:
        return _split_host_port(self.host)[0]

    def port(self) -> str:
        return _split_host_port(self.host)[1]

    def escaped_path(self) -> str:
        raw = self.raw_path.encode()
        if raw and _valid_encoded(raw):
            try:
                if _unescape(raw, _PATH).decode("utf-8", "replace") == self.path:
                    return self.raw_path
            except URLError:
                pass
        if self.path == "*":
            return "*"
        return _escape(self.path.encode(), _PATH).decode("utf-8", "replace")

    def query(self) -> dict[str, list[str]]:
        """url.ParseQuery, keeping what it could parse (URL.Query ignores the error)."""
        values: dict[str, list[str]] = {}
        for pair in self.raw_query.encode().split(b"&") if self.raw_query else []:
            if b";" in pair or not pair:
                continue
            key, _, value = pair.partition(b"=")
            try:
                key_text = _unescape(key, _QUERY).decode("utf-8", "replace")
                value_text = _unescape(value, _QUERY).decode("utf-8", "replace")
            except URLError:
                continue
            values.setdefault(key_text, []).append(value_text)
        return values


def _valid_encoded(s: bytes) -> bool:
    return all(c in b"!$&'()*+,;=:@[]%" or not _should_escape(c, _PATH) for c in s)


def _split_host_port(host: str) -> tuple[str, str]:
    port = ""
    colon = host.rfind(":")
    if colon != -1 and _valid_optional_port(host[colon:].encode()):
        host, port = host[:colon], host[colon + 1:]
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    return host, port


def _scheme(raw: bytes) -> tuple[bytes, bytes]:
    for i, c in enumerate(raw):
        if 97 <= c <= 122 or 65 <= c <= 90:
            continue
        if 48 <= c <= 57 or c in b"+-.":
            if i == 0:
                return b"", raw
            continue
        if c == ord(":"):
            if i == 0:
                raise URLError("missing protocol scheme")
            return raw[:i], raw[i + 1:]
        return b"", raw
    return b"", raw


def _parse_host(scheme: bytes, host: bytes) -> bytes:
    bracket = host.rfind(b"[")
    if bracket > 0:
        raise URLError("invalid IP-literal")
    if bracket == 0:
        close = host.rfind(b"]")
        if close < 0:
            raise URLError("missing ']' in host")
        colon_port = host[close + 1:]
        if not _valid_optional_port(colon_port):
            raise URLError(f'invalid port "{colon_port.decode("utf-8", "replace")}" after host')
        name = host[1:close]
        zone = name.find(b"%25")
        literal = (_unescape(name[:zone], _HOST) + _unescape(name[zone:], _ZONE) if zone >= 0
                   else _unescape(name, _HOST))
        text = literal.decode("utf-8", "replace")
        address, _, _zone = text.partition("%")
        try:
            parsed = ipaddress.ip_address(address)
        except ValueError:
            raise URLError(f"invalid host: ParseAddr({text!r})".replace("'", '"')) from None
        if parsed.version == 4:
            raise URLError("invalid IP-literal")
        return b"[" + literal + b"]" + _unescape(colon_port, _HOST)
    first = host.find(b":")
    if first != -1:
        last = host.rfind(b":")
        if last != first and scheme not in (b"http", b"https"):
            first = last
        if not _valid_optional_port(host[first:]):
            raise URLError(f'invalid port "{host[first:].decode("utf-8", "replace")}" after host')
    return _unescape(host, _HOST)


def _valid_userinfo(s: bytes) -> bool:
    return all(c in _ALNUM or c in b"-._:~!$&'()*+,;=%@" for c in s)


def parse(raw_text: str, via_request: bool) -> URL:
    """url.Parse (via_request False; the fragment is cut off first) or url.ParseRequestURI."""
    raw = raw_text.encode()
    if not via_request:
        raw = raw.partition(b"#")[0]
    if any(b < 0x20 or b == 0x7F for b in raw):
        raise URLError("net/url: invalid control character in URL")
    if not raw and via_request:
        raise URLError("empty url")
    url = URL()
    if raw == b"*":
        url.path = "*"
        return url
    scheme, rest = _scheme(raw)
    scheme = scheme.lower()
    url.scheme = scheme.decode()
    if rest.endswith(b"?") and rest.count(b"?") == 1:
        rest = rest[:-1]
    else:
        rest, _, query = rest.partition(b"?")
        url.raw_query = query.decode("utf-8", "replace")
    if not rest.startswith(b"/"):
        if scheme:
            return url  # opaque
        if via_request:
            raise URLError("invalid URI for request")
        if b":" in rest.partition(b"/")[0]:
            raise URLError("first path segment in URL cannot contain colon")
    if (scheme or (not via_request and not rest.startswith(b"///"))) and rest.startswith(b"//"):
        authority, slash, tail = rest[2:].partition(b"/")
        rest = slash + tail
        at = authority.rfind(b"@")
        url.host = _parse_host(scheme, authority[at + 1:] if at >= 0 else authority).decode("utf-8", "replace")
        if at >= 0:
            userinfo = authority[:at]
            if not _valid_userinfo(userinfo):
                raise URLError("net/url: invalid userinfo")
            for part in userinfo.split(b":", 1):
                _unescape(part, _USER)
    path = _unescape(rest, _PATH)
    url.path = path.decode("utf-8", "replace")
    url.raw_path = "" if _escape(path, _PATH) == rest else rest.decode("utf-8", "replace")
    return url


def parse_request_uri(text: str) -> URL:
    """What `url()` returns: ParseRequestURI must accept the text, url.Parse builds the value."""
    parse(text, True)
    return parse(text, False)


_ESCAPES = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v",
            "\\": "\\\\", '"': '\\"'}


def go_quote(text: str) -> str:
    """strconv.Quote, as url.Error prints the text it could not parse: printable characters
    as they are (Go's IsPrint and Python's isprintable agree: letters, marks, numbers,
    punctuation, symbols and the ASCII space), the rest escaped."""
    out = []
    for char in text:
        if char in _ESCAPES:
            out.append(_ESCAPES[char])
        elif char.isprintable():
            out.append(char)
        elif ord(char) < 0x80:
            out.append(f"\\x{ord(char):02x}")
        elif ord(char) <= 0xFFFF:
            out.append(f"\\u{ord(char):04x}")
        else:
            out.append(f"\\U{ord(char):08x}")
    return '"' + "".join(out) + '"'
