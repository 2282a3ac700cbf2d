"""The DRA-core rules on manifests: CEL errors at the exact character, attributes the driver
does not publish, and requests no device can satisfy."""

import textwrap

import pytest

from draguard.rules.examples import COMPLIANT_POD


CLAIM = """apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: t}
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly:
          deviceClassName: %s
          allocationMode: ExactCount
          count: 1
          selectors:
          - cel:
              expression: %s
"""


def lint(lint_json, text, *args):
    return lint_json(text, "--kube-version", "1.34", *args)


def findings(report, rule):
    return [f for f in report["findings"] if f["rule"] == rule]


def test_syntax_error_points_at_the_character_and_suggests_the_fix(lint_json):
    report = lint(lint_json, CLAIM % ("gpu.nvidia.com", "device.attributes['gpu.nvidia.com'].memory >= 40Gi"))
    [finding] = findings(report, "cel-invalid")
    line = (CLAIM % ("gpu.nvidia.com", "device.attributes['gpu.nvidia.com'].memory >= 40Gi")).splitlines()[14]
    assert finding["line"] == 15 and line[finding["column"] - 1:].startswith("Gi")
    fixed = "device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('40Gi')) >= 0"
    assert finding["help"] == f"`{fixed}`"
    assert finding["fix"]["applicability"] == "unsafe"
    assert finding["fix"]["edits"] == [{"op": "set", "value": fixed,
                                        "path": "spec.spec.devices.requests[0].exactly.selectors[0].cel.expression"}]


def test_errors_inside_block_scalars(lint_json):
    text = CLAIM % ("gpu.nvidia.com", "|\n                device.driver == 'gpu.nvidia.com' &&\n"
                    "                device.capacity['gpu.nvidia.com'].memory > 3")
    [finding] = findings(lint(lint_json, text), "cel-invalid")
    assert finding["line"] == 17 and "no matching overload" in finding["message"]
    assert text.splitlines()[16][finding["column"] - 1] == ">"


def test_type_errors_in_device_classes(lint_json):
    text = "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: c}\nspec:\n  selectors:\n" \
           "  - cel: {expression: \"device.driver\"}\n"
    [finding] = findings(lint(lint_json, text), "cel-invalid")
    assert "must evaluate to bool" in finding["message"] and finding["line"] == 6


def test_a_selector_over_the_cost_limit_is_refused_where_it_goes_over(lint_json):
    """The API server refuses it ("too complex, exceeds cost limit"): a quantity compared with
    != has no bounded size in upstream's estimate; == and compareTo do."""
    expression = "\"device.driver == 'gpu.nvidia.com' && device.capacity['gpu.nvidia.com'].memory != quantity('40Gi')\""
    text = CLAIM % ("gpu.nvidia.com", expression)
    [finding] = findings(lint(lint_json, text), "cel-invalid")
    assert "too complex, exceeds cost limit" in finding["message"] and "1,000,000" in finding["message"]
    assert text.splitlines()[14][finding["column"] - 1:].startswith("device.capacity['gpu.nvidia.com'].memory !=")
    bounded = CLAIM % ("gpu.nvidia.com", expression.replace("!= quantity('40Gi')", "== quantity('40Gi')"))
    assert not findings(lint(lint_json, bounded), "cel-invalid")


def test_device_as_a_value_is_said_to_be_unchecked_not_invalid(lint_json):
    """Upstream lists and compares `device` (a kubernetes.DRADevice); draguard's engine
    declares it field by field and cannot type it alone: an info finding says so, no error
    blames the selector, and the request counts as not compiled for the other rules."""
    text = CLAIM % ("gpu.nvidia.com", "\"[device].exists(d, d.driver == 'gpu.nvidia.com')\"")
    [finding] = findings(lint(lint_json, text), "cel-invalid")
    assert finding["severity"] == "info" and finding["message"].startswith("CEL not checked: `device` used as a value")
    assert text.splitlines()[14][finding["column"] - 1:].startswith("device].exists")


def test_a_bound_device_is_checked_as_its_body(lint_json):
    """cel.bind(d, device, ...) is checked as its body (cel.bind_device): an unknown field is
    upstream's error, at upstream's character; a good one is clean."""
    text = CLAIM % ("gpu.nvidia.com", "\"cel.bind(d, device, d.attributes['gpu.nvidia.com'].type == 'gpu' && d.nope)\"")
    [finding] = findings(lint(lint_json, text), "cel-invalid")
    assert finding["severity"] == "error" and finding["message"] == "CEL: undefined field 'nope'"
    assert text.splitlines()[14][finding["column"] - 1:].startswith(".nope)")
    good = CLAIM % ("gpu.nvidia.com", "\"cel.bind(d, device, d.attributes['gpu.nvidia.com'].type == 'gpu')\"")
    assert not findings(lint(lint_json, good), "cel-invalid")


