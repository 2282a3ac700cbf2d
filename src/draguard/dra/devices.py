"""One internal model of DRA objects, whatever their resource.k8s.io version: devices,
slices, classes, claims, taint rules and nodes, as the allocator sees them.

v1alpha3/v1beta1 nest a device's fields under `basic`; v1beta2/v1 have flat devices. Requests
are parsed once, by `model.claims` (which applies the API defaults)."""

from __future__ import annotations

import dataclasses
from collections import namedtuple
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cached_property
from typing import Callable

from ..model.claims import requests_of
from ..model.classes import allocated_selectors
from ..model.pods import items, mapping, mappings
from .nodeselector import NodeSelectorError, parse_node_selector
from .published import published_twice
from ..core.quantity import QuantityError, canonical_form, parse_quantity, parse_quantity_form

#: kind: 'string', 'int', 'bool' or 'version', or a list of them (DRAListTypeAttributes):
#: 'strings', 'ints', 'bools' or 'versions', whose value is a tuple
Attr = namedtuple("Attr", "kind value")
MISSING = Attr("missing", None)
#: list kind -> the kind of its items
LIST_KINDS = {"ints": "int", "bools": "bool", "strings": "string", "versions": "version"}


class ModelError(ValueError):
    """An object that cannot be modelled; `container`/`key` locate the offending field."""

    def __init__(self, message: str, container=None, key=None):
        super().__init__(message)
        self.container, self.key = container, key


def _optional_bool(value) -> bool | None:
    """A *bool field: None when absent (anything not a boolean is schema-invalid, reported there)."""
    return value if isinstance(value, bool) else None


def quantity(container: dict, key) -> Fraction:
    value = container[key]
    raw = value.get("value") if isinstance(value, dict) else value
    try:
        return parse_quantity(raw)
    except QuantityError as exc:
        raise ModelError(str(exc), container, key) from None


def integer(container: dict, key, default: int) -> int:
    value = container.get(key, default)
    if value is None:
        return default
    if not isinstance(value, int) or isinstance(value, bool):
        raise ModelError(f"{key} must be an integer, not {value!r}", container, key)
    return value


def split_name(qualified: str, default_domain: str) -> tuple[str, str]:
    domain, sep, name = qualified.partition("/")
    return (domain, name) if sep else (default_domain, qualified)


@dataclass(frozen=True)
class Taint:
    """A device taint (DRADeviceTaints), as tolerations match it."""
    key: str
    value: str
    effect: str


