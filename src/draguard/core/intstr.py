"""IntOrString values ("25%" or 1), scaled as k8s.io/apimachinery/pkg/util/intstr does."""

from __future__ import annotations

import math
import re

_ATOI = re.compile(r"[+-]?[0-9]+")  # strconv.Atoi: ASCII digits, an optional sign, nothing else


def scaled_value(value, total: int, round_up: bool) -> int:
    """intstr.GetScaledValueFromIntOrPercent: an int is taken as is; "N%" of `total` is
    rounded up or down. ValueError for anything else (a string without '%', a float), as
    upstream returns an error ("invalid type: string is not a percentage")."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if not isinstance(value, str) or not value.endswith("%"):
        raise ValueError(f"invalid value {value!r}: expected an integer or a percentage")
    if not _ATOI.fullmatch(value[:-1]):
        raise ValueError(f"invalid value {value!r}: expected an integer or a percentage")
    percent = int(value[:-1])
    scaled = percent * total / 100
    return math.ceil(scaled) if round_up else math.floor(scaled)