def test_dropped_and_mig_only_attributes_are_warnings(lint_json, tmp_path, cli):
    index = CLAIM % ("mig.nvidia.com", "device.attributes['gpu.nvidia.com'].index == 0")
    [finding] = findings(lint(lint_json, index), "cel-unknown-attribute")
    assert "index" in finding["message"] and finding["severity"] == "warning"
    assert index.splitlines()[14][finding["column"] - 1:].startswith("index")
    (tmp_path / ".draguard.yaml").write_text("rules: {cel-unknown-attribute: {nvidiaDriverVersion: '25.3'}}\n")
    (tmp_path / "c.yaml").write_text(index)
    old = cli("lint", tmp_path / "c.yaml", "--kube-version", "1.34", "-f", "json").json
    assert not findings(old, "cel-unknown-attribute")
    profile = CLAIM % ("gpu.nvidia.com", "device.attributes['gpu.nvidia.com'].profile == '1g.10gb'")
    [finding] = findings(lint(lint_json, profile), "cel-unknown-attribute")
    assert "MIG devices only" in finding["message"]
    guarded = CLAIM % ("gpu.nvidia.com", "\"has(device.attributes['gpu.nvidia.com'].index) && "
                       "device.attributes['gpu.nvidia.com'].index == 0\"")
    assert not findings(lint(lint_json, guarded), "cel-unknown-attribute")


def test_mig_profile_under_the_full_gpu_class_is_unsatisfiable(lint_json):
    report = lint(lint_json, CLAIM % ("gpu.nvidia.com", "device.attributes['gpu.nvidia.com'].profile == '1g.10gb'"))
    [finding] = findings(report, "request-unsatisfiable")
    assert "selector #0" in finding["message"] and "class gpu.nvidia.com selects only full GPUs" in finding["message"]
    assert finding["line"] == 15


def test_satisfiable_against_the_catalog(lint_json):
    for cls, expression in [("mig.nvidia.com", "device.attributes['gpu.nvidia.com'].profile == '1g.10gb'"),
                            ("gpu.nvidia.com", "\"device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('140Gi')) >= 0\""),
                            ("gpu.nvidia.com", "\"device.attributes['gpu.nvidia.com'].cudaComputeCapability.isGreaterThan(semver('9.0.0'))\"")]:
        assert not findings(lint(lint_json, CLAIM % (cls, expression)), "request-unsatisfiable"), expression
    too_big = CLAIM % ("gpu.nvidia.com", "\"device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('200Gi')) >= 0\"")
    assert findings(lint(lint_json, too_big), "request-unsatisfiable")


def test_other_hardware_is_not_judged_by_the_gpu_catalog(lint_json):
    text = CLAIM % ("netdev.example.com", "device.attributes['netdev.example.com'].speed == 400")
    text += "---\napiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: netdev.example.com}\n" \
            "spec: {selectors: [{cel: {expression: \"device.driver == 'netdev.example.com'\"}}]}\n"
    assert not findings(lint(lint_json, text), "request-unsatisfiable")


def test_against_an_inventory(tmp_path, cli):
    spec = tmp_path / "spec.yaml"
    spec.write_text("nodes:\n- count: 1\n  gpus: {model: A100-40GB, count: 1, mig: static, layout: [7g.40gb]}\n")
    inventory = tmp_path / "inv.yaml"
    cli("inventory", "generate", spec, "-o", inventory)
    manifest = tmp_path / "app.yaml"
    manifest.write_text(textwrap.dedent(COMPLIANT_POD))
    report = cli("lint", manifest, "--kube-version", "1.34", "--inventory", inventory, "-f", "json").json
    [finding] = findings(report, "request-unsatisfiable")
    assert "cannot be allocated on the inventory" in finding["message"] and "nothing left after selector #0" in finding["message"]
    clean = cli("lint", manifest, "--kube-version", "1.34", "-f", "json").json
    assert clean["findings"] == []


DERIVED = """apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: c}
spec:
  devices:
    requests:
    - name: gpu
      exactly:
        deviceClassName: gpu.nvidia.com
        allocationMode: ExactCount
        count: 2
        derivedAttributes:
%s
    constraints:
    - matchAttribute: example.com/a
"""
NESTED = "device.attributes.exists(d, device.attributes.exists(e, device.attributes[d].exists(k, k == e)))"