@dataclass(eq=False)
class Device:
    """A device of a ResourceSlice as the allocator and selectors read it."""
    name: str
    driver: str
    pool: str
    attributes: dict = field(default_factory=dict)  # domain -> name -> Attr
    capacity: dict = field(default_factory=dict)  # domain -> name -> Fraction
    capacity_forms: dict = field(default_factory=dict)  # domain -> name -> how upstream stores it (quantity.Form)
    capacity_raw: dict | None = field(default=None, repr=False)  # as written: names and request policies (dra.capacity)
    consumable: tuple | None = field(default=None, repr=False, compare=False)  # capacity_raw parsed, when first needed
    consumes_counters: list = field(default_factory=list)  # [(counter set, {counter: Fraction})]
    #: [(counter set, its compatibilityGroups as a frozenset, empty for none)], as consumes_counters
    compatibility_groups: tuple = ()
    taints: tuple = ()  # what the scheduler sees: the slice's own taints and DeviceTaintRules'
    node_name: str | None = None
    node_selector: dict | None = None
    all_nodes: bool = False
    allow_multiple_allocations: bool = False
    binding_conditions: tuple = ()
    binding_failure_conditions: tuple = ()
    binds_to_node: bool = False
    unqualified: frozenset = frozenset()  # attribute names published without a domain
    shadowed: dict | None = None  # those of them also published as '<driver>/name' (_attributes)
    _cel: dict | None = field(default=None, repr=False)
    _content: tuple | None = field(default=None, repr=False)
    id: tuple = field(init=False, repr=False)  # (driver, pool, name), read in the search's inner loop
    published_taints: tuple = field(init=False, repr=False)  # the slice's own

    parsed_selector: object = field(init=False, repr=False)  # NodeSelector, NodeSelectorError or None

    def __post_init__(self):
        self.id = (self.driver, self.pool, self.name)
        self.published_taints = self.taints
        self.parsed_selector = _parsed(self.node_selector)

    def tainted(self, taints: tuple) -> "Device":
        """This device as the scheduler sees it with `taints`: itself when they are its
        taints already, else a copy (its published taints kept; its selector memos too, which
        taints do not change)."""
        if taints == self.taints:
            return self
        copy = dataclasses.replace(self, taints=self.published_taints)
        copy.taints = taints
        return copy

    def attribute(self, qualified: str) -> Attr | None:
        """Upstream lookupAttribute (constraints): the name as published, or 'domain/name' that
        also finds a name the driver published without its own domain; a name without a domain
        finds only an attribute published that way."""
        if "/" not in qualified:
            if qualified not in self.unqualified:
                return None
            bare = self.shadowed.get(qualified) if self.shadowed else None
            return bare if bare is not None else self.attributes.get(self.driver, {}).get(qualified)
        domain, name = split_name(qualified, self.driver)
        return self.attributes.get(domain, {}).get(name)

    def content_key(self) -> tuple:
        """Everything a selector can read of this device, as a hashable value. Selector results
        are memoized by it (never by object identity: a process-wide cache would hand a dead
        device's answer to a new device allocated at the same address)."""
        if self._content is None:
            self._content = (self.driver, self.allow_multiple_allocations,
                             tuple((d, tuple(sorted(names.items()))) for d, names in sorted(self.attributes.items())),
                             tuple((d, tuple(sorted(names.items()))) for d, names in sorted(self.quantities.items())))
        return self._content


    @cached_property
    def quantities(self) -> dict:
        """Capacities as CEL sees them: domain -> name -> (value, form), since isInteger reads
        the form; built once, on the first selector that reads them."""
        forms = self.capacity_forms
        return {d: {n: (q, forms[d][n] if n in forms.get(d, {}) else canonical_form(q)) for n, q in names.items()}
                for d, names in self.capacity.items()}

    def memo_key(self, refs) -> tuple:
        """What a selector with references `refs` can see of this device."""
        if refs.everything:
            return self.content_key()
        key = [self.driver, self.allow_multiple_allocations]
        for kind, domain, name in refs.items:
            table = self.attributes if kind == "attributes" else self.quantities
            values = table.get(domain, {})
            if name is None:
                key.append(tuple(sorted(values.items())))
            else:
                key.append(values.get(name, MISSING))
        return tuple(key)

    def cel_data(self, references) -> dict:
        """The device as the selector's variables; every domain the expression subscripts
        exists, empty when the device has none of it (upstream: a map with a default), the
        device's own driver's too where the expression subscripts with `device.driver`."""
        if self._cel is None:
            from ..cel.library import quantity_message, semver_message  # evaluating needs the CEL engine

            self._cel = {
                "device_driver": self.driver,
                "device_allowMultipleAllocations": self.allow_multiple_allocations,
                "draguard_has": True,
                "device_attributes": {d: {n: _cel_value(a, semver_message) for n, a in names.items()}
                                      for d, names in self.attributes.items()},
                "device_capacity": {d: {n: quantity_message(*q) for n, q in names.items()}
                                    for d, names in self.quantities.items()},
            }
        data = self._cel
        for field_name in ("attributes", "capacity"):
            variable = f"device_{field_name}"
            wanted = {*references.domains(field_name), *([self.driver] if field_name in references.driver_domains else [])}
            missing = [d for d in sorted(wanted) if d not in data[variable]]
            if missing:
                data = dict(data, **{variable: dict(data[variable], **{d: {} for d in missing})})
        return data


def _cel_value(attribute: Attr, semver_message: Callable[[str], object]):
    """An attribute as the selector sees it (upstream getAttributeValue): a version as a
    semver (`semver_message`, cel.library's), a list as a list."""
    if attribute.kind == "version":
        return semver_message(attribute.value)
    if attribute.kind == "versions":
        return [semver_message(v) for v in attribute.value]
    if attribute.kind in LIST_KINDS:
        return list(attribute.value)
    return attribute.value


@dataclass(eq=False)
class Slice:
    """A ResourceSlice: its driver, pool, node access and devices."""
    name: str
    driver: str
    pool: str
    generation: int
    slice_count: int
    devices: list
    node_name: str | None = None
    node_selector: dict | None = None
    all_nodes: bool = False
    per_device_node_selection: bool | None = None  # None: not set (a pointer upstream; false is set)
    # (counter set, {counter: Fraction}) as listed: a name listed twice makes the pool invalid
    shared_counters: tuple = ()
    uses_compatibility_groups: bool = False  # a device's consumesCounters names compatibilityGroups (KEP-5963)
    skip_node_operations: tuple = ()  # spec.skipNodeOperations (DRAOptionalNodeOperations)
    manifest: object = None
    parsed_selector: object = field(init=False, repr=False)  # NodeSelector, NodeSelectorError or None

    def __post_init__(self):
        self.parsed_selector = _parsed(self.node_selector)


