"""The migration of shared GPUs (issue: real-world recall): a workload on time-sliced or MPS
replicas of nvidia.com/gpu becomes one ResourceClaim the pods share, with NVIDIA's GpuConfig
sharing it the same way, where the input says which sharing it is; else the reason. The
device plugin's config is kubeflow/trainer's (tests/support/data/corpus/SOURCES.tsv). A KAI
Scheduler gpu-fraction pod becomes the same, with TimeSlicing (KAI's share isolates no memory)."""

from __future__ import annotations

import shutil

import pytest
import yaml

from support.paths import DATA

PLUGIN_CONFIG = DATA / "corpus" / "legacy" / "kubeflow-trainer__hack__gpu-time-slicing.yml"
#: NVIDIA/KAI-Scheduler's docs/gpu-sharing/gpu-sharing.yaml (tests/support/data/precision/vendors/SOURCES.tsv)
KAI_POD = DATA / "precision" / "vendors" / "kai-gpu-sharing.yaml"
DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata: {{name: notebook, namespace: team-a}}
spec:
  replicas: 2
  strategy: {{type: Recreate}}
  selector: {{matchLabels: {{app: nb}}}}
  template:
    metadata: {{labels: {{app: nb}}}}
    spec:
      nodeSelector: {{{selector}}}
      containers:
      - name: lab
        image: jupyter/base-notebook
        resources:
          limits: {{nvidia.com/gpu: 1}}
