"""`draguard webhook --offline` registered by URL with the real kube-apiserver (issue: admission):
the legacy example is refused at the Pod and at the Deployment, naming the rule; a compliant
pod is admitted and the claim the resourceclaim controller generates for it too; a dry run is
judged the same; with the webhook down requests are refused (fail-closed), and deleting the
webhook configuration (the documented break-glass) lets them through again."""

from __future__ import annotations

import base64
import json
import os
import textwrap
from contextlib import contextmanager

import pytest
import yaml
from kubernetes import client, dynamic

from draguard.rules import REGISTRY
from draguard.rules.examples import COMPLIANT_POD

from support.cluster import until
from support.webhook import post, review, running_webhook

pytestmark = pytest.mark.cluster
NS = "guarded"
LABEL = {"draguard.io/webhook-test": "true"}


def _docs(text: str) -> list[dict]:
    return [d for d in yaml.safe_load_all(textwrap.dedent(text)) if d]


def configuration(url: str, ca: bytes) -> dict:
    """One webhook entry for every kind judged, in the test's namespace only, failing closed."""
    return {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
            "metadata": {"name": "draguard-test"},
            "webhooks": [{"name": "validate.draguard.io", "admissionReviewVersions": ["v1"], "sideEffects": "None",
                          "failurePolicy": "Fail", "timeoutSeconds": 5,
                          "clientConfig": {"url": f"{url}/validate", "caBundle": base64.b64encode(ca).decode()},
                          "namespaceSelector": {"matchLabels": LABEL},
                          "rules": [{"operations": ["CREATE", "UPDATE"], "apiGroups": ["", "apps", "resource.k8s.io"],
                                     "apiVersions": ["*"], "scope": "Namespaced",
                                     "resources": ["pods", "pods/ephemeralcontainers", "deployments",
                                                   "deployments/scale", "resourceclaims",
                                                   "resourceclaimtemplates"]}]}]}


#: an operator's controller, named at install (--controller-user), as KubeRay's would be
OPERATOR = "system:serviceaccount:ray-system:kuberay-operator"


@pytest.fixture(scope="module")
def guarded(bare_plane):
    core = client.CoreV1Api(bare_plane.api())
    core.create_namespace({"metadata": {"name": NS, "labels": LABEL}})
    with running_webhook("--kube-version", "1.37", "--controller-user", OPERATOR) as (url, ca, process):
        process.url, process.ca = url, ca
        admission = client.AdmissionregistrationV1Api(bare_plane.api())
        admission.create_validating_webhook_configuration(configuration(url, ca))
        try:
            yield bare_plane, process
        finally:
            try:
                admission.delete_validating_webhook_configuration("draguard-test")
            except client.exceptions.ApiException:
                pass
            core.delete_namespace(NS)


@contextmanager
def online_webhook(plane, name: str):
    """A webhook with the cluster's cache (judging as the plane's release), registered by URL
    beside the offline one as `<name>.draguard.io`, for the test's namespace: (url, ca)."""
    with running_webhook("--kube-version", "1.37", kubeconfig=plane.kubeconfig) as (url, ca, _):
        admission = client.AdmissionregistrationV1Api(plane.api())
        online = configuration(url, ca)
        online["metadata"]["name"] = f"draguard-{name}"
        online["webhooks"][0]["name"] = f"{name}.draguard.io"
        admission.create_validating_webhook_configuration(online)
        try:
            yield url, ca
        finally:
            admission.delete_validating_webhook_configuration(f"draguard-{name}")


def create(plane, obj: dict, dry_run: bool = False):
    resource = dynamic.DynamicClient(plane.api()).resources.get(api_version=obj["apiVersion"], kind=obj["kind"])
    return resource.create(body=obj, namespace=NS, dry_run="All" if dry_run else None)


def refused(plane, obj: dict, dry_run: bool = False) -> str:
    with pytest.raises(client.exceptions.ApiException) as caught:
        create(plane, obj, dry_run)
    return caught.value.body if isinstance(caught.value.body, str) else caught.value.body.decode()


LEGACY_POD = _docs(REGISTRY.get("legacy-gpu-resource").noncompliant)[0]


