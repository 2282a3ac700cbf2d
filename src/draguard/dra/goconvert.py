"""CEL's conversions of a string as cel-go makes them, with Go's strconv and time packages:
`int(s)` is ParseInt(s, 10, 64), `uint(s)` ParseUint(s, 10, 64), `double(s)` ParseFloat(s, 64),
`duration(s)` time.ParseDuration. cel-cpp's are more lenient (it takes ' 12', '1e400' as
infinity) or parse otherwise (absl durations), so dra.celrewrite routes the conversions of a
string through these. A failure is cel-go's "type conversion error" (or ParseDuration's)."""

from __future__ import annotations

import re

from .gourl import go_quote

_INT = re.compile(r"[+-]?[0-9]+")
_UINT = re.compile(r"[0-9]+")
# ParseFloat: decimal with an optional exponent, hexadecimal with its p exponent, inf, infinity, nan
_DECIMAL = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_HEXADECIMAL = re.compile(r"[+-]?0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)[pP][+-]?[0-9]+")
_SPECIAL = re.compile(r"[+-]?(?:inf|infinity)|nan", re.IGNORECASE)  # a sign only before inf


def _failed(to: str) -> ValueError:
    return ValueError(f"type conversion error from 'string' to '{to}'")


def to_int(text: str) -> int:
    if not _INT.fullmatch(text) or not -(1 << 63) <= int(text) < 1 << 63:
        raise _failed("int")
    return int(text)


def to_uint(text: str) -> int:
    if not _UINT.fullmatch(text) or int(text) >= 1 << 64:
        raise _failed("uint")
    return int(text)


def _underscore_ok(text: str) -> bool:
    """strconv underscoreOK: each `_` between digits (or after a base prefix), as in Go literals."""
    body = text[1:] if text[:1] in "+-" else text
    hexadecimal = body[:2].lower() == "0x"
    saw, rest = ("0", body[2:]) if body[:2].lower() in ("0x", "0b", "0o") else ("^", body)
    for char in rest:
        if char.isascii() and (char.isdigit() or hexadecimal and char.lower() in "abcdef"):
            saw = "0"
        elif char == "_":
            if saw != "0":
                return False
            saw = "_"
        elif saw == "_":
            return False
        else:
            saw = "!"
    return saw != "_"


def to_double(text: str) -> float:
    """A value out of float64's range is ParseFloat's ErrRange, an error here (underflow is 0).
    Digits may be separated by underscores, as in Go's float literals."""
    if _SPECIAL.fullmatch(text):
        return float(text.lower().replace("infinity", "inf"))
    if "_" in text:
        if not _underscore_ok(text):
            raise _failed("double")
        text = text.replace("_", "")
    if _HEXADECIMAL.fullmatch(text):
        try:
            return float.fromhex(text)
        except OverflowError:
            raise _failed("double") from None
    if not _DECIMAL.fullmatch(text):
        raise _failed("double")
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise _failed("double")
    return value


#: time.ParseDuration's units, in nanoseconds (micro spelled three ways)
_UNITS = {"ns": 1, "us": 10**3, "\u00b5s": 10**3, "\u03bcs": 10**3, "ms": 10**6, "s": 10**9, "m": 60 * 10**9,
          "h": 3600 * 10**9}
_LIMIT = 1 << 63


def _invalid_duration(text: str) -> ValueError:
    return ValueError(f"time: invalid duration {go_quote(text)}")


def to_duration(text: str) -> str:
    """time.ParseDuration (`[-+]?([0-9]*(\\.[0-9]*)?[a-z]+)+`, int64 nanoseconds, a fraction
    added through float64 as Go adds it), written as seconds that cel-cpp reads alike."""
    rest, negative = text, False
    if rest[:1] in ("-", "+"):
        negative, rest = rest[0] == "-", rest[1:]
    if rest == "0":
        return "0s"
    if not rest:
        raise _invalid_duration(text)
    total = 0
    while rest:
        digits = len(rest) - len(rest.lstrip("0123456789"))
        if not digits and not rest.startswith("."):
            raise _invalid_duration(text)
        whole, rest = int(rest[:digits] or "0"), rest[digits:]
        if whole > _LIMIT:
            raise _invalid_duration(text)
        fraction, scale, had_fraction = 0, 1.0, False
        if rest.startswith("."):
            rest = rest[1:]
            count = len(rest) - len(rest.lstrip("0123456789"))
            had_fraction = count > 0
            for char in rest[:count]:  # leadingFraction: digits past int64 are dropped
                candidate = fraction * 10 + int(char)
                if fraction > (_LIMIT - 1) // 10 or candidate > _LIMIT:
                    break
                fraction, scale = candidate, scale * 10
            rest = rest[count:]
        if not digits and not had_fraction:
            raise _invalid_duration(text)
        end = next((i for i, char in enumerate(rest) if char == "." or char in "0123456789"), len(rest))
        unit = _UNITS.get(rest[:end])
        if unit is None:
            raise _invalid_duration(text)
        rest = rest[end:]
        if whole > _LIMIT // unit:
            raise _invalid_duration(text)
        value = whole * unit
        if fraction:
            value += int(float(fraction) * (float(unit) / scale))
            if value > _LIMIT:
                raise _invalid_duration(text)
        total += value
        if total > _LIMIT:
            raise _invalid_duration(text)
    if not negative and total > _LIMIT - 1:
        raise _invalid_duration(text)
    # seconds and nanoseconds: absl cannot read -2^63 written as nanoseconds
    return f"{'-' if negative and total else ''}{total // 10**9}.{total % 10**9:09d}s"
