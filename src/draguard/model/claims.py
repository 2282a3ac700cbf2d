"""The one parser of device requests, whatever the resource.k8s.io version.

v1alpha3/v1beta1 put deviceClassName/selectors/allocationMode/count/adminAccess on the request
itself; v1beta2 and v1 put them under `exactly`, or list alternatives under `firstAvailable`
(subrequests, which v1beta1 also accepts since 1.33). As upstream's allocator does
(structured/internal/stable allocator_stable.go: `hasSubRequests := len(request.FirstAvailable) > 0`),
a non-empty `firstAvailable` wins over everything else. API defaults are applied here
(allocationMode ExactCount, count 1), so the allocator and the rules read one shape; each
request keeps the mappings it came from, so rules can point at its fields."""

from __future__ import annotations

import math
from typing import Iterable, Protocol

from ..core.unread import shown, unreadable
from .manifest import Manifest
from .pods import mapping, mappings, text
from .values import Yaml, YamlMap
from ..core.value import Record, Value

RESOURCE_GROUP = "resource.k8s.io"
CLAIM_TARGETS = frozenset({(RESOURCE_GROUP, "ResourceClaim"), (RESOURCE_GROUP, "ResourceClaimTemplate")})
DEVICE_CLASS_TARGETS = frozenset({(RESOURCE_GROUP, "DeviceClass")})
_FLAT_VERSIONS = ("v1alpha3", "v1beta1")  # request fields on the request itself
#: Where a request's device-selecting fields are, first match wins, as upstream's allocator
#: reads them (structured/internal/stable allocator_stable.go: `hasSubRequests :=
#: len(request.FirstAvailable) > 0`): a non-empty `firstAvailable` list (its subrequests),
#: then an `exactly` mapping (present, even empty); else the request itself (v1alpha3/v1beta1's flat fields). The
#: one answer to "which request does a claim make": parse_request reads it, and the admission
#: policies' CEL is generated from it (admission.variables.request_fields).
REQUEST_SHAPES = (("firstAvailable", list), ("exactly", dict))


class TaintLike(Protocol):
    """What a toleration is matched against: a device's or a node's taint (dra.devices.Taint,
    which lives above this layer)."""

    @property
    def key(self) -> str: ...
    @property
    def value(self) -> str: ...
    @property
    def effect(self) -> str: ...


class LookupRecorder(Protocol):
    """Records one lookup of a cross-object index: (kind, namespace, name; None: all of that
    kind there), as model.objectset.ObjectSet.read does."""

    def __call__(self, kind: str, namespace: str, name: str | None = None, /) -> None: ...


class Toleration(Value):
    """A device toleration as the allocator matches it against a device taint."""

    __slots__ = ("key", "operator", "value", "effect")

    def __init__(self, key: str = "", operator: str = "Equal", value: str = "", effect: str = ""):
        self.key = key
        self.operator = operator
        self.value = value
        self.effect = effect

    def tolerates(self, taint: TaintLike) -> bool:
        if self.effect and self.effect != taint.effect:
            return False
        if self.key and self.key != taint.key:
            return False
        if self.operator in ("", "Equal"):
            return self.value == taint.value
        return self.operator == "Exists"


def tolerations(raw: Yaml) -> tuple[Toleration, ...]:
    return tuple(Toleration(str(t.get("key", "")), str(t.get("operator", "Equal")), str(t.get("value", "")),
                            str(t.get("effect", ""))) for t in mappings(raw))