def test_the_legacy_pod_is_refused_naming_the_rule_and_field(guarded):
    plane, _ = guarded
    legacy = dict(LEGACY_POD, metadata={"name": "legacy"})
    until("the webhook to be called", lambda: "legacy-gpu-resource" in refused(plane, legacy), timeout=30)
    body = refused(plane, legacy)
    assert 'admission webhook \\"validate.draguard.io\\" denied the request' in body
    assert '[legacy-gpu-resource] spec.containers[0].resources.limits[\\"nvidia.com/gpu\\"]' in body
    assert "legacy-gpu-resource" in refused(plane, legacy, dry_run=True)  # a dry run is judged the same


def test_an_ephemeral_container_is_judged_as_the_pod_s_others(guarded):
    """`kubectl debug` adds a container through pods/ephemeralcontainers, an UPDATE of the whole
    Pod: one that sets NVIDIA_VISIBLE_DEVICES=all on a compliant pod is refused, a plain one
    admitted (neither reached the webhook before: the subresource was not routed)."""
    plane, _ = guarded
    core = client.CoreV1Api(plane.api())
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "debugged"},
           "spec": {"containers": [{"name": "app", "image": "busybox"}]}}
    create(plane, pod)
    try:
        def debug(name: str, env: list[dict]):
            return core.patch_namespaced_pod_ephemeralcontainers("debugged", NS, {"spec": {"ephemeralContainers": [
                {"name": name, "image": "busybox", "env": env}]}})
        with pytest.raises(client.exceptions.ApiException) as caught:
            debug("sneaky", [{"name": "NVIDIA_VISIBLE_DEVICES", "value": "all"}])
        said = caught.value.body if isinstance(caught.value.body, str) else caught.value.body.decode()
        assert "[env-device-visibility] spec.ephemeralContainers[0].env[0]" in json.loads(said)["message"]
        debug("plain", [])
        assert [c.name for c in core.read_namespaced_pod("debugged", NS).spec.ephemeral_containers] == ["plain"]
    finally:
        core.delete_namespaced_pod("debugged", NS, grace_period_seconds=0)


def test_the_legacy_deployment_is_refused_at_the_deployment(guarded):
    plane, _ = guarded
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "legacy"},
                  "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "legacy"}},
                           "template": {"metadata": {"labels": {"app": "legacy"}}, "spec": LEGACY_POD["spec"]}}}
    assert "[legacy-gpu-resource] spec.template.spec.containers[0]" in refused(plane, deployment)


def test_legacy_objects_from_before_the_webhook_are_refused_only_what_an_update_brings(guarded):
    """A legacy pod (a Job's, with the Job controller's tracking finalizer) and a legacy
    Deployment created before their namespace was guarded: relabelled, the finalizer taken
    off, the image bumped, they are admitted, and the controllers roll the bump out (the new
    ReplicaSet and its pod are theirs, made from the admitted template); a second GPU
    container in the Deployment is refused for that container and for growing the fault the
    Deployment kept, as are 50 replicas of it; the pod, deleted, loses its
    last finalizer and is gone."""
    plane, _ = guarded
    core, resources = client.CoreV1Api(plane.api()), dynamic.DynamicClient(plane.api()).resources
    pods, deployments = resources.get(api_version="v1", kind="Pod"), resources.get(api_version="apps/v1",
                                                                                  kind="Deployment")
    merge = "application/merge-patch+json"
    namespace = "before-guard"
    core.create_namespace({"metadata": {"name": namespace}})
    try:
        pods.create(namespace=namespace, body=dict(LEGACY_POD, metadata={
            "name": "ran-before", "finalizers": ["batch.kubernetes.io/job-tracking", "draguard.io/test"]}))
        deployments.create(namespace=namespace, body={
            "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "ran-before"},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "x"}},
                     "template": {"metadata": {"labels": {"app": "x"}}, "spec": LEGACY_POD["spec"]}}})
        core.patch_namespace(namespace, {"metadata": {"labels": LABEL}})

        def guarded_now() -> bool:
            try:
                pods.create(namespace=namespace, body=dict(LEGACY_POD, metadata={"name": "probe"}), dry_run="All")
            except client.exceptions.ApiException as exc:
                return "legacy-gpu-resource" in str(exc.body)
            return False
        until("the namespace to be guarded", guarded_now, timeout=30)
        pods.patch(namespace=namespace, name="ran-before", content_type=merge, body={"metadata": {
            "labels": {"done": "yes"}, "finalizers": ["draguard.io/test"]}})
        assert pods.get(namespace=namespace, name="ran-before").metadata.finalizers == ["draguard.io/test"]
        container = dict(LEGACY_POD["spec"]["containers"][0])
        bumped = dict(container, image=container["image"] + "-patched")
        deployments.patch(namespace=namespace, name="ran-before", content_type=merge,
                          body={"spec": {"template": {"spec": {"containers": [bumped]}}}})
        apps = client.AppsV1Api(plane.api())

        def rolled_out() -> bool:
            images = {c.image for p in core.list_namespaced_pod(namespace).items if p.metadata.owner_references
                      for c in p.spec.containers}
            sets = {c.image for r in apps.list_namespaced_replica_set(namespace).items
                    for c in r.spec.template.spec.containers}
            return bumped["image"] in sets and bumped["image"] in images
        until("the controllers to roll the bump out", rolled_out, timeout=60)
        with pytest.raises(client.exceptions.ApiException) as caught:
            deployments.patch(namespace=namespace, name="ran-before", content_type=merge, body={"spec": {"template": {
                "spec": {"containers": [bumped, dict(container, name="more")]}}}})
        said = caught.value.body if isinstance(caught.value.body, str) else caught.value.body.decode()
        assert "[legacy-gpu-resource] spec.template.spec.containers[1]" in said
        assert "the update grows what its existing errors concern (device-plugin GPUs 1 -> 2)" in json.loads(said)["message"]
        with pytest.raises(client.exceptions.ApiException) as caught:  # the fault it kept may not grow: more pods
            deployments.patch(namespace=namespace, name="ran-before", content_type=merge, body={"spec": {"replicas": 50}})
        said = caught.value.body if isinstance(caught.value.body, str) else caught.value.body.decode()
        assert "the update grows what its existing errors concern (pods 1 -> 50)" in json.loads(said)["message"]
        pods.delete(namespace=namespace, name="ran-before")
        pods.patch(namespace=namespace, name="ran-before", content_type=merge, body={"metadata": {"finalizers": None}})
        until("the pod to be gone", lambda: "ran-before" not in {
            p.metadata.name for p in core.list_namespaced_pod(namespace).items}, timeout=30)
    finally:
        core.delete_namespace(namespace)


def test_an_operators_pod_from_its_owners_template_is_left_to_the_owner(guarded):
    """KubeRay remaking a legacy RayCluster's pod: the API server names the operator's service
    account, which the installation named; the same pod from a look-alike account elsewhere,
    or without a controller owner, is judged."""
    plane, _ = guarded
    owner = [{"apiVersion": "ray.io/v1", "kind": "RayCluster", "name": "rc", "uid": "0b5c", "controller": True}]
    pod = dict(LEGACY_POD, metadata={"name": "rc-worker", "ownerReferences": owner})

    def as_user(user: str, obj: dict) -> str | None:
        api = plane.api()
        api.set_default_header("Impersonate-User", user)
        api.set_default_header("Impersonate-Group", "system:masters")  # allowed whoever it is: admission decides
        resource = dynamic.DynamicClient(api).resources.get(api_version="v1", kind="Pod")
        try:
            resource.create(body=obj, namespace=NS, dry_run="All")
        except client.exceptions.ApiException as exc:
            return exc.body if isinstance(exc.body, str) else exc.body.decode()
        return None

    until("the webhook to be called", lambda: "legacy-gpu-resource" in (as_user("alice", pod) or ""), timeout=30)
    assert as_user(OPERATOR, pod) is None
    assert "legacy-gpu-resource" in as_user("system:serviceaccount:team-a:kuberay-operator", pod)
    assert "legacy-gpu-resource" in as_user(OPERATOR, dict(pod, metadata={"name": "bare"}))


def test_a_compliant_pod_and_its_generated_claim_are_admitted(guarded):
    plane, _ = guarded
    template, pod = _docs(COMPLIANT_POD)
    create(plane, template)
    create(plane, pod)
    res = client.ResourceV1Api(plane.api())
    claims = until("the generated claim", lambda: res.list_namespaced_resource_claim(NS).items, timeout=60)
    assert claims[0].metadata.annotations["resource.kubernetes.io/pod-claim-name"] == "gpu"


