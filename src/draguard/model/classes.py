"""DeviceClasses as requests see them: defined in the object set, or installed by a driver
(the built-in DeviceClasses, facts/data/deviceclasses.yaml)."""

from __future__ import annotations

from ..facts.shipped import device_classes
from .manifest import Manifest
from .objectset import ObjectSet
from .pods import items, mapping, mappings


def allocated_selectors(manifest: Manifest) -> list[str]:
    """A DeviceClass's selectors as the allocator reads them (dra.devices.device_class_from):
    every mapping's CEL expression as text, '' where it has none (a selector the allocator
    cannot compile, which keeps no device)."""
    spec = mapping(manifest.data.get("spec"))
    return [str(mapping(s.get("cel")).get("expression", "")) for s in items(spec.get("selectors"))
            if isinstance(s, dict)]


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


def is_known_class(objects: ObjectSet, name: str | None) -> bool:
    return class_selectors(objects, name) is not None
