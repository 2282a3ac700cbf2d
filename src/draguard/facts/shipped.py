"""Loaders for the YAML facts under `data/`, each read once into the per-user cache
(core.usercache) as JSON: building the data from YAML cost a one-file lint more than reading
it back (gpus.yaml alone: 5 ms against 0.1 ms)."""

from __future__ import annotations

import os
from functools import lru_cache

from ..core.usercache import cached_json, source_stamp
from ..core.versions import minor

#: the folder of the shipped data (a string: see core.usercache on pathlib)
DATA = os.path.join(os.path.dirname(__file__), "data")

NVIDIA_DRIVER = "gpu.nvidia.com"


def _load(name: str) -> dict:
    path = os.path.join(DATA, name)
    return cached_json("facts", source_stamp(path), lambda: _read(path))


def _read(path: str) -> dict:
    import yaml  # only when the cache misses: a warm start does without PyYAML (sources.libyaml)

    with open(path, encoding="utf-8") as handle:
        return yaml.load(handle, Loader=yaml.CSafeLoader)


@lru_cache(maxsize=None)
def device_classes() -> dict[str, dict]:
    """Built-in DeviceClasses by name."""
    return {entry["name"]: entry for entry in _load("deviceclasses.yaml")["deviceClasses"]}


@lru_cache(maxsize=None)
def gpu_drivers() -> frozenset:
    """Drivers whose devices are GPUs (or partitions of them) or AI accelerators: the devices
    the tenant rules are about (classes of kind gpu or accelerator)."""
    return frozenset(c["driver"] for c in device_classes().values() if c["kind"] in ("gpu", "accelerator"))


@lru_cache(maxsize=None)
def slice_pins() -> dict[str, dict]:
    """driver -> {pins: attribute or capacity names that pin a slice, slices: what a slice is}."""
    return _load("deviceclasses.yaml")["drivers"]


@lru_cache(maxsize=None)
def sharing_knobs() -> dict[str, list]:
    """Fractional GPU sharing outside DRA: resource name and annotation patterns with what they are."""
    return _load("sharing.yaml")


@lru_cache(maxsize=None)
def resource_api_lifecycle() -> dict[tuple[str, str], dict]:
    """(version, kind) -> lifecycle entry with minors as ints: introduced, deprecated,
    removed (None when not set), default (enabled by default), replacement."""
    table = {}
    for entry in _load("resource-api-lifecycle.yaml")["kinds"]:
        for kind in entry["kinds"]:
            table[(entry["version"], kind)] = {
                "introduced": minor(entry["introduced"]),
                "deprecated": minor(entry["deprecated"]) if "deprecated" in entry else None,
                "removed": minor(entry["removed"]) if "removed" in entry else None,
                "default": entry["default"],
                "replacement": entry.get("replacement"),
            }
    return table


_STRUCTURED_VERSIONS = ("v1", "v1beta2", "v1beta1")  # newest first; v1beta1 keeps request fields flat


def structured_claim_version(kube_version: str) -> str | None:
    """The newest resource.k8s.io version the target serves for claims and claim templates
    (None before structured parameters)."""
    target, table = minor(kube_version), resource_api_lifecycle()
    for version in _STRUCTURED_VERSIONS:
        life = table.get((version, "ResourceClaim"))
        if life and life["introduced"] <= target and (life["removed"] is None or target < life["removed"]):
            return version
    return None


@lru_cache(maxsize=None)
def gpu_models() -> dict:
    """GPU models with their MIG profiles, instance limits and placements."""
    return _load("gpus.yaml")["models"]


@lru_cache(maxsize=None)
def driver_attributes() -> dict:
    """Attributes and capacities each driver version publishes, per device type."""
    return _load("driver-attributes.yaml")["drivers"]


def _release(version: str) -> tuple[int, ...]:
    return tuple(int(x) for x in version.split("."))


def latest_driver_version(driver: str = NVIDIA_DRIVER) -> str:
    versions = driver_attributes()[driver]["versions"]
    return max(versions, key=_release)


def attributes_version(version: str, driver: str = NVIDIA_DRIVER) -> str:
    """The version of `driver` whose attribute list `version` publishes: the data lists the
    releases where the list changed, so a release between two (25.9) publishes the earlier
    one's (25.8), and a patch release (25.8.1) its minor's. ValueError for a version that is
    not MAJOR.MINOR[.PATCH], or that is older than the first list known."""
    text = str(version).strip()
    parts = text.split(".")
    if not 2 <= len(parts) <= 3 or not all(p.isascii() and p.isdigit() for p in parts):
        raise ValueError(f"{version!r} is not a driver version (MAJOR.MINOR, e.g. {latest_driver_version(driver)!r})")
    known = sorted(driver_attributes()[driver]["versions"], key=_release)
    at_or_before = [v for v in known if _release(v) <= _release(".".join(parts[:2]))]
    if not at_or_before:
        raise ValueError(f"no attribute list is known for {driver} {text}: the oldest is {known[0]} "
                         f"(known: {', '.join(known)})")
    return at_or_before[-1]