def _derived(*expressions):
    return DERIVED % "\n".join(f"        - {{name: example.com/{'abc'[i]}, expression: \"{e}\"}}"
                               for i, e in enumerate(expressions))


def test_derived_attributes_compile_as_the_api_server_does_with_their_gate(lint_json):
    """DRADerivedAttributes (alpha, 1.37): a scalar, or a list with DRAListTypeAttributes; the
    claim's expressions together within the cost limit. Without the gate the API server drops
    them: nothing to judge."""
    text = _derived("device.attributes['gpu.nvidia.com'].productName", "1.5", "[device.driver]")
    gate = ("--kube-version", "1.37", "--feature-gates")
    assert not findings(lint_json(text, "--kube-version", "1.37"), "cel-invalid")
    double, listed = findings(lint_json(text, *gate, "DRADerivedAttributes=true"), "cel-invalid")
    assert double["message"] == ("CEL: derived attribute 'example.com/b': must evaluate to a primitive scalar "
                                 "(string, integer, boolean, semver), not double")
    assert text.splitlines()[double["line"] - 1][double["column"] - 1:].startswith('1.5"}')
    assert "not list(string)" in listed["message"]
    [double] = findings(lint_json(text, *gate, "DRADerivedAttributes=true,DRAListTypeAttributes=true"), "cel-invalid")
    assert "or a list of these scalars, not double" in double["message"]
    [total] = findings(lint_json(_derived(NESTED, NESTED, NESTED), *gate, "DRADerivedAttributes=true"), "cel-invalid")
    assert "total cost of derived attribute CEL expressions in the claim exceeds cost limit" in total["message"]
    assert not findings(lint_json(_derived(NESTED, NESTED), *gate, "DRADerivedAttributes=true"), "cel-invalid")


def test_a_driver_release_between_two_lists_reads_the_earlier_one(tmp_path, cli):
    """'25.9' has no list of its own: it publishes 25.8's (index dropped), where the rule used
    to switch itself off without a word."""
    index = CLAIM % ("gpu.nvidia.com", "device.attributes['gpu.nvidia.com'].index == 0")
    (tmp_path / "c.yaml").write_text(index)
    (tmp_path / ".draguard.yaml").write_text("rules: {cel-unknown-attribute: {nvidiaDriverVersion: '25.9'}}\n")
    report = cli("lint", tmp_path / "c.yaml", "--kube-version", "1.34", "-f", "json").json
    [finding] = findings(report, "cel-unknown-attribute")
    assert "NVIDIA driver 25.9 publishes no attribute 'index'" in finding["message"]


@pytest.mark.parametrize("version, said", [("'24.1'", "the oldest is 25.3"), ("'latest'", "is not a driver version"),
                                           ("'25.x'", "is not a driver version")])
def test_a_driver_version_without_a_list_is_a_config_error(tmp_path, cli, version, said):
    (tmp_path / "c.yaml").write_text(CLAIM % ("gpu.nvidia.com", "device.driver == 'gpu.nvidia.com'"))
    (tmp_path / ".draguard.yaml").write_text(
        "rules:\n  cel-unknown-attribute:\n    nvidiaDriverVersion: " + version + "\n")
    result = cli("lint", tmp_path / "c.yaml")
    assert result.code == 2 and said in result.err and ".draguard.yaml:3:26" in result.err, result.err


def test_a_gated_field_follows_each_runs_release_and_gates():
    """Which fields the API server drops is found once per release and gate settings
    (rules.gated._dropped), and follows each run's: runs of one process with other
    settings get their own answer."""
    from draguard.core.config import Config
    from draguard.engine.run import Inputs, Run

    claim = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "c"},
             "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
                 "deviceClassName": "gpu.nvidia.com", "capacity": {"requests": {"memory": "10Gi"}}}}]}}}

    def dropped(kube_version, **gates):
        config = Config()
        config.kube_version = kube_version
        config.feature_gates.update(gates)
        return [f.message for f in Run(config, Inputs.objects([claim])).findings().findings
                if f.rule == "api-field-gated"]

    for _ in range(2):  # the second time from what the first found
        [off] = dropped("1.35")
        assert "feature gate DRAConsumableCapacity is alpha since 1.34 and off by default" in off
        assert not dropped("1.35", DRAConsumableCapacity=True)
        assert not dropped("1.36")
        [disabled] = dropped("1.36", DRAConsumableCapacity=False)
        assert "feature gate DRAConsumableCapacity is disabled in the config" in disabled
