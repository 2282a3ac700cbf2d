"""The API server's field validation of resource.k8s.io objects beyond what the OpenAPI
schema states, over the objects as written (before the server's defaults).

Mirrors kubernetes v1.37.2 pkg/apis/resource/validation/validation.go (with the declarative
validation it marks covered), k8s.io/apimachinery/pkg/util/validation (names, label keys
and values) and pkg/apis/core/validation ValidateNodeSelector; list limits from
pkg/apis/resource/types.go. Each check yields a Problem where the finding points."""

from __future__ import annotations

import json
from typing import Iterator

from ..model.pods import items, mapping, mappings
from .nodeselector import DNS_SUBDOMAIN, NodeSelectorError, label_key_problem, label_value_ok, parse_node_selector
from ..core.quantity import QuantityError, parse_quantity
from ..core.value import Value
from ..core.patterns import Lazy

_DNS1123_LABEL = Lazy(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_C_IDENTIFIER = Lazy(r"[A-Za-z_][A-Za-z0-9_]*")
_NUMERIC = r"(0|[1-9]\d*)"
_PRERELEASE = r"(0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)"
_SEMVER = Lazy(rf"{_NUMERIC}\.{_NUMERIC}\.{_NUMERIC}(-{_PRERELEASE}(\.{_PRERELEASE})*)?"
                     r"(\+[0-9a-zA-Z-]+(\.[0-9a-zA-Z-]+)*)?")
_TAINT_EFFECTS = ("NoSchedule", "NoExecute", "None")

#: list limits (pkg/apis/resource/types.go)
MAX_REQUESTS = MAX_CONSTRAINTS = MAX_CONFIG = MAX_SELECTORS = MAX_ATTRIBUTES_AND_CAPACITIES = 32
MAX_SUBREQUESTS = 8
MAX_TOLERATIONS = MAX_TAINTS = 16
MAX_DEVICES, MAX_DEVICES_WITH_ADVANCED_FEATURES = 128, 64
MAX_COUNTER_SETS = 8
MAX_COUNTERS = 32
MAX_ATTRIBUTE_VALUE = 64
MAX_ID, MAX_DOMAIN = 32, 63
MAX_OPAQUE_PARAMETERS = 10 * 1024
MAX_VALID_VALUES = 10
MAX_BINDING_CONDITIONS = 4


class Problem(Value):
    """What the server refuses, at `holder[key]` (the holder itself when key is None)."""

    __slots__ = ("holder", "key", "message", "at_value")

    def __init__(self, holder: object, key: str | int | None, message: str, at_value: bool = True):
        self.holder = holder
        self.key = key
        self.message = message
        self.at_value = at_value


# --- names (k8s.io/apimachinery/pkg/util/validation) --------------------------------------

def dns_label(name: str) -> str | None:
    if len(name) > 63:
        return "must be no more than 63 characters"
    return None if _DNS1123_LABEL.fullmatch(name) else \
        "must be a lowercase RFC 1123 label (lower-case letters, digits and '-', starting and ending alphanumeric)"


def dns_subdomain(name: str) -> str | None:
    if len(name) > 253:
        return "must be no more than 253 characters"
    return None if DNS_SUBDOMAIN.fullmatch(name) else \
        "must be a lowercase RFC 1123 subdomain (lower-case letters, digits, '-' and '.', starting and ending alphanumeric)"


def driver_name(name: str) -> str | None:
    """ValidateCSIDriverName: at most 63 characters, a DNS subdomain once lower-cased."""
    if not name:
        return "is required"
    if len(name) > 63:
        return "must be no more than 63 characters"
    return dns_subdomain(name.lower())


def _c_identifier(name: str) -> str | None:
    if len(name) > MAX_ID:
        return f"must be no more than {MAX_ID} characters"
    return None if _C_IDENTIFIER.fullmatch(name) else \
        "must be a C identifier (a letter or '_', then letters, digits or '_')"


def qualified_name(name: str) -> str | None:
    """validateQualifiedName: an attribute or capacity name, `ID` or `domain/ID`."""
    parts = name.split("/")
    if len(parts) == 1:
        return _c_identifier(name)
    domain, identifier = parts[0], parts[1]
    if not domain:
        return "the domain must not be empty"
    problem = driver_name(domain)
    if problem:
        return f"domain {problem}"
    return "the name must not be empty" if not identifier else _c_identifier(identifier)


def fully_qualified_name(name: str) -> str | None:
    """validateFullyQualifiedName (declaratively: the prefix a lowercase DNS subdomain)."""
    if "/" not in name:
        return "must be a domain and a name separated by a slash"
    domain = name.split("/")[0]
    if domain and dns_subdomain(domain):
        return f"prefix {dns_subdomain(domain)}"
    return qualified_name(name)


# --- shared parts ---------------------------------------------------------------------------

def name_problems(holder: dict, key: str, what: str, check) -> Iterator[Problem]:
    """holder[key], a name as written (a non-empty string; others are schema-invalid or
    required elsewhere), where `check` (dns_label, dns_subdomain, driver_name ...) refuses it."""
    name = holder.get(key)
    problem = check(name) if isinstance(name, str) and name else None
    if problem:
        yield Problem(holder, key, f"{what} {name!r} {problem}")


def too_many(holder: dict, key: str, limit: int) -> Iterator[Problem]:
    items = holder.get(key)
    if isinstance(items, list) and len(items) > limit:
        yield Problem(holder, key, f"{key}: too many ({len(items)}): must have at most {limit} items", False)


def duplicates(items: list, key_of, what: str) -> Iterator[Problem]:
    seen = set()
    for i, item in enumerate(items):
        key = key_of(item)
        if not isinstance(key, str):
            continue  # a key of another type is schema-invalid
        if key in seen:
            yield Problem(items, i, f"{what} {key!r} is listed twice")
        seen.add(key)


def quantity(holder: dict, key, what: str) -> Iterator[Problem]:
    """A quantity the server cannot decode (a 400 before any validation)."""
    value = holder.get(key)
    if isinstance(value, (str, int, float)) and not isinstance(value, bool):  # others are schema-invalid
        try:
            parse_quantity(value)
        except QuantityError:
            yield Problem(holder, key, f"{what} {value!r} is not a quantity: quantities must match "
                                       "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")


def int64(holder, key, what: str) -> Iterator[Problem]:
    """An integer the server cannot decode into its int64 field (a 400 before any validation)."""
    value = holder[key] if isinstance(holder, list) else holder.get(key)
    if isinstance(value, int) and not isinstance(value, bool) and not -2**63 <= value < 2**63:
        yield Problem(holder, key, f"{what} {value} is out of the int64 range")


def selectors(holder: dict) -> Iterator[Problem]:
    yield from too_many(holder, "selectors", MAX_SELECTORS)
    for selector in mappings(holder.get("selectors")):
        if selector.get("cel") is None:
            yield Problem(selector, None, "a selector needs `cel` (the only selector type)", False)


def configuration(config: dict) -> Iterator[Problem]:
    """validateDeviceConfiguration: an opaque configuration, its driver and its parameters."""
    opaque = config.get("opaque")
    if opaque is None:
        yield Problem(config, None, "a configuration needs `opaque` (the only configuration type)", False)
        return
    if not isinstance(opaque, dict):
        return
    yield from name_problems(opaque, "driver", "opaque driver", driver_name)
    parameters = opaque.get("parameters")
    if parameters is None:
        yield Problem(opaque, "driver" if "driver" in opaque else None, "opaque configuration needs `parameters`",
                      False)
    elif not isinstance(parameters, dict):
        yield Problem(opaque, "parameters", "opaque parameters must be a JSON object")
    elif len(json.dumps(parameters, separators=(",", ":"), default=str)) > MAX_OPAQUE_PARAMETERS:
        yield Problem(opaque, "parameters", f"opaque parameters may not be more than {MAX_OPAQUE_PARAMETERS} bytes",
                      False)


def toleration(entry: dict) -> Iterator[Problem]:
    """validateDeviceToleration (an empty operator is defaulted to Equal)."""
    key, operator, value = entry.get("key", ""), entry.get("operator", ""), entry.get("value", "")
    effect = entry.get("effect", "")
    if isinstance(key, str) and key and label_key_problem(key):
        yield Problem(entry, "key", f"toleration key {key!r}: {label_key_problem(key)}")
    if operator == "Exists" and value:
        yield Problem(entry, "value", "a toleration's value must be empty for operator Exists")
    elif operator in ("", "Equal") and not label_value_ok(value):
        yield Problem(entry, "value", f"toleration value {value!r} is not a label value")
    elif operator not in ("", "Equal", "Exists"):
        yield Problem(entry, "operator", f"toleration operator {operator!r} is not Equal or Exists")
    if effect and effect not in _TAINT_EFFECTS:
        yield Problem(entry, "effect", f"toleration effect {effect!r} is not one of {', '.join(_TAINT_EFFECTS)}")


def node_selector(selector: dict, exactly_one_term: bool) -> Iterator[Problem]:
    """corevalidation.ValidateNodeSelector (its requirements as dra.nodeselector parses them),
    and for a slice exactly one term."""
    terms = selector.get("nodeSelectorTerms")
    if not isinstance(terms, list):
        return
    if not terms:
        yield Problem(selector, "nodeSelectorTerms", "a node selector needs at least one term")
    elif exactly_one_term and len(terms) != 1:
        yield Problem(selector, "nodeSelectorTerms", "a ResourceSlice's node selector must have exactly one term")
    try:
        parse_node_selector(selector)
    except NodeSelectorError as exc:
        yield Problem(selector, "nodeSelectorTerms", f"node selector: {exc}", False)


# --- claims ---------------------------------------------------------------------------------

def claim(devices: dict, requests: list) -> Iterator[Problem]:
    """validateDeviceClaim, beside what rules.validation checks (names, references, counts)
    and request-device-class (the request's shape and class): `requests` as
    model.claims.requests_of parses them."""
    for key, limit in (("requests", MAX_REQUESTS), ("constraints", MAX_CONSTRAINTS), ("config", MAX_CONFIG)):
        yield from too_many(devices, key, limit)
    for top in requests:
        if top.subrequests is not None:
            yield from too_many(top.request, "firstAvailable", MAX_SUBREQUESTS)
        for leaf in top.leaves():
            if leaf.shape != "empty":
                yield from _request_fields(leaf.fields)
    for constraint in mappings(devices.get("constraints")):
        yield from _references(constraint)
        for key in ("matchAttribute", "distinctAttribute"):
            name = constraint.get(key)
            if name is not None:
                if isinstance(name, str) and fully_qualified_name(name):
                    yield Problem(constraint, key, f"{key} {name!r}: {fully_qualified_name(name)}")
                break
        else:
            yield Problem(constraint, None, "a constraint needs matchAttribute or distinctAttribute", False)
    for entry in mappings(devices.get("config")):
        yield from _references(entry)
        yield from configuration(entry)


def _request_fields(fields: dict) -> Iterator[Problem]:
    mode = fields.get("allocationMode")
    if mode not in (None, "", "All", "ExactCount"):
        yield Problem(fields, "allocationMode", f"allocationMode {mode!r} is not All or ExactCount")
    yield from name_problems(fields, "deviceClassName", "deviceClassName", dns_subdomain)
    yield from int64(fields, "count", "count")
    yield from selectors(fields)
    yield from too_many(fields, "tolerations", MAX_TOLERATIONS)
    for entry in mappings(fields.get("tolerations")):
        yield from toleration(entry)
        yield from int64(entry, "tolerationSeconds", "tolerationSeconds")
    capacity = fields.get("capacity")
    requested = mapping(mapping(capacity).get("requests"))
    for name in requested:
        yield from quantity(requested, name, f"capacity request {name!r}")


def _references(holder: dict) -> Iterator[Problem]:
    """A constraint's or config's request list: at most 32, none twice (validateSet)."""
    yield from too_many(holder, "requests", MAX_REQUESTS)
    names = holder.get("requests")
    if isinstance(names, list):
        yield from duplicates(names, lambda name: name if isinstance(name, str) else None, "request")


# --- device classes -------------------------------------------------------------------------

def device_class(spec: dict) -> Iterator[Problem]:
    """validateDeviceClassSpec: selectors, configuration, the extended resource name."""
    yield from selectors(spec)
    yield from too_many(spec, "config", MAX_CONFIG)
    for entry in mappings(spec.get("config")):
        yield from configuration(entry)
    name = spec.get("extendedResourceName")  # an empty one is set, and refused too
    if isinstance(name, str) and extended_resource_name(name):
        yield Problem(spec, "extendedResourceName", f"extendedResourceName {name!r} {extended_resource_name(name)}")


def extended_resource_name(name: str) -> str | None:
    """v1helper.IsExtendedResourceName: domain-prefixed, not kubernetes.io, not requests.*."""
    if "/" not in name:
        return "must be a domain-prefixed path, such as 'example.com/my-prop'"
    if "kubernetes.io/" in name:
        return "must not have a kubernetes.io/ domain"
    if name.startswith("requests."):
        return "must not have a requests. prefix"
    problem = label_key_problem(f"requests.{name}")
    return f"is not a qualified name: {problem}" if problem else None


# --- resource slices ------------------------------------------------------------------------

def resource_slice(spec: dict, devices: list, fractional: bool = False) -> Iterator[Problem]:
    """validateResourceSliceSpec beside rules.validation's node fields and device names;
    `devices` as (written mapping, the mapping with its fields: v1beta1's `basic`);
    `fractional`: DRAFractionalCapacityRange is on (request policies in milli-values)."""
    yield from name_problems(spec, "driver", "driver", driver_name)
    pool = spec.get("pool")
    if isinstance(pool, dict):
        yield from _pool(pool)
    yield from name_problems(spec, "nodeName", "nodeName", dns_subdomain)
    if isinstance(spec.get("nodeSelector"), dict):
        yield from node_selector(spec["nodeSelector"], exactly_one_term=True)
    advanced = any(_advanced(body) for _, body in devices)
    yield from too_many(spec, "devices", MAX_DEVICES_WITH_ADVANCED_FEATURES if advanced else MAX_DEVICES)
    per_device = spec.get("perDeviceNodeSelection") is True
    for written, body in devices:
        yield from _device(written, body, per_device, fractional)
    yield from too_many(spec, "sharedCounters", MAX_COUNTER_SETS)
    sets = spec.get("sharedCounters")
    if isinstance(sets, list):
        yield from duplicates(sets, lambda s: s.get("name") if isinstance(s, dict) else None, "counter set")
    for counter_set in mappings(sets):
        yield from name_problems(counter_set, "name", "counter set name", dns_label)
        yield from _counters(counter_set)


def _pool(pool: dict) -> Iterator[Problem]:
    """validateResourcePool: a name of DNS subdomains joined by '/', a count above 0, a generation of 0 or more."""
    name = pool.get("name")
    if name == "":
        yield Problem(pool, "name", "the pool needs a name")
    elif isinstance(name, str):
        problem = "must be no more than 253 characters" if len(name) > 253 else next(
            (p for p in map(dns_subdomain, name.split("/")) if p), None)
        if problem:
            yield Problem(pool, "name", f"pool name {name!r}: each part between '/' {problem}")
    for key in ("generation", "resourceSliceCount"):
        yield from int64(pool, key, key)
    count = pool.get("resourceSliceCount")
    if isinstance(count, int) and not isinstance(count, bool) and count <= 0:
        yield Problem(pool, "resourceSliceCount", f"resourceSliceCount must be greater than zero, not {count}")
    generation = pool.get("generation")
    if isinstance(generation, int) and not isinstance(generation, bool) and generation < 0:
        yield Problem(pool, "generation", f"generation must be zero or more, not {generation}")


def _advanced(body: dict) -> bool:
    """A device with taints, counter consumption or list attributes: the slice holds at most 64."""
    attributes = body.get("attributes")
    return bool(body.get("taints")) or bool(body.get("consumesCounters")) or (isinstance(attributes, dict) and any(
        isinstance(a, dict) and any(k in a for k in ("ints", "bools", "strings", "versions")) for a in attributes.values()))


def _device(written: dict, body: dict, per_device: bool, fractional: bool) -> Iterator[Problem]:
    """validateDevice: attributes, capacity and its request policies, taints, counter
    consumption, per-device node fields, binding conditions."""
    attributes, capacity = body.get("attributes"), body.get("capacity")
    attributes = attributes if isinstance(attributes, dict) else {}
    capacity = capacity if isinstance(capacity, dict) else {}
    if len(attributes) + len(capacity) > MAX_ATTRIBUTES_AND_CAPACITIES:
        yield Problem(written, "name", f"device {written.get('name')!r} has {len(attributes) + len(capacity)} "
                                       f"attributes and capacities; at most {MAX_ATTRIBUTES_AND_CAPACITIES}", False)
    for name, value in attributes.items():
        yield from _key(attributes, name, "attribute")
        if isinstance(value, dict):
            yield from _attribute(attributes, name, value)
    shared = body.get("allowMultipleAllocations") is True
    for name, value in capacity.items():
        yield from _key(capacity, name, "capacity")
        if isinstance(value, dict):
            yield from quantity(value, "value", f"capacity {name!r}")
            if isinstance(value.get("requestPolicy"), dict):
                yield from _request_policy(value, name, shared, fractional)
    yield from too_many(body, "taints", MAX_TAINTS)
    for taint in mappings(body.get("taints")):
        yield from _taint(taint)
    consumption = body.get("consumesCounters")
    if isinstance(consumption, list):
        yield from duplicates(consumption, lambda c: c.get("counterSet") if isinstance(c, dict) else None,
                              "counter set")
    for entry in mappings(consumption):
        yield from _counters(entry)
    yield from _binding_conditions(body)
    if per_device:
        yield from name_problems(body, "nodeName", "nodeName", dns_subdomain)
        if isinstance(body.get("nodeSelector"), dict):
            yield from node_selector(body["nodeSelector"], exactly_one_term=False)


def _request_policy(capacity: dict, name: str, shared: bool, fractional: bool) -> Iterator[Problem]:
    """validateMultiAllocatableDeviceCapacity and validateRequestPolicy: a policy only on a
    device that allows multiple allocations; valid values (sorted, distinct, at most 10, within
    the capacity, the default among them) or a valid range (min, default and max in order and
    within the capacity, a step that keeps both on its grid), not both."""
    policy = capacity["requestPolicy"]
    if not shared:
        yield Problem(capacity, "requestPolicy", f"capacity {name!r}: a requestPolicy needs "
                                                 "allowMultipleAllocations: true", False)
        return
    try:
        amounts = _policy_amounts(capacity, policy)
    except QuantityError:
        return  # the quantity itself is reported where it is written
    total, default, values, bounds = amounts
    valid_range = policy.get("validRange")
    if values and isinstance(valid_range, dict):
        yield Problem(policy, "validRange", f"capacity {name!r}: validValues and validRange cannot both be set", False)
    elif values:
        yield from _valid_values(policy, name, total, default, values, fractional)
    elif isinstance(valid_range, dict):
        yield from _valid_range(policy, valid_range, name, total, default, bounds, fractional)


def _policy_amounts(capacity: dict, policy: dict) -> tuple:
    """(capacity value, default or None, valid values, {min, max, step} present) as Fractions."""
    def parsed(raw):
        if raw is not None and not isinstance(raw, (str, int, float)):
            raise QuantityError("not a quantity")  # schema-invalid
        return None if raw is None else parse_quantity(raw)
    valid_range = mapping(policy.get("validRange"))
    values = items(policy.get("validValues"))
    return (parsed(capacity.get("value", 0)), parsed(policy.get("default")), [parsed(v) for v in values],
            {k: parsed(valid_range[k]) for k in ("min", "max", "step") if valid_range.get(k) is not None})


def _valid_values(policy, name, total, default, values, fractional) -> Iterator[Problem]:
    from .capacity import rounded_up  # a device with a capacity policy: rare, and it brings fractions

    where = f"capacity {name!r}: validValues"
    if default is None:
        yield Problem(policy, "validValues", f"{where} need a default", False)
        return
    if any(a > b for a, b in zip(values, values[1:])):
        yield Problem(policy, "validValues", f"{where} must be sorted in ascending order", False)
    if len(values) > MAX_VALID_VALUES:
        yield Problem(policy, "validValues", f"{where}: at most {MAX_VALID_VALUES} values", False)
    keys = [(v if fractional else rounded_up(v)) for v in values]  # quantityKeyAsDec or quantityKeyInt
    if len(set(keys)) != len(keys):
        yield Problem(policy, "validValues", f"{where} list a value twice", False)
    if any(v > total for v in values):
        yield Problem(policy, "validValues", f"{where}: an option is larger than the capacity value", False)
    if default not in values:
        yield Problem(policy, "default", f"capacity {name!r}: the default is not one of validValues")


def _valid_range(policy, valid_range, name, total, default, bounds, fractional) -> Iterator[Problem]:
    """validateRequestPolicyRange, in the order upstream checks (it returns early on a bound
    it cannot do arithmetic with)."""
    from .capacity import rounded_up  # a device with a capacity policy: rare, and it brings fractions

    where = f"capacity {name!r}: validRange"
    low, high, step = bounds.get("min"), bounds.get("max"), bounds.get("step")
    if default is None:
        yield Problem(policy, "validRange", f"{where} needs a default", False)
        return
    if low is None:
        yield Problem(valid_range, None, f"{where} needs a min", False)
        return
    if low > total:
        yield Problem(valid_range, "min", f"{where}: min is larger than the capacity value")
    if default < low:
        yield Problem(policy, "default", f"{where}: the default is less than min")
    if high is not None:
        if low > high:
            yield Problem(valid_range, "max", f"{where}: min is larger than max")
        if high > total:
            yield Problem(valid_range, "max", f"{where}: max is larger than the capacity value")
        if default > high:
            yield Problem(policy, "default", f"{where}: the default is more than max")
    present = {"default": default, **bounds}
    milli = fractional and any(q.denominator != 1 for q in present.values())
    if milli:
        inexact = [k for k, q in present.items() if (q * 1000).denominator != 1]
        for key in inexact:
            yield Problem(policy if key == "default" else valid_range, key,
                          f"{where}: {key} cannot be represented as a milli value")
        if inexact:
            return
    if step is None:
        return
    if step <= 0:
        yield Problem(valid_range, "step", f"{where}: step must be greater than zero")
        return
    if low + step > total:
        yield Problem(valid_range, "step", f"{where}: one step from min is larger than the capacity value")
    if not milli:
        unsafe = [k for k, q in present.items() if q < 0 or q > 2**63 - 1]
        for key in unsafe:
            yield Problem(policy if key == "default" else valid_range, key,
                          f"{where}: {key} must be between 0 and 9223372036854775807")
        if unsafe:
            return
    scale = 1000 if milli else 1
    grid = rounded_up(step * scale)
    for key, value in (("default", default), ("max", high)):
        if value is not None and (rounded_up(value * scale) - rounded_up(low * scale)) % grid != 0:
            yield Problem(valid_range, "step", f"{where}: {key} is not a whole number of steps from min")



def _binding_conditions(body: dict) -> Iterator[Problem]:
    """validateDeviceBindingParameters: at most 4 of each, label names, none twice, none in
    both lists, and the two lists set together."""
    conditions, failures = body.get("bindingConditions"), body.get("bindingFailureConditions")
    conditions = conditions if isinstance(conditions, list) else []
    failures = failures if isinstance(failures, list) else []
    for key, listed in (("bindingConditions", conditions), ("bindingFailureConditions", failures)):
        yield from too_many(body, key, MAX_BINDING_CONDITIONS)
        for i, item in enumerate(listed):
            problem = label_key_problem(item) if isinstance(item, str) and item else "must not be empty"
            if problem:
                yield Problem(listed, i, f"{key} entry {item!r}: {problem}")
        yield from duplicates(listed, lambda item: item if isinstance(item, str) else None, key[:-1])
    for i, item in enumerate(failures):
        if item in conditions:
            yield Problem(failures, i, f"binding failure condition {item!r} is also a binding condition")
    if bool(conditions) != bool(failures):
        present = "bindingConditions" if conditions else "bindingFailureConditions"
        yield Problem(body, present, "bindingConditions and bindingFailureConditions are set together", False)


def _key(holder: dict, name: str, what: str) -> Iterator[Problem]:
    problem = qualified_name(name) or (f"must be no more than {MAX_DOMAIN + 1 + MAX_ID} characters"
                                       if len(name) > MAX_DOMAIN + 1 + MAX_ID else None)
    if problem:
        yield Problem(holder, name, f"{what} name {name!r}: {problem}", False)


_SCALARS, _LISTS = ("int", "bool", "string", "version"), ("ints", "bools", "strings", "versions")


def _attribute(attributes: dict, name: str, value: dict) -> Iterator[Problem]:
    """validateDeviceAttribute: exactly one value; strings and versions at most 64
    characters, versions semver 2.0.0, lists not empty."""
    kinds = [k for k in _SCALARS + _LISTS if value.get(k) is not None]
    if len(kinds) != 1:
        yield Problem(attributes, name, f"attribute {name!r} must specify exactly one value, not "
                                        f"{', '.join(kinds) or 'none'}")
    yield from int64(value, "int", f"attribute {name!r}: the integer")
    ints = value.get("ints")
    for index in range(len(ints)) if isinstance(ints, list) else ():
        yield from int64(ints, index, f"attribute {name!r}: an integer")
    for kind in kinds:
        items = value[kind] if kind in _LISTS else [value[kind]]
        if kind in _LISTS and isinstance(items, list) and not items:
            yield Problem(value, kind, f"attribute {name!r}: {kind} must not be empty if specified")
        for item in items if isinstance(items, list) else ():
            if kind in ("string", "strings", "version", "versions") and isinstance(item, str):
                if len(item) > MAX_ATTRIBUTE_VALUE:
                    yield Problem(value, kind, f"attribute {name!r}: a value may not be more than "
                                               f"{MAX_ATTRIBUTE_VALUE} bytes")
                elif kind.startswith("version") and not _SEMVER.fullmatch(item):
                    yield Problem(value, kind, f"attribute {name!r}: {item!r} is not a semver.org 2.0.0 version")


def _taint(taint: dict) -> Iterator[Problem]:
    """validateDeviceTaint: a label key, an effect of the three, a label value."""
    key, effect, value = taint.get("key"), taint.get("effect"), taint.get("value")
    problem = ("must not be empty" if not key else label_key_problem(key)) if isinstance(key, str) else None
    if problem:
        yield Problem(taint, "key", f"taint key {key!r}: {problem}")
    if effect in (None, ""):
        yield Problem(taint, "key" if "key" in taint else None, "a taint needs an effect", False)
    elif effect not in _TAINT_EFFECTS:
        yield Problem(taint, "effect", f"taint effect {effect!r} is not one of {', '.join(_TAINT_EFFECTS)}")
    if isinstance(value, str) and value and not label_value_ok(value):
        yield Problem(taint, "value", f"taint value {value!r} is not a label value")


def _counters(holder: dict) -> Iterator[Problem]:
    """A counter set's or a consumption's counters: at least one, each a DNS label and a quantity."""
    counters = holder.get("counters")
    if counters is None or counters == {}:
        yield Problem(holder, "counters" if "counters" in holder else None, "counters must not be empty", False)
        return
    if not isinstance(counters, dict):
        return
    if len(counters) > MAX_COUNTERS:
        yield Problem(holder, "counters", f"at most {MAX_COUNTERS} counters", False)
    for name, counter in counters.items():
        if dns_label(str(name)):
            yield Problem(counters, name, f"counter name {name!r} {dns_label(str(name))}", False)
        if isinstance(counter, dict):
            yield from quantity(counter, "value", f"counter {name!r}")


def metadata(meta: dict) -> Iterator[Problem]:
    """ValidateObjectMeta: a name that is a DNS subdomain (NameIsDNSSubdomain, LongName: every
    resource.k8s.io kind), labels, annotation keys, a generateName that is a DNS subdomain once
    its trailing '-' is masked."""
    yield from name_problems(meta, "name", "name", dns_subdomain)
    yield from _labels_and_annotations(meta)
    prefix = meta.get("generateName")
    if isinstance(prefix, str) and prefix:
        problem = dns_subdomain(prefix[:-1] + "a" if prefix.endswith("-") else prefix)
        if problem:
            yield Problem(meta, "generateName", f"generateName {prefix!r} {problem}")


def template_metadata(meta: dict) -> Iterator[Problem]:
    """ValidateTemplateObjectMeta (a ResourceClaimTemplate's spec.metadata): labels and
    annotations, and nothing else of ObjectMeta."""
    yield from _labels_and_annotations(meta)
    for key, value in meta.items():
        if key not in ("labels", "annotations") and value not in (None, "", [], {}):  # a zero value is unset:
            # `creationTimestamp: null`, which kubectl's client-side dry-run writes, passes
            yield Problem(meta, key, f"spec.metadata.{key} cannot be set: a template's claims take only labels and "
                                     "annotations from it", False)


def _labels_and_annotations(meta: dict) -> Iterator[Problem]:
    labels, annotations = meta.get("labels"), meta.get("annotations")
    for key, value in labels.items() if isinstance(labels, dict) else ():
        problem = label_key_problem(key)
        if problem:
            yield Problem(labels, key, f"label key {key!r}: {problem}", False)
        elif isinstance(value, str) and not label_value_ok(value):
            yield Problem(labels, key, f"label value {value!r} of {key!r} is not a label value")
    for key in annotations if isinstance(annotations, dict) else ():
        problem = label_key_problem(key)
        if problem:
            yield Problem(annotations, key, f"annotation key {key!r}: {problem}", False)
