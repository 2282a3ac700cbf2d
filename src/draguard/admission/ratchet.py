"""How far an UPDATE may carry an error its object already had: each measure once, as the
webhook's Python and as the CEL of the exported policies, which tests hold equal.

Kubernetes ratchets its own validation (KEP-4008): an update may keep an invalid field it did
not touch. draguard's admission does the same for the catalog's errors, so a legacy workload
that ran before the webhook keeps its controllers' updates, its labels and its image bumps.
But a ratchet only holds a violation where it is, or lets it shrink: an update that keeps an
error and grows what it concerns is denied, whatever else it changes. What grows:

- `pods`: the pods a workload runs (its replicas, parallelism, group size: the product of
  model.workloads' replica paths, each 1 when unset; no measure when one is not an integer);
- `device-plugin GPUs`: the units its containers ask for of the accelerator resources
  (model.gpu.LEGACY_RESOURCE; limits or requests, the larger of each), summed over its pod
  specs; a value that is no quantity counts 0 (schema-invalid's to say);
- `containers on shared claims`: containers that name a pod claim entry with a
  `resourceClaimName` (one claim that every pod shares), times its pods: more tenants on
  one claim;
- `request devices`: a claim's or template's request asking for more devices than the same
  request did (`allocationMode: All` counts as every device; a `firstAvailable` request,
  its largest alternative);
- `request selectors`: a request or subrequest that lost a selector it had, or names another
  DeviceClass: it selects wider (or other) devices than before;
- `device variable values`: a device-selecting variable (model.gpu.DEVICE_ENV_VARS) set to a
  value no container of the old object gave it (`CUDA_VISIBLE_DEVICES` from `0` to `all`):
  another selection, not a wider one only, but no update should pick the devices anew;
  a value that hides the devices is no selection;
- `host GPU paths`: a hostPath onto GPU devices or driver state (model.gpu.HOST_GPU_PATH)
  the old object did not mount (`/dev/nvidia0` widened to `/dev`);
- `DaemonSet nodes`: a DaemonSet runs a pod on every node it selects and tolerates, so one
  that loses a `nodeSelector` entry, gains a toleration, or changes (or loses) its required
  node affinity runs more pods."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator

from ..core.quantity import is_quantity, parse_quantity
from ..model.claims import CLAIM_TARGETS, DeviceRequest, device_requests, requests_of
from ..model.gpu import (
    DEVICE_ENV_VARS, HOST_GPU_PATH_RE2, LEGACY_RESOURCE, device_env, hides_devices, hides_devices_cel, host_gpu_path,
)
from ..model.manifest import Manifest
from ..model.pods import mapping, mappings, pod_sites, text
from ..model.workloads import WORKLOADS, replica_count
from ..rules.admission import SPEC_CONTAINERS
from ..rules.legacy import gpu_alias_cel
from .variables import on_old, request_fields

_DAEMONSET = ("apps", "DaemonSet")
#: what `allocationMode: All` counts as in CEL (an int that no count reaches)
_ALL = (1 << 62)


# --- the webhook's measures (Python) ----------------------------------------------------------

def growth(old: dict, new: dict) -> list[str]:
    """What the update from `old` to `new` grows, each said as 'pods 1 -> 50'; empty when
    nothing grew."""
    was, now = Manifest.from_data(old), Manifest.from_data(new)
    before, after = _measures(was), _measures(now)
    grown = [f"{name} {_count(before[name])} -> {_count(value)}" for name, value in after.items()
             if name in before and value > before[name]]
    chosen = _selections(was)
    grown += [f"{name} {', '.join(sorted(values - chosen[name]))}" for name, values in _selections(now).items()
              if values - chosen[name]]
    return grown + list(_wider_requests(was, now)) + list(_more_nodes(was, now))


def _count(value: float) -> str:
    return "all" if value == math.inf else str(int(value)) if value == int(value) else str(value)


def _measures(manifest: Manifest) -> dict[str, float]:
    measures: dict[str, float] = {}
    pods = replica_count(manifest)
    if pods is not None:
        measures["pods"] = pods
    sites = pod_sites(manifest)
    measures["device-plugin GPUs"] = sum(_legacy_units(c.resources, c.gpu_aliases) for site in sites
                                         for c in site.containers)
    measures["containers on shared claims"] = sum(map(_shares, sites)) * (pods if pods is not None else 1)
    for request in requests_of(manifest):
        measures[f"request '{request.name}' devices"] = max(map(_devices, request.leaves()))
    return measures


def _selections(manifest: Manifest) -> dict[str, frozenset]:
    """What the pod specs select by hand: each device variable's `NAME=value` (a valueFrom
    reads as its source, _variable_value), and the host GPU paths they mount."""
    sites = pod_sites(manifest)
    return {"device variable values": frozenset(
                f"{name}={_variable_value(entry)}" for site in sites for c in site.containers
                for entry, name in device_env(c) if not hides_devices(entry.get("value"))),
            "host GPU paths": frozenset(path for site in sites for v in site.volumes if (path := host_gpu_path(v)))}


def _more_nodes(old: Manifest, new: Manifest) -> Iterator[str]:
    if (new.group, new.kind) != _DAEMONSET:
        return
    was, now = [site.spec for site in pod_sites(old)], [site.spec for site in pod_sites(new)]
    kept = {(k, v) for spec in now for k, v in mapping(spec.get("nodeSelector")).items()}
    lost = sorted(f"{k}={v}" for spec in was for k, v in mapping(spec.get("nodeSelector")).items()
                  if (k, v) not in kept)
    tolerated = [t for spec in was for t in _tolerations(spec)]
    gained = [t for spec in now for t in _tolerations(spec) if t not in tolerated]
    required = [r for spec in now if (r := _required_affinity(spec)) is not None]
    loosened = any(r not in required for spec in was if (r := _required_affinity(spec)) is not None)
    said = [f"nodeSelector {x} dropped" for x in lost] + \
        [f"toleration {json.dumps(t, sort_keys=True)} added" for t in gained] + \
        ["required node affinity changed"] * loosened
    if said:
        yield f"DaemonSet nodes ({', '.join(said)})"


def _required_affinity(spec: dict):
    """The pod spec's required node affinity, None without one (any change of it may reach
    more nodes: it is not read further)."""
    affinity = mapping(mapping(spec.get("affinity")).get("nodeAffinity"))
    return affinity.get("requiredDuringSchedulingIgnoredDuringExecution")


def _tolerations(spec: dict) -> list:
    value = spec.get("tolerations")
    return value if isinstance(value, list) else []


def _variable_value(entry: dict) -> str:
    """The value as set, or the valueFrom it is read from (a Secret's key is another selection)."""
    value = entry.get("value")
    if isinstance(value, str):
        return value
    return f"(valueFrom {json.dumps(entry['valueFrom'], sort_keys=True)})" if "valueFrom" in entry else ""


def _amount(value) -> float:
    """A resource amount as the CEL quantity library reads it; 0 where it is no quantity."""
    if isinstance(value, bool) or not isinstance(value, (str, int)) or not is_quantity(str(value), trim=False):
        return 0.0
    return float(parse_quantity(str(value), trim=False))


def _legacy_units(resources: dict, aliases: tuple = ()) -> float:
    """The units of device-plugin GPUs (and of the CRD's own names for them) asked for."""
    limits, requests = mapping(resources.get("limits")), mapping(resources.get("requests"))
    names = {name for name in (*limits, *requests)
             if isinstance(name, str) and (LEGACY_RESOURCE.match(name) or name in aliases)}
    return sum(max(_amount(limits[n]) if n in limits else 0.0, _amount(requests[n]) if n in requests else 0.0)
               for n in names)


def _shares(site) -> int:
    """The containers and init containers of a pod spec that name a shared claim's entry."""
    shared = {e["name"] for e in site.claims if isinstance(e.get("name"), str) and text(e.get("resourceClaimName"))}
    containers = mappings(site.spec.get("containers")) + mappings(site.spec.get("initContainers"))
    return sum(1 for c in containers
               if any(isinstance(x.get("name"), str) and x["name"] in shared
                      for x in mappings(mapping(c.get("resources")).get("claims"))))


def _devices(request: DeviceRequest) -> float:
    return math.inf if request.mode == "All" else request.count


def _wider_requests(old: Manifest, new: Manifest) -> Iterator[str]:
    before = {r.full_name: r for r in device_requests(old)}
    for request in device_requests(new):
        was = before.get(request.full_name)
        if was is None:
            continue
        if was.class_name != request.class_name:
            yield f"request '{request.full_name}' DeviceClass {was.class_name} -> {request.class_name}"
        lost = [s for s in was.selectors if s not in request.selectors]
        if lost:
            yield f"request '{request.full_name}' selectors {len(was.selectors)} -> {len(request.selectors)}"


# --- the policies' measures (CEL on `object` and the policy's variables) ----------------------

def _amount_cel(value: str) -> str:
    return (f"((type({value}) == string || type({value}) == int) && isQuantity(string({value})) ? "
            f"quantity(string({value})).asApproximateFloat() : 0.0)")


_LEGACY = f"(k.matches(r'{LEGACY_RESOURCE.pattern}') || {gpu_alias_cel()})"
_UNITS = (
    "(!has(c.resources) ? 0.0 : ([0.0] + "
    f"(has(c.resources.limits) ? c.resources.limits.filter(k, {_LEGACY}).map(k, [{_amount_cel('c.resources.limits[k]')}, "
    f"has(c.resources.requests) && k in c.resources.requests ? {_amount_cel('c.resources.requests[k]')} : 0.0].max()) "
    ": []) + "
    f"(has(c.resources.requests) ? c.resources.requests.filter(k, {_LEGACY} && "
    f"!(has(c.resources.limits) && k in c.resources.limits)).map(k, {_amount_cel('c.resources.requests[k]')}) : [])"
    ").sum())")
GPU_UNITS = f"([0.0] + variables.containers.map(g, ([0.0] + g.map(c, {_UNITS})).sum())).sum()"
_PODS = "(variables.replicas.size() == 1 ? variables.replicas[0] : 1)"
_SHARED_NAMES = ("(has(s.resourceClaims) ? s.resourceClaims.filter(e, has(e.resourceClaimName) && "
                 "type(e.resourceClaimName) == string && e.resourceClaimName != '' && has(e.name) && "
                 "type(e.name) == string).map(e, e.name) : [])")
SHARED = (f"([0] + variables.podSpecs.map(s, {SPEC_CONTAINERS}.filter(c, has(c.resources) && "
          f"has(c.resources.claims) && c.resources.claims.exists(x, has(x.name) && x.name in {_SHARED_NAMES})).size()))"
          f".sum() * {_PODS}")


def _devices_cel(f: str) -> str:
    return (f"(has({f}.allocationMode) && {f}.allocationMode == 'All' ? {_ALL} : "
            f"has({f}.count) && type({f}.count) == int && {f}.count != 0 ? {f}.count : 1)")


def _name(q: str) -> str:
    return f"(has({q}.name) && type({q}.name) == string ? {q}.name : '')"


def _class(f: str) -> str:
    return (f"(has({f}.deviceClassName) && type({f}.deviceClassName) == string ? {f}.deviceClassName : '')")


def _selectors(f: str) -> str:
    return (f"(has({f}.selectors) ? {f}.selectors.filter(x, type(x) == map).map(x, has(x.cel) && "
            f"type(x.cel) == map && has(x.cel.expression) && type(x.cel.expression) == string ? "
            f"x.cel.expression : '') : [])")


def _leaf(q: str, f: str) -> str:
    """CEL: the full name of field mapping `f` of request `q`, as DeviceRequest.full_name."""
    return f"(has({q}.firstAvailable) && !has({q}.exactly) ? {_name(q)} + '/' + {_name(f)} : {_name(q)})"


_SAME_REQUEST = "variables.requests.exists(q, variables.oldRequests.exists(o, {name_q} == {name_o} && {test}))"
MORE_DEVICES = _SAME_REQUEST.format(
    name_q=_name("q"), name_o=_name("o"),
    test=f"([0] + {request_fields('q')}.map(f, {_devices_cel('f')})).max() > "
         f"([0] + {request_fields('o')}.map(f, {_devices_cel('f')})).max()")
WIDER = _SAME_REQUEST.format(
    name_q=_name("q"), name_o=_name("o"),
    test=f"{request_fields('q')}.exists(f, {request_fields('o')}.exists(g, {_leaf('q', 'f')} == {_leaf('o', 'g')} && "
         f"({_class('f')} != {_class('g')} || {_selectors('g')}.exists(x, !(x in {_selectors('f')})))))")


def _device_entry(e: str) -> str:
    """CEL: env entry `e` sets a device variable to a value that does not hide the devices."""
    return (f"has({e}.name) && type({e}.name) == string && {e}.name in {sorted(DEVICE_ENV_VARS)} && "
            f"!{hides_devices_cel(e)}")


def _same_value_cel(e: str, o: str) -> str:
    """CEL: env entries `e` and `o` set the same value, or read it from the same valueFrom
    (_variable_value's equality)."""
    def valued(x: str) -> str:
        return f"has({x}.value) && type({x}.value) == string"
    return (f"({valued(e)} ? {valued(o)} && {o}.value == {e}.value : !({valued(o)}) && "
            f"has({e}.valueFrom) == has({o}.valueFrom) && (!has({e}.valueFrom) || {o}.valueFrom == {e}.valueFrom))")


def _host_gpu(v: str) -> str:
    return (f"has({v}.hostPath) && has({v}.hostPath.path) && type({v}.hostPath.path) == string && "
            f"{v}.hostPath.path.matches(r'{HOST_GPU_PATH_RE2}')")


NEW_VARIABLE_VALUES = (
    f"variables.containers.exists(g, g.exists(c, has(c.env) && c.env.exists(e, {_device_entry('e')} && "
    f"!{on_old('variables.containers')}.exists(h, h.exists(d, has(d.env) && d.env.exists(o, {_device_entry('o')} && "
    f"o.name == e.name && {_same_value_cel('e', 'o')}))))))")
NEW_HOST_PATHS = (
    f"variables.podSpecs.exists(s, has(s.volumes) && s.volumes.exists(v, {_host_gpu('v')} && "
    f"!{on_old('variables.podSpecs')}.exists(t, has(t.volumes) && t.volumes.exists(w, {_host_gpu('w')} && "
    f"w.hostPath.path == v.hostPath.path))))")


_REQUIRED_FIELD = "{s}.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
_REQUIRED = ("has({s}.affinity) && type({s}.affinity) == map && has({s}.affinity.nodeAffinity) && "
             "type({s}.affinity.nodeAffinity) == map && "
             "has({s}.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution)")
#: CEL: a DaemonSet's pod specs dropped a nodeSelector entry, gained a toleration, or changed
#: (or lost) the required node affinity they had
MORE_NODES = (
    f"object.kind == 'DaemonSet' && ("
    f"{on_old('variables.podSpecs')}.exists(t, has(t.nodeSelector) && t.nodeSelector.exists(k, "
    f"!variables.podSpecs.exists(s, has(s.nodeSelector) && k in s.nodeSelector && "
    f"s.nodeSelector[k] == t.nodeSelector[k]))) || "
    f"variables.podSpecs.exists(s, has(s.tolerations) && s.tolerations.exists(x, "
    f"!{on_old('variables.podSpecs')}.exists(t, has(t.tolerations) && x in t.tolerations))) || "
    f"{on_old('variables.podSpecs')}.exists(t, {_REQUIRED.format(s='t')} && "
    f"!variables.podSpecs.exists(s, {_REQUIRED.format(s='s')} && {_REQUIRED_FIELD.format(s='s')} == "
    f"{_REQUIRED_FIELD.format(s='t')})))")


def _kinds_with(kinds: frozenset | None, found) -> bool:
    return kinds is None or any(found(group, kind) for group, kind in kinds)


def growth_cel(kinds: frozenset | None) -> list[tuple[str, str]]:
    """(what grows, CEL true when an UPDATE grows it) for each measure the `kinds` have."""
    pods = {(w.group, w.kind) for w in WORKLOADS if w.templates or w.pod_specs or w.containers}
    scaled = {(w.group, w.kind) for w in WORKLOADS if w.replicas}
    measures = []
    if _kinds_with(kinds, lambda g, k: (g, k) in scaled):
        measures.append(("pods", "variables.replicas.size() == 1 && variables.oldReplicas.size() == 1 && "
                                 "variables.replicas[0] > variables.oldReplicas[0]"))
    if _kinds_with(kinds, lambda g, k: (g, k) in pods):
        measures.append(("device-plugin GPUs", f"{GPU_UNITS} > {on_old(GPU_UNITS)}"))
        measures.append(("containers on shared claims", f"{SHARED} > {on_old(SHARED)}"))
        measures.append(("device variable values", NEW_VARIABLE_VALUES))
        measures.append(("host GPU paths", NEW_HOST_PATHS))
    if _kinds_with(kinds, lambda g, k: (g, k) == _DAEMONSET):
        measures.append(("DaemonSet nodes", MORE_NODES))
    if _kinds_with(kinds, lambda g, k: (g, k) in CLAIM_TARGETS):
        measures.append(("request devices", MORE_DEVICES))
        measures.append(("request selectors", WIDER))
    return measures


def grew_cel(kinds: frozenset | None) -> str | None:
    """CEL: an UPDATE grows one of the measures of `kinds` (None where they have none)."""
    measures = growth_cel(kinds)
    return " || ".join(f"({test})" for _, test in measures) or None


def grown_names_cel(kinds: frozenset | None) -> str:
    """CEL: the names of the measures an UPDATE grows, joined for a message."""
    return "[" + ", ".join(f"({test}) ? '{name}' : ''" for name, test in growth_cel(kinds)) + \
        "].filter(n, n != '').join(', ')"