class DeviceRequest(Record):
    """A request, or one `firstAvailable` subrequest, with the API defaults applied.

    shape: 'flat' (v1alpha3/v1beta1), 'exactly', 'first-available' (holds `subrequests`),
    'subrequest', or 'empty' (v1beta2/v1 with neither `exactly` nor `firstAvailable`).
    Made with its name, shape and mappings; the parser sets the rest. Compared by identity."""

    __slots__ = ("name", "shape", "fields", "request", "parent", "class_name", "selector_sites", "mode",
                 "written_count", "admin_access", "tolerations", "written_capacity", "derived_attributes",
                 "subrequests", "owner")
    _unshown = ("owner",)
    __eq__ = object.__eq__
    __hash__ = object.__hash__

    def __init__(self, name: str, shape: str, fields: YamlMap, request: YamlMap, parent: str | None = None):
        self.name = name
        self.shape = shape
        self.fields = fields  # the mapping holding deviceClassName, selectors, ... (for positions)
        self.request = request  # the top-level request mapping (holds `name`)
        self.parent = parent  # the request's name, for a subrequest
        self.class_name: str | None = None
        self.selector_sites: tuple[tuple[YamlMap, str], ...] = ()  # ((the `cel` mapping, its expression), ...)
        self.mode = "ExactCount"
        self.written_count: Yaml = 1  # as written (count reads it)
        self.admin_access: bool | None = None
        self.tolerations: tuple[Toleration, ...] = ()
        self.written_capacity: YamlMap = {}  # capacity.requests (consumable capacity, KEP-5075)
        self.derived_attributes: tuple[Yaml, ...] = ()  # derivedAttributes (DRADerivedAttributes): the raw entries
        self.subrequests: list[DeviceRequest] | None = None
        self.owner: Manifest | None = None  # the claim (template) it is in

    @property
    def count(self) -> int:
        """How many devices it asks for; the API server defaults 0 (Go's zero value: not set)
        to 1 (SetDefaults_ExactDeviceRequest). A value that is no int64 (`.nan`, 1e400, a
        map) is said unreadable (core.unread) to the rule reading it, which cannot judge by
        one device; the rules that do not read the count still judge the request."""
        value = self.written_count
        if isinstance(value, int) and not isinstance(value, bool) and -(2**63) <= value < 2**63:
            return value or 1
        unreadable(self.fields, "count", f"is {shown(value)}, not a number of devices", self.owner)
        return 1

    @property
    def capacity_requests(self) -> YamlMap:
        """capacity.requests without the values no quantity can be read from (a map, a list,
        a boolean, null, `.nan`, an infinity or 1e400), each said unreadable at its place to
        the rule reading them; a string that is no quantity is left to the API validation,
        which names it."""
        kept = {}
        for name, value in self.written_capacity.items():
            if isinstance(value, str) or isinstance(value, (int, float)) and not isinstance(value, bool) \
                    and math.isfinite(value):
                kept[name] = value
            else:
                unreadable(self.written_capacity, name, f"is {shown(value)}, not a quantity", self.owner)
        return kept

    @property
    def full_name(self) -> str:
        """'gpu', or 'gpu/large' for a subrequest: how containers and constraints name it."""
        return f"{self.parent}/{self.name}" if self.parent is not None else self.name

    @property
    def selectors(self) -> tuple[str, ...]:
        """Every selector's CEL expression ('' for a selector type draguard does not know)."""
        return tuple(expression for _, expression in self.selector_sites)

    @property
    def cel_sites(self) -> tuple[tuple[YamlMap, str], ...]:
        """(the `cel` mapping, its expression) of the CEL selectors, for positions."""
        return tuple(site for site in self.selector_sites if site[0])

    @property
    def has_both_shapes(self) -> bool:
        """`exactly` and `firstAvailable` both set: the API server rejects it."""
        return "exactly" in self.request and "firstAvailable" in self.request and self.shape != "flat"

    def leaves(self) -> list["DeviceRequest"]:
        """Itself, or its subrequests."""
        return list(self.subrequests) if self.subrequests is not None else [self]


def _selector_sites(body: YamlMap) -> tuple[tuple[YamlMap, str], ...]:
    out: list[tuple[YamlMap, str]] = []
    for selector in mappings(body.get("selectors")):
        cel = selector.get("cel")
        if isinstance(cel, dict) and isinstance(cel.get("expression"), str):
            out.append((cel, cel["expression"]))
        else:
            out.append(({}, ""))  # a selector type draguard does not know: an empty expression
    return tuple(out)


def _with_fields(request: DeviceRequest, body: YamlMap) -> DeviceRequest:
    count = body.get("count", 1)
    admin = body.get("adminAccess")
    request.class_name = body.get("deviceClassName") if isinstance(body.get("deviceClassName"), str) and \
        body.get("deviceClassName") else None
    request.selector_sites = _selector_sites(body)
    mode = body.get("allocationMode")
    request.mode = mode if isinstance(mode, str) and mode else "ExactCount"
    request.written_count = count
    request.admin_access = admin if isinstance(admin, bool) else None
    request.tolerations = tolerations(body.get("tolerations"))
    capacity = body.get("capacity")
    requested = capacity.get("requests") if isinstance(capacity, dict) else None
    request.written_capacity = requested if isinstance(requested, dict) else {}
    derived = body.get("derivedAttributes")
    request.derived_attributes = tuple(derived) if isinstance(derived, list) else ()
    return request


