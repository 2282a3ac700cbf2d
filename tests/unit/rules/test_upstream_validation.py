"""Newer DRA fields by target version and the API server's own validation (issue: precision):
each check mirrors kubernetes v1.37.2 (pkg/apis/resource/validation, the registry strategies'
dropDisabled*Fields, pkg/features/kube_features.go)."""

import copy

import pytest

from draguard.core.config import Config
from draguard.core.finding import Severity
from draguard.engine.lint import lint_objects
from support.validation_objects import OBJECTS, POD_OBJECTS

CLAIM = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {{name: c}}
spec:
  devices:
    requests:
{requests}
"""


def _rules(report, rule):
    return [(f["line"], f["column"], f["message"]) for f in report["findings"] if f["rule"] == rule]


def _claim(requests: str) -> str:
    return CLAIM.format(requests=requests)


SLICE = """\
apiVersion: resource.k8s.io/{version}
kind: ResourceSlice
metadata: {{name: s}}
spec:
  driver: gpu.example.com
  pool: {{name: p, generation: 1, resourceSliceCount: 1}}
{node}
  devices:
  - name: d
{device}
"""


@pytest.mark.parametrize("node, device, expected", [
    ("  nodeName: n", "", []),
    ("  allNodes: true", "", []),
    ("  nodeName: n\n  allNodes: true", "", ["sets exactly one of nodeName, nodeSelector, allNodes and "
                                            "perDeviceNodeSelection; this one sets nodeName, allNodes"]),
    ("", "", ["this one sets none of them"]),
    ("  nodeName: ''", "", ["this one sets none of them", "nodeName must be unset or a name, not ''"]),
    ("  nodeName: n", "    nodeName: n", ["device 'd' sets nodeName, which is only allowed when the slice sets "
                                           "perDeviceNodeSelection: true"]),
    ("  perDeviceNodeSelection: true", "    allNodes: true", []),
    ("  perDeviceNodeSelection: true", "", ["device 'd' must set exactly one of nodeName, nodeSelector and allNodes"]),
])
def test_resource_slice_node_access(lint_json, node, device, expected):
    text = SLICE.format(version="v1", node=node, device=device)
    messages = [m for _, _, m in _rules(lint_json(text), "api-validation")]
    assert len(messages) == len(expected) and all(e in m for e, m in zip(expected, messages)), messages


@pytest.mark.parametrize("names, expected", [
    (["gpu-0-mig-3g-40gb-0-4"], []),
    (["gpu-0-mig-3g.40gb-0-4"], ["device name 'gpu-0-mig-3g.40gb-0-4' must be a DNS label"]),
    (["gpu-0", "gpu-0"], ["device name 'gpu-0' is used twice"]),
])
def test_resource_slice_device_names(lint_json, names, expected):
    """The generator once named MIG devices after their profile ('3g.40gb'): the real API
    server refused the slice, draguard did not."""
    text = SLICE.format(version="v1", node="  nodeName: n", device="").replace(
        "  - name: d\n", "".join(f"  - name: {n}\n" for n in names))
    messages = [m for _, _, m in _rules(lint_json(text), "api-validation")]
    assert len(messages) == len(expected) and all(e in m for e, m in zip(expected, messages)), messages


@pytest.mark.parametrize("requests, expected", [
    ("    - name: gpu\n      exactly: {deviceClassName: gpu.nvidia.com}", []),
    ("    - name: GPU_1\n      exactly: {deviceClassName: gpu.nvidia.com}",
     [(7, 13, "request name 'GPU_1' must be a DNS label")]),
    ("    - name: a\n      exactly: {deviceClassName: gpu.nvidia.com}\n"
     "    - name: a\n      exactly: {deviceClassName: gpu.nvidia.com}", [(9, 13, "request name 'a' is used twice")]),
    ("    - name: a\n      firstAvailable:\n      - {name: Big, deviceClassName: gpu.nvidia.com}",
     [(9, 16, "subrequest name 'Big' must be a DNS label")]),
    ("    - name: a\n      exactly: {deviceClassName: gpu.nvidia.com, allocationMode: All, count: 2}",
     [(8, 71, "request 'a' sets count with allocationMode All")]),
    ("    - name: a\n      exactly: {deviceClassName: gpu.nvidia.com, count: -1}",
     [(8, 57, "request 'a' count must be greater than zero, not -1")]),
    # count 0 is unset in the Go struct: the API server defaults it to 1 and accepts it, and
    # with allocationMode All it is no count at all
    ("    - name: a\n      exactly: {deviceClassName: gpu.nvidia.com, count: 0}", []),
    ("    - name: a\n      exactly: {deviceClassName: gpu.nvidia.com, allocationMode: All, count: 0}", []),
])
def test_request_names_and_counts(lint_json, requests, expected):
    found = [(line, column, m) for line, column, m in _rules(lint_json(_claim(requests)), "api-validation")]
    assert [(line, column) for line, column, _ in found] == [(line, column) for line, column, _ in expected]
    assert all(e in m for (_, _, e), (_, _, m) in zip(expected, found)), found


@pytest.mark.parametrize("refs, bad", [
    ("[a, b/x]", []),
    ("[a, c]", ["c"]),
    ("[b/y, b]", ["b/y"]),
    ("[a/x]", ["a/x"]),
])
def test_constraint_and_config_references(lint_json, refs, bad):
    text = _claim("    - name: a\n      exactly: {deviceClassName: gpu.nvidia.com}\n"
                  "    - name: b\n      firstAvailable: [{name: x, deviceClassName: gpu.nvidia.com}]") + \
        f"    constraints:\n    - {{matchAttribute: gpu.nvidia.com/uuid, requests: {refs}}}\n"
    messages = [m for _, _, m in _rules(lint_json(text), "api-validation")]
    assert messages == [f"constraints names request '{r}', which the claim does not have (a request, or "
                        "request/subrequest)" for r in bad]


@pytest.mark.parametrize("text, expected", [
    ("apiversion: v1\nkind: Pod\nmetadata: {name: p}\n", [(1, 1, "'apiversion' must be spelled 'apiVersion'")]),
    ("apiVersion: v1\nKind: Pod\nmetadata: {name: p}\n", [(2, 1, "'Kind' must be spelled 'kind'")]),
    ("APIVERSION: v1\nKIND: Pod\n", [(1, 1, "'APIVERSION'"), (2, 1, "'KIND'")]),
])
def test_miscased_type_keys_are_errors(cli, text, expected):
    result = cli("lint", "-", "--no-config", "-f", "json", "--allow-empty", stdin=text)
    found = [(f["line"], f["column"], f["message"]) for f in result.json["findings"]]
    assert result.code == 1 and [f[:2] for f in found] == [e[:2] for e in expected]
    assert all(e[2] in f[2] for e, f in zip(expected, found))
    assert "not-an-object" not in {f["rule"] for f in result.json["findings"]}


def test_v1alpha1_is_known_as_removed(lint_json):
    report = lint_json("apiVersion: resource.k8s.io/v1alpha1\nkind: ResourceClaimTemplate\nmetadata: {name: t}\n"
                       "spec: {spec: {}}\n")
    assert [m for _, _, m in _rules(report, "api-removed")] == [
        "resource.k8s.io/v1alpha1 ResourceClaimTemplate is not served by Kubernetes 1.37 (last served in 1.26); "
        "use resource.k8s.io/v1"]


CAPACITY = "    - name: a\n      exactly:\n        deviceClassName: gpu.nvidia.com\n" \
           "        capacity: {requests: {memory: 10Gi}}"


@pytest.mark.parametrize("version, args, expected", [
    ("1.34", [], [(10, 9, "DRAConsumableCapacity is alpha since 1.34 and off by default, so the request takes "
                          "whole devices")]),
    ("1.35", [], [(10, 9, "DRAConsumableCapacity is alpha since 1.34")]),
    ("1.36", [], []),  # beta, on by default
    ("1.35", ["--feature-gates", "DRAConsumableCapacity=true"], []),
    ("1.37", ["--feature-gates", "DRAConsumableCapacity=false"], [(10, 9, "DRAConsumableCapacity is disabled in the "
                                                                          "config")]),
])
def test_gated_fields_follow_the_target_release(lint_json, version, args, expected):
    report = lint_json(_claim(CAPACITY), "--kube-version", version, *args)
    found = _rules(report, "api-field-gated")
    assert [f[:2] for f in found] == [e[:2] for e in expected]
    assert all(e[2] in f[2] and f[2].startswith("spec.devices.requests[0].exactly.capacity is dropped") for e, f in
               zip(expected, found))


def test_capacity_requests_pin_memory(lint_json):
    assert _rules(lint_json(_claim(CAPACITY), "--profile", "strict"), "request-unpinned") == []
    without = CAPACITY.replace("        capacity: {requests: {memory: 10Gi}}", "")
    assert len(_rules(lint_json(_claim(without), "--profile", "strict"), "request-unpinned")) == 1


def test_v1beta1_slice_devices_are_found_under_basic(lint_json):
    text = SLICE.format(version="v1beta1", node="  nodeName: n",
                        device="    basic:\n      allowMultipleAllocations: true\n      bindsToNode: true")
    found = [m.split(" is dropped")[0] for _, _, m in _rules(lint_json(text, "--kube-version", "1.35"),
                                                             "api-field-gated")]
    assert sorted(found) == ["spec.devices[0].basic.allowMultipleAllocations", "spec.devices[0].basic.bindsToNode"]


def test_feature_gates_in_the_config(tmp_path, cli):
    (tmp_path / ".draguard.yaml").write_text("kubeVersion: '1.35'\nfeatureGates: {DRAConsumableCapacity: true}\n")
    (tmp_path / "claim.yaml").write_text(_claim(CAPACITY))
    report = cli("lint", tmp_path / "claim.yaml", "-f", "json").json
    assert _rules(report, "api-field-gated") == []
    (tmp_path / ".draguard.yaml").write_text("featureGates: {DRAConsumableCapacty: true}\n")
    result = cli("lint", tmp_path / "claim.yaml")
    assert result.code == 2 and ".draguard.yaml:1:16: unknown feature gate 'DRAConsumableCapacty'" in result.err
    (tmp_path / ".draguard.yaml").write_text("featureGates: {DRAConsumableCapacity: yes please}\n")
    result = cli("lint", tmp_path / "claim.yaml")
    assert result.code == 2 and ".draguard.yaml:1:39: feature gate DRAConsumableCapacity must be true or false" \
        in result.err


@pytest.mark.parametrize("value, message", [
    ("NoSuchGate=true", "unknown feature gate 'NoSuchGate'"),
    ("DRAConsumableCapacity=on", "must be =true or =false"),
])
def test_bad_feature_gates_flag_is_a_usage_error(cli, value, message):
    result = cli("lint", "-", "--no-config", "--feature-gates", value, stdin=_claim(CAPACITY))
    assert result.code == 2 and message in result.err and "Traceback" not in result.err


def test_derived_attributes_are_read_by_a_constraint_of_their_request(lint_json):
    """With DRADerivedAttributes (validateDeviceDerivedAttribute): each name once per request,
    and read by a constraint over every request, over the request, or over its parent."""
    text = _claim(
        "    - name: gpu\n      exactly:\n        deviceClassName: gpu.nvidia.com\n        derivedAttributes:\n"
        "        - {name: example.com/a, expression: '1'}\n        - {name: example.com/a, expression: '2'}\n"
        "        - {name: example.com/unused, expression: '1'}\n"
        "    - name: pick\n      firstAvailable:\n      - name: big\n        deviceClassName: gpu.nvidia.com\n"
        "        derivedAttributes:\n        - {name: example.com/p, expression: '1'}\n"
        "        - {name: example.com/q, expression: '1'}\n        - {name: example.com/r, expression: '1'}") + \
        "    constraints:\n    - matchAttribute: example.com/a\n    - {matchAttribute: example.com/p, requests: [pick]}\n" \
        "    - {distinctAttribute: example.com/q, requests: [pick/big]}\n" \
        "    - {distinctAttribute: example.com/r, requests: [gpu]}\n"
    found = _rules(lint_json(text, "--feature-gates", "DRADerivedAttributes=true"), "api-validation")
    assert [(line, message.split(" must ")[0]) for line, _, message in found] == [
        (12, "request 'gpu' derives attribute 'example.com/a' twice"),
        (13, "derived attribute 'example.com/unused' of request 'gpu'"),
        (21, "derived attribute 'example.com/r' of request 'pick/big'")]
    assert _rules(lint_json(text), "api-validation") == []  # without the gate the API server drops them


def test_a_constraint_naming_a_request_by_another_type_names_none(lint_json):
    """A constraint's `requests` item that is not a string (schema-invalid) is a reference to
    no request: it was gathered as given, and a list crashed api-validation (unhashable)."""
    text = _claim("    - name: gpu\n      exactly: {deviceClassName: gpu.nvidia.com}") + \
        "    constraints:\n    - {matchAttribute: gpu.nvidia.com/uuid, requests: [[gpu]]}\n"
    report = lint_json(text, "--feature-gates", "DRADerivedAttributes=true")
    assert not _rules(report, "internal-error")
    [(line, _, message)] = _rules(report, "api-validation")
    assert line == 10 and message.startswith("constraints names request ['gpu'], which the claim does not have")


#: the rules whose errors mean "the API server refuses this object" (as test_apiserver_judge)
VALIDITY = {"schema-invalid", "api-validation", "cel-invalid", "api-removed", "api-field-gated",
            "admin-access-namespace"}


@pytest.mark.parametrize("what, accepted, obj", OBJECTS, ids=[what for what, _, _ in OBJECTS])
def test_an_error_exactly_where_the_api_server_refuses(what, accepted, obj):
    """The server's verdicts as measured (support.validation_objects); dra.apivalidation mirrors
    the checks behind them."""
    findings = lint_objects([copy.deepcopy(obj)], Config()).findings
    errors = [f"{f.rule}: {f.message}" for f in findings if f.rule in VALIDITY and f.severity is Severity.ERROR]
    assert (not errors) == accepted, errors


#: the rules whose errors mean the API server refuses a pod's claim fields
POD_VALIDITY = VALIDITY | {"claim-name-undefined", "pod-claim-source", "pod-claim-invalid"}


@pytest.mark.parametrize("what, accepted, pod", POD_OBJECTS, ids=[what for what, _, _ in POD_OBJECTS])
def test_a_pod_claim_error_exactly_where_the_api_server_refuses(what, accepted, pod):
    findings = lint_objects([copy.deepcopy(pod)], Config()).findings
    errors = [f"{f.rule}: {f.message}" for f in findings if f.rule in POD_VALIDITY and f.severity is Severity.ERROR]
    assert (not errors) == accepted, errors
