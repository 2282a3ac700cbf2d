"""docs/simulate-json.md documents every field `draguard simulate -f json` emits, for the
rollout, the drain and a scenario: a field added to the output without its documentation
fails here."""

from __future__ import annotations

import re

import yaml

from draguard.cli.simulate import as_json
from draguard.model.manifest import Manifest
from draguard.simulate.drain import simulate_drain
from draguard.simulate.rollout import simulate_rollout
from draguard.simulate.scenario import Step, run_scenario

from support.paths import ROOT

from .test_drain import BUDGET, DEPLOYMENT, inventory, manifests
from .test_rollout import TEMPLATE, deployment

DOC = (ROOT / "docs" / "simulate-json.md").read_text()
DOCUMENTED = set(re.findall(r"`([A-Za-z]+)`", DOC))


def _fields(value, into: set) -> set:
    if isinstance(value, dict):
        for key, inner in value.items():
            into.add(key)
            if key not in ("pods", "allocatable", "stranded", "largestPlaceable"):  # keyed by phase or profile
                _fields(inner, into)
    elif isinstance(value, list):
        for inner in value:
            _fields(inner, into)
    return into


def test_every_emitted_field_is_documented():
    template = {"slice": Manifest.from_data(yaml.safe_load(TEMPLATE))}
    rollout = simulate_rollout(Manifest.from_data(yaml.safe_load(deployment())), template, inventory(1))
    drain = simulate_drain("gpu-0", manifests(DEPLOYMENT, BUDGET), inventory(2))
    scenario = run_scenario(manifests(DEPLOYMENT, BUDGET), inventory(2),
                            [Step("scale", {"deployment": "llm", "replicas": 6}), Step("drain", {"node": "gpu-0"})])
    emitted = set()
    for simulation in (rollout, drain, scenario):
        _fields(as_json(simulation), emitted)
    assert emitted - DOCUMENTED == set()
