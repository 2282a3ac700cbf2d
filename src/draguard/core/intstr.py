"""IntOrString values ("25%" or 1), scaled as k8s.io/apimachinery/pkg/util/intstr does."""

from __future__ import annotations

import math


def scaled_value(value, total: int, round_up: bool) -> int:
    """intstr.GetScaledValueFromIntOrPercent: an int is taken as is; "N%" of `total` is
    rounded up or down. ValueError for anything else (a string without '%', a float), as
    upstream returns an error ("invalid type: string is not a percentage")."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if not isinstance(value, str) or not value.endswith("%"):
        raise ValueError(f"invalid value {value!r}: expected an integer or a percentage")
    try:
        percent = int(value[:-1])  # strconv.Atoi: no spaces, no fraction
    except ValueError:
        raise ValueError(f"invalid value {value!r}: expected an integer or a percentage") from None
    scaled = percent * total / 100
    return math.ceil(scaled) if round_up else math.floor(scaled)
