"""A resource.k8s.io object written again in another served version, as upstream's conversion
moves its fields (k8s.io/kubernetes pkg/apis/resource/v1beta1/conversion.go): v1beta1 keeps a
request's device fields on the request itself and a slice device's fields under `basic`;
v1beta2 and v1 have a request's under `exactly` and a device's on the device. Requests with
`firstAvailable` keep their subrequests in every version. For the API server judge: each
object is judged in every version the server serves."""

from __future__ import annotations

import copy

FLAT = ("v1beta1",)  # request fields flat, device fields under `basic`
NESTED = ("v1beta2", "v1")
SERVED = FLAT + NESTED
CONVERTIBLE = ("ResourceClaim", "ResourceClaimTemplate", "DeviceClass", "ResourceSlice")


def in_version(obj: dict, version: str) -> dict | None:
    """`obj` as a resource.k8s.io/`version` object; None when it is not a convertible kind or
    version, or is already in that version."""
    group, _, written = str(obj.get("apiVersion", "")).partition("/")
    if group != "resource.k8s.io" or obj.get("kind") not in CONVERTIBLE or written not in SERVED \
            or written == version:
        return None
    out = copy.deepcopy(obj)
    out["apiVersion"] = f"resource.k8s.io/{version}"
    if (written in FLAT) == (version in FLAT):
        return out
    to_flat = version in FLAT
    if obj["kind"] == "ResourceSlice":
        for device in _items(_mapping(out.get("spec")).get("devices")):
            _move_device(device, to_flat)
    elif obj["kind"] in ("ResourceClaim", "ResourceClaimTemplate"):
        spec = _mapping(out.get("spec"))
        if obj["kind"] == "ResourceClaimTemplate":
            spec = _mapping(spec.get("spec"))
        for request in _items(_mapping(spec.get("devices")).get("requests")):
            _move_request(request, to_flat)
    return out


def _move_request(request: dict, to_flat: bool) -> None:
    if "firstAvailable" in request:
        return
    if to_flat:
        request.update(_mapping(request.pop("exactly", None)))
    else:
        moved = {key: request.pop(key) for key in [k for k in request if k != "name"]}
        if moved:
            request["exactly"] = moved


def _move_device(device: dict, to_flat: bool) -> None:
    if to_flat:
        moved = {key: device.pop(key) for key in [k for k in device if k != "name"]}
        if moved:
            device["basic"] = moved
    else:
        device.update(_mapping(device.pop("basic", None)))


def _mapping(value) -> dict:
    return value if isinstance(value, dict) else {}


def _items(value) -> list:
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []
