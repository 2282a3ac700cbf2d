"""Rules on real manifests of the shared corpus, at exact positions."""

import pytest

from support.paths import corpus, corpus_files


@pytest.fixture
def lint_corpus(cli):
    corpus_files()

    def run(relative: str, *args) -> list[tuple]:
        report = cli("lint", corpus() / relative, "--no-config", "-f", "json", *args).json
        return [(f["rule"], f["line"], f["column"], f["severity"]) for f in report["findings"]]

    return run


def test_device_plugin_limits_flagged_but_not_tolerations(lint_corpus):
    found = lint_corpus("legacy/k8s-dra-driver-gpu__demo__specs__extended-resources__gpu-full.yaml")
    legacy = [f for f in found if f[0] == "legacy-gpu-resource"]
    assert legacy == [("legacy-gpu-resource", 43, 9, "error")]  # line 45 is a toleration key


def test_extended_resource_mapped_by_a_device_class_is_info(lint_corpus):
    found = lint_corpus("dra/k8s-dra-driver-gpu__demo__specs__extended-resources__mig-1g-12gb.yaml",
                        "--kube-version", "1.34")
    assert [f for f in found if f[0] == "legacy-gpu-resource"] == [("legacy-gpu-resource", 84, 9, "info")]


def test_quota_that_names_the_resource_is_not_a_request(lint_corpus):
    found = lint_corpus("legacy/kubernetes-engine-samples__ai-ml__mix-train-and-inference__workloads__cluster-queue.yaml")
    assert not [f for f in found if f[0] == "legacy-gpu-resource"]


def test_env_var_from_value_from(lint_corpus):
    found = lint_corpus("legacy/fake-gpu-operator__design__samples__2.17__fractional_pod.yaml")
    assert ("env-device-visibility", 67, 7, "error") in found


def test_classic_dra_claims_are_removed_apis(lint_corpus):
    found = lint_corpus("dra/k8s-dra-driver-gpu__demo__specs__mig+mps__sharing-demo-claims.yaml")
    assert ("api-removed", 2, 13, "error") in found  # resource.k8s.io/v1alpha2
    assert ("api-removed", 8, 3, "error") in found  # resourceClassName
    assert ("api-removed", 9, 3, "error") in found  # parametersRef


def test_pod_claim_source_wrapper(lint_corpus):
    found = lint_corpus("dra/k8s-dra-driver-gpu__demo__specs__selectors__pods.yaml")
    assert ("api-removed", 12, 5, "error") in found


def test_operator_daemonset_host_mounts_are_one_node_agent_note(lint_corpus):
    found = lint_corpus("legacy/gpu-operator__assets__state-device-plugin__0500_daemonset.yaml")
    host_rules = {"host-device-mount", "host-ipc", "privileged-gpu-container", "mps-daemon-in-tenant-pod"}
    assert not [f for f in found if f[0] in host_rules]  # a DaemonSet is the node's, not a tenant's
    assert [f for f in found if f[0] == "daemonset-host-access"] == [("daemonset-host-access", 19, 7, "info")]


def test_a_bare_dev_mount_does_not_make_a_gpu_pod(cli, tmp_path):
    (tmp_path / "csi.yaml").write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: csi-node}\nspec:\n  hostIPC: true\n  containers:\n"
        "  - {name: plugin, image: x, securityContext: {privileged: true}}\n"
        "  volumes: [{name: dev, hostPath: {path: /dev}}]\n")
    rules = {f["rule"] for f in cli("lint", tmp_path / "csi.yaml", "--no-config", "-f", "json").json["findings"]}
    assert "host-device-mount" in rules and not rules & {"host-ipc", "privileged-gpu-container"}


def test_shared_imex_channels_are_not_gpu_sharing(lint_corpus):
    found = lint_corpus("dra/k8s-dra-driver-gpu__demo__specs__quickstart__v1__imex-test1.yaml", "--kube-version", "1.34")
    assert not [f for f in found if f[0] == "shared-claim-replicas"]


def test_v1_quickstart_is_current_on_1_34_and_too_new_for_1_32(lint_corpus):
    path = "dra/k8s-dra-driver-gpu__demo__specs__quickstart__v1__gpu-test1.yaml"
    assert not [f for f in lint_corpus(path, "--kube-version", "1.34") if f[0].startswith("api-")]
    assert {f[0] for f in lint_corpus(path, "--kube-version", "1.32")} >= {"api-version-unavailable"}


def test_v1beta1_quickstart_by_version(lint_corpus):
    path = "dra/k8s-dra-driver-gpu__demo__specs__quickstart__v1beta1__gpu-test1.yaml"
    on_132 = [f for f in lint_corpus(path, "--kube-version", "1.32") if f[0].startswith("api-")]
    assert on_132 and all(f[0] == "api-version-not-default" and f[3] == "info" for f in on_132)
    on_134 = [f for f in lint_corpus(path, "--kube-version", "1.34") if f[0].startswith("api-")]
    assert on_134 and all(f[0] == "api-version-not-default" and f[3] == "warning" for f in on_134)
    on_135 = [f for f in lint_corpus(path, "--kube-version", "1.35") if f[0].startswith("api-")]
    assert on_135 and all(f[0] == "api-version-deprecated" for f in on_135)

    by_default = [f for f in lint_corpus(path) if f[0].startswith("api-")]
    assert by_default and all(f[0] == "api-version-deprecated" for f in by_default)  # the default is 1.37
