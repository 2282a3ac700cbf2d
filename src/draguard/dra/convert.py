"""resource.k8s.io objects of v1beta1 and v1beta2 moved to v1, as edits at paths: the shape
changes upstream's conversion makes (k8s.io/kubernetes pkg/apis/resource/v1beta1
conversion.go). A v1beta1 request's device fields go under `exactly` (a request with
`firstAvailable` keeps its subrequests as they are: their shape did not change), and a
v1beta1 slice device's `basic` fields move up onto the device. v1beta2 already has v1's
shapes, so only the apiVersion changes."""

from __future__ import annotations

from ..core.fixes import Edit, plain, remove, set_value
from ..model.claims import claim_spec
from ..model.manifest import Manifest, edit_path
from ..model.pods import mapping, mappings

CONVERTIBLE = frozenset({"ResourceClaim", "ResourceClaimTemplate", "DeviceClass", "ResourceSlice"})


def to_v1(obj: Manifest) -> tuple[Edit, ...] | None:
    """The edits that make `obj` a resource.k8s.io/v1 object of the same meaning; None for
    kinds and versions this does not convert."""
    version = obj.api_version.rsplit("/", 1)[-1]
    if obj.group != "resource.k8s.io" or obj.kind not in CONVERTIBLE or version not in ("v1beta1", "v1beta2"):
        return None
    edits = [set_value(("apiVersion",), "resource.k8s.io/v1")]
    if version == "v1beta1":
        if obj.kind in ("ResourceClaim", "ResourceClaimTemplate"):
            edits += _requests(claim_spec(obj))
        elif obj.kind == "ResourceSlice":
            edits += _devices(obj.spec)
    return tuple(edits)


def _requests(spec: dict) -> list[Edit]:
    edits = []
    for request in mappings(mapping(spec.get("devices")).get("requests")):
        moved = {key: plain(value) for key, value in request.items() if key not in ("name", "firstAvailable")}
        if not moved or "firstAvailable" in request:
            continue
        base = edit_path(request)
        edits.append(set_value(base + ("exactly",), moved))
        edits += [remove(base + (key,)) for key in moved]
    return edits


def _devices(spec: dict) -> list[Edit]:
    edits = []
    for device in mappings(spec.get("devices")):
        basic = device.get("basic")
        if not isinstance(basic, dict):
            continue
        base = edit_path(device)
        edits += [set_value(base + (key,), plain(value)) for key, value in basic.items()]
        edits.append(remove(base + ("basic",)))
    return edits
