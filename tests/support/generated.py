"""Random plain data for the tests that generate documents (the splice's, the diff's)."""

from __future__ import annotations

import random


def random_value(rnd: random.Random, names: list, scalars: list, deepest: int, widest: int, depth: int = 0):
    """A mapping (up to `widest` keys from `names`), a list (up to 3 items) or one of
    `scalars`, nested no deeper than `deepest`: the same draws from the same `rnd`."""
    roll = rnd.random()
    if depth < deepest and roll < 0.3:
        return {rnd.choice(names): random_value(rnd, names, scalars, deepest, widest, depth + 1)
                for _ in range(rnd.randint(1, widest))}
    if depth < deepest and roll < 0.45:
        return [random_value(rnd, names, scalars, deepest, widest, depth + 1) for _ in range(rnd.randint(1, 3))]
    return rnd.choice(scalars)
