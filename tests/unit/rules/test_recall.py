"""Recall on real public manifests (issue: real-world recall): each class of fault that
third-party manifests hid is found at its position. Sources: tests/support/data/recall/SOURCES.tsv
and tests/support/data/corpus/SOURCES.tsv."""

from __future__ import annotations

import pytest

from support.paths import DATA

RECALL = DATA / "recall"
CORPUS = DATA / "corpus"


@pytest.fixture
def found(cli):
    """found(path, rule) -> [(line, column, message)] of that rule's findings on the file."""
    def run(path, rule: str, *args) -> list[tuple]:
        report = cli("lint", path, "--no-config", "-f", "json", *args).json
        return [(f["line"], f["column"], f["message"]) for f in report["findings"] if f["rule"] == rule]
    return run


def test_a_device_plugin_gpu_deployment_on_the_default_surge_is_found(found):
    # GoogleCloudPlatform/kubernetes-engine-samples: vLLM on one nvidia.com/gpu, no strategy (25% surge)
    path = CORPUS / "legacy" / "kubernetes-engine-samples__ai-ml__llm-serving-gemma__vllm__vllm-2-2b-it.yaml"
    [(line, _, message)] = found(path, "rollout-surge")
    assert line == 21 and "maxSurge 25%" in message and "device-plugin GPUs" in message


def test_a_device_plugin_deployment_rolled_out_release_first_passes(lint_json):
    text = ("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: s}\nspec:\n  replicas: 2\n"
            "  strategy: {rollingUpdate: {maxSurge: 0, maxUnavailable: 1}}\n"
            "  selector: {matchLabels: {a: b}}\n  template:\n    metadata: {labels: {a: b}}\n"
            "    spec: {containers: [{name: c, image: x, resources: {limits: {amd.com/gpu: 1}}}]}\n")
    assert not [f for f in lint_json(text)["findings"] if f["rule"] == "rollout-surge"]
    surging = text.replace("maxSurge: 0, maxUnavailable: 1", "maxSurge: 100%")
    assert [f["path"] for f in lint_json(surging)["findings"] if f["rule"] == "rollout-surge"] == \
        ["spec.strategy.rollingUpdate.maxSurge"]


@pytest.mark.parametrize("name, line", [("aws-pytorchjob-fsdp-llama3-2-1b.yaml", 30), ("aws-mpijob-nccl-tests.yaml", 100)])
def test_host_shared_memory_in_training_workers_is_found(found, name, line):
    [(at, _, message)] = found(RECALL / name, "host-ipc")
    assert at == line and "host's shared memory (/dev/shm)" in message


def test_the_host_root_in_a_gpu_pod_is_found(found):
    # GoogleCloudPlatform/kubernetes-engine-samples: runs the host's nvidia-smi through hostPath /
    path = CORPUS / "dra" / "kubernetes-engine-samples__autoscaling__custom-compute-classes__dra__deployment.yaml"
    [(line, column, message)] = found(path, "host-device-mount")
    assert (line, column) == (57, 17) and "mounts / from the host" in message


def test_host_shared_memory_without_gpus_is_not_host_ipc(lint_json):
    text = ("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: c, image: x}]\n"
            "  volumes: [{name: shm, hostPath: {path: /dev/shm}}]\n")
    assert not [f for f in lint_json(text)["findings"] if f["rule"] == "host-ipc"]


def test_a_pod_holding_a_compute_domain_channel_is_judged_for_teardown(found):
    # NVIDIA/k8s-dra-driver-gpu demo: a pod whose only claim is the template a ComputeDomain makes
    path = RECALL / "dra-driver-gpu-imex-channel-injection.yaml"
    assert [(line, column) for line, column, _ in found(path, "teardown-prestop")] == [(18, 5)]
    assert [(line, column) for line, column, _ in found(path, "teardown-grace-period")] == [(17, 3)]


def test_a_channel_claim_is_not_a_gpu_for_the_gpu_memory_rules(lint_json):
    text = (RECALL / "dra-driver-gpu-imex-channel-injection.yaml").read_text().replace(
        "    image: ubuntu:22.04\n", "    image: ubuntu:22.04\n    securityContext: {privileged: true}\n")
    rules = {f["rule"] for f in lint_json(text)["findings"]}
    assert "teardown-prestop" in rules and "privileged-gpu-container" not in rules


def test_containers_a_serving_runtime_embeds_under_its_own_keys_are_judged(found):
    # sgl-project/ome: prefill (engineConfig) and decode (decoderConfig) runners, one GPU each
    path = RECALL / "ome-clusterservingruntime-llama-3-2-1b-pd.yaml"
    assert [(line, column) for line, column, _ in found(path, "legacy-gpu-resource")] == [(82, 11), (168, 11)]


def test_a_container_of_an_unknown_kind_is_judged_by_its_shape_and_says_so(lint_json):
    text = ("apiVersion: example.org/v1\nkind: Runtime\nmetadata: {name: r}\nspec:\n  engine:\n    runner:\n"
            "      image: x\n      resources: {limits: {nvidia.com/gpu: 2}}\n"
            "  other:\n    containers: [{name: a, image: y, resources: {limits: {amd.com/gpu: 1}}}]\n")
    found = [(f["line"], f["severity"], f["message"]) for f in lint_json(text)["findings"]
             if f["rule"] == "legacy-gpu-resource"]
    assert [(line, severity) for line, severity, _ in found] == [(8, "info"), (10, "info")]
    assert all("judged only by the shape" in message for _, _, message in found)


def test_the_device_plugin_s_time_slicing_config_map_is_found_at_its_key(found):
    # kubeflow/trainer hack/gpu-time-slicing.yml: the plugin's config inside a ConfigMap
    path = CORPUS / "legacy" / "kubeflow-trainer__hack__gpu-time-slicing.yml"
    [(line, column, message)] = found(path, "legacy-gpu-sharing")
    assert (line, column) == (31, 7) and "among 2 pods (timeSlicing)" in message


@pytest.mark.parametrize("replicas, data, flagged", [
    (2, "sharing:\n  mps:\n    resources:\n    - {name: nvidia.com/gpu, replicas: %d}\n", True),
    (1, "sharing:\n  timeSlicing:\n    resources:\n    - {name: nvidia.com/gpu, replicas: %d}\n", False),
    (4, "sharing: &a\n  timeSlicing: {resources: [{name: nvidia.com/gpu, replicas: %d}]}\nx: *a\n", False),
    (4, "sharing: [%d", False),
])
def test_a_sharing_config_is_read_only_where_it_shares(lint_json, replicas, data, flagged):
    text = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata:\n  config.yaml: |\n" + \
        "".join(f"    {line}\n" for line in (data % replicas).splitlines())
    assert bool([f for f in lint_json(text)["findings"] if f["rule"] == "legacy-gpu-sharing"]) is flagged


def test_a_class_another_file_of_the_input_installs_is_known(found):
    # kubernetes/kubernetes test/integration/scheduler_perf/dra/templates: the class and the claim
    # template that names it sit in two files of one folder
    folder = RECALL / "scheduler-perf-dra"
    assert found(folder, "request-device-class") == []
    [(line, _, message)] = found(folder / "resourceclaimtemplate.yaml", "request-device-class")
    assert line == 11 and "'test-class', which is neither in the linted set" in message