def _subrequest(request: DeviceRequest, body: YamlMap) -> DeviceRequest:
    """A DeviceSubRequest has no adminAccess: one written there is not read (upstream's
    deviceSubRequestAccessor answers false)."""
    request = _with_fields(request, body)
    request.admin_access = None
    return request


def parse_request(raw: YamlMap, api_version: str) -> DeviceRequest:
    """The request `raw` in the first of REQUEST_SHAPES it has (v1alpha3/v1beta1 have no
    `exactly`: their fields are the request's own)."""
    name = text(raw.get("name"))
    flat = api_version.rsplit("/", 1)[-1] in _FLAT_VERSIONS
    for key, shape in REQUEST_SHAPES:
        value = raw.get(key)
        if not isinstance(value, shape) or (flat and key == "exactly"):
            continue
        if isinstance(value, list):
            parent = DeviceRequest(name, "first-available", raw, raw)
            parent.subrequests = [_subrequest(DeviceRequest(text(sub.get("name")), "subrequest", sub, raw, name),
                                              sub) for sub in mappings(value)]
            if parent.subrequests:
                return parent
            continue
        return _with_fields(DeviceRequest(name, "exactly", value, raw), value)
    if flat:
        return _with_fields(DeviceRequest(name, "flat", raw, raw), raw)
    return DeviceRequest(name, "empty", raw, raw)


def claim_spec(manifest: Manifest) -> YamlMap:
    """The ResourceClaimSpec of a ResourceClaim or ResourceClaimTemplate ({} otherwise)."""
    if (manifest.group, manifest.kind) not in CLAIM_TARGETS:
        return {}
    spec = manifest.spec
    if manifest.kind == "ResourceClaimTemplate":
        spec = mapping(spec.get("spec"))
    return spec


def requests_of(manifest: Manifest) -> list[DeviceRequest]:
    """The top-level requests of a claim or claim template; computed once."""
    return manifest.derive(_parse_requests)


def _parse_requests(manifest: Manifest) -> list[DeviceRequest]:
    devices = mapping(claim_spec(manifest).get("devices"))
    requests = [parse_request(raw, manifest.api_version) for raw in mappings(devices.get("requests"))]
    for request in requests:
        for part in [request, *(request.subrequests or ())]:
            part.owner = manifest  # what a value it cannot read is blamed on
    return requests


def device_requests(manifest: Manifest) -> list[DeviceRequest]:
    """Every request and subrequest that selects devices (requests holding subrequests are
    replaced by them); computed once."""
    return manifest.derive(_leaf_requests)


def _leaf_requests(manifest: Manifest) -> list[DeviceRequest]:
    return [leaf for request in requests_of(manifest) for leaf in request.leaves()]


def request_names(manifest: Manifest) -> set[str]:
    """Names a container may use in `resources.claims[].request`: the top-level requests (a
    DNS label, core validation validateResourceClaimNames: the allocation picks the subrequest)."""
    return {request.name for request in requests_of(manifest)}


def _unrecorded(kind: str, namespace: str, name: str | None = None) -> None:
    """A lookup nobody records (model.objectset.ObjectSet.read records them)."""


def compute_domain_template(spec: Yaml) -> str | None:
    """The name of the claim template an NVIDIA ComputeDomain makes (spec.channel.resourceClaimTemplate)."""
    name = mapping(mapping(mapping(spec).get("channel")).get("resourceClaimTemplate")).get("name")
    return name if isinstance(name, str) else None


