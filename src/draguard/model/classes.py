"""DeviceClasses as requests see them: defined in the object set, or installed by a driver
(the built-in catalog)."""

from __future__ import annotations

import re

from ..facts.catalog import device_classes, gpu_drivers
from .objectset import ObjectSet
from .pods import mapping, mappings


def class_selectors(objects: ObjectSet, name: str | None) -> list[str] | None:
    """The CEL expressions of DeviceClass `name` (the set's definition wins over a built-in
    one); None when neither defines it."""
    if not name:
        return None
    in_set = objects.device_classes.get(name)
    if in_set is not None:
        return [expression for s in mappings(in_set.spec.get("selectors"))
                if isinstance(expression := mapping(s.get("cel")).get("expression"), str)]
    built_in = device_classes().get(name)
    return [built_in["selector"]] if built_in else None


_DRIVER = re.compile(r"""device\.driver\s*==\s*(?:'([^']*)'|"([^"]*)")""")


def class_drivers(selectors: list[str]) -> set[str]:
    """Drivers a class pins with `device.driver == '...'` (empty: not pinned)."""
    return {m.group(1) if m.group(1) is not None else m.group(2) for e in selectors for m in _DRIVER.finditer(e)}


def is_known_class(objects: ObjectSet, name: str | None) -> bool:
    return class_selectors(objects, name) is not None


def is_gpu_class(objects: ObjectSet, name: str | None) -> bool:
    """True when DeviceClass `name` pins a GPU driver (class_drivers: the one reading of which
    drivers a class selects; a selector that merely names one, `device.driver != '...'` or an
    attribute's domain, pins nothing)."""
    selectors = class_selectors(objects, name)
    return selectors is not None and not class_drivers(selectors).isdisjoint(gpu_drivers())