def _parsed(node_selector):
    """Parsed once with the object; a selector upstream cannot parse fails the allocation
    that meets it (GatherPools), so its error is kept, not raised, here."""
    if node_selector is None:
        return None
    try:
        return parse_node_selector(node_selector)
    except NodeSelectorError as exc:
        return exc


@dataclass
class DeviceClass:
    """A DeviceClass: its selectors and configuration."""
    name: str
    selectors: list  # CEL expressions
    config: list = field(default_factory=list)
    extended_resource_name: str | None = None
    manifest: object = None


@dataclass
class Constraint:
    """A claim's constraint across its requests (matchAttribute, distinctAttribute)."""
    requests: tuple
    match_attribute: str | None
    distinct_attribute: str | None = None  # DRAConsumableCapacity (KEP-5075), newer variants only


@dataclass
class Claim:
    """A ResourceClaim as the allocator places it: its requests, constraints and config."""
    name: str
    namespace: str
    requests: list
    constraints: list = field(default_factory=list)
    config: list = field(default_factory=list)
    manifest: object = None

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}" if self.namespace else self.name


# --- parsing from manifests ----------------------------------------------------------------

#: upstream getAttributeValue's order when more than one is set: the lists first (an empty
#: list counts: Go's non-nil slice)
_KINDS = ("ints", "bools", "strings", "versions", "int", "bool", "string", "version")
#: (kind, value) -> Attr: a large cluster's devices repeat the same few values (product names,
#: versions, profiles), so each is held once; the parse is the audit's hottest loop
_INTERNED: dict = {}
_INTERNED_MAX = 65536
_KIND_SET = frozenset(_KINDS)
#: (qualified name, driver) -> (domain, name): every device of a driver publishes the same few names
_SPLIT: dict = {}


def _attributes(raw: dict, driver: str) -> tuple[dict, dict | None]:
    """(domain -> name -> Attr, bare name -> Attr for the names also published as
    '<driver>/name', None when there are none). Such a name is the driver's twice:
    upstream's constraints read the qualified one (lookupAttribute tries the name as given
    first), its CEL binding takes either (compile.go fills the domain's map in Go map order);
    draguard gives both the qualified one, and keeps the bare one for a lookup by the bare
    name."""
    out, written = _parsed_attributes(raw, driver)
    if written <= len(out.get(driver, ())):
        return out, None
    shadowed = {}  # a name of the driver's came twice (rare: each of those is parsed again on its own)
    for bare in published_twice(raw, driver):
        shadowed[bare] = _parsed_attributes({bare: raw[bare]}, driver)[0][driver][bare]
        qualified = f"{driver}/{bare}"
        out[driver][bare] = _parsed_attributes({qualified: raw[qualified]}, driver)[0][driver][bare]
    return out, shadowed


def _parsed_attributes(raw: dict, driver: str) -> tuple[dict, int]:
    """(domain -> name -> Attr, the last published under a name; how many names went into the
    driver's domain)."""
    out: dict[str, dict] = {}
    written = 0
    if not isinstance(raw, dict):
        return out, written
    for qualified, value in raw.items():
        # the API requires exactly one value; like upstream's CEL binding, take them in
        # _KINDS order if more are set (null is Go's nil: not set)
        kind = None
        if isinstance(value, dict):
            if len(value) == 1:  # the usual one value: no order to follow (the parse's hottest line)
                for only, found in value.items():
                    if found is not None and only in _KIND_SET:
                        kind = only
            else:
                for candidate in _KINDS:
                    if value.get(candidate) is not None:
                        kind = candidate
                        break
        if kind is None:
            raise ModelError(f"attribute {qualified} sets none of int, bool, string, version (or their lists)",
                             raw, qualified)
        split = _SPLIT.get((qualified, driver))
        if split is None:
            if len(_SPLIT) > _INTERNED_MAX:
                _SPLIT.clear()
            split = _SPLIT[(qualified, driver)] = split_name(str(qualified), driver)
        domain, name = split
        found = value[kind]
        if kind in LIST_KINDS:
            found = tuple(found) if isinstance(found, list) else found
        try:
            attr = _INTERNED.get((kind, found))
            if attr is None:
                if len(_INTERNED) > _INTERNED_MAX:  # unique values (uuids) would grow it without bound
                    _INTERNED.clear()
                attr = _INTERNED[(kind, found)] = Attr(kind, found)
        except TypeError:  # an unhashable value: the validation rules report it
            attr = Attr(kind, found)
        names = out.get(domain)
        if names is None:
            names = out[domain] = {}
        names[name] = attr
        if domain == driver:
            written += 1
    return out, written


