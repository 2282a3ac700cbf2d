"""Scenarios where draguard once disagreed with the upstream allocator, kept by name as data
(not as generator seeds, so that tuning the generator cannot lose them)."""

from support.oracle import FEATURES, GPU

_GPU_CLASS = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"},
              "spec": {"selectors": [{"cel": {"expression": f"device.driver == '{GPU}'"}}]}}


def _slice(name: str, count: int, **spec) -> dict:
    """A slice of pool p (generation 1) on node-0 unless `spec` places it or names its pool."""
    body = {"driver": GPU, "pool": {"name": "p", "generation": 1, "resourceSliceCount": count}}
    if not {"nodeName", "nodeSelector", "allNodes"} & set(spec):
        body["nodeName"] = "node-0"
    body.update(spec)
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": name}, "spec": body}


_ONE_GPU_CLAIM = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                  "metadata": {"name": "claim-0", "namespace": "default"},
                  "spec": {"devices": {"requests": [{"name": "r0", "exactly": {
                      "deviceClassName": "gpu", "allocationMode": "ExactCount", "count": 1}}]}}}


def _selected(name: str, requirement: dict, labels: dict, field: str = "matchExpressions") -> dict:
    """One device in a pool placed by a node selector with one requirement."""
    return {"id": name, "deviceClasses": [_GPU_CLASS],
            "resourceSlices": [_slice("p", 1, nodeSelector={"nodeSelectorTerms": [{field: [requirement]}]},
                                      devices=[{"name": "dev-0"}])],
            "claims": [_ONE_GPU_CLAIM], "allocatedDevices": [],
            "node": {"metadata": {"name": "node-0", "labels": labels}}, "features": FEATURES}


def _claim(requests: list, **devices) -> dict:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": "claim-0", "namespace": "default"},
            "spec": {"devices": {"requests": requests, **devices}}}


def _pool(name: str, slices: list) -> dict:
    """One GPU claim against the pool these slices make."""
    return {"id": name, "deviceClasses": [_GPU_CLASS], "resourceSlices": slices, "claims": [_ONE_GPU_CLAIM],
            "allocatedDevices": [], "node": {"metadata": {"name": "node-0", "labels": {}}}, "features": FEATURES}


def _skipping(name: str, declared: bool, **features) -> dict:
    """One GPU claim against a device of a slice that skips node operations, on a node that
    declares DRAOptionalNodeOperations or not."""
    node = {"metadata": {"name": "node-0", "labels": {}}}
    if declared:
        node["status"] = {"declaredFeatures": ["DRAOptionalNodeOperations"]}
    return {**_pool(name, [_slice("p", 1, devices=[{"name": "dev-0"}], skipNodeOperations=["*"])]),
            "node": node, "features": dict(FEATURES, **features)}


def _constrained(name: str, devices: list, constraint: dict, features: dict, count: int = 2,
                 **request) -> dict:
    """One request (with the fields in `request`) for `count` of these devices of pool p,
    under one claim constraint, with `features` on besides the stable ones."""
    return {**_pool(name, [_slice("p", 1, devices=devices)]),
            "claims": [_claim([{"name": "r0", "exactly": {"deviceClassName": "gpu", "allocationMode": "ExactCount",
                                                           "count": count, **request}}],
                              constraints=[constraint])],
            "features": dict(FEATURES, **features)}


def _numa(name: str, sets: list, constraint: str, **features) -> dict:
    """Two of these devices, one per NUMA value (a list or an int), under `constraint` on numa."""
    devices = [{"name": f"dev-{i}", "attributes": {"numa": {"ints" if isinstance(v, list) else "int": v}}}
               for i, v in enumerate(sets)]
    return _constrained(name, devices, {constraint: f"{GPU}/numa"}, features)


