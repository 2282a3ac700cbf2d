"""api-currency: fields the target release's API server drops while their feature gate is off.

The API server does not reject such a field: its registry strategy clears it on create
(`dropDisabled*Fields`), so the object is stored without it and behaves differently from
what was written. Facts in `facts/data/feature-gates.yaml`."""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING, Iterator

from ..core.finding import Finding, Severity
from ..core.location import format_path
from ..facts.gates import GatedField, GateState, gate_enabled, gate_state, gated_fields, on_by_default_since
from ..model.claims import CLAIM_TARGETS, RESOURCE_GROUP, claim_spec
from ..model.values import Key, Yaml, YamlMap
from ..sources.yamlpos import path_of
from .base import Rule
from .registry import register

if TYPE_CHECKING:
    from ..model.manifest import Manifest
    from .context import Context

#: resource.k8s.io versions whose ResourceSlice devices keep their fields under `basic`.
_BASIC_DEVICE_VERSIONS = ("v1alpha3", "v1beta1")


def _owner_and_spec(obj: Manifest) -> tuple[str, YamlMap]:
    if (obj.group, obj.kind) in CLAIM_TARGETS:
        return "claim", claim_spec(obj)
    return ("slice" if obj.kind == "ResourceSlice" else "class"), obj.spec


def _steps(owner: str, obj: Manifest, steps: tuple[str, ...]) -> tuple[str, ...]:
    if owner == "slice" and obj.api_version.rsplit("/", 1)[-1] in _BASIC_DEVICE_VERSIONS and steps[:2] == ("devices", "[]") \
            and len(steps) > 2:
        return steps[:2] + ("basic",) + steps[2:]
    return steps


def _occurrences(node: Yaml, steps: tuple[str, ...]) -> list[tuple[Yaml, Key | None]]:
    """(container, key) of every value at `steps` below `node`, in document order: walked a
    step at a time over the values reached so far (every claim, slice and class is walked
    for each gated field, and recursive generators cost a tenth of a second a large lint)."""
    reached: list[tuple[Yaml, Yaml, Key | None]] = [(node, None, None)]  # (value, its container, its key)
    for step in steps:
        deeper: list[tuple[Yaml, Yaml, Key | None]] = []
        for value, _, _ in reached:
            if step == "[]":
                if isinstance(value, list):
                    deeper.extend((item, value, i) for i, item in enumerate(value))
            elif step == "*":
                if isinstance(value, dict):
                    deeper.extend((item, value, name) for name, item in value.items())
            elif isinstance(value, dict) and step in value:
                deeper.append((value[step], value, step))
        if not deeper:
            return []
        reached = deeper
    return [(container, key) for _, container, key in reached if container is not None]


@lru_cache(maxsize=64)
def _dropped(owner: str, kube_version: str,
             gates: tuple[tuple[str, bool], ...]) -> tuple[tuple[GatedField, GateState], ...]:
    """The fields of `owner` ('claim', 'slice' or 'class') that the API server of
    `kube_version` drops with the gates set as `gates`, each with its gate's state there: the
    same for every object of a run (each claim, slice and class asked it of every gated
    field). A field whose gate did not exist yet is not here: it is schema-invalid."""
    overrides = dict(gates)
    return tuple((gated, state) for gated in gated_fields(owner)
                 if (state := gate_state(gated.gate, kube_version)) is not None
                 and not gate_enabled(gated.gate, kube_version, overrides))


@register
class ApiFieldGated(Rule):
    id = "api-field-gated"
    name = "Field dropped while its feature gate is off"
    category = "api-currency"
    severity = Severity.WARNING
    lint_only = "the API server drops a field whose feature gate is off before validating admission sees the object"
    targets = CLAIM_TARGETS | {(RESOURCE_GROUP, "ResourceSlice"), (RESOURCE_GROUP, "DeviceClass")}
    summary = ("A DRA field (capacity requests, distinctAttribute, device tolerations, extendedResourceName, binding "
               "conditions, ...) whose feature gate the target release leaves off by default.")
    rationale = """
        The API server keeps newer DRA fields only while their feature gate is on, and
        silently clears them otherwise: a request's `capacity.requests` disappears and the
        request takes whole devices, a `distinctAttribute` constraint is emptied and the claim
        rejected, a device's `bindingConditions` vanish and pods bind before the device is
        ready. This rule knows each gate's stage and default per release (read off
        kubernetes' versioned feature specs) and names the gate. Where a cluster enables or
        disables gates differently, say so with `featureGates` in `.draguard.yaml` or
        `--feature-gates DRAConsumableCapacity=true`. Fields a release does not have at all
        are `schema-invalid`."""
    reference = "https://kubernetes.io/docs/reference/command-line-tools-reference/feature-gates/"
    noncompliant = """
        apiVersion: resource.k8s.io/v1
        kind: DeviceClass
        metadata: {name: gpu.example.com}
        spec:
          selectors:
          - cel: {expression: "device.driver == 'gpu.example.com'"}
          extendedResourceName: example.com/gpu
        """
    compliant = noncompliant.replace("  extendedResourceName: example.com/gpu\n", "")

    def check(self, obj: Manifest, ctx: Context) -> Iterator[Finding]:
        owner, spec = _owner_and_spec(obj)
        gates = ctx.config.feature_gates
        for gated, state in _dropped(owner, ctx.kube_version, tuple(sorted(gates.items()))):
            for container, key in _occurrences(spec, _steps(owner, obj, gated.path)):
                yield ctx.finding(self, obj, self._message(container, key, gated, state, ctx, gated.gate in gates),
                                  container, key, help=self._help(gated.gate))

    def _message(self, container: Yaml, key: Key | None, gated: GatedField, state: GateState, ctx: Context,
                 configured: bool) -> str:
        where = format_path(path_of(container, key) or ()) or str(key)
        why = "is disabled in the config" if configured else \
            f"is {state.stage} since {state.since} and off by default"
        return (f"{where} is dropped by the API server of Kubernetes {ctx.kube_version}: feature gate {gated.gate} "
                f"{why}, so {gated.effect}")

    @staticmethod
    def _help(gate: str) -> str:
        on_by_default = on_by_default_since(gate)
        later = f", or target Kubernetes {on_by_default} or later, where it is on by default" if on_by_default else ""
        return (f"enable {gate} on the API server, scheduler, controller manager and kubelets and tell draguard "
                f"(featureGates in .draguard.yaml, or --feature-gates {gate}=true){later}")
