"""Built-in data shipped with draguard: driver DeviceClasses and the resource.k8s.io lifecycle."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import yaml

DATA = Path(__file__).parent / "data"

#: Drivers whose devices are GPUs (or GPU partitions); their requests must pin a slice.
GPU_DRIVERS = frozenset({"gpu.nvidia.com", "gpu.intel.com", "gpu.amd.com", "gpu.example.com"})


def _load(name: str) -> dict:
    with open(DATA / name, encoding="utf-8") as handle:
        return yaml.load(handle, Loader=yaml.CSafeLoader)


@lru_cache(maxsize=None)
def device_classes() -> dict[str, dict]:
    """Built-in DeviceClasses by name."""
    return {entry["name"]: entry for entry in _load("deviceclasses.yaml")["deviceClasses"]}


def _minor(version: str) -> int:
    return int(str(version).split(".")[1])


@lru_cache(maxsize=None)
def resource_api_lifecycle() -> dict[tuple[str, str], dict]:
    """(version, kind) -> lifecycle entry with minors as ints: introduced, deprecated,
    removed (None when not set), default (enabled by default), replacement."""
    table = {}
    for entry in _load("resource-api-lifecycle.yaml")["kinds"]:
        for kind in entry["kinds"]:
            table[(entry["version"], kind)] = {
                "introduced": _minor(entry["introduced"]),
                "deprecated": _minor(entry["deprecated"]) if "deprecated" in entry else None,
                "removed": _minor(entry["removed"]) if "removed" in entry else None,
                "default": entry["default"],
                "replacement": entry.get("replacement"),
            }
    return table