"""
TIME_SLICED = DEPLOYMENT.format(selector="nvidia.com/gpu.product: Tesla-T4-SHARED")


def _fix(cli, folder):
    done = cli("fix", "--no-config", "--unsafe-fixes", "--select", "legacy-gpu-resource", folder)
    return done, [d for d in yaml.safe_load_all((folder / "deploy.yaml").read_text()) if d]


def test_time_sliced_replicas_become_one_claim_the_pods_share_and_it_allocates(cli, tmp_path):
    shutil.copy(PLUGIN_CONFIG, tmp_path / "plugin.yaml")
    (tmp_path / "deploy.yaml").write_text(TIME_SLICED)
    done, (deployment, claim) = _fix(cli, tmp_path)
    assert "GpuConfig sharing.strategy TimeSlicing (as ConfigMap 'gpu-time-slicing-config' key 'any')" in done.out
    spec = deployment["spec"]["template"]["spec"]
    # GPU Feature Discovery drops -SHARED once the plugin no longer shares the GPU: left, the
    # pods would wait for nodes no DRA driver's GPU carries
    assert spec["nodeSelector"] == {"nvidia.com/gpu.product": "Tesla-T4"}
    assert spec["resourceClaims"] == [{"name": "shared-gpu", "resourceClaimName": "notebook-lab-shared-gpu"}]
    assert spec["containers"][0]["resources"] == {"claims": [{"name": "shared-gpu"}]}
    assert (claim["kind"], claim["metadata"]) == ("ResourceClaim", {"name": "notebook-lab-shared-gpu",
                                                                    "namespace": "team-a"})
    [config] = claim["spec"]["devices"]["config"]
    assert config["opaque"]["parameters"]["sharing"] == {"strategy": "TimeSlicing"}
    relinted = cli("lint", "--no-config", "-f", "json", tmp_path / "deploy.yaml").json
    assert "legacy-gpu-resource" not in {f["rule"] for f in relinted["findings"]}
    # one allocation serves every pod: on a node of one GPU, the claim gets that GPU
    spec_file = tmp_path / "inventory-spec.yaml"
    spec_file.write_text("nodes:\n- {namePrefix: gpu, count: 1, gpus: {model: A100-40GB, count: 1}}\n")
    assert cli("inventory", "generate", spec_file, "-o", tmp_path / "inventory.yaml").code == 0
    [allocated] = cli("allocate", "--no-config", "-f", "json", "--inventory", tmp_path / "inventory.yaml",
                      tmp_path / "deploy.yaml").json
    assert allocated["node"] == "gpu-0" and len(allocated["allocation"]["devices"]["results"]) == 1


@pytest.mark.parametrize("value, strategy", [("mps", "MPS"), ("time-sharing", "TimeSlicing")])
def test_gke_s_sharing_label_names_the_strategy(cli, tmp_path, value, strategy):
    (tmp_path / "deploy.yaml").write_text(DEPLOYMENT.format(
        selector=f"cloud.google.com/gke-gpu-sharing-strategy: {value}, "
                 "cloud.google.com/gke-max-shared-clients-per-gpu: '3'"))
    _, documents = _fix(cli, tmp_path)
    assert [d["kind"] for d in documents] == ["Deployment", "ResourceClaim"]  # no template: no GPU per pod
    assert "nodeSelector" not in documents[0]["spec"]["template"]["spec"]  # GKE's sharing labels go with the share
    assert documents[1]["spec"]["devices"]["config"][0]["opaque"]["parameters"]["sharing"] == {"strategy": strategy}


@pytest.mark.parametrize("selector, reason", [
    ("nvidia.com/gpu.product: Tesla-T4-SHARED",
     "no NVIDIA device plugin config in the input says whether the replicas are time-sliced or MPS"),
    ("cloud.google.com/gke-gpu-sharing-strategy: time-slicing", "not one of time-sharing, mps"),
])
def test_where_the_sharing_is_not_known_the_reason_is_given(cli, tmp_path, selector, reason):
    (tmp_path / "deploy.yaml").write_text(DEPLOYMENT.format(selector=selector))
    done = cli("fix", "--no-config", "--unsafe-fixes", "--check", tmp_path)
    assert "would fix 0" in done.out and reason in done.out


def test_a_share_selected_by_node_affinity_is_migrated_and_the_affinity_named(cli, tmp_path):
    shutil.copy(PLUGIN_CONFIG, tmp_path / "plugin.yaml")
    (tmp_path / "deploy.yaml").write_text(TIME_SLICED.replace(
        "      nodeSelector: {nvidia.com/gpu.product: Tesla-T4-SHARED}\n",
        "      affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [\n"
        "        {matchExpressions: [{key: nvidia.com/gpu.product, operator: In, values: [Tesla-T4-SHARED]}]}]}}}\n"))
    done, (deployment, _) = _fix(cli, tmp_path)
    assert "the node affinity that selects shared replicas (nvidia.com/gpu.product=Tesla-T4-SHARED) is left" in done.out
    assert "affinity" in deployment["spec"]["template"]["spec"]


def _kai(cli, tmp_path, text: str, *args):
    (tmp_path / "pod.yaml").write_text(text)
    done = cli("fix", "--no-config", "--unsafe-fixes", "--select", "legacy-gpu-sharing", *args, tmp_path)
    return done, [d for d in yaml.safe_load_all((tmp_path / "pod.yaml").read_text()) if d]


def test_kai_s_gpu_fraction_pod_becomes_one_time_sliced_claim_and_it_allocates(cli, tmp_path):
    done, (pod, claim) = _kai(cli, tmp_path, KAI_POD.read_text())
    assert "sharing.strategy TimeSlicing for container 'gpu-workload'" in done.out
    assert "schedulerName kai-scheduler is left" in done.out
    assert "annotations" not in pod["metadata"]  # gpu-fraction was its only one
    spec = pod["spec"]
    assert spec["resourceClaims"] == [{"name": "shared-gpu", "resourceClaimName": claim["metadata"]["name"]}]
    assert spec["containers"][0]["resources"] == {"claims": [{"name": "shared-gpu"}]}
    [config] = claim["spec"]["devices"]["config"]
    assert config["opaque"]["parameters"]["sharing"] == {"strategy": "TimeSlicing"}
    relinted = cli("lint", "--no-config", "-f", "json", tmp_path / "pod.yaml").json
    assert "legacy-gpu-sharing" not in {f["rule"] for f in relinted["findings"]}
    spec_file = tmp_path / "inventory-spec.yaml"
    spec_file.write_text("nodes:\n- {namePrefix: gpu, count: 1, gpus: {model: A100-40GB, count: 1}}\n")
    assert cli("inventory", "generate", spec_file, "-o", tmp_path / "inventory.yaml").code == 0
    [allocated] = cli("allocate", "--no-config", "-f", "json", "--inventory", tmp_path / "inventory.yaml",
                      tmp_path / "pod.yaml").json
    assert allocated["node"] == "gpu-0" and len(allocated["allocation"]["devices"]["results"]) == 1


KAI_TWO = """\
apiVersion: apps/v1
kind: Deployment
metadata: {{name: infer}}
spec:
  replicas: 2
  selector: {{matchLabels: {{app: i}}}}
  template:
    metadata:
      labels: {{app: i}}
      annotations: {{{annotations}}}
    spec:
      containers:
      - {{name: proxy, image: envoyproxy/envoy}}
      - name: model
        image: vllm/vllm-openai
{extra}"""


def test_kai_s_named_container_gets_the_claim_and_every_share_annotation_goes(cli, tmp_path):
    text = KAI_TWO.format(annotations="gpu-memory: '2000', gpu-fraction-container-name: model, team: a", extra="")
    done, (deployment, _) = _kai(cli, tmp_path, text)
    template = deployment["spec"]["template"]
    assert template["metadata"]["annotations"] == {"team": "a"}
    proxy, model = template["spec"]["containers"]
    assert "resources" not in proxy and model["resources"] == {"claims": [{"name": "shared-gpu"}]}
    assert "schedulerName" not in done.out


@pytest.mark.parametrize("annotations, extra, args, reason", [
    ("gpu-fraction: '0.5', gpu-fraction-num-devices: '2'", "", (),
     "on each of gpu-fraction-num-devices: 2 GPUs"),
    ("gpu-fraction: '0.5'", "        resources: {limits: {nvidia.com/gpu: 1}}\n", (),
     "container 'proxy' also asks for nvidia.com/gpu"),
    ("gpu-fraction: '0.5', gpu-fraction-container-name: gone", "", (), "the container it goes to (gone) is not"),
    ("gpu-fraction: '0.5'", "", ("--kube-version", "1.32"), "needs resource.k8s.io/v1beta2 or v1"),
])
def test_where_kai_s_share_has_no_dra_form_the_reason_is_given(cli, tmp_path, annotations, extra, args, reason):
    text = KAI_TWO.format(annotations=annotations, extra="").replace(
        "      - {name: proxy, image: envoyproxy/envoy}\n",
        "      - name: proxy\n        image: envoyproxy/envoy\n" + extra)
    (tmp_path / "pod.yaml").write_text(text)
    done = cli("fix", "--no-config", "--unsafe-fixes", "--check", "--select", "legacy-gpu-sharing", *args, tmp_path)
    assert "would fix 0" in done.out and reason in done.out, done.out
