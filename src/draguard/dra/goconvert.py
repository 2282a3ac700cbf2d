"""CEL's string-to-number conversions as cel-go makes them, with Go's strconv: `int(s)` is
ParseInt(s, 10, 64), `uint(s)` ParseUint(s, 10, 64), `double(s)` ParseFloat(s, 64). cel-cpp's
are more lenient (it takes ' 12', and '1e400' as infinity), so dra.celrewrite routes the
conversions of a string through these. A failure is cel-go's "type conversion error"."""

from __future__ import annotations

import re

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