def _capacity(raw: dict, driver: str) -> tuple[dict, dict]:
    """(domain -> name -> value, domain -> name -> form), shared by every device that
    publishes the same capacities (the parse is per distinct set, not per device)."""
    if not isinstance(raw, dict) or not raw:
        return {}, {}
    try:
        key = (driver, *[(k, v.get("value") if isinstance(v, dict) else v) for k, v in raw.items()])
        found = _CAPACITIES.get(key)
    except TypeError:  # an unhashable value: parse it (and let the quantity parser report it)
        key, found = None, None
    if found is None:
        values: dict[str, dict] = {}
        forms: dict[str, dict] = {}
        twice = published_twice(raw, driver)
        for qualified in raw:
            if qualified in twice:  # gives way to its '<driver>/name', as in _attributes
                continue
            domain, name = split_name(str(qualified), driver)
            values.setdefault(domain, {})[name] = quantity(raw, qualified)
            forms.setdefault(domain, {})[name] = _form(raw[qualified])
        found = (values, forms)
        if key is not None:
            if len(_CAPACITIES) > _INTERNED_MAX:
                _CAPACITIES.clear()
            _CAPACITIES[key] = found
    return found


_CAPACITIES: dict = {}


def _form(value):
    raw = value.get("value") if isinstance(value, dict) else value
    return parse_quantity_form(raw)[1]


def _counters(raw: dict) -> dict:
    return {name: quantity(raw, name) for name in mapping(raw)}


def _taints(raw) -> tuple:
    if not raw:
        return ()
    return tuple(Taint(str(t.get("key", "")), str(t.get("value", "")), str(t.get("effect", "")))
                 for t in items(raw) if isinstance(t, dict))


def _unqualified(attributes) -> frozenset:
    if not isinstance(attributes, dict):
        return frozenset()
    key = tuple(attributes)
    found = _UNQUALIFIED.get(key)
    if found is None:
        found = _UNQUALIFIED[key] = frozenset(k for k in key if isinstance(k, str) and "/" not in k)
    return found


_UNQUALIFIED: dict = {}


def device_from(raw: dict, driver: str, pool: str) -> Device:
    basic = raw.get("basic")
    body = basic if isinstance(basic, dict) else raw  # v1alpha3/v1beta1 nest it
    capacity, capacity_forms = _capacity(mapping(body.get("capacity")), driver)
    attributes, shadowed = _attributes(mapping(body.get("attributes")), driver)
    consumptions = [c for c in items(body.get("consumesCounters")) if isinstance(c, dict)]
    return Device(
        name=str(raw.get("name", "")), driver=driver, pool=pool,
        attributes=attributes,
        capacity=capacity, capacity_forms=capacity_forms,
        capacity_raw=body.get("capacity") if isinstance(body.get("capacity"), dict) else None,
        consumes_counters=[(str(c.get("counterSet", "")), _counters(mapping(c.get("counters")))) for c in consumptions],
        compatibility_groups=tuple((str(c.get("counterSet", "")), frozenset(map(str, items(c.get("compatibilityGroups")))))
                                   for c in consumptions),
        taints=_taints(body.get("taints")),
        node_name=body.get("nodeName"), node_selector=body.get("nodeSelector"),
        all_nodes=body.get("allNodes") is True,
        allow_multiple_allocations=body.get("allowMultipleAllocations") is True,
        binding_conditions=tuple(items(body.get("bindingConditions"))),
        binding_failure_conditions=tuple(items(body.get("bindingFailureConditions"))),
        binds_to_node=body.get("bindsToNode") is True,
        unqualified=_unqualified(body.get("attributes")),
        shadowed=shadowed,
    )


