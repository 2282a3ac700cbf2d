"""Kubernetes resource quantities ("80Gi", "1500m", "1e3") as exact fractions.

A port of k8s.io/apimachinery resource.ParseQuantity (quantity.go, parseQuantityString and
suffix.go interpret) for what a value is and whether text is one: an optional sign, ASCII
digits with an optional point (leading zeros dropped; "1.", ".5", "." and a bare sign are
accepted), and one suffix: binary (Ki..Ei), decimal SI (n, u, m, "", k, M, G, T, P, E) or a
decimal exponent (e3, E-2; the exponent is truncated to 32 bits as upstream does). A non-zero
value finer than 1n is rounded up (away from zero) to the next nano, and a binary-SI value is
capped at 2^63-1, both as upstream does; counters and capacities sum such rounded values."""

from __future__ import annotations

import math
from fractions import Fraction

from .cached import by_value
from .patterns import Lazy
from .value import Value

_BINARY = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_DIGITS = frozenset("0123456789")
_SUFFIX_CHARS = frozenset("eEinumkKMGTP")
_NANO = 10**9
_EXPONENT = Lazy(r"[+-]?[0-9]+")
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


# How a Quantity holds its value, which decides AsInt64 (CEL's isInteger/asInteger) and the
# form of sums: an int64Amount (value, scale), meaning value * 10^scale, or None for an inf.Dec.
Form = tuple[int, int] | None
_INT64 = (-(2**63), 2**63 - 1)


def parse_quantity(text: object, trim: bool = True) -> Fraction:
    """The exact value of a quantity; ints and floats (YAML numbers) are taken as is. `trim`
    strips surrounding blanks as Quantity's JSON decoding does; CEL's quantity() does not."""
    return parse_quantity_form(text, trim)[0]


