"""The variables an exported admission policy defines, as CEL generated from the model's
tables, so a policy sees the same pod specs, containers and requests the rules see in a file
(model.workloads.WORKLOADS, model.claims). Every field read is guarded by `has()`: a missing
field is a runtime error, and a runtime error in a policy with `failurePolicy: Fail` denies.

No expression here needs `flatten()` (ext.Lists v3, usable in new expressions from 1.35 on):
pod specs sit under at most one list or map wildcard, so `podSpecs` is a flat list, and
`containers` is a list of groups (one per pod spec or container path) that rules walk twice.

- `podSpecs`: every pod spec (templates' `spec`, bare pod specs), and `podSpecSites` each
  with its JSON pointer (for mutations);
- `containers`: groups of containers: each pod spec's containers, init containers and
  inline containers (KServe's predictor `model`, Dynamo's `mainContainer`), and the
  container-like objects of CRDs; where a CRD keeps resource requirements under another
  key (TrainJob's `resourcesPerNode`) a group `{'resources': ...}` presents them as
  `resources`;
- `requests`: the top-level requests of a claim or claim template (`REQUEST_FIELDS` gives each
  one's field mappings: `exactly`, its subrequests, or the v1beta1 request itself);
- `replicas`: `[the pods a workload runs]`, or `[]` (admission.ratchet's `pods`);
- `adminNamespaces`: the namespaces `.draguard.yaml` lists, from the policy's parameters."""

from __future__ import annotations

import re
from functools import lru_cache

from ..model.claims import CLAIM_TARGETS, REQUEST_SHAPES
from ..model.workloads import WORKLOADS, path_parts
from ..rules.admission import SPEC_CONTAINERS

PARAMS_ADMIN_NAMESPACES = "adminNamespaces"


def request_fields(q: str) -> str:
    """CEL: the field mappings of request `q` that select devices, generated from the
    model's precedence (model.claims.REQUEST_SHAPES: the first non-empty one wins, else the
    request itself)."""
    cel = f"[{q}]"
    for key, shape in reversed(REQUEST_SHAPES):
        field = f"{q}.{key}"
        cel = f"(has({field}) && size({field}) > 0 ? {field} : {cel})" if shape is list else \
            f"(has({field}) ? [{field}] : {cel})"
    return cel


def _guarded(base: str, keys: list[str]) -> tuple[str, str]:
    """(the CEL presence test of base.k1.k2..., the selection)."""
    tests, here = [], base
    for key in keys:
        here = f"{here}.{key}"
        tests.append(f"has({here})")
    return " && ".join(tests) or "true", here


def _wildcard(base: str, parts: tuple) -> tuple | None:
    """At the first wildcard of `parts` under `base`: (the keys before it, the CEL presence
    test of the collection, the collection, the wildcard, the parts after it); None when
    there is none."""
    for i, part in enumerate(parts):
        if part in ("[*]", "*"):
            keys = list(parts[:i])
            return (keys, *_guarded(base, keys), part, parts[i + 1:])
    return None


def _nodes(base: str, parts: tuple, depth: int = 0) -> tuple[str, int]:
    """CEL for the nodes at `parts` under `base`, and its nesting: 0 for a path without
    wildcards and 1 for one (a flat list), 2 for two (a list of flat lists)."""
    found = _wildcard(base, parts)
    if found is None:
        test, selection = _guarded(base, list(parts))
        return f"({test} ? [{selection}] : [])", 0
    _, test, collection, part, rest = found
    var = f"x{depth}"
    item = var if part == "[*]" else f"{collection}[{var}]"
    if "[*]" in rest or "*" in rest:
        inner, nesting = _nodes(item, rest, depth + 1)
        if nesting != 1:
            raise ValueError(f"{'.'.join(parts)}: more than two wildcards")
        return f"({test} ? {collection}.map({var}, {inner}) : [])", 2
    present, selection = _guarded(item, list(rest))
    selected = collection + (f".filter({var}, {present})" if rest else "") + \
        (f".map({var}, {selection})" if selection != var else "")
    return f"({test} ? {selected} : [])", 1


def flat_nodes(path: str) -> str:
    """CEL: a flat list of the nodes at `path` in `object` (at most one wildcard)."""
    expression, nesting = _nodes("object", path_parts(path))
    if nesting > 1:
        raise ValueError(f"{path}: a flat list needs at most one wildcard")
    return expression


def _pointer(keys) -> str:
    """The JSON pointer of `keys` (RFC 6901: `~` as `~0`, `/` as `~1`)."""
    return "".join("/" + key.replace("~", "~0").replace("/", "~1") for key in keys)


