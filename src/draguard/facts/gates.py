"""The feature gates draguard reads (DRA's, and MaxUnavailableStatefulSet) by release, and the
fields the API server drops while one is off (`data/feature-gates.yaml`, read off kubernetes
v1.37.2)."""

from __future__ import annotations

from functools import lru_cache

from ..core.versions import minor
from .shipped import _load
from ..core.value import Value


class GateState(Value):
    """A feature gate's stage and default in one release range."""

    __slots__ = ("stage", "default", "since")

    def __init__(self, stage: str, default: bool, since: str):
        self.stage = stage  # alpha, beta, GA
        self.default = default
        self.since = since  # the release this stage began


class GatedField(Value):
    """A field the API server drops while its gate is off, and what dropping it does."""

    __slots__ = ("path", "gate", "effect")

    def __init__(self, path: tuple, gate: str, effect: str):
        self.path = path  # steps below the spec: names, "[]" (each item), "*" (each map value)
        self.gate = gate
        self.effect = effect  # what dropping the field does to the object


@lru_cache(maxsize=None)
def _data() -> dict:
    return _load("feature-gates.yaml")


def known_gates() -> frozenset:
    return frozenset(_data()["gates"])


@lru_cache(maxsize=None)
def gate_state(gate: str, kube_version: str) -> GateState | None:
    """The gate's stage and default in `kube_version`; None before the gate existed."""
    state = None
    for entry in _data()["gates"][gate]:
        if minor(entry["since"]) <= minor(kube_version):
            state = GateState(entry["stage"], entry["default"], entry["since"])
    return state


def gate_enabled(gate: str, kube_version: str, overrides: dict) -> bool:
    """A gate as set on the components (`overrides`), else its default in that release (off
    before it existed)."""
    if gate in overrides:
        return overrides[gate]
    state = gate_state(gate, kube_version)
    return bool(state and state.default)


def on_by_default_since(gate: str) -> str | None:
    """The first release whose default turns the gate on, as far as draguard knows."""
    return next((entry["since"] for entry in _data()["gates"][gate] if entry["default"]), None)


@lru_cache(maxsize=None)
def gated_fields(owner: str) -> tuple:
    """Fields of a claim spec ('claim'), a ResourceSlice spec ('slice') or a DeviceClass spec
    ('class') that a gate carries."""
    return tuple(GatedField(tuple(_steps(entry["path"])), entry["gate"], entry["effect"])
                 for entry in _data()["fields"][owner])


def _steps(path: str):
    for part in path.split("."):
        if part.endswith("[]"):
            yield part[:-2]
            yield "[]"
        else:
            yield part


def parse_gates(text: str) -> dict[str, bool]:
    """`A=true,B=false` (the components' --feature-gates syntax) -> {A: True, B: False};
    ValueError naming the entry for an unknown gate or a value other than true/false."""
    gates = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        name, _, value = item.partition("=")
        if name not in known_gates():
            raise ValueError(f"unknown feature gate {name!r} (known: {', '.join(sorted(known_gates()))})")
        if value.lower() not in ("true", "false"):
            raise ValueError(f"feature gate {name} must be =true or =false, not {item!r}")
        gates[name] = value.lower() == "true"
    return gates
