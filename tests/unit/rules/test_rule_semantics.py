"""Edge semantics of the catalog rules beyond their documented examples."""

import textwrap

import pytest

from draguard.core.selectors import matches
from draguard.rules.examples import COMPLIANT_DEPLOYMENT, COMPLIANT_POD
from draguard.model.teardown import hook_budget

from support.reports import rules_of


def lint(lint_json, text, *args):
    """Every rule judges (the strict profile): these are the rules' semantics, not the default's."""
    return lint_json(textwrap.dedent(text), "--kube-version", "1.34", "--profile", "strict", *args)


@pytest.mark.parametrize("selector, labels, expected", [
    ({"matchLabels": {"app": "a"}}, {"app": "a", "x": "y"}, True),
    ({"matchLabels": {"app": "a"}}, {"app": "b"}, False),
    ({"matchExpressions": [{"key": "tier", "operator": "In", "values": ["gpu"]}]}, {"tier": "gpu"}, True),
    ({"matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["gpu"]}]}, {}, True),
    ({"matchExpressions": [{"key": "tier", "operator": "Exists"}]}, {}, False),
    ({"matchExpressions": [{"key": "tier", "operator": "DoesNotExist"}]}, {}, True),
    ({"matchExpressions": [{"key": "tier", "operator": "Near"}]}, {"tier": "x"}, False),
    ({}, {"anything": "x"}, True),
    (None, {"app": "a"}, False),
])
def test_label_selectors(selector, labels, expected):
    assert matches(selector, labels) is expected


@pytest.mark.parametrize("hook, seconds", [
    ({"exec": {"command": ["sh", "-c", "sleep 5; timeout 85 drain"]}}, 90),
    ({"exec": {"command": ["sh", "-c", "sleep 2m"]}}, 120),
    ({"sleep": {"seconds": 15}}, 15),
    ({"httpGet": {"path": "/drain", "port": 8080}}, 0),
])
def test_hook_budget(hook, seconds):
    assert hook_budget(hook) == seconds


#: the compliant pod with an image no server entry knows: the floor and the hook govern
UNKNOWN_SERVER_POD = COMPLIANT_POD.replace("vllm/vllm-openai", "registry.example.com/batch-scorer")


def test_grace_period_must_exceed_hook_waits(lint_json):
    text = UNKNOWN_SERVER_POD.replace("sleep 10", "sleep 5; timeout 85 drain")
    report = lint(lint_json, text)
    [finding] = report["findings"]
    assert finding["rule"] == "teardown-grace-period" and "waits up to 90 s" in finding["message"]
    assert not lint(lint_json, text.replace("terminationGracePeriodSeconds: 60", "terminationGracePeriodSeconds: 120"))["findings"]


def test_a_known_server_sets_the_budget_instead_of_the_floor(lint_json):
    text = COMPLIANT_POD.replace("sleep 10", "sleep 5; timeout 85 drain")
    [finding] = lint(lint_json, text)["findings"]
    assert finding["message"].endswith("takes 90 s preStop + 30 s vLLM drain (--shutdown-timeout 30) + 10 s release "
                                       "+ 10 s margin = 140 s")
    assert finding["fix"]["edits"][0]["value"] == 140
    assert not lint(lint_json, text.replace("terminationGracePeriodSeconds: 60", "terminationGracePeriodSeconds: 140"))["findings"]
    # a short budget needs no 60 s floor
    short = COMPLIANT_POD.replace("'30'", "'5'").replace("terminationGracePeriodSeconds: 60", "terminationGracePeriodSeconds: 35")
    assert not lint(lint_json, short)["findings"]


@pytest.mark.parametrize("image, args, part", [
    ("nvcr.io/nvidia/tritonserver:24.08-py3", "[tritonserver, --model-repository=/models]", "30 s NVIDIA Triton Inference Server drain (its default)"),
    ("nvcr.io/nvidia/tritonserver:24.08-py3", "[tritonserver, --exit-timeout-secs=50]", "50 s NVIDIA Triton Inference Server drain (--exit-timeout-secs 50)"),
    ("ghcr.io/huggingface/text-generation-inference:3.0", "[--model-id, x]", "90 s Hugging Face Text Generation Inference drain (its default)"),
    ("lmsysorg/sglang:latest", "[python3, -m, sglang.launch_server]", "30 s SGLang drain (assumed: no documented bound)"),
])
def test_budget_per_server(lint_json, image, args, part):
    text = COMPLIANT_POD.replace("vllm/vllm-openai", image).replace("[--shutdown-timeout, '30']", args) \
        .replace("terminationGracePeriodSeconds: 60", "terminationGracePeriodSeconds: 30")
    [finding] = [f for f in lint(lint_json, text)["findings"] if f["rule"] == "teardown-grace-period"]
    assert part in finding["message"]


def test_the_helper_verify_counts_in_the_budget(lint_json):
    text = COMPLIANT_POD.replace("exec: {command: [sh, -c, sleep 10]}",
                                 "exec: {command: [sh, -c, 'sleep 10; draguard-teardown verify --timeout 5']}")
    [finding] = [f for f in lint(lint_json, text)["findings"] if f["rule"] == "teardown-grace-period"]
    assert "15 s preStop" in finding["message"] and "5 s verify" in finding["message"]


def test_drain_disabled_fix_fits_the_grace_period(lint_json):
    text = COMPLIANT_POD.replace("[--shutdown-timeout, '30']", "[--model, /models/m, --shutdown-timeout=0]")
    [finding] = lint(lint_json, text)["findings"]
    assert finding["rule"] == "teardown-drain-disabled"
    assert finding["fix"]["edits"] == [{"op": "set", "path": "spec.containers[0].args[2]", "value": "--shutdown-timeout=30"}]
    shell = COMPLIANT_POD.replace("[--shutdown-timeout, '30']", "[sh, -c, 'vllm serve /models/m']")
    [finding] = [f for f in lint(lint_json, shell)["findings"] if f["rule"] == "teardown-drain-disabled"]
    assert finding["fix"] is None  # a shell line: no guess at where the flag goes


@pytest.mark.parametrize("written, edit", [
    # an exec-form command without args: args after it make the same argv
    ("command: [vllm, serve, /models/m]", {"op": "set", "path": "spec.containers[0].args",
                                            "value": ["--shutdown-timeout=30"]}),
    ("command: [vllm, serve, /models/m, --shutdown-timeout, '0']",
     {"op": "set", "path": "spec.containers[0].command[4]", "value": "30"}),
    ("command: [vllm, serve]\n{indent}args: [/models/m]", {"op": "append", "path": "spec.containers[0].args",
                                                           "value": "--shutdown-timeout=30"}),
])
def test_drain_disabled_fix_goes_where_the_command_line_is_written(lint_json, written, edit):
    [indent] = [line[:line.index("args")] for line in COMPLIANT_POD.splitlines() if "--shutdown-timeout" in line]
    text = COMPLIANT_POD.replace("args: [--shutdown-timeout, '30']", written.format(indent=indent))
    [finding] = [f for f in lint(lint_json, text)["findings"] if f["rule"] == "teardown-drain-disabled"]
    assert finding["fix"]["edits"] == [edit]


@pytest.mark.parametrize("written, reason", [
    ("args: [sh, -c, 'vllm serve /models/m']", "vLLM starts from a shell line"),
    ("env: []", "the container runs its image's own command"),
])
def test_drain_disabled_says_why_it_has_no_fix(cli, tmp_path, written, reason):
    target = tmp_path / "pod.yaml"
    target.write_text(textwrap.dedent(COMPLIANT_POD.replace("args: [--shutdown-timeout, '30']", written)))
    done = cli("fix", "--unsafe-fixes", "--no-config", "--check", "--kube-version", "1.34", target)
    assert f"[teardown-drain-disabled] left: {reason}" in done.out


@pytest.mark.parametrize("command, fires", [
    ("kill -SIGTERM 1 && while pgrep python; do sleep 1; done", True),
    ("kill -s TERM 1; sleep 5", True),
    ("kill -- 1", True),
    ("kill 1", True),
    ("kill 12; pkill -f vllm; sleep 1", False),
    ("kill -TERM 10", False),
])
def test_kills_pid1(lint_json, command, fires):
    text = COMPLIANT_POD.replace("[sh, -c, sleep 10]", f"[sh, -c, '{command}']")
    assert ("teardown-prestop-kills-pid1" in rules_of(lint(lint_json, text))) is fires


def test_grace_floor_is_configurable(lint_json, tmp_path, cli):
    (tmp_path / ".draguard.yaml").write_text("rules: {teardown-grace-period: {minGraceSeconds: 90}}\n")
    (tmp_path / "pod.yaml").write_text(textwrap.dedent(UNKNOWN_SERVER_POD))
    report = cli("lint", tmp_path / "pod.yaml", "--kube-version", "1.34", "-f", "json").json
    assert rules_of(report) == ["teardown-grace-period"]


def test_missing_grace_period_uses_the_default(lint_json):
    report = lint(lint_json, COMPLIANT_POD.replace("terminationGracePeriodSeconds: 60", "restartPolicy: Always"))
    [finding] = report["findings"]
    assert "30 (the default; not set)" in finding["message"]


@pytest.mark.parametrize("strategy, fires", [
    ("rollingUpdate: {maxSurge: 0, maxUnavailable: 1}", False),
    ("rollingUpdate: {maxSurge: '0%', maxUnavailable: '50%'}", False),
    ("rollingUpdate: {maxSurge: 0, maxUnavailable: 0}", True),
    ("rollingUpdate: {maxUnavailable: 1}", True),  # maxSurge defaults to 25%
])
def test_rollout_surge_strategies(lint_json, strategy, fires):
    text = COMPLIANT_DEPLOYMENT.replace("rollingUpdate: {maxSurge: 0, maxUnavailable: 1}", strategy)
    assert ("rollout-surge" in rules_of(lint(lint_json, text))) is fires


def test_recreate_strategy_never_surges(lint_json):
    text = COMPLIANT_DEPLOYMENT.replace("type: RollingUpdate", "type: Recreate").replace(
        "rollingUpdate: {maxSurge: 0, maxUnavailable: 1}", "{}")
    assert "rollout-surge" not in rules_of(lint(lint_json, text))


def test_pdb_must_be_in_the_same_namespace(lint_json):
    text = COMPLIANT_DEPLOYMENT.replace("metadata: {name: inference}\n    spec:\n      replicas",
                                        "metadata: {name: inference, namespace: a}\n    spec:\n      replicas")
    text = text.replace("kind: PodDisruptionBudget\n    metadata: {name: inference}",
                        "kind: PodDisruptionBudget\n    metadata: {name: inference, namespace: b}")
    found = rules_of(lint(lint_json, text))
    assert "rollout-pdb" in found and "pdb-selects-nothing" in found


def test_env_from_a_config_map_in_the_set(lint_json):
    text = """
        apiVersion: v1
        kind: ConfigMap
        metadata: {name: gpu-env}
        data: {CUDA_VISIBLE_DEVICES: "1", OTHER: x}
        ---
        apiVersion: v1
        kind: Pod
        metadata: {name: p}
        spec:
          containers:
          - name: c
            image: x
            envFrom: [{configMapRef: {name: gpu-env}}]
        """
    report = lint(lint_json, text)
    held, imported = [f for f in report["findings"] if f["rule"] == "env-device-visibility"]
    assert "ConfigMap gpu-env holds CUDA_VISIBLE_DEVICES" in held["message"] and held["line"] == 5
    assert "CUDA_VISIBLE_DEVICES from ConfigMap 'gpu-env'" in imported["message"] and imported["line"] == 14



def test_env_from_a_config_map_reference_of_another_type_is_no_lookup(lint_json):
    """A configMapRef name that is not a string (schema-invalid) names no ConfigMap: it was
    looked up as given, and a list crashed the rule (unhashable) instead of reading as absent."""
    text = """
        apiVersion: v1
        kind: Pod
        metadata: {name: p}
        spec:
          containers:
          - name: c
            image: x
            envFrom: [{configMapRef: {name: [gpu-env]}}]
        """
    report = lint(lint_json, text)
    assert [f["rule"] for f in report["findings"]] == ["schema-invalid"]

def test_admin_access_in_labelled_namespace_or_configured(lint_json, tmp_path, cli):
    claim = COMPLIANT_POD.replace("count: 1\n", "count: 1\n              adminAccess: true\n").replace(
        "metadata: {name: mig-1g}", "metadata: {name: mig-1g, namespace: ops}").replace(
        "metadata: {name: inference}", "metadata: {name: inference, namespace: ops}")
    assert "admin-access-namespace" in rules_of(lint(lint_json, claim))
    labelled = claim + "---\n    apiVersion: v1\n    kind: Namespace\n    metadata:\n      name: ops\n" \
        "      labels: {resource.kubernetes.io/admin-access: \"true\"}\n"
    assert "admin-access-namespace" not in rules_of(lint(lint_json, labelled))
    (tmp_path / ".draguard.yaml").write_text("adminNamespaces: [ops]\n")
    (tmp_path / "m.yaml").write_text(textwrap.dedent(claim))
    report = cli("lint", tmp_path / "m.yaml", "--kube-version", "1.34", "-f", "json").json
    assert "admin-access-namespace" not in rules_of(report)


def test_external_claim_templates_from_config(tmp_path, cli):
    pod = COMPLIANT_POD.split("---", 1)[1]
    (tmp_path / "pod.yaml").write_text(textwrap.dedent(pod))
    assert "claim-reference-missing" in rules_of(cli("lint", tmp_path / "pod.yaml", "--kube-version", "1.34",
                                                     "-f", "json").json)
    (tmp_path / ".draguard.yaml").write_text("external: {resourceClaimTemplates: [mig-1g]}\n")
    assert "claim-reference-missing" not in rules_of(cli("lint", tmp_path / "pod.yaml", "--kube-version", "1.34",
                                                         "-f", "json").json)


def test_a_container_names_the_request_holding_the_subrequests(lint_json):
    text = """
        apiVersion: resource.k8s.io/v1
        kind: ResourceClaimTemplate
        metadata: {name: t}
        spec:
          spec:
            devices:
              requests:
              - name: gpu
                firstAvailable:
                - {name: big, deviceClassName: mig.nvidia.com, allocationMode: ExactCount, count: 1,
                   selectors: [{cel: {expression: "device.attributes['gpu.nvidia.com'].profile == '3g.40gb'"}}]}
                - {name: small, deviceClassName: mig.nvidia.com, allocationMode: ExactCount, count: 1,
                   selectors: [{cel: {expression: "device.attributes['gpu.nvidia.com'].profile == '1g.10gb'"}}]}
        ---
        apiVersion: v1
        kind: Pod
        metadata: {name: p}
        spec:
          terminationGracePeriodSeconds: 60
          resourceClaims: [{name: g, resourceClaimTemplateName: t}]
          containers:
          - name: c
            image: x
            resources: {claims: [{name: g, request: gpu}]}
            lifecycle: {preStop: {exec: {command: [sh, -c, sleep 1]}}}
        """
    assert lint(lint_json, text)["findings"] == []
    assert rules_of(lint(lint_json, text.replace("request: gpu}", "request: tpu}"))) == ["claim-request-undefined"]
    # the API server refuses a subrequest there (a request is a DNS label); the claim has no such request either
    assert rules_of(lint(lint_json, text.replace("request: gpu}", "request: gpu/small}"))) == \
        ["claim-request-undefined", "pod-claim-invalid"]


def test_v1_request_without_exactly_is_reported(lint_json):
    report = lint(lint_json, COMPLIANT_POD.replace("exactly:", "exact:"))
    [finding] = [f for f in report["findings"] if f["rule"] == "request-device-class"]
    assert "sets neither exactly nor firstAvailable" in finding["message"]


@pytest.mark.parametrize("replicas, autoscaled, fires", [
    ("replicas: 1", False, False),  # a budget cannot protect one pod without blocking drains
    ("", False, False),  # the API default is one replica
    ("", True, True),  # an HPA of the set scales it
    ("replicas: 3", False, True),
])
def test_rollout_pdb_leaves_single_replica_workloads_alone(lint_json, replicas, autoscaled, fires):
    head, sep, _ = COMPLIANT_DEPLOYMENT.rpartition("---")
    text = head.replace("replicas: 2", replicas or "paused: false")
    if autoscaled:
        text += ("---\n    apiVersion: autoscaling/v2\n    kind: HorizontalPodAutoscaler\n    metadata: {name: h}\n"
                 "    spec: {scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: inference}, maxReplicas: 4}\n")
    assert ("rollout-pdb" in rules_of(lint(lint_json, text))) is fires


def test_limits_and_requests_of_one_resource_are_one_finding(lint_json):
    report = lint(lint_json, """
        apiVersion: v1
        kind: Pod
        metadata: {name: p}
        spec:
          containers:
          - name: c
            image: x
            resources: {limits: {nvidia.com/gpu: 1}, requests: {nvidia.com/gpu: 1}}
        """)
    [finding] = [f for f in report["findings"] if f["rule"] == "legacy-gpu-resource"]
    assert "in limits and requests" in finding["message"]


def test_a_selector_that_does_not_compile_is_reported_once(lint_json):
    report = lint(lint_json, COMPLIANT_POD.replace("device.attributes['gpu.nvidia.com'].profile == '1g.10gb'",
                                                   "device.attributes['gpu.nvidia.com'].productName ==="))
    assert rules_of(report) == ["cel-invalid"]


def test_messages_never_show_none(lint_json):
    report = lint(lint_json, """
        apiVersion: v1
        kind: Pod
        metadata: {name: p}
        spec:
          resourceClaims: [{resourceClaimTemplateName: t}]
          containers:
          - name: c
            image: x
            env: [{name: CUDA_VISIBLE_DEVICES}]
            resources: {claims: [{request: x}]}
          volumes: [{hostPath: {path: /dev/nvidia0}}]
        """)
    messages = [f["message"] for f in report["findings"]]
    assert messages and not [m for m in messages if "None" in m or "''" in m]
    assert any("an unnamed pod claim" in m for m in messages) and any("an unnamed volume" in m for m in messages)


@pytest.mark.parametrize("rolling, said", [
    ("{maxSurge: 0, maxUnavailable: 1}", None),
    ("{maxSurge: 00%, maxUnavailable: 0}", "maxUnavailable may not be 0 when maxSurge is 0"),
    ("{maxUnavailable: 0}", None),  # maxSurge defaults to 25%
    ("{maxSurge: 150%, maxUnavailable: 1}", None),  # a surge may exceed 100%
    ("{maxSurge: 1, maxUnavailable: 101%}", "maxUnavailable '101%': must not be greater than 100%"),
    ("{maxSurge: '-1', maxUnavailable: 1}", "maxSurge '-1': a valid percent string"),
])
def test_rolling_updates_the_api_server_refuses(lint_json, rolling, said):
    """As ValidateRollingUpdateDeployment; tests/integration/test_apiserver_judge holds the
    server to the same verdicts."""
    text = COMPLIANT_DEPLOYMENT.replace("{maxSurge: 0, maxUnavailable: 1}", rolling)
    found = [f["message"] for f in lint(lint_json, text)["findings"] if f["rule"] == "rollout-fields-invalid"]
    assert (not found) if said is None else any(said in m for m in found), found


@pytest.mark.parametrize("rolling, said", [
    ("{maxSurge: 1, maxUnavailable: 0}", None),
    ("{maxSurge: 1}", "maxSurge may not be set when maxUnavailable is non-zero (it is 1, the default)"),
    ("{maxSurge: 0, maxUnavailable: 0%}", "maxUnavailable may not be 0 when maxSurge is 0"),
    ("{maxSurge: 150%, maxUnavailable: 0}", "maxSurge '150%': must not be greater than 100%"),
])
def test_daemonset_rolling_updates_the_api_server_refuses(lint_json, rolling, said):
    """ValidateRollingUpdateDaemonSet: exactly one of the two non-zero, with the defaults."""
    from draguard.rules.examples import DAEMONSET_EXAMPLE

    text = DAEMONSET_EXAMPLE.replace("{maxSurge: 0, maxUnavailable: 1}", rolling)
    found = [f["message"] for f in lint(lint_json, text)["findings"] if f["rule"] == "rollout-fields-invalid"]
    assert (not found) if said is None else any(said in m for m in found), found


STATEFULSET = """\
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  replicas: 4
  serviceName: db
  selector: {matchLabels: {app: db}}
  updateStrategy: STRATEGY
  template:
    metadata: {labels: {app: db}}
    spec:
      containers: [{name: c, image: x}]
"""


@pytest.mark.parametrize("strategy, version, said", [
    ("{type: RollingUpdate, rollingUpdate: {maxUnavailable: 2, partition: 1}}", "1.37", None),
    ("{type: RollingUpdate, rollingUpdate: {maxUnavailable: 0}}", "1.37", "maxUnavailable 0: cannot be 0"),
    ("{type: RollingUpdate, rollingUpdate: {maxUnavailable: 0%}}", "1.37", "maxUnavailable '0%': cannot be 0"),
    ("{type: RollingUpdate, rollingUpdate: {maxUnavailable: 120%}}", "1.37", "must not be greater than 100%"),
    ("{type: RollingUpdate, rollingUpdate: {maxUnavailable: 0}}", "1.36", None),  # dropped unread: the gate is off
    ("{type: RollingUpdate, rollingUpdate: {partition: -1}}", "1.36", "partition -1: must be greater than or equal"),
    ("{type: OnDelete, rollingUpdate: {partition: 1}}", "1.37", "rollingUpdate may not be set with type OnDelete"),
    ("{type: OnDelete}", "1.37", None),
])
def test_statefulset_update_strategies_the_api_server_refuses(lint_json, strategy, version, said):
    """validateRollingUpdateStatefulSet and ValidateStatefulSetSpec, maxUnavailable only where
    MaxUnavailableStatefulSet keeps it (on by default from 1.37)."""
    report = lint_json(STATEFULSET.replace("STRATEGY", strategy), "--kube-version", version)
    found = [f["message"] for f in report["findings"] if f["rule"] == "rollout-fields-invalid"]
    assert (not found) if said is None else any(said in m for m in found), found


def test_the_statefulset_gate_can_be_set_on(lint_json):
    text = STATEFULSET.replace("STRATEGY", "{type: RollingUpdate, rollingUpdate: {maxUnavailable: 0}}")
    report = lint_json(text, "--kube-version", "1.36", "--feature-gates", "MaxUnavailableStatefulSet=true")
    assert [f["message"] for f in report["findings"] if f["rule"] == "rollout-fields-invalid"] == \
        ["maxUnavailable 0: cannot be 0"]


def test_a_recreate_deployment_takes_no_rolling_update(lint_json):
    text = COMPLIANT_DEPLOYMENT.replace("type: RollingUpdate", "type: Recreate")
    found = [f for f in lint(lint_json, text)["findings"] if f["rule"] == "rollout-fields-invalid"]
    assert [f["message"] for f in found] == ["rollingUpdate may not be set with type Recreate: only with RollingUpdate"]
    assert found[0]["path"].endswith("strategy.rollingUpdate")


def _prestop_fix(lint_json, text, *args):
    [finding] = [f for f in lint(lint_json, text, *args)["findings"] if f["rule"] == "teardown-prestop"]
    return finding["fix"]


NO_HOOK = COMPLIANT_POD.replace("preStop:", "postStart:")


def test_prestop_fix_runs_the_helper_where_the_image_carries_it(lint_json, tmp_path):
    """Where the image carries draguard-teardown, the hook runs its drain (the detected server
    named, bounded by the grace period); elsewhere a sleep; the title says which."""
    helper = _prestop_fix(lint_json, NO_HOOK.replace("image: vllm/vllm-openai", "image: ghcr.io/acme/vllm-draguard-teardown:1"))
    [edit] = helper["edits"]
    assert "draguard-teardown drain" in helper["title"] and "carries the helper" in helper["title"]
    assert edit["value"]["exec"]["command"] == ["draguard-teardown", "drain", "--server", "vllm", "--endpoint-wait", "10",
                                                "--grace-period", "60", "--margin", "10", "--report", "/proc/1/fd/1"]
    plain = _prestop_fix(lint_json, NO_HOOK)
    assert plain["edits"][0]["value"] == {"sleep": {"seconds": 10}} and "carries no draguard-teardown" in plain["title"]


def test_prestop_sleep_is_what_the_grace_period_leaves(lint_json):
    """60 s of grace, a 37 s vLLM drain, 10 s release and 10 s margin leave 3 s, not 10, for a
    sleep: the hook must not push the drain past SIGKILL. The floor is 1 s."""
    tight = NO_HOOK.replace("[--shutdown-timeout, '30']", "[--shutdown-timeout, '37']")
    assert _prestop_fix(lint_json, tight)["edits"][0]["value"] == {"sleep": {"seconds": 3}}
    squeezed = NO_HOOK.replace("[--shutdown-timeout, '30']", "[--shutdown-timeout, '50']")
    assert _prestop_fix(lint_json, squeezed)["edits"][0]["value"] == {"sleep": {"seconds": 1}}
