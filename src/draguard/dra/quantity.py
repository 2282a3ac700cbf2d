"""Kubernetes resource quantities ("80Gi", "1500m", "1e3") as exact fractions.

Parsing follows k8s.io/apimachinery resource.ParseQuantity: an optional sign, a decimal
number, and one suffix: binary (Ki..Ei), decimal SI (n, u, m, k, M, G, T, P, E) or a decimal
exponent (e3, E-2)."""

from __future__ import annotations

import re
from fractions import Fraction
from functools import lru_cache

_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {"n": Fraction(1, 10**9), "u": Fraction(1, 10**6), "m": Fraction(1, 1000), "": 1,
            "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15, "E": 10**18}
_QUANTITY = re.compile(r"^([+-]?)(\d+(?:\.\d*)?|\.\d+)(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?\d+)?$")


class QuantityError(ValueError):
    pass


@lru_cache(maxsize=4096)
def parse_quantity(text) -> Fraction:
    """The exact value of a quantity; ints and floats (YAML numbers) are taken as is."""
    if isinstance(text, bool):
        raise QuantityError(f"quantities must match the regular expression, got {text!r}")
    if isinstance(text, int):
        return Fraction(text)
    if isinstance(text, float):
        return Fraction(str(text))
    match = _QUANTITY.match(str(text).strip())
    if not match:
        raise QuantityError(f"quantities must match the regular expression "
                            f"'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$', got {text!r}")
    sign, number, suffix = match.groups()
    value = Fraction(number)
    suffix = suffix or ""
    if suffix in _BINARY:
        value *= _BINARY[suffix]
    elif suffix in _DECIMAL:
        value *= _DECIMAL[suffix]
    else:
        value *= Fraction(10) ** int(suffix[1:])
    return -value if sign == "-" else value


def is_quantity(text) -> bool:
    try:
        parse_quantity(text)
    except QuantityError:
        return False
    return True
