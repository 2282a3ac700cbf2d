"""Objects a command reads as facts rather than lints (an `--inventory`, `allocate`'s claims):
any problem reading them stops the run with file:line:column (exit status 2), because a
half-read inventory would make every verdict about it false."""

from __future__ import annotations

from ..core.errors import InputError
from ..dra.inventory import Inventory, InventoryError
from ..model.manifest import Manifest
from ..sources.discover import expand
from ..sources.loader import load_units


def load_manifests(paths: list[str], what: str) -> list[Manifest]:
    loaded = load_units(expand(paths))
    if loaded.problems:
        problem = loaded.problems[0]
        where = problem.location
        position = f":{where.line}:{where.column}" if where.line else ""
        more = f" (and {len(loaded.problems) - 1} more)" if len(loaded.problems) > 1 else ""
        raise InputError(f"{what} {where.file}{position}: {problem.message}{more}")
    return [Manifest.from_entry(entry) for entry in loaded.entries]


def load_inventory(paths: list[str], extra: list[Manifest] = ()) -> Inventory:
    """The inventory in `paths`, with `extra` objects (the linted set's DeviceClasses) added
    after it, so that they win over the inventory's classes of the same name."""
    manifests = load_manifests(paths, "inventory")
    if not any(m.kind == "ResourceSlice" for m in manifests):
        raise InputError(f"inventory {', '.join(paths)}: no ResourceSlice found (generate one with "
                         "`draguard inventory generate`)")
    try:
        return Inventory.from_manifests(manifests + list(extra))
    except InventoryError as exc:
        raise InputError(f"inventory {exc}") from None