class ClaimIndex(Record):
    """Which claims and claim templates a set of objects defines, by (namespace, name).
    NVIDIA ComputeDomains count as defining the template they create."""

    __slots__ = ("claims", "templates", "claims_by_name", "templates_by_name", "templates_by_file", "read")
    _unshown = ("read",)

    def __init__(self, claims: dict[tuple[str, str], Manifest] | None = None,
                 templates: dict[tuple[str, str], Manifest] | None = None,
                 claims_by_name: dict[str, Manifest] | None = None,
                 templates_by_name: dict[str, Manifest] | None = None,
                 templates_by_file: dict[str, list[Manifest]] | None = None, read: LookupRecorder = _unrecorded):
        self.claims: dict[tuple[str, str], Manifest] = {} if claims is None else claims
        self.templates: dict[tuple[str, str], Manifest] = {} if templates is None else templates
        #: name -> the first claim (template) of that name in any namespace, for objects without one
        self.claims_by_name: dict[str, Manifest] = {} if claims_by_name is None else claims_by_name
        self.templates_by_name: dict[str, Manifest] = {} if templates_by_name is None else templates_by_name
        #: file -> the claim templates it defines
        self.templates_by_file: dict[str, list[Manifest]] = {} if templates_by_file is None else templates_by_file
        #: (kind, namespace, name) of each lookup (model.objectset: who reads what)
        self.read = read

    @classmethod
    def build(cls, objects: Iterable[Manifest], read: LookupRecorder = _unrecorded) -> "ClaimIndex":
        index = cls(read=read)
        for m in objects:
            if (m.group, m.kind) == (RESOURCE_GROUP, "ResourceClaim"):
                index.claims.setdefault((m.namespace, m.name), m)
            elif (m.group, m.kind) == (RESOURCE_GROUP, "ResourceClaimTemplate"):
                index.templates.setdefault((m.namespace, m.name), m)
                index.templates_by_file.setdefault(m.source.display, []).append(m)
            elif (m.group, m.kind) == ("resource.nvidia.com", "ComputeDomain"):
                name = compute_domain_template(m.spec)
                if name is not None:
                    index.templates.setdefault((m.namespace, name), m)
        for table, by_name in ((index.claims, index.claims_by_name), (index.templates, index.templates_by_name)):
            for (_, name), m in table.items():
                by_name.setdefault(name, m)
        return index

    @staticmethod
    def _lookup(table: dict[tuple[str, str], Manifest], by_name: dict[str, Manifest], namespace: str,
                name: str) -> Manifest | None:
        """Same namespace; an object without a namespace matches any (it is applied with -n)."""
        found = table.get((namespace, name))
        if found is not None:
            return found
        return table.get(("", name)) if namespace else by_name.get(name)

    def claim(self, namespace: str, name: str) -> Manifest | None:
        self.read("ResourceClaim", namespace, name)
        return self._lookup(self.claims, self.claims_by_name, namespace, name)

    def template(self, namespace: str, name: str) -> Manifest | None:
        self.read("ResourceClaimTemplate", namespace, name)
        return self._lookup(self.templates, self.templates_by_name, namespace, name)

    def templates_in(self, namespace: str) -> dict[str, Manifest]:
        """name -> the claim templates of `namespace` (only those: a simulated rollout's)."""
        self.read("ResourceClaimTemplate", namespace)
        return {name: m for (where, name), m in self.templates.items()
                if m.kind == "ResourceClaimTemplate" and (where or None) == (namespace or None)}

    def template_in(self, file: str, namespace: str, name: str) -> Manifest | None:
        """The claim template of that name that `file` itself defines (namespaces matched as
        template() matches them), None when the file defines none."""
        self.read("ResourceClaimTemplate", namespace, name)
        return next((m for m in self.templates_by_file.get(file, ()) if m.name == name and
                     (m.namespace == namespace or not m.namespace or not namespace)), None)

    def referenced(self, namespace: str, entry: YamlMap, generated: dict[str, Yaml] | None = None) -> Manifest | None:
        """The claim or template a pod's resourceClaims entry names (None if not defined);
        for a live pod, the claim its controller generated from the template when the set
        holds it (`generated`: PodSite.generated_claims)."""
        made = (generated or {}).get(text(entry.get("name")))
        if isinstance(made, str) and self.claim(namespace, made) is not None:
            return self.claim(namespace, made)
        if isinstance(entry.get("resourceClaimName"), str):
            return self.claim(namespace, entry["resourceClaimName"])
        if isinstance(entry.get("resourceClaimTemplateName"), str):
            return self.template(namespace, entry["resourceClaimTemplateName"])
        return None

