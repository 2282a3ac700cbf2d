"""One view of device requests across resource.k8s.io versions.

v1beta1 puts deviceClassName/selectors/allocationMode/count/adminAccess on the request itself;
v1beta2 and v1 put them under `exactly`, or list alternatives under `firstAvailable`
(subrequests, which v1beta1 also accepts since 1.33). Rules see a flat list of
`DeviceRequest`s whatever the version, each knowing the mapping it came from (for positions)."""

from __future__ import annotations

from dataclasses import dataclass, field

from .manifest import Manifest

CLAIM_KINDS = frozenset({"ResourceClaim", "ResourceClaimTemplate"})
RESOURCE_GROUP = "resource.k8s.io"


@dataclass
class DeviceRequest:
    """A request (or a firstAvailable subrequest) with its fields, version-independent."""

    manifest: Manifest
    name: str  # 'gpu', or 'gpu/large' for a subrequest
    fields: dict  # the mapping that holds deviceClassName, selectors, ... (for positions)
    request: dict  # the top-level request mapping (holds `name`)
    shape: str  # 'flat' (v1beta1), 'exactly', 'subrequest' or 'empty' (neither exactly nor firstAvailable)

    @property
    def device_class(self):
        value = self.fields.get("deviceClassName")
        return value if isinstance(value, str) and value else None

    @property
    def selectors(self) -> list[dict]:
        value = self.fields.get("selectors")
        return [s for s in value if isinstance(s, dict)] if isinstance(value, list) else []

    def cel_expressions(self) -> list[tuple[dict, str]]:
        """(the `cel` mapping, its expression) for every CEL selector."""
        out = []
        for selector in self.selectors:
            cel = selector.get("cel")
            if isinstance(cel, dict) and isinstance(cel.get("expression"), str):
                out.append((cel, cel["expression"]))
        return out

    @property
    def allocation_mode(self):
        return self.fields.get("allocationMode")

    @property
    def admin_access(self) -> bool:
        return self.fields.get("adminAccess") is True


def claim_spec(manifest: Manifest) -> dict:
    """The ResourceClaimSpec of a ResourceClaim or ResourceClaimTemplate ({} otherwise)."""
    if manifest.group != RESOURCE_GROUP or manifest.kind not in CLAIM_KINDS:
        return {}
    spec = manifest.data.get("spec")
    if manifest.kind == "ResourceClaimTemplate" and isinstance(spec, dict):
        spec = spec.get("spec")
    return spec if isinstance(spec, dict) else {}


def raw_requests(manifest: Manifest) -> list[dict]:
    devices = claim_spec(manifest).get("devices")
    requests = devices.get("requests") if isinstance(devices, dict) else None
    return [r for r in requests if isinstance(r, dict)] if isinstance(requests, list) else []


def device_requests(manifest: Manifest) -> list[DeviceRequest]:
    """Every request and subrequest of a claim or claim template; computed once."""
    return manifest.derive("device_requests", _find_device_requests)


def _find_device_requests(manifest: Manifest) -> list[DeviceRequest]:
    out = []
    for request in raw_requests(manifest):
        name = request.get("name") if isinstance(request.get("name"), str) else ""
        exactly = request.get("exactly")
        alternatives = request.get("firstAvailable")
        if isinstance(exactly, dict):
            out.append(DeviceRequest(manifest, name, exactly, request, "exactly"))
        elif isinstance(alternatives, list):
            for sub in alternatives:
                if isinstance(sub, dict):
                    sub_name = sub.get("name") if isinstance(sub.get("name"), str) else ""
                    out.append(DeviceRequest(manifest, f"{name}/{sub_name}", sub, request, "subrequest"))
        elif manifest.api_version.endswith(("/v1beta1", "/v1alpha3")):
            out.append(DeviceRequest(manifest, name, request, request, "flat"))
        else:
            out.append(DeviceRequest(manifest, name, request, request, "empty"))
    return out


def request_names(manifest: Manifest) -> set[str]:
    """Names a container may use in `resources.claims[].request`: requests and subrequests."""
    names = set()
    for request in raw_requests(manifest):
        name = request.get("name")
        if isinstance(name, str):
            names.add(name)
            for sub in request.get("firstAvailable") or []:
                if isinstance(sub, dict) and isinstance(sub.get("name"), str):
                    names.add(f"{name}/{sub['name']}")
    return names


@dataclass
class ClaimIndex:
    """Which claims and claim templates the linted set defines, by (namespace, name).
    NVIDIA ComputeDomains count as defining the template they create."""

    claims: dict = field(default_factory=dict)
    templates: dict = field(default_factory=dict)

    @classmethod
    def build(cls, objects) -> "ClaimIndex":
        index = cls()
        for m in objects:
            if m.group == RESOURCE_GROUP and m.kind == "ResourceClaim":
                index.claims.setdefault((m.namespace, m.name), m)
            elif m.group == RESOURCE_GROUP and m.kind == "ResourceClaimTemplate":
                index.templates.setdefault((m.namespace, m.name), m)
            elif m.kind == "ComputeDomain":
                channel = (m.data.get("spec") or {}).get("channel") if isinstance(m.data.get("spec"), dict) else None
                template = channel.get("resourceClaimTemplate") if isinstance(channel, dict) else None
                if isinstance(template, dict) and isinstance(template.get("name"), str):
                    index.templates.setdefault((m.namespace, template["name"]), m)
        return index

    @staticmethod
    def _lookup(table: dict, namespace: str, name: str):
        """Same namespace; an object without a namespace matches any (it is applied with -n)."""
        found = table.get((namespace, name))
        if found is not None:
            return found
        for (ns, n), m in table.items():
            if n == name and (not ns or not namespace):
                return m
        return None

    def claim(self, namespace: str, name: str):
        return self._lookup(self.claims, namespace, name)

    def template(self, namespace: str, name: str):
        return self._lookup(self.templates, namespace, name)
