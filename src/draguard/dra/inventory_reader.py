"""Objects a command reads as facts rather than lints (an `--inventory`, `allocate`'s claims,
the manifests a simulation runs, a dump): any problem reading them stops the run with
file:line:column (exit status 2), because a half-read inventory would make every verdict
about it false. Facts are checked against their schema (types, not unknown fields): the API
server never stores an object that fails it, and the models read fields as it types them.

A JSON List (what `draguard inventory generate -o FILE.json` writes, or `kubectl get -o
json`) is read with the C JSON parser, without positions: a large cluster's inventory runs to
hundreds of megabytes, which the positioned YAML parser reads at about 0.5 MB/s. Where such
a read meets a problem, the files are read again with positions, so that the error still
says file:line:column."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from typing import Callable, TypeVar

from ..core.collector import cyclic_gc_paused
from ..core.errors import InputError
from .inventory import Inventory, InventoryError
from ..facts.schemas import schema_errors
from ..model.manifest import Manifest
from ..sources.discover import expand
from ..sources.loader import JUDGED_IN_BUILD, load_units
from ..sources.yamlpos import DEFAULT_LIMITS

T = TypeVar("T")
#: an inventory is one cluster's devices: far larger than a manifest file may be (a dump's bound)
JSON_MAX_BYTES = 2 * 1024**3


def load_manifests(paths: list[str], what: str, kube_version: str | None = None) -> list[Manifest]:
    """The objects in `paths`; with `kube_version`, each checked as facts of that release."""
    return _fast_else_positioned(paths, what, kube_version, lambda manifests: manifests)


def _fast_else_positioned(paths: list[str], what: str, kube_version: str | None,
                          then: Callable[[list[Manifest]], T]) -> T:
    """`then` of the objects in `paths`, read as JSON Lists when every path is one, else (or
    when that read or `then` meets a problem) read with positions, which say where."""
    fast = _json_lists(paths)
    if fast is not None:
        try:
            if kube_version is not None:
                refuse_invalid(fast, kube_version, what)
            return then(fast)
        except InputError:
            if any(os.path.getsize(u.path) > DEFAULT_LIMITS.max_file_bytes for u in expand(paths)):
                raise  # said without its line: the positioned parser refuses a file this large
            # else said again below, with its line and column
    return then(_positioned(paths, what, kube_version))


def _json_lists(paths: list[str]) -> list[Manifest] | None:
    """The items of `paths` when each is a file named *.json holding a List of objects (or
    one object), read with the C JSON parser; None when one is not."""
    units = expand(paths)
    if not units or any(u.kind != "file" or not u.path.endswith(".json") for u in units):
        return None
    manifests: list[Manifest] = []
    for unit in units:
        try:
            if os.path.getsize(unit.path) > JSON_MAX_BYTES:
                return None
            with open(unit.path, encoding="utf-8-sig") as handle:
                data = json.load(handle)
        except (OSError, UnicodeDecodeError, ValueError, RecursionError):
            return None
        items = data.get("items") if isinstance(data, dict) and data.get("kind") == "List" else [data]
        if not isinstance(items, list) or not all(isinstance(i, dict) and "kind" in i for i in items):
            return None
        manifests += [Manifest.from_data(item, display=unit.display, document=i, positions=False)
                      for i, item in enumerate(items)]
    return manifests


def _positioned(paths: list[str], what: str, kube_version: str | None) -> list[Manifest]:
    units = expand(paths)
    loaded = load_units(units)
    if loaded.problems:
        problem = loaded.problems[0]
        where = problem.location
        position = f":{where.line}:{where.column}" if where.line else ""
        more = f" (and {len(loaded.problems) - 1} more)" if len(loaded.problems) > 1 else ""
        message = problem.message
        if problem.rule == JUDGED_IN_BUILD:  # lint judges the build in its place; facts are whole objects
            message = _partial(where.file, units) or message
        raise InputError(f"{what} {where.file}{position}: {message}{more}")
    manifests = [Manifest.from_entry(entry) for entry in loaded.entries]
    if kube_version is not None:
        refuse_invalid(manifests, kube_version, what)
    return manifests


def _partial(file: str, units) -> str | None:
    """What to give instead of a file that is part of a chart or kustomization (no whole
    object alone)."""
    unit = next((u for u in units if file in u.through
                 or u.kind == "component" and os.path.dirname(file) == u.display.rstrip("/")), None)
    if unit is None:
        return None
    if unit.kind == "component":
        return f"part of the kustomize Component in {unit.display}, no object alone: give an overlay that includes it"
    what, done = ("Helm chart", "rendered") if unit.kind == "helm" else ("kustomization", "built")
    return f"part of the {what} in {unit.display}, no object alone: give that folder instead, which is {done}"


def refuse_invalid(manifests: list[Manifest], kube_version: str, what: str) -> None:
    """InputError at the first object whose fields are not of the types Kubernetes
    `kube_version` gives them (an edited dump, a hand-written inventory)."""
    for m in manifests:
        error = next(schema_errors(m.data, kube_version, m.api_version, m.kind, strict=False), None)
        if error is not None:
            where = m.location(*m.place(error.path), value=error.value)
            position = f":{where.line}:{where.column}" if where.line else ""
            raise InputError(f"{what} {where.file}{position}: {m.kind} '{m.name}' is not valid on Kubernetes "
                             f"{kube_version} (the API server refuses it): {error.message}")


def load_inventory(paths: list[str], kube_version: str, extra: Sequence[Manifest] = ()) -> Inventory:
    """The inventory in `paths`, checked as facts of `kube_version`, with `extra` objects (the
    linted set's DeviceClasses) added after it, so that they win over the inventory's
    classes of the same name."""
    def built(read: list[Manifest]) -> Inventory:
        manifests = _once(read)
        if not any(m.kind == "ResourceSlice" for m in manifests):
            raise InputError(f"inventory {', '.join(paths)}: no ResourceSlice found (generate one with "
                             "`draguard inventory generate`)")
        try:
            return Inventory.from_manifests(manifests + list(extra))
        except InventoryError as exc:
            raise InputError(f"inventory {exc}") from None

    with cyclic_gc_paused():  # a large cluster's slices are millions of tree-shaped objects (core.collector)
        return _fast_else_positioned(paths, "inventory", kube_version, built)


def _once(manifests: list[Manifest]) -> list[Manifest]:
    """Each object once: a cluster holds one object per kind, namespace and name. The same
    object read twice (one file passed twice, a class in two generated inventories) counts
    once; two different objects of one name stop the run (counted both, a pool's slices
    would be too many for its resourceSliceCount, and every claim would get a wrong answer)."""
    seen: dict[tuple, Manifest] = {}
    kept = []
    for m in manifests:
        key = (m.group, m.kind, m.namespace, m.name)
        first = seen.setdefault(key, m)
        if first is m:
            kept.append(m)
        elif first.data != m.data:
            at, again = first.location(), m.location()
            raise InputError(f"inventory {again.file}:{again.line}:{again.column}: {m.kind} {m.name!r} is defined "
                             f"again, differently ({at.file}:{at.line}:{at.column}); a cluster holds one object "
                             "of a name")
    return kept
