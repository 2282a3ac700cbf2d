"""More workload kinds (issue: precision): real public manifests of Volcano, NVIDIA NIM and
Dynamo, vLLM AIBrix, KServe runtimes, and hand-written Knative, Argo and Kueue objects; each legacy GPU
request is found at its exact key, and kinds draguard does not model still get an info note.
Sources: tests/support/data/precision/workloads/SOURCES.tsv."""

import pytest

from support.paths import DATA

FIXTURES = DATA / "precision" / "workloads"


@pytest.fixture
def legacy(cli):
    def run(name: str) -> list[tuple]:
        report = cli("lint", FIXTURES / name, "--no-config", "-f", "json").json
        return [(f["line"], f["column"], f["severity"], f["object"]["kind"]) for f in report["findings"]
                if f["rule"] == "legacy-gpu-resource"]
    return run


@pytest.mark.parametrize("name, expected", [
    ("volcano-mindspore-gpu.yaml", [(47, 19, "error", "Job")]),
    ("nim-nimservice.yaml", [(20, 7, "error", "NIMService")]),
    ("dynamo-v1alpha1-disagg.yaml", [(26, 11, "error", "DynamoGraphDeployment"),
                                     (52, 11, "error", "DynamoGraphDeployment")]),
    ("dynamo-v1beta1-agg.yaml", [(44, 15, "error", "DynamoGraphDeployment")]),
    ("aibrix-stormservice-1p1d.yaml", [(84, 23, "error", "StormService"), (163, 23, "error", "StormService")]),
    ("kserve-clusterservingruntime-tensorflow-gpu.yaml", []),  # `{{.Name}}` in an argument is data
    ("handwritten-kinds.yaml", [(9, 26, "error", "ServingRuntime"), (19, 30, "error", "Service"),
                                (30, 28, "error", "Workflow"), (35, 28, "error", "Workflow"),
                                (50, 34, "error", "Workload"), (61, 30, "info", "InferencePool")]),
])
def test_legacy_gpu_requests_in_every_modelled_kind(legacy, name, expected):
    assert legacy(name) == expected


def test_dynamo_gpu_counts_are_named_for_what_they_are(cli):
    report = cli("lint", FIXTURES / "dynamo-v1alpha1-disagg.yaml", "--no-config", "-f", "json").json
    messages = [f["message"] for f in report["findings"] if f["rule"] == "legacy-gpu-resource"]
    assert all("DynamoGraphDeployment turns it into nvidia.com/gpu" in m for m in messages)


@pytest.mark.parametrize("kind, counts, pods", [
    ("batch/v1 Job", "parallelism: 3", 3),
    ("leaderworkerset.x-k8s.io/v1 LeaderWorkerSet", "replicas: 2\n  leaderWorkerTemplate: {size: 4}", 8),
])
def test_pods_sharing_one_claim_are_counted_as_controllers_run_them(lint_json, kind, counts, pods):
    api_version, kind = kind.split(" ")
    template = ("template: {metadata: {labels: {a: b}}, spec: {resourceClaims: [{name: g, resourceClaimName: shared}],"
                " containers: [{name: c, image: x, resources: {claims: [{name: g}]}}]}}")
    spec = f"{counts}\n  {template}" if kind == "Job" else \
        counts.replace("{size: 4}", f"{{size: 4, workerTemplate: {template.split(': ', 1)[1]}}}")
    text = (f"apiVersion: {api_version}\nkind: {kind}\nmetadata: {{name: w}}\nspec:\n  {spec}\n---\n"
            "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: shared}\n"
            "spec: {devices: {requests: [{name: g, exactly: {deviceClassName: gpu.nvidia.com}}]}}\n")
    [finding] = [f for f in lint_json(text)["findings"] if f["rule"] == "shared-claim-replicas"]
    assert f"all {pods} pods share" in finding["message"]