@by_value(maxsize=4096)  # 1.0 is a quantity and True is refused; a YAML list is refused too
def parse_quantity_form(text: object, trim: bool = True) -> tuple[Fraction, Form]:
    """(value, form): the value as parse_quantity, the form as ParseQuantity stores it."""
    if isinstance(text, bool):
        raise QuantityError(f"{_EXPECTED}, got {text!r}")
    if isinstance(text, int):
        return Fraction(text), (text, 0) if _fits(text) else None
    if isinstance(text, float):
        if not math.isfinite(text):  # YAML's .nan/.inf: no JSON number, the API server cannot decode it
            raise QuantityError(f"{_EXPECTED}, got {text!r}")
        return Fraction(str(text)), None
    text = str(text).strip() if trim else str(text)
    if not text:
        raise QuantityError(f"{_EXPECTED}, got {text!r}")
    if text == "0":
        return Fraction(0), (0, 0)
    negative, numerator, fraction, suffix = _split(text)
    base, exponent = _scale(suffix, text)
    magnitude = Fraction(int(numerator + fraction), 10 ** len(fraction)) * Fraction(base) ** exponent
    form = _int64_form(negative, numerator, fraction, base, exponent)
    if form is None:  # the inf.Dec path: rounded up to 1n, binary values capped
        if magnitude.denominator != 1 and _NANO % magnitude.denominator:
            magnitude = Fraction(-(-magnitude.numerator * _NANO // magnitude.denominator), _NANO)
        if base == 2 and magnitude > _MAX_BINARY:
            magnitude = _MAX_BINARY
    return (-magnitude if negative else magnitude), form


def _int64_form(negative: bool, numerator: str, fraction: str, base: int, exponent: int) -> Form:
    """ParseQuantity's fast path: enough int64 precision, no finer than 1n, no overflow."""
    if base == 10:
        scale, mantissa, precision = exponent, 1, 18 - len(numerator) - len(fraction)
    elif exponent >= 0 and not fraction:
        scale, mantissa = 0, 1 << exponent
        precision = 15 - len(numerator) - int(exponent * 3 / 10) - 1
    else:
        return None
    scale -= len(fraction)
    if precision < 0 or scale < -9:
        return None
    value = int(numerator + fraction) * mantissa
    if not _fits(value):
        return None
    return (-value if negative else value), scale


def canonical_form(value: Fraction) -> Form:
    """The form of a value given as its plain decimal text (a capacity built in code, not
    parsed from a manifest): an integer that fits is an int64Amount."""
    return (value.numerator, 0) if value.denominator == 1 and _fits(value.numerator) else None


def _fits(value: int) -> bool:
    return _INT64[0] <= value <= _INT64[1]


def _scaled(value: int, scale: int) -> int | None:
    """positiveScaleInt64: value * 10^scale, or None on overflow."""
    result = value * 10**scale
    return result if _fits(result) else None


def add_forms(a: Form, b: Form) -> Form:
    """The form of a sum (Quantity.Add, int64Amount.Add): an int64Amount at the smaller scale
    while nothing overflows, else an inf.Dec."""
    if a is None or b is None:
        return None
    (av, ascale), (bv, bscale) = a, b
    if bv == 0:
        return a
    if av == 0:
        return b
    low = min(ascale, bscale)
    left, right = _scaled(av, ascale - low), _scaled(bv, bscale - low)
    if left is None or right is None or not _fits(left + right):
        return None
    return left + right, low


def subtract_forms(a: Form, b: Form) -> Form:
    """Quantity.Sub: a + (-b) (int64Amount.Sub)."""
    return None if b is None else add_forms(a, (-b[0], b[1]))


def as_int64(form: Form) -> int | None:
    """Quantity.AsInt64: only an int64Amount with a scale of 0 or more that fits."""
    if form is None or form[1] < 0:
        return None
    return _scaled(*form)


class Quantity(Value):
    """A resource.Quantity as its text goes: the value, the format its suffix gave (BinarySI,
    DecimalSI, DecimalExponent), and the input string ParseQuantity keeps when it is already
    canonical, which String() then returns as it was written."""

    __slots__ = ("value", "format", "kept")

    def __init__(self, value: Fraction, format: str = "DecimalSI", kept: str | None = None):
        self.value = value
        self.format = format
        self.kept = kept

    def __str__(self) -> str:
        return self.kept if self.kept is not None else canonical_text(self.value, self.format)


@by_value(maxsize=4096)
def parse_quantity_text(text: object) -> Quantity:
    """ParseQuantity as far as String() reads it (a YAML number is the JSON number's text)."""
    if isinstance(text, int) and not isinstance(text, bool):
        text = str(text)
    value = parse_quantity(text)
    text = str(text).strip()
    if text == "0":
        return Quantity(value, "DecimalSI", "0")
    negative, numerator, fraction, suffix = _split(text)
    base, exponent = _scale(suffix, text)
    format = "BinarySI" if base == 2 else "DecimalSI" if suffix in _DECIMAL else "DecimalExponent"
    if _int64_form(negative, numerator, fraction, base, exponent) is None:
        return Quantity(value, format)
    shifted = numerator + fraction
    if base == 2:
        canonical = exponent % 10 == 0 and int(shifted) & 0x07 != 0
    else:
        canonical = (exponent - len(fraction)) % 3 == 0 and not shifted.endswith("000") and shifted[0] != "0"
    return Quantity(value, format, text if canonical else None)


_DECIMAL_SUFFIXES = {exponent: suffix for suffix, exponent in _DECIMAL.items()}
_BINARY_SUFFIXES = {exponent // 10: suffix for suffix, exponent in _BINARY.items()} | {0: ""}


def canonical_text(value: Fraction, format: str = "DecimalSI") -> str:
    """Quantity.CanonicalizeBytes: binary suffixes for a whole BinarySI value of at least 1Ki
    (in magnitude), else the value as digits times a power of ten that is a multiple of 3,
    with its decimal suffix (DecimalSI, none where the table has no such power) or as e<n>."""
    if value == 0:
        return "0"
    if format == "BinarySI" and abs(value) >= 1024 and value.denominator == 1:
        amount, power = abs(value.numerator), 0
        while amount >= 1024 and amount % 1024 == 0:
            amount //= 1024
            power += 1
        return f"{'-' if value < 0 else ''}{amount}{_BINARY_SUFFIXES.get(power, '')}"
    scaled, exponent = abs(value), 0
    while scaled.denominator != 1:
        scaled *= 10
        exponent -= 1
    amount = scaled.numerator
    while amount >= 10 and amount % 10 == 0:
        amount //= 10
        exponent += 1
    shift = exponent % 3  # down to a multiple of 3
    amount, exponent = amount * 10**shift, exponent - shift
    sign = "-" if value < 0 else ""
    if format == "DecimalExponent":
        return f"{sign}{amount}{f'e{exponent}' if exponent else ''}"
    return f"{sign}{amount}{_DECIMAL_SUFFIXES.get(exponent, '')}"


def is_quantity(text: object, trim: bool = True) -> bool:
    try:
        parse_quantity(text, trim)
    except QuantityError:
        return False
    return True
