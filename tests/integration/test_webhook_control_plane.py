"""`draguard webhook --offline` registered by URL with the real kube-apiserver (issue: admission):
the legacy example is refused at the Pod and at the Deployment, naming the rule; a compliant
pod is admitted and the claim the resourceclaim controller generates for it too; a dry run is
judged the same; with the webhook down requests are refused (fail-closed), and deleting the
webhook configuration (the documented break-glass) lets them through again."""

from __future__ import annotations

import base64
import textwrap

import pytest
import yaml
from kubernetes import client

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
                                     "resources": ["pods", "deployments", "resourceclaims",
                                                   "resourceclaimtemplates"]}]}]}


@pytest.fixture(scope="module")
def guarded(bare_plane):
    core = client.CoreV1Api(bare_plane.api())
    core.create_namespace({"metadata": {"name": NS, "labels": LABEL}})
    with running_webhook("--kube-version", "1.37") as (url, ca, process):
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


def create(plane, obj: dict, dry_run: bool = False):
    from kubernetes import dynamic

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


def test_the_legacy_deployment_is_refused_at_the_deployment(guarded):
    plane, _ = guarded
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "legacy"},
                  "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "legacy"}},
                           "template": {"metadata": {"labels": {"app": "legacy"}}, "spec": LEGACY_POD["spec"]}}}
    assert "[legacy-gpu-resource] spec.template.spec.containers[0]" in refused(plane, deployment)


def test_a_compliant_pod_and_its_generated_claim_are_admitted(guarded):
    plane, _ = guarded
    template, pod = _docs(COMPLIANT_POD)
    create(plane, template)
    create(plane, pod)
    res = client.ResourceV1Api(plane.api())
    claims = until("the generated claim", lambda: res.list_namespaced_resource_claim(NS).items, timeout=60)
    assert claims[0].metadata.annotations["resource.kubernetes.io/pod-claim-name"] == "gpu"


def test_with_the_cache_a_missing_template_is_refused_and_a_dra_backed_gpu_admitted(guarded):
    """Online, the cross-object rules read the watch-fed cache: a pod naming a template that
    does not exist is refused (offline it is admitted: references are taken to exist), and a
    `nvidia.com/gpu` limit served by a DeviceClass with extendedResourceName (KEP-5004) is
    not the legacy device plugin."""
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
        with running_webhook("--kube-version", "1.37", kubeconfig=plane.kubeconfig) as (url, ca, _):
            admission = client.AdmissionregistrationV1Api(plane.api())
            online = configuration(url, ca)
            online["metadata"]["name"] = "draguard-online"
            online["webhooks"][0]["name"] = "online.draguard.io"
            admission.create_validating_webhook_configuration(online)
            try:
                body = until("the online webhook to refuse", lambda: _refusal(plane, missing), timeout=30)
                assert "[claim-reference-missing]" in body and "online.draguard.io" in body
                assert stored.spec.extended_resource_name == "nvidia.com/gpu"  # 1.37 serves the field
                legacy = dict(LEGACY_POD, metadata={"name": "mapped", "namespace": NS})
                assert post(url, ca, review(legacy, namespace=NS))[1]["response"]["allowed"] is True
                offline = post(offline_url, offline_ca, review(legacy, namespace=NS))[1]["response"]
                assert offline["allowed"] is False  # without the cluster's classes it is the device plugin
            finally:
                admission.delete_validating_webhook_configuration("draguard-online")
    finally:
        resources.delete_device_class("dra-gpus")


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


def _refusal(plane, obj) -> str:
    try:
        create(plane, obj, dry_run=True)
        return ""
    except client.exceptions.ApiException as exc:
        return exc.body if isinstance(exc.body, str) else exc.body.decode()


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
