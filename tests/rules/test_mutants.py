"""The mutation check of the rules' tests (support.mutants): it tells a changed rule apart,
and the rules' golden tests kill a real share of a sample of mutants."""

from __future__ import annotations

import pytest

from support.mutants import killed, mutants, rule_modules, score


def test_a_mutant_that_turns_a_check_around_is_killed_and_the_registry_restored():
    from draguard.rules import REGISTRY

    import draguard.rules.cel as cel

    before = REGISTRY.get("cel-invalid")
    with open(cel.__file__, encoding="utf-8") as handle:  # CelInvalid.check: a selector that compiled
        line = next(i for i, text in enumerate(handle, 1) if "if compiled.error is None:" in text)
    [flipped] = [m for m in mutants(["draguard.rules.cel"]) if m.line == line and m.what == "Is -> IsNot"]
    dead, how = killed(flipped)
    assert dead and "cel-invalid" in how
    assert REGISTRY.get("cel-invalid") is before


@pytest.mark.mutation
def test_the_goldens_kill_most_mutants():
    """Every mutant of every rule module (about 870, a minute): the score of the whole
    population, not of a sample, which any change to a rule module redraws (a sample of 40
    moved by one mutant across the bar). docs/mutation.md gives the figure."""
    share, results = score(mutants(rule_modules()))
    survivors = [f"{m.module}:{m.line} {m.what}" for m, dead, _ in results if not dead]
    assert share >= 0.5, (f"{share:.1%}", survivors[:40])