def test_with_the_cache_a_missing_template_is_warned_of_and_a_dra_backed_gpu_admitted(guarded):
    """Online, the cross-object rules read the watch-fed cache: a pod naming a template that
    does not exist yet is admitted with a warning (offline, references are taken to exist;
    denying it failed every `helm install` of a chart with a template: Helm creates the kinds
    it does not know after Deployments), and a `nvidia.com/gpu` limit served by a DeviceClass
    with extendedResourceName (KEP-5004) is not the legacy device plugin."""
    plane, process = guarded
    offline_url, offline_ca = process.url, process.ca
    missing = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "orphan"},
               "spec": {"resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "nowhere"}],
                        "containers": [{"name": "c", "image": "vllm/vllm-openai",
                                        "resources": {"claims": [{"name": "gpu"}]}}]}}
    mapped = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "dra-gpus"},
              "spec": {"selectors": [{"cel": {"expression": "device.driver == 'gpu.nvidia.com'"}}],
                       "extendedResourceName": "nvidia.com/gpu"}}
    resources = client.ResourceV1Api(plane.api())
    stored = resources.create_device_class(mapped)
    try:
        with online_webhook(plane, "online") as (url, ca):
            warned = until("the online webhook's cache", lambda: post(url, ca, review(missing, namespace=NS))[1][
                "response"].get("warnings"), timeout=30)
            assert any(w.startswith("[claim-reference-missing]") for w in warned)
            create(plane, missing)  # through the real apiserver and both webhooks: admitted
            client.CoreV1Api(plane.api()).delete_namespaced_pod("orphan", NS, grace_period_seconds=0)
            assert stored.spec.extended_resource_name == "nvidia.com/gpu"  # 1.37 serves the field
            legacy = dict(LEGACY_POD, metadata={"name": "mapped", "namespace": NS})
            assert post(url, ca, review(legacy, namespace=NS))[1]["response"]["allowed"] is True
            offline = post(offline_url, offline_ca, review(legacy, namespace=NS))[1]["response"]
            assert offline["allowed"] is False  # without the cluster's classes it is the device plugin
    finally:
        resources.delete_device_class("dra-gpus")


def test_kubectl_scale_may_not_grow_a_legacy_deployment(guarded):
    """`kubectl scale` writes deployments/scale, a Scale with no template (the attack review
    grew the legacy Deployment to 50 pods that way, unjudged): the online webhook judges it as
    the Deployment's update, read from its cache; the offline one, which holds no Deployments,
    admits it with a warning that says so."""
    plane, _ = guarded
    core, apps = client.CoreV1Api(plane.api()), client.AppsV1Api(plane.api())
    namespace = "scaled-before"
    core.create_namespace({"metadata": {"name": namespace}})
    try:
        dynamic.DynamicClient(plane.api()).resources.get(api_version="apps/v1", kind="Deployment").create(
            namespace=namespace, body={
            "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "legacy"},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "x"}},
                     "template": {"metadata": {"labels": {"app": "x"}}, "spec": LEGACY_POD["spec"]}}})
        core.patch_namespace(namespace, {"metadata": {"labels": LABEL}})
        with online_webhook(plane, "scale"):
            def refused_scale(dry_run: str | None) -> str:
                try:
                    apps.patch_namespaced_deployment_scale("legacy", namespace, {"spec": {"replicas": 50}},
                                                           dry_run=dry_run)
                except client.exceptions.ApiException as exc:
                    return json.loads(exc.body)["message"]
                return ""
            until("the online webhook to be registered", lambda: "pods 1 -> 50" in refused_scale("All"), timeout=30)
            assert "the update grows what its existing errors concern (pods 1 -> 50)" in refused_scale(None)
            assert apps.read_namespaced_deployment_scale("legacy", namespace).spec.replicas == 1
            apps.patch_namespaced_deployment_scale("legacy", namespace, {"spec": {"replicas": 0}})  # shrinking
            assert not apps.read_namespaced_deployment_scale("legacy", namespace).spec.replicas  # 0 is omitted
    finally:
        core.delete_namespace(namespace)


