"""IntOrString values ("25%" or 1), scaled as k8s.io/apimachinery/pkg/util/intstr does."""

from __future__ import annotations

import math

from .patterns import Lazy

_ATOI = Lazy(r"[+-]?[0-9]+")  # strconv.Atoi: ASCII digits, an optional sign, nothing else


def scaled_value(value: object, total: int, round_up: bool) -> int:
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


_PERCENT = Lazy(r"[0-9]+%")  # validation.IsValidPercent


def problem(value: object, at_most_100: bool = True, nonzero: bool = False) -> str | None:
    """What the API server's validation says of an IntOrString count or percentage
    (apps validation ValidatePositiveIntOrPercent, and IsNotMoreThan100Percent where
    `at_most_100`: not for a rolling update's maxSurge), None when valid: an integer of 0 or
    more, or a whole percentage; `nonzero`: neither 0 nor 0% (a StatefulSet's maxUnavailable,
    validateRollingUpdateStatefulSet)."""
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        return "must be an integer or percentage (e.g. '5%')"
    if isinstance(value, int):
        return "must be greater than or equal to 0" if value < 0 else "cannot be 0" if nonzero and value == 0 else None
    if not _PERCENT.fullmatch(value):
        return "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%', '93%')"
    if at_most_100 and int(value[:-1]) > 100:
        return "must not be greater than 100%"
    return "cannot be 0" if nonzero and int(value[:-1]) == 0 else None


def is_zero(value: object) -> bool:
    """getIntOrPercentValue(value) == 0 for a value the API server accepts: 0, or a
    percentage of 0 ("0%", "00%"). A value it refuses is neither zero nor non-zero (`problem`
    says why). The one reading of "zero surge" (model.rollout, rules.rollout)."""
    return problem(value, at_most_100=False) is None and scaled_value(value, 100, round_up=True) == 0
