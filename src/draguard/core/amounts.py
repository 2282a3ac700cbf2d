"""Command-line amounts (durations, sizes) as argparse types, for every command. It sits in
the lowest layer, the teardown helper's (which loads nothing of the lint stack and parses its
options with it too), and uses the standard library only."""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable

#: seconds the helper keeps free before SIGKILL (`--margin`): its own steps end this long before
#: the grace period does. model.teardown reads a hook's bound with it.
DEFAULT_MARGIN = 5.0


def is_amount(value: object, positive: bool = False) -> bool:
    """A finite number (not a bool), 0 or more (above 0 with `positive`)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and \
        (value > 0 if positive else value >= 0)


def amount(unit: str, positive: bool = False) -> Callable[[str], float]:
    """An argparse type: a finite number of `unit`, 0 or more (above 0 with `positive`).
    float() takes 'nan', 'inf' and negatives; as durations they end a step at once, never
    end it, or spin (a simulation with a NaN readiness time ran forever)."""
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number of {unit}") from None
        if not is_amount(value, positive):
            raise argparse.ArgumentTypeError(f"{text!r}: {unit} must be a finite number "
                                             f"{'above 0' if positive else '0 or more'}")
        return value
    return parse