def test_a_device_variable_hidden_in_a_config_map_is_found_online(guarded):
    """A pod that takes NVIDIA_VISIBLE_DEVICES=all from a ConfigMap by envFrom (the attack
    review's) is refused by the online webhook, which watches ConfigMaps (their device keys)."""
    plane, _ = guarded
    core = client.CoreV1Api(plane.api())
    core.create_namespaced_config_map(NS, {"metadata": {"name": "sneaky"}, "data": {"NVIDIA_VISIBLE_DEVICES": "all"}})
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "imports"},
           "spec": {"containers": [{"name": "c", "image": "busybox", "envFrom": [{"configMapRef": {"name": "sneaky"}}]}]}}
    try:
        with online_webhook(plane, "config-maps"):
            until("the online webhook to refuse it", lambda: "[env-device-visibility]" in _refusal(plane, pod),
                  timeout=30)
    finally:
        core.delete_namespaced_config_map("sneaky", NS)


def _refusal(plane, obj) -> str:
    """What the API server says refusing a dry-run create of `obj` ('' when it admits it)."""
    try:
        create(plane, obj, dry_run=True)
    except client.exceptions.ApiException as exc:
        return exc.body if isinstance(exc.body, str) else exc.body.decode()
    return ""


def test_online_the_webhook_judges_as_the_cluster_it_serves(guarded):
    """Without --kube-version the online webhook reads the server's release and the gates its
    API server reports on /metrics, and says so in its log."""
    import json

    plane, _ = guarded
    with running_webhook(kubeconfig=plane.kubeconfig) as (_, _, process):
        events = [json.loads(line) for line in open(process.log_path) if line.startswith("{")]
    [judging] = [e for e in events if e["event"] == "judging as"]
    assert judging["kubeVersion"] == "1.37" and judging["serverVersion"].startswith("v1.37")
    assert judging["featureGates"]["DRAConsumableCapacity"] is True and judging["notes"] == []


def test_zz_down_means_refused_and_the_break_glass_lets_requests_through(guarded):
    plane, process = guarded
    process.terminate()
    process.wait(timeout=10)
    config_map_free = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "fine"},
                       "spec": {"containers": [{"name": "c", "image": "busybox"}]}}
    body = refused(plane, config_map_free)
    assert "failed calling webhook" in body  # fail-closed
    client.AdmissionregistrationV1Api(plane.api()).delete_validating_webhook_configuration("draguard-test")
    until("the break-glass to take effect", lambda: _created(plane, config_map_free), timeout=30)


def _created(plane, obj) -> bool:
    try:
        create(plane, obj)
        return True
    except client.exceptions.ApiException:
        return False


def test_helm_installs_a_chart_whose_template_it_creates_after_the_deployment(guarded, tmp_path):
    """The real helm creates the kinds it does not know (ResourceClaimTemplate) after the
    Deployment that names the template: the online webhook warns of the missing template
    and lets the install through (it refused the Deployment, and the install failed)."""
    import subprocess

    from support.renderers import renderers_dir

    helm = renderers_dir()
    if helm is None:
        pytest.skip("Go is not installed: helm cannot be built")
    plane, _ = guarded
    template, pod = _docs(COMPLIANT_POD.replace("mig-1g", "helm-mig-1g"))  # a template no other test made
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "served"},
                  "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "served"}}, "strategy": {
                      "type": "RollingUpdate", "rollingUpdate": {"maxSurge": 0, "maxUnavailable": 1}},
                      "template": {"metadata": {"labels": {"app": "served"}}, "spec": pod["spec"]}}}
    chart = tmp_path / "chart"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: served\nversion: 0.1.0\n")
    (chart / "templates" / "all.yaml").write_text(yaml.safe_dump_all([deployment, template]))
    with online_webhook(plane, "helm") as (url, ca):
        until("the online webhook's cache", lambda: "[claim-reference-missing]" in str(
            post(url, ca, review(deployment, namespace=NS))[1]["response"]), timeout=30)
        try:
            done = subprocess.run([os.path.join(helm, "helm"), "install", "served", str(chart), "--namespace", NS,
                                   "--kubeconfig", str(plane.kubeconfig)], capture_output=True, text=True, timeout=120)
            assert done.returncode == 0, done.stderr
            apps = client.AppsV1Api(plane.api())
            assert apps.read_namespaced_deployment("served", NS).metadata.name == "served"
        finally:
            subprocess.run([os.path.join(helm, "helm"), "uninstall", "served", "--namespace", NS,
                            "--kubeconfig", str(plane.kubeconfig)], capture_output=True, timeout=120)
