"""draguard's allocator against the real upstream one (harness/allocator-oracle) on generated
scenarios. Upstream visits pools in Go's random map order, so with several pools its outcome
(even allocated vs. error, when a CEL runtime error lurks in one pool) depends on luck;
draguard is run for every pool order and upstream's outcome, devices included, must be one of
them. With one pool the comparison is exact. `--scenarios N` runs more."""

from collections import Counter

import pytest

from draguard.dra.variants import variant_for, variant_of

from support.oracle import as_released, draguard_outcome, possible_outcomes, run_oracle, scenario, upstream_outcome
from support.oracle_regressions import REGRESSIONS


def compare(oracle, scenarios):
    disagreements = []
    for s, line in zip(scenarios, run_oracle(oracle, scenarios), strict=True):
        theirs = upstream_outcome(line)
        ours = possible_outcomes(s)
        if not any(o.kind == theirs.kind and (o.kind != "allocated" or o.devices == theirs.devices) for o in ours):
            disagreements.append((s["id"], [(o.kind, o.devices, o.error) for o in ours],
                                  (theirs.kind, theirs.devices, theirs.error)))
    return disagreements


def test_generated_scenarios_agree_with_upstream(oracle, request):
    count = request.config.getoption("--scenarios")
    scenarios = [scenario(seed) for seed in range(count)]
    disagreements = compare(oracle, scenarios)
    kinds = {k: sum(1 for s in scenarios if draguard_outcome(s).kind == k) for k in ("allocated", "unschedulable", "error")}
    variants = Counter(variant_of(f for f, on in s["features"].items() if on).name for s in scenarios)
    print(f"\n{count} scenarios: {kinds}; per upstream variant {dict(variants)}; {len(disagreements)} disagreements")
    assert not disagreements, disagreements[:5]
    assert all(kinds.values()), "the generator must produce every outcome"


RELEASES = ["1.32", "1.33", "1.34", "1.35", "1.36", "1.37"]


@pytest.mark.parametrize("release", RELEASES)
def test_each_release_with_its_default_gates_agrees_with_upstream(oracle, request, release):
    """The generated inventories and claims as a cluster of each release runs them: its
    default gates (facts/feature-gates.yaml) turned into upstream's structured.Features, and
    so the variant it picks (support.oracle.as_released). A quarter of `--scenarios` per
    release, each release its own seeds (several share their default gates)."""
    count = max(1, request.config.getoption("--scenarios") // 4)
    first = RELEASES.index(release) * count
    scenarios = [as_released(scenario(seed), release) for seed in range(first, first + count)]
    disagreements = compare(oracle, scenarios)
    kinds = Counter(draguard_outcome(s).kind for s in scenarios)
    print(f"\n{release} ({variant_for(release).name} variant): {count} scenarios {dict(kinds)}; "
          f"{len(disagreements)} disagreements")
    assert not disagreements, disagreements[:5]


@pytest.mark.parametrize("name", sorted(REGRESSIONS))
def test_named_regressions(oracle, name):
    assert not compare(oracle, [REGRESSIONS[name]])