def flat_sites(path: str) -> str:
    """CEL: `{'pointer': JSON pointer, 'spec': node}` for each node `flat_nodes(path)` lists,
    for the patches of a MutatingAdmissionPolicy. Pointer and node come from one comprehension:
    two passes over a map need not visit its keys in the same order (Go's maps do not), so a
    separate list of pointers could not be zipped with the nodes. The list index comes from
    transformList (usable in new expressions from 1.33)."""
    parts = path_parts(path)
    found = _wildcard("object", parts)
    if found is None:
        test, node = _guarded("object", list(parts))
        return f"({test} ? [{_site(repr(_pointer(parts)), node)}] : [])"
    keys, test, collection, part, rest = found
    prefix, suffix = _pointer(keys), _pointer(rest)
    if part == "[*]":
        present, node = _guarded("x0", list(rest))
        site = _site(f"'{prefix}/' + string(i0) + '{suffix}'", node)
        return f"({test} ? {collection}.transformList(i0, x0, {present}, {site}) : [])"
    present, node = _guarded(f"{collection}[x0]", list(rest))
    site = _site(f"'{prefix}/' + x0.replace('~', '~0').replace('/', '~1') + '{suffix}'", node)
    return f"({test} ? {collection}.filter(x0, {present}).map(x0, {site}) : [])"


def _site(pointer: str, node: str) -> str:
    return f"{{'pointer': dyn({pointer}), 'spec': dyn({node})}}"


def node_groups(path: str) -> str:
    """CEL: a list of flat lists of the nodes at `path` in `object` (at most two wildcards)."""
    expression, nesting = _nodes("object", path_parts(path))
    return expression if nesting == 2 else f"[{expression}]"


def _by_kind(name: str, entries: dict[tuple[str, str], str]) -> list[tuple[str, str]]:
    """Two variables: `<name>ByKind`, a map from `variables.kind` to each kind's CEL, and
    `<name>`, the entry of the object's kind (else []). A map keeps the expression shallow
    where a chain of conditionals for 35 kinds would nest 35 deep. Each entry is `dyn()`: the
    apiserver's checker wants one type for a literal's values (HomogeneousAggregateLiterals)."""
    table = "{" + ", ".join(f"'{group}/{kind}': dyn({value})" for (group, kind), value in sorted(entries.items())) + "}"
    return [(f"{name}ByKind", table),
            (name, f"variables.kind in variables.{name}ByKind ? variables.{name}ByKind[variables.kind] : []")]


def _workloads(kinds: frozenset | None):
    return [w for w in WORKLOADS if kinds is None or (w.group, w.kind) in kinds]


def _pod_spec_paths(kinds: frozenset | None) -> dict:
    return {(w.group, w.kind): [f"{p}.spec" for p in w.templates] + list(w.pod_specs)
            for w in _workloads(kinds) if w.templates or w.pod_specs}


def pod_specs(kinds: frozenset | None) -> list[tuple[str, str]]:
    return _by_kind("podSpecs", {kind: " + ".join(flat_nodes(p) for p in paths)
                                 for kind, paths in _pod_spec_paths(kinds).items()})


def pod_spec_sites(kinds: frozenset | None) -> list[tuple[str, str]]:
    """Each pod spec with its JSON pointer (`{'pointer', 'spec'}`), for mutations."""
    return _by_kind("podSpecSites", {kind: " + ".join(flat_sites(p) for p in paths)
                                     for kind, paths in _pod_spec_paths(kinds).items()})


def containers(kinds: frozenset | None) -> list[tuple[str, str]]:
    """Each pod spec's containers (with the inline containers of every kind matched: a pod
    spec of another kind has no such field), then the container-like objects of CRDs."""
    workloads = _workloads(kinds)
    inline = "".join(f" + (has(s.{key}) ? [s.{key}] : [])"
                     for key in sorted({key for w in workloads for key in w.inline_containers}))
    entries = {}
    for w in workloads:
        groups = []
        for path, resources_key in w.containers:
            groups.append(node_groups(path))
            if resources_key != "resources":
                groups.append(f"[{flat_nodes(path)}.filter(x, has(x.{resources_key}))"
                              f".map(x, {{'resources': x.{resources_key}}})]")
        if groups:
            entries[(w.group, w.kind)] = " + ".join(groups)
    own = [("containers", f"variables.podSpecs.map(s, {SPEC_CONTAINERS}{inline})")]
    if not entries:
        return own
    loose = _by_kind("containerLists", entries)
    return loose + [("containers", f"{own[0][1]} + variables.containerLists")]


