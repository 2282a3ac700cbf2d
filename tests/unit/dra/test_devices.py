"""One model whatever the resource.k8s.io version: the same workloads written for v1beta1 and
v1 (the NVIDIA quickstart ships both) and the API round-trip fixtures normalize equal."""

import dataclasses

import pytest

from draguard.dra.devices import Attr, ModelError, claim_from, device_class_from, device_taint_rule_from, slice_from
from draguard.sources.loader import load_units
from draguard.sources.discover import expand

from support.paths import corpus, corpus_files
from support.dra import manifest
from support.oracle import GPU
from support.load import manifests


def objects(relative):
    corpus_files()
    return manifests(load_units(expand([str(corpus() / relative)])))


def semantic(request) -> dict:
    """What the allocator reads of a request (CEL ignores layout: selectors token by token)."""
    return {"name": request.name, "class": request.class_name, "mode": request.mode, "count": request.count,
            "admin": request.admin_access, "tolerations": request.tolerations,
            "selectors": [" ".join(e.split()) for e in request.selectors],
            "subrequests": [semantic(s) for s in request.subrequests] if request.subrequests is not None else None}


def normalized_claims(relative):
    out = {}
    for m in objects(relative):
        if m.kind in ("ResourceClaim", "ResourceClaimTemplate"):
            c = claim_from(m)
            out[(m.kind, m.namespace, m.name)] = ([semantic(r) for r in c.requests],
                                                  [dataclasses.asdict(x) for x in c.constraints], c.config)
    return out


@pytest.mark.parametrize("name", ["gpu-test1", "gpu-test2", "gpu-test3", "gpu-test4", "gpu-test5", "gpu-test6",
                                  "gpu-test-mps", "gpu-test-vfiopci"])
def test_quickstart_v1beta1_and_v1_normalize_equal(name):
    old = normalized_claims(f"dra/k8s-dra-driver-gpu__demo__specs__quickstart__v1beta1__{name}.yaml")
    new = normalized_claims(f"dra/k8s-dra-driver-gpu__demo__specs__quickstart__v1__{name}.yaml")
    assert old and old == new


def test_round_trip_slices_v1beta1_and_v1_hold_the_same_device():
    [old] = [slice_from(m) for m in objects("dra/kubernetes-api__testdata__HEAD__resource.k8s.io.v1beta1.ResourceSlice.yaml")]
    [new] = [slice_from(m) for m in objects("dra/kubernetes-api__testdata__HEAD__resource.k8s.io.v1.ResourceSlice.yaml")]
    fields = ("name", "attributes", "capacity", "consumes_counters", "taints", "node_name", "all_nodes")
    for a, b in zip(old.devices, new.devices):
        assert {f: getattr(a, f) for f in fields} == {f: getattr(b, f) for f in fields}
    assert old.shared_counters == new.shared_counters and old.pool == new.pool


def test_v1_round_trip_claim_has_every_request_shape():
    [claim] = [claim_from(m) for m in objects("dra/kubernetes-api__testdata__HEAD__resource.k8s.io.v1.ResourceClaim.yaml")]
    [request] = claim.requests
    assert request.subrequests and request.subrequests[0].name == "nameValue"
    assert claim.constraints[0].match_attribute == "matchAttributeValue"


def test_device_class_fixture():
    [cls] = [device_class_from(m) for m in objects("dra/kubernetes-api__testdata__HEAD__resource.k8s.io.v1beta2.DeviceClass.yaml")]
    assert cls.selectors == ["expressionValue"] and cls.extended_resource_name


def test_defaults_are_applied():
    c = claim_from(manifest("ResourceClaim", "c", {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "x"}}]}}))
    assert (c.requests[0].mode, c.requests[0].count) == ("ExactCount", 1)


def test_bad_quantities_are_model_errors_with_their_place():
    spec = {"driver": "d", "pool": {"name": "p"}, "devices": [{"name": "a", "capacity": {"memory": {"value": "lots"}}}]}
    with pytest.raises(ModelError) as excinfo:
        slice_from(manifest("ResourceSlice", "s", spec))
    assert excinfo.value.key == "memory"


@pytest.mark.parametrize("relative, driver, effect", [
    ("dra/dra-example-driver__demo__examples__device-taints-tolerations__device-taint-pod-noschedule__3-device-taint-rule.yaml",
     "gpu.example.com", "NoSchedule"),
    ("dra/kubernetes__test__e2e__dra__test-driver__deploy__example__devicetaintrule.yaml", "test-driver.cdi.k8s.io", "NoExecute"),
])
def test_device_taint_rules_of_both_versions(relative, driver, effect):
    [rule] = [device_taint_rule_from(m) for m in objects(relative)]
    assert rule.driver == driver and rule.taint.effect == effect and rule.taint.key.endswith("unhealthy")


@pytest.mark.parametrize("attributes", [
    {f"{GPU}/model": {"string": "qualified"}, "model": {"string": "bare"}},
    {"model": {"string": "bare"}, f"{GPU}/model": {"string": "qualified"}},
])
def test_a_name_published_bare_and_qualified_reads_the_qualified_one(attributes):
    """Upstream lookupAttribute tries the name as written first, whatever the order published:
    the qualified one for '<driver>/model', the bare one for a bare lookup. Selectors see the
    qualified one (upstream's CEL map takes either; device-name-twice reports it)."""
    from draguard.cel.env import compile_selector

    [device] = slice_from(manifest("ResourceSlice", "s", {
        "driver": GPU, "pool": {"name": "p", "generation": 1, "resourceSliceCount": 1}, "nodeName": "node-0",
        "devices": [{"name": "dev-0", "attributes": attributes}]})).devices
    assert device.attribute(f"{GPU}/model") == Attr("string", "qualified")
    assert device.attribute("model") == Attr("string", "bare")
    assert compile_selector(f"device.attributes['{GPU}'].model == 'qualified'").evaluate(device)
