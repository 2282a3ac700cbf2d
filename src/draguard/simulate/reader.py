"""A `draguard simulate` scenario file read with positions: what it names is loaded (the
manifests, the inventory, relative to the file), and every mistake is an InputError at its
file:line:column, before anything is simulated (the format: simulate.scenario)."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import NoReturn

from ..core.errors import InputError
from ..core.versions import DEFAULT_KUBE_VERSION, check_kube_version
from ..dra.devices import ModelError
from ..dra.inventory import Inventory
from ..facts.gates import known_gates
from ..model.manifest import Manifest
from .template import ScenarioError
from .scenario import STEPS, Step, run_scenario
from .world import Durations, Timings
from ..core.amounts import is_amount
from ..dra.inventory_reader import load_inventory, load_manifests

API_VERSION, KIND = "draguard.io/v1alpha1", "Scenario"
_DURATIONS = ("prepare", "pull", "start", "ready", "shutdown", "unprepare", "run", "preStop")
_FIELDS = {"preStop": "pre_stop"}  # a phase's name in the file -> world.Durations' field


@dataclass
class Scenario:
    manifests: list[Manifest]
    inventory: Inventory | None  # None: the dump's
    steps: list[Step]
    durations: Timings
    horizon: float
    kube_version: str | None
    gates: dict  # featureGates: those the cluster sets differently from the release's defaults
    empty: bool = False  # start: empty (nothing runs before the steps)
    dump_path: str | None = None  # start: {dump: PATH}, read by the caller (the cluster layer reads dumps)

    def run(self, horizon: float | None = None, dump: list[Manifest] | None = None):
        """The steps run (`horizon`: the command line's, over the file's; `dump`: the objects
        of the dump the scenario starts from); InputError for what the scenario names that is
        not there."""
        try:
            return run_scenario(self.manifests, self.inventory, self.steps, self.durations,
                                horizon or self.horizon, self.kube_version, empty=self.empty, dump=dump,
                                gates=self.gates)
        except (ScenarioError, ModelError) as exc:
            raise InputError(str(exc)) from None


def load_scenario(path: str) -> Scenario:
    [doc] = _single(path)
    spec, here = doc.data, os.path.dirname(os.path.abspath(path))

    def fail(message: str, container: object = None, key: str | int | None = None) -> NoReturn:
        where = doc.location(container, key)
        raise InputError(f"{where.file}:{where.line}:{where.column}: {message}")

    if spec.get("apiVersion") != API_VERSION or spec.get("kind") != KIND:
        fail(f"a scenario is apiVersion: {API_VERSION}, kind: {KIND}", spec, "kind" if "kind" in spec else None)
    start = spec.get("start", "manifests")
    dump = start.get("dump") if isinstance(start, dict) and len(start) == 1 else None
    if start not in ("manifests", "empty") and not isinstance(dump, str):
        fail("start: manifests (their Deployments and StatefulSets running), empty, or {dump: PATH} (a cluster "
             "dump, relative to the scenario file)", spec, "start")
    paths = {}
    for key in ("manifests", "inventory"):
        value = spec.get(key, [] if dump else None)
        if key == "inventory" and dump and value:
            fail("inventory: a scenario starting from a dump takes the dump's nodes and slices", spec, key)
        if not isinstance(value, list) or not (value or dump) or not all(isinstance(v, str) for v in value):
            fail(f"{key}: a list of paths (relative to the scenario file)", spec, key if key in spec else None)
        paths[key] = [os.path.join(here, v) for v in value]
    kube_version = spec.get("kubeVersion")
    if kube_version is not None:
        try:
            kube_version = check_kube_version(kube_version)
        except ValueError as exc:
            fail(str(exc), spec, "kubeVersion")
    gates = spec.get("featureGates", {})
    if not isinstance(gates, dict) or not all(isinstance(v, bool) for v in gates.values()):
        fail("featureGates: a mapping of gate name -> true or false", spec, "featureGates")
    for name in gates:
        if name not in known_gates():
            fail(f"unknown feature gate '{name}' (known: {', '.join(sorted(known_gates()))})", gates, name)
    horizon = spec.get("horizon", 3600)
    if not is_amount(horizon, positive=True):
        fail("horizon: seconds, a finite number > 0", spec, "horizon")
    durations = Durations(**_given(spec, "durations", "durations", fail))
    own = spec.get("workloadDurations", {})
    if not isinstance(own, dict):
        fail("workloadDurations: a mapping of workload name -> phase -> seconds", spec, "workloadDurations")
    timings = Timings(durations, tuple((str(name), dataclasses.replace(
        durations, **_given(own, name, f"workloadDurations.{name}", fail))) for name in own))
    steps = _steps(doc, spec, fail)
    release = kube_version or DEFAULT_KUBE_VERSION
    manifests = load_manifests(paths["manifests"], "manifests", release) if paths["manifests"] else []
    inventory = None if dump else load_inventory(paths["inventory"], release,
                                                 [m for m in manifests if m.kind == "DeviceClass"])
    return Scenario(manifests, inventory, steps, timings, float(horizon), kube_version, dict(gates), start == "empty",
                    os.path.join(here, dump) if dump else None)


def _single(path: str) -> list[Manifest]:
    documents = load_manifests([path], "scenario")
    if len(documents) != 1:
        raise InputError(f"scenario {path}: one YAML document expected, found {len(documents)}")
    return documents


def _given(parent: dict, key: str, where: str, fail: Callable[..., NoReturn]) -> dict:
    """phase -> seconds of the durations mapping parent[key], each checked at its line and
    column."""
    given = parent.get(key, {})
    if not isinstance(given, dict):
        fail(f"{where}: a mapping of phase -> seconds", parent, key)
    for phase, value in given.items():
        if phase not in _DURATIONS:
            fail(f"{where}: unknown phase {phase!r} (phases: {', '.join(_DURATIONS)})", given, phase)
        if not is_amount(value):  # .nan and .inf are YAML floats: a NaN readiness time never arrives
            fail(f"{where}.{phase}: seconds, a finite number >= 0", given, phase)
    return {_FIELDS.get(k, k): float(v) for k, v in given.items()}


def _steps(doc: Manifest, spec: dict, fail: Callable[..., NoReturn]) -> list[Step]:
    raw = spec.get("steps")
    if not isinstance(raw, list) or not raw:
        fail("steps: a list of steps (" + ", ".join(STEPS) + ")", spec, "steps" if "steps" in spec else None)
    steps = []
    for i, entry in enumerate(raw):
        if not isinstance(entry, dict) or len(entry) != 1:
            fail("a step is one of " + ", ".join(f"{{{s}: ...}}" for s in STEPS), raw, i)
        [(kind, args)] = entry.items()
        if kind not in STEPS:
            fail(f"unknown step {kind!r} (steps: {', '.join(STEPS)})", entry, kind)
        if not isinstance(args, dict):
            fail(f"{kind}: a mapping of its arguments", entry, kind)
        where = doc.location(entry, kind)
        steps.append(Step(kind, dict(args), f"{where.file}:{where.line}:{where.column}"))
    return steps