def requests(kinds: frozenset | None) -> list[tuple[str, str]]:
    paths = {"ResourceClaim": "spec.devices.requests", "ResourceClaimTemplate": "spec.spec.devices.requests"}
    entries = {}
    for group, kind in CLAIM_TARGETS:
        if kinds is None or (group, kind) in kinds:
            test, selection = _guarded("object", paths[kind].split("."))
            entries[(group, kind)] = f"({test} ? {selection} : [])"
    return _by_kind("requests", entries)


def replicas(kinds: frozenset | None) -> list[tuple[str, str]]:
    """`[the pods a workload runs]` (model.workloads.replica_count: the product of its replica
    paths, each 1 when unset), or `[]` where a count is not an integer or the kind has none."""
    entries = {}
    for w in _workloads(kinds):
        if w.replicas:
            counts = []
            for path in w.replicas:
                test, selection = _guarded("object", list(path_parts(path)))
                counts.append(f"({test} ? {selection} : 1)")
            entries[(w.group, w.kind)] = f"[{', '.join(counts)}].all(n, type(n) == int) ? [{' * '.join(counts)}] : []"
    return _by_kind("replicas", entries)


KIND = "(object.apiVersion.contains('/') ? object.apiVersion.split('/')[0] : '') + '/' + object.kind"
ADMIN_NAMESPACES = (f"params != null && has(params.data) && '{PARAMS_ADMIN_NAMESPACES}' in params.data ? "
                    f"params.data['{PARAMS_ADMIN_NAMESPACES}'].split(',') : []")

#: name -> (its variables for the rule's target kinds, the variables they read first)
DEFINITIONS = {"kind": (lambda kinds: [("kind", KIND)], ()),
               "podSpecs": (pod_specs, ("kind",)), "podSpecSites": (pod_spec_sites, ("kind",)),
               "containers": (containers, ("kind", "podSpecs")),
               "requests": (requests, ("kind",)), "replicas": (replicas, ("kind",)),
               "adminNamespaces": (lambda kinds: [("adminNamespaces", ADMIN_NAMESPACES)], ())}


def variables_for(expressions: list[str], kinds: frozenset | None) -> list[dict]:
    """The policy's `variables` that `expressions` read (and those they need), in order; the
    old object's twins of those computed from the object (`on_old`) after them, where the
    expressions read any."""
    found = [{"name": variable, "expression": expression} for name in _wanted(expressions)
             for variable, expression in DEFINITIONS[name][0](kinds)]
    of_object = _of_object()
    if not any(re.search(rf"\bvariables\.{old_name(name)}\b", e) for name in of_object for e in expressions):
        return found
    return found + [{"name": old_name(v["name"]), "expression": on_old(v["expression"])}
                    for v in found if v["name"] in of_object]


def _wanted(expressions: list[str]) -> list[str]:
    """The definitions whose variables `expressions` read, on the object or the old object,
    and those they need."""
    wanted = {name for name in DEFINITIONS if any(re.search(rf"\bvariables\.({name}|{old_name(name)})\b", e)
                                                  for e in expressions)}
    for name in list(wanted):
        wanted.update(DEFINITIONS[name][1])
    return [name for name in DEFINITIONS if name in wanted]


@lru_cache(maxsize=None)
def _of_object() -> frozenset:
    """The names of the variables computed from the admitted object (directly or through
    another such variable), of every definition for every kind."""
    names: set = set()
    for name in DEFINITIONS:
        for variable, expression in DEFINITIONS[name][0](None):
            if re.search(r"\bobject\b", expression) or any(re.search(rf"\bvariables\.{n}\b", expression)
                                                             for n in names):
                names.add(variable)
    return frozenset(names)


def old_name(name: str) -> str:
    """The old object's twin of variable `name`: podSpecs -> oldPodSpecs."""
    return "old" + name[0].upper() + name[1:]


def on_old(expression: str) -> str:
    """`expression` read on the object as it was before an UPDATE: `oldObject`, and the old
    object's twins of the variables computed from the object. (`object` appears in the
    generated CEL only as the identifier.)"""
    of_object = _of_object()
    expression = re.sub(r"\bvariables\.(\w+)\b",
                        lambda m: "variables." + (old_name(m[1]) if m[1] in of_object else m[1]), expression)
    return re.sub(r"\bobject\b", "oldObject", expression)