def _deriving(name: str, expression: str, constraint: str, count: int = 2, attribute: str = "bucket/x") -> dict:
    """DRADerivedAttributes on: one request for `count` of four GPUs (index 0-3, model a, a,
    b, b) that derives `attribute` with `expression`, under a `constraint` on it."""
    devices = [{"name": f"dev-{i}", "attributes": {"index": {"int": i}, "model": {"string": "ab"[i // 2]}}}
               for i in range(4)]
    return _constrained(name, devices, {constraint: attribute}, {"DerivedAttributes": True}, count,
                        derivedAttributes=[{"name": attribute, "expression": expression}])


REGRESSIONS: dict[str, dict] = {
    # A pool whose slices disagree on resourceSliceCount: upstream reads the count from the
    # pool's first slice in input order (here the counters slice: 2 slices, complete);
    # draguard once read it from the first node-local slice (3: incomplete, unschedulable).
    "pool-slice-count-from-first-slice": {
        "id": "pool-slice-count-from-first-slice",
        "deviceClasses": [_GPU_CLASS],
        "resourceSlices": [
            _slice("p-counters", 2, sharedCounters=[{"name": "shared", "counters": {"units": {"value": "3"}}}]),
            _slice("p-devices", 3, devices=[{"name": "dev-0", "attributes": {"model": {"string": "a"}},
                                             "consumesCounters": [{"counterSet": "shared",
                                                                   "counters": {"units": {"value": "1"}}}]}]),
        ],
        "claims": [{"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                    "metadata": {"name": "claim-0", "namespace": "default"},
                    "spec": {"devices": {"requests": [{"name": "r0", "exactly": {
                        "deviceClassName": "gpu", "allocationMode": "ExactCount", "count": 1}}]}}}],
        "allocatedDevices": [],
        "node": {"metadata": {"name": "node-0", "labels": {}}},
        "features": FEATURES,
    },
    # Node selectors upstream cannot parse fail the allocation (GatherPools), they do not
    # "not match" (draguard once returned unschedulable for each of these).
    **{name: _selected(name, requirement, {"rack": "r1", "gpus": "4"}, field) for name, requirement, field in [
        ("selector-exists-with-values", {"key": "rack", "operator": "Exists", "values": ["r1"]}, "matchExpressions"),
        ("selector-in-without-values", {"key": "rack", "operator": "In", "values": []}, "matchExpressions"),
        ("selector-gt-not-an-integer", {"key": "gpus", "operator": "Gt", "values": ["x"]}, "matchExpressions"),
        ("selector-gt-two-values", {"key": "gpus", "operator": "Gt", "values": ["1", "2"]}, "matchExpressions"),
        ("selector-bad-label-key", {"key": "bad key!", "operator": "Exists"}, "matchExpressions"),
        ("selector-fields-two-values", {"key": "metadata.name", "operator": "In", "values": ["node-0", "node-1"]},
         "matchFields"),
        ("selector-fields-exists", {"key": "metadata.name", "operator": "Exists"}, "matchFields"),
    ]},
    # Gt/Lt values are strconv.ParseInt integers and label values at once: "+3" parses as an
    # integer but is no label value (an error); a node label that is not an integer never
    # matches (unschedulable, not an error).
    "selector-gt-signed": _selected("selector-gt-signed", {"key": "gpus", "operator": "Gt", "values": ["+3"]},
                                    {"gpus": "4"}),
    "selector-lt-label-not-integer": _selected("selector-lt-label-not-integer",
                                               {"key": "gpus", "operator": "Lt", "values": ["9"]}, {"gpus": "many"}),
    # Pool completeness, as GatherPools decides it: the node's own slices of the newest
    # generation it sees complete the pool when they reach resourceSliceCount, whatever lies
    # elsewhere; only otherwise are the pool's other slices counted (and a newer generation
    # elsewhere makes it obsolete).
    "pool-complete-on-node-despite-newer-elsewhere": _pool("pool-complete-on-node-despite-newer-elsewhere", [
        _slice("p-here", 1, devices=[{"name": "dev-0"}]),
        _slice("p-there", 1, nodeName="node-1", pool={"name": "p", "generation": 2, "resourceSliceCount": 1},
               devices=[{"name": "dev-1"}])]),
    "pool-complete-on-node-extra-slice-elsewhere": _pool("pool-complete-on-node-extra-slice-elsewhere", [
        _slice("p-here", 1, devices=[{"name": "dev-0"}]),
        _slice("p-there", 1, nodeName="node-1", devices=[{"name": "dev-1"}])]),
    "pool-slice-count-zero": _pool("pool-slice-count-zero", [_slice("p", 0, devices=[{"name": "dev-0"}])]),
    # the stable variant ignores slices whose devices name compatibilityGroups, which leaves
    # their pool incomplete
    # a counter set listed twice in one slice makes the pool invalid (getAndValidateCounterSets)
    "pool-counter-set-twice-in-a-slice": _pool("pool-counter-set-twice-in-a-slice", [
        _slice("c", 2, sharedCounters=[{"name": "s", "counters": {"m": {"value": "2"}}},
                                       {"name": "s", "counters": {"m": {"value": "1"}}}]),
        _slice("d", 2, devices=[{"name": "dev-0", "consumesCounters": [{"counterSet": "s", "counters": {
            "m": {"value": "1"}}}]}])]),
    # perDeviceNodeSelection is a pointer: set to false, the slice is still skipped while
    # DRAPartitionableDevices is off (GatherPools), and placed by its nodeName while it is on
    "per-device-node-selection-false-gate-off": {
        **_pool("per-device-node-selection-false-gate-off",
                [_slice("p", 1, devices=[{"name": "dev-0"}], perDeviceNodeSelection=False)]),
        "features": dict(FEATURES, PartitionableDevices=False)},
    "per-device-node-selection-false": _pool("per-device-node-selection-false",
                                             [_slice("p", 1, devices=[{"name": "dev-0"}], perDeviceNodeSelection=False)]),
    # the newer variants restrict the allocation to the node for a device that binds to it, with
    # or without DRADeviceBindingConditions (createNodeSelector); the stable one does not know it
    "binds-to-node-gate-off": {
        **_pool("binds-to-node-gate-off", [_slice("p", 1, allNodes=True, devices=[{"name": "dev-0", "bindsToNode": True}])]),
        "features": dict(FEATURES, ConsumableCapacity=True)},
    "pool-compatibility-groups-ignored": _pool("pool-compatibility-groups-ignored", [
        _slice("p-counters", 2, sharedCounters=[{"name": "s", "counters": {"units": {"value": "2"}}}]),
        _slice("p-devices", 2, devices=[{"name": "dev-0", "consumesCounters": [
            {"counterSet": "s", "counters": {"units": {"value": "1"}}, "compatibilityGroups": ["mig"]}]}])]),
    # A constraint's attribute name without a domain finds only an attribute published the
    # same way (lookupAttribute); these devices publish the qualified name: unschedulable.
    "constraint-unqualified-name": {
        **_pool("constraint-unqualified-name", [_slice("p", 1, devices=[
            {"name": f"dev-{i}", "attributes": {f"{GPU}/model": {"string": "a"}}} for i in range(2)])]),
        "claims": [{"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                    "metadata": {"name": "claim-0", "namespace": "default"},
                    "spec": {"devices": {"requests": [{"name": "r0", "exactly": {
                        "deviceClassName": "gpu", "allocationMode": "ExactCount", "count": 2}}],
                        "constraints": [{"matchAttribute": "model"}]}}}],
    },
    # adminAccess written on a subrequest is not a field of DeviceSubRequest: the subrequest
    # is an ordinary one and cannot take the device another claim holds.
    "subrequest-admin-access-ignored": {
        **_pool("subrequest-admin-access-ignored", [_slice("p", 1, devices=[{"name": "dev-0"}])]),
        "claims": [{"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                    "metadata": {"name": "claim-0", "namespace": "default"},
                    "spec": {"devices": {"requests": [{"name": "r0", "firstAvailable": [{
                        "name": "s0", "deviceClassName": "gpu", "allocationMode": "ExactCount", "count": 1,
                        "adminAccess": True}]}]}}}],
        "allocatedDevices": [{"driver": GPU, "pool": "p", "device": "dev-0"}],
    },
    # distinctAttribute (incubating, with DRAConsumableCapacity): the search must pass over the
    # second device of model a and take the one of model b; without the gate the stable
    # variant sees an empty constraint (draguard once did so under every gate).
    **{name: {
        **_pool(name, [_slice("p", 1, devices=[
            {"name": f"dev-{i}", "attributes": {"model": {"string": model}}} for i, model in enumerate("aab")])]),
        "claims": [{"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                    "metadata": {"name": "claim-0", "namespace": "default"},
                    "spec": {"devices": {"requests": [{"name": "r0", "exactly": {
                        "deviceClassName": "gpu", "allocationMode": "ExactCount", "count": 2}}],
                        "constraints": [{"distinctAttribute": "model"}]}}}],
        "features": features,
    } for name, features in [("distinct-attribute-skips-a-duplicate", dict(FEATURES, ConsumableCapacity=True)),
                             ("distinct-attribute-without-its-gate", FEATURES)]},
    # A shared device (allowMultipleAllocations, DRAConsumableCapacity): the newer variants go
    # on with a request's next device after the one just taken (startLocation), so one request
    # of two devices cannot take the single shared GPU twice; two claims can share it.
    "shared-device-once-per-request": {
        **_pool("shared-device-once-per-request", [_slice("p", 1, devices=[
            {"name": "dev-0", "allowMultipleAllocations": True, "capacity": {"memory": {"value": "40Gi"}}}])]),
        "claims": [{"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                    "metadata": {"name": "claim-0", "namespace": "default"},
                    "spec": {"devices": {"requests": [{"name": "r0", "exactly": {
                        "deviceClassName": "gpu", "allocationMode": "ExactCount", "count": 2,
                        "capacity": {"requests": {"memory": "10Gi"}}}}]}}}],
        "features": dict(FEATURES, ConsumableCapacity=True),
    },
    # What allocated claims' shares consume (AggregatedCapacity) counts, rounded by the request
    # policy's step: 28Gi held, 12.5Gi asked rounds up to 16Gi, over the 40Gi the GPU has.
    "shared-device-capacity-held": {
        **_pool("shared-device-capacity-held", [_slice("p", 1, devices=[
            {"name": "dev-0", "allowMultipleAllocations": True, "capacity": {"memory": {
                "value": "40Gi", "requestPolicy": {"default": "8Gi", "validRange": {"min": "4Gi", "step": "4Gi"}}}}}])]),
        "claims": [{"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                    "metadata": {"name": "claim-0", "namespace": "default"},
                    "spec": {"devices": {"requests": [{"name": "r0", "exactly": {
                        "deviceClassName": "gpu", "allocationMode": "ExactCount", "count": 1,
                        "capacity": {"requests": {"memory": "12.5Gi"}}}}]}}}],
        "allocatedShared": [{"driver": GPU, "pool": "p", "device": "dev-0",
                             "shareID": "00000000-0000-0000-0000-000000000001", "consumedCapacity": {"memory": "28Gi"}}],
        "features": dict(FEATURES, ConsumableCapacity=True),
    },
    # The newer variants read distinctAttribute whatever DRAConsumableCapacity says (only the
    # stable one does not know it); this one runs for DRAListTypeAttributes: the two devices'
    # NUMA sets overlap, so two devices cannot be distinct.
    "distinct-without-consumable-capacity": _numa("distinct-without-consumable-capacity", [[0, 1], [1, 2]],
                                                  "distinctAttribute", ListTypeAttributes=True),
    # ... and refuse capacity requests while DRAConsumableCapacity is off (the stable variant
    # ignores a field it does not know).
    "capacity-requests-gate-off": {
        **_pool("capacity-requests-gate-off", [_slice("p", 1, devices=[{"name": "dev-0"}])]),
        "claims": [_claim([{"name": "r0", "firstAvailable": [{"name": "sub0", "deviceClassName": "gpu",
                                                              "capacity": {"requests": {"memory": "1Gi"}}}]}])],
        "features": dict(FEATURES, ListTypeAttributes=True),
    },
    # A constraint's attribute is a pointer upstream: an empty name is set, names no attribute
    # and so no device meets it (unschedulable); only a constraint with neither field is an error.
    "match-attribute-empty-name": _constrained("match-attribute-empty-name", [{"name": "dev-0"}, {"name": "dev-1"}],
                                               {"matchAttribute": ""}, {}),
    "distinct-attribute-empty-name": _constrained("distinct-attribute-empty-name", [{"name": "dev-0"}, {"name": "dev-1"}],
                                                  {"distinctAttribute": ""}, {"ConsumableCapacity": True}),
    # A name the driver publishes twice, bare and as '<driver>/name': a constraint reads the
    # qualified one whatever the input order (lookupAttribute tries the name as given first).
    # draguard once kept whichever came last: with the qualified one first, dev-0 read 1.
    **{name: _constrained(name, [{"name": "dev-0", "attributes": {f"{GPU}/v": {"int": 2}, "v": {"int": 1}}},
                                 {"name": "dev-1", "attributes": {"v": {"int": value}}}],
                          {"matchAttribute": f"{GPU}/v"}, {})
       for name, value in [("match-attribute-qualified-over-bare", 2), ("match-attribute-bare-shadowed", 1)]},
    # DRAListTypeAttributes: matchAttribute keeps the running intersection of the devices' sets
    # (a scalar is a set of one); without the gate a list has no value to compare, so two
    # devices with lists never match.
    "match-attribute-over-sets": _numa("match-attribute-over-sets", [[0, 1], [2, 3], 1], "matchAttribute",
                                       ListTypeAttributes=True),
    "match-attribute-lists-without-the-gate": _numa("match-attribute-lists-without-the-gate", [[0, 1], [0, 1]],
                                                    "matchAttribute", ConsumableCapacity=True),
    # DRAOptionalNodeOperations: the experimental variant takes a device of a slice that skips
    # node operations only with the gate and on a node that declares the feature, and copies
    # the list into the result; without the gate (another experimental feature on) it does not
    # take the device at all.
    "skip-node-operations-declared": _skipping("skip-node-operations-declared", True, OptionalNodeOperations=True),
    "skip-node-operations-undeclared": _skipping("skip-node-operations-undeclared", False,
                                                 OptionalNodeOperations=True),
    "skip-node-operations-gate-off": _skipping("skip-node-operations-gate-off", True, ListTypeAttributes=True),
    # DRADeviceCompatibilityGroups: devices drawing from one counter set must share a group;
    # an allocated device counts (its groups read from the slice), and a device without
    # groups goes only with others without.
    "compatibility-groups-allocated-peer": {
        **_pool("compatibility-groups-allocated-peer", [
            _slice("p-counters", 2, sharedCounters=[{"name": "memory", "counters": {"slices": {"value": "4"}}}]),
            _slice("p-devices", 2, devices=[
                {"name": f"part-{i}", "consumesCounters": [dict(
                    {"counterSet": "memory", "counters": {"slices": {"value": "1"}}},
                    **({"compatibilityGroups": groups} if groups else {}))]}
                for i, groups in enumerate([["a"], ["b"], None, ["b", "c"]])])]),
        "allocatedDevices": [{"driver": GPU, "pool": "p", "device": "part-1"}],
        "claims": [_claim([{"name": "r0", "exactly": {"deviceClassName": "gpu", "allocationMode": "ExactCount",
                                                       "count": 1}}])],
        "features": dict(FEATURES, CompatibilityGroups=True),
    },
    # Every variant refuses a request with derived attributes while DRADerivedAttributes is off
    # (here the experimental one, run for another gate).
    "derived-attributes-gate-off": {
        **_pool("derived-attributes-gate-off", [_slice("p", 1, devices=[{"name": "dev-0"}])]),
        "claims": [_claim([{"name": "r0", "exactly": {
            "deviceClassName": "gpu", "derivedAttributes": [{"name": "derived/x", "expression": "1"}]}}],
            constraints=[{"matchAttribute": "derived/x"}])],
        "features": dict(FEATURES, ListTypeAttributes=True),
    },
    # With DRADerivedAttributes the experimental variant's constraints read a request's
    # derived attribute, evaluated on each device: pairs of indexes share a bucket (dev-0 and
    # dev-1), distinct models keep dev-0 and dev-2 apart; a derived attribute hides
    # the published one of its name; an empty list is a list of strings; a list's items must
    # share a type; an expression that fails on a device, or does not compile, ends the
    # allocation with an error when a constraint first reads it (draguard once ignored them).
    "derived-attributes-match": _deriving("derived-attributes-match", f"device.attributes['{GPU}'].index / 2",
                                          "matchAttribute"),
    "derived-attributes-distinct": _deriving("derived-attributes-distinct", f"device.attributes['{GPU}'].model",
                                             "distinctAttribute"),
    "derived-attributes-shadow-published": _deriving("derived-attributes-shadow-published", "'same'",
                                                     "matchAttribute", count=4, attribute=f"{GPU}/index"),
    "derived-attributes-empty-list": _deriving("derived-attributes-empty-list", "[]", "matchAttribute"),
    "derived-attributes-runtime-error": _deriving("derived-attributes-runtime-error",
                                                  f"device.attributes['{GPU}'].index == 0 ? 1 : dyn(2.5)",
                                                  "matchAttribute"),
    "derived-attributes-mixed-list": _deriving("derived-attributes-mixed-list",
                                               f"[dyn(device.attributes['{GPU}'].index), dyn('a')]",
                                               "distinctAttribute"),
    "derived-attributes-compile-error": _deriving("derived-attributes-compile-error", "1.5", "matchAttribute"),
    # As written, not as stored: `count: 0` (and a subrequest with neither count nor mode) is
    # stored as ExactCount of 1 (SetDefaults_ExactDeviceRequest, SetDefaults_DeviceSubRequest),
    # one device each, not none (the oracle once handed the allocator the claim undefaulted).
    "count-zero-as-written": {
        **_pool("count-zero-as-written", [_slice("p", 1, devices=[{"name": f"dev-{i}"} for i in range(3)])]),
        "claims": [_claim([{"name": "r0", "exactly": {"deviceClassName": "gpu", "allocationMode": "ExactCount",
                                                       "count": 0}},
                           {"name": "r1", "firstAvailable": [{"name": "s0", "deviceClassName": "gpu"}]}])],
    },
}
