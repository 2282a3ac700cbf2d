"""Kubernetes resource quantities ("80Gi", "1500m", "1e3") as exact fractions.

A port of k8s.io/apimachinery resource.ParseQuantity (quantity.go, parseQuantityString and
suffix.go interpret) for what a value is and whether text is one: an optional sign, ASCII
digits with an optional point (leading zeros dropped; "1.", ".5", "." and a bare sign are
accepted), and one suffix: binary (Ki..Ei), decimal SI (n, u, m, "", k, M, G, T, P, E) or a
decimal exponent (e3, E-2; the exponent is truncated to 32 bits as upstream does). A non-zero
value finer than 1n is rounded up (away from zero) to the next nano, and a binary-SI value is
capped at 2^63-1, both as upstream does; counters and capacities sum such rounded values."""

from __future__ import annotations

import re
from fractions import Fraction
from functools import lru_cache

_BINARY = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_DIGITS = frozenset("0123456789")
_SUFFIX_CHARS = frozenset("eEinumkKMGTP")
_NANO = 10**9
_EXPONENT = re.compile(r"[+-]?[0-9]+")
_MAX_BINARY = Fraction(2**63 - 1)
_EXPECTED = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"


class QuantityError(ValueError):
    pass


def _digits(text: str, start: int) -> int:
    """The end of the run of ASCII digits starting at `start`."""
    end = start
    while end < len(text) and text[end] in _DIGITS:
        end += 1
    return end


def _split(text: str) -> tuple[bool, str, str, str]:
    """(negative, numerator digits, fraction digits, suffix) as parseQuantityString reads them."""
    position = 1 if text[:1] in ("+", "-") else 0
    negative = text[:1] == "-"
    number_end = _digits(text, position)
    numerator = text[position:number_end].lstrip("0") or "0"
    fraction, position = "", number_end
    if position < len(text) and text[position] == ".":
        position += 1
        end = _digits(text, position)
        fraction, position = text[position:end], end
    suffix_start = position
    while position < len(text) and text[position] in _SUFFIX_CHARS:
        position += 1
    if position < len(text) and text[position] in "+-":
        position += 1
    if _digits(text, position) != len(text):
        raise QuantityError(f"{_EXPECTED}, got {text!r}")
    return negative, numerator, fraction, text[suffix_start:]


def _scale(suffix: str, text: str) -> tuple[int, int]:
    """(base, exponent) of a suffix (suffixHandler.interpret)."""
    if suffix in _DECIMAL:
        return 10, _DECIMAL[suffix]
    if suffix in _BINARY:
        return 2, _BINARY[suffix]
    if len(suffix) > 1 and suffix[0] in "eE" and _EXPONENT.fullmatch(suffix[1:]):
        value = int(suffix[1:])
        if -(2**63) <= value < 2**63:  # strconv.ParseInt(s, 10, 64), then int32(parsed)
            return 10, (value + 2**31) % 2**32 - 2**31
    raise QuantityError(f"unable to parse quantity's suffix in {text!r}")


@lru_cache(maxsize=4096)
def parse_quantity(text, trim: bool = True) -> Fraction:
    """The exact value of a quantity; ints and floats (YAML numbers) are taken as is. `trim`
    strips surrounding blanks as Quantity's JSON decoding does; CEL's quantity() does not."""
    if isinstance(text, bool):
        raise QuantityError(f"{_EXPECTED}, got {text!r}")
    if isinstance(text, int):
        return Fraction(text)
    if isinstance(text, float):
        return Fraction(str(text))
    text = str(text).strip() if trim else str(text)
    if not text:
        raise QuantityError(f"{_EXPECTED}, got {text!r}")
    negative, numerator, fraction, suffix = _split(text)
    base, exponent = _scale(suffix, text)
    magnitude = Fraction(int(numerator + fraction), 10 ** len(fraction)) * Fraction(base) ** exponent
    if magnitude.denominator != 1 and _NANO % magnitude.denominator:  # finer than 1n: round up
        magnitude = Fraction(-(-magnitude.numerator * _NANO // magnitude.denominator), _NANO)
    if base == 2 and magnitude > _MAX_BINARY:
        magnitude = _MAX_BINARY
    return -magnitude if negative else magnitude


def is_quantity(text, trim: bool = True) -> bool:
    try:
        parse_quantity(text, trim)
    except QuantityError:
        return False
    return True