def slice_from(manifest) -> Slice:
    spec = mapping(manifest.data.get("spec"))
    driver, pool = str(spec.get("driver", "")), mapping(spec.get("pool"))
    pool_name = str(pool.get("name", ""))
    return Slice(
        name=manifest.name, driver=driver, pool=pool_name,
        # a missing count is 0, as upstream decodes it: the pool is never complete
        generation=integer(pool, "generation", 0), slice_count=integer(pool, "resourceSliceCount", 0),
        devices=[device_from(d, driver, pool_name) for d in items(spec.get("devices")) if isinstance(d, dict)],
        node_name=spec.get("nodeName"), node_selector=spec.get("nodeSelector"),
        all_nodes=spec.get("allNodes") is True, per_device_node_selection=_optional_bool(spec.get("perDeviceNodeSelection")),
        shared_counters=tuple((str(s.get("name", "")), _counters(mapping(s.get("counters"))))
                              for s in items(spec.get("sharedCounters")) if isinstance(s, dict)),
        uses_compatibility_groups=any(mapping(c).get("compatibilityGroups") for d in items(spec.get("devices"))
                                      for c in items(mapping(d).get("consumesCounters"))),
        skip_node_operations=tuple(str(o) for o in items(spec.get("skipNodeOperations"))),
        manifest=manifest,
    )


def device_class_from(manifest) -> DeviceClass:
    spec = mapping(manifest.data.get("spec"))
    return DeviceClass(manifest.name, allocated_selectors(manifest), items(spec.get("config")),
                       spec.get("extendedResourceName"), manifest)


def claim_from(manifest) -> Claim:
    """A ResourceClaim, or the claim a ResourceClaimTemplate would create."""
    spec = manifest.spec
    if manifest.kind == "ResourceClaimTemplate":
        spec = mapping(spec.get("spec"))
    devices = mapping(spec.get("devices"))
    constraints = [Constraint(tuple(c.get("requests") or ()) if isinstance(c.get("requests"), list) else (),
                              c.get("matchAttribute") if isinstance(c.get("matchAttribute"), str) else None,
                              c.get("distinctAttribute") if isinstance(c.get("distinctAttribute"), str) else None)
                   for c in mappings(devices.get("constraints"))]
    return Claim(manifest.name, manifest.namespace, requests_of(manifest), constraints,
                 mappings(devices.get("config")), manifest)


@dataclass
class DeviceTaintRule:
    """Taints an admin puts on devices without changing their slices (KEP-5055)."""

    name: str
    taint: Taint
    driver: str | None = None
    pool: str | None = None
    device: str | None = None
    device_class: str | None = None  # v1alpha3 only
    selectors: list = field(default_factory=list)  # v1alpha3 only

    def selects(self, device: Device, classes: dict) -> bool:
        if any(want and have != want for want, have in ((self.driver, device.driver), (self.pool, device.pool),
                                                         (self.device, device.name))):
            return False
        expressions = list(self.selectors)
        if self.device_class:
            cls = classes.get(self.device_class)
            if cls is None:
                return False
            expressions = cls.selectors + expressions
        from ..cel.env import CelRuntimeError, compile_selector  # evaluating needs the CEL engine

        for expression in expressions:
            compiled = compile_selector(expression)
            try:
                if compiled.error is not None or not compiled.evaluate(device):
                    return False
            except CelRuntimeError:
                return False
        return True


def device_taint_rule_from(manifest) -> DeviceTaintRule:
    spec = mapping(manifest.data.get("spec"))
    selector, taint = mapping(spec.get("deviceSelector")), mapping(spec.get("taint"))
    return DeviceTaintRule(
        manifest.name, Taint(str(taint.get("key", "")), str(taint.get("value", "")), str(taint.get("effect", ""))),
        selector.get("driver"), selector.get("pool"), selector.get("device"), selector.get("deviceClassName"),
        [str(mapping(s.get("cel")).get("expression", "")) for s in items(selector.get("selectors")) if isinstance(s, dict)])


@dataclass
class Node:
    """A node as the allocator sees it: its name, labels and fields."""
    name: str
    labels: dict = field(default_factory=dict)
    taints: tuple = ()  # spec.taints, for the scheduler's TaintToleration filter
    unschedulable: bool = False  # spec.unschedulable: cordoned
    declared_features: frozenset = frozenset()  # status.declaredFeatures (node declared features, KEP-5328)


def node_from(manifest) -> Node:
    spec = mapping(manifest.data.get("spec"))
    taints = tuple(Taint(str(t.get("key", "")), str(t.get("value", "")), str(t.get("effect", "")))
                   for t in items(spec.get("taints")) if isinstance(t, dict))
    declared = items(mapping(manifest.data.get("status")).get("declaredFeatures"))
    return Node(manifest.name, dict(manifest.labels), taints, spec.get("unschedulable") is True,
                frozenset(str(f) for f in declared))

