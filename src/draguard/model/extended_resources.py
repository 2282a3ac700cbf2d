"""Which DeviceClass serves an extended resource name through DRA (KEP-5004), as
k8s.io/dynamic-resource-allocation v0.37.2 deviceclass/extendedresourcecache resolves it: a
class's `extendedResourceName` (when two classes name one resource the newer class wins, the
lower name breaking a tie), and the implicit `deviceclass.resource.kubernetes.io/<class>` of
every class."""

from __future__ import annotations

from ..core.value import Value

IMPLICIT_PREFIX = "deviceclass.resource.kubernetes.io/"


class ClassRef(Value):
    """What the resolver reads of a DeviceClass."""

    __slots__ = ("name", "extended_resource_name", "created")

    def __init__(self, name: str, extended_resource_name: str | None = None, created: str = ""):
        self.name = name
        self.extended_resource_name = extended_resource_name
        self.created = created  # metadata.creationTimestamp (RFC 3339; manifests have none)


def resolver(classes: list[ClassRef]) -> dict[str, str]:
    """resource name -> the DeviceClass that serves it."""
    explicit: dict[str, ClassRef] = {}
    for ref in classes:
        name = ref.extended_resource_name
        if not name:
            continue
        held = explicit.get(name)
        if held is None or ref.created > held.created or (ref.created == held.created and ref.name < held.name):
            explicit[name] = ref
    mapped = {resource: ref.name for resource, ref in explicit.items()}
    mapped.update({IMPLICIT_PREFIX + ref.name: ref.name for ref in classes})
    return mapped
