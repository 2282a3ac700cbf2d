"""docs/simulate-json.md documents every field `draguard simulate -f json` emits, for the
rollout, the drain and a scenario: a field added to the output without its documentation
fails here."""

from __future__ import annotations

import json
import re

import yaml

from draguard.cli.simulate import _json_text, as_json
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


def _simulations() -> tuple:
    """A rollout, a drain and a scenario's run."""
    template = {"slice": Manifest.from_data(yaml.safe_load(TEMPLATE))}
    rollout = simulate_rollout(Manifest.from_data(yaml.safe_load(deployment())), template, inventory(1))
    drain = simulate_drain("gpu-0", manifests(DEPLOYMENT, BUDGET), inventory(2))
    scenario = run_scenario(manifests(DEPLOYMENT, BUDGET), inventory(2),
                            [Step("scale", {"deployment": "llm", "replicas": 6}), Step("drain", {"node": "gpu-0"})])
    return rollout, drain, scenario


def test_every_emitted_field_is_documented():
    emitted = set()
    for simulation in _simulations():
        _fields(as_json(simulation), emitted)
    assert emitted - DOCUMENTED == set()


def test_the_json_report_reads_as_json_dumps_writes_it_what_is_not_ascii_escaped():
    """Its timeline is written by the C encoder (core.jsonindent.rows), which leaves what is
    not ASCII as it is: such a text is escaped as json.dumps escapes it (ensure_ascii)."""
    for simulation in _simulations():
        document = as_json(simulation)
        assert _json_text(document) == json.dumps(document, indent=2)
        document["timeline"][-1]["detail"] = "n\u0153ud \u00e9"
        assert _json_text(document) == json.dumps(document, indent=2) and "\\u0153" in _json_text(document)
