"""Installing draguard on an empty cluster (issue #39), on the real kube-apiserver: what
`draguard webhook manifests` and `draguard policy export` print, created in one pass in
document order as `kubectl apply -f -` creates them (the harness has no kubectl: each object
is created through the API in turn, and one refused does not stop the rest, as with kubectl).

- Before the webhook's pods answer, the cluster admits: a Namespace and a Deployment are
  created, the API server failing open on the webhook (its fail-open metric says it called).
  The webhook's own pods pass Pod Security "restricted" in their Namespace.
- `webhook enforce` refuses while the Service has no ready endpoint, and turns on Fail once
  it answers /readyz; the break-glass (failurePolicy back to Ignore, or the configuration
  deleted) admits again.
- The policies of `policy export`, applied where their namespace does not exist yet, leave an
  unrelated Namespace admitted and refuse what their rule concerns.
- With the operators' CRDs (minimal stand-ins, tests/support/data/crds), the webhook routed as
  installed refuses a RayCluster, LeaderWorkerSet, JobSet, PyTorchJob, InferenceService and
  PodTemplate asking for `nvidia.com/gpu`, and admits their DRA twins."""

from __future__ import annotations

import base64
import contextlib
import io
import socket
import ssl
import textwrap
import time
import urllib.request

import pytest
import yaml
from kubernetes import client, dynamic
from kubernetes.client.exceptions import ApiException
from kubernetes.dynamic.exceptions import ResourceNotFoundError

from draguard.admission.install import routes
from draguard.cli import main
from draguard.rules import REGISTRY
from draguard.rules.examples import COMPLIANT_POD

from support.cluster import until
from support.paths import ROOT
from support.reports import CliResult
from support.webhook import running_webhook

pytestmark = pytest.mark.cluster
NS = "draguard-install"
CRDS = [d for d in yaml.safe_load_all((ROOT / "tests" / "support" / "data" / "crds" / "minimal.yaml").read_text()) if d]


def apply_in_order(plane, objects: list[dict]) -> list[str]:
    """Create `objects` in document order, as `kubectl apply -f -` on an empty cluster; what was
    refused ('Kind/name: reason'), the rest created all the same."""
    dyn = dynamic.DynamicClient(plane.api())  # a new client: a fresh discovery
    refused = []
    for obj in objects:
        try:
            resource = dyn.resources.get(api_version=obj["apiVersion"], kind=obj["kind"])
            resource.create(body=obj, namespace=obj["metadata"].get("namespace"))
        except (ApiException, ResourceNotFoundError) as exc:
            refused.append(f"{obj['kind']}/{obj['metadata']['name']}: {getattr(exc, 'reason', None) or exc}")
    return refused


def delete_all(plane, objects: list[dict]) -> None:
    dyn = dynamic.DynamicClient(plane.api())
    for obj in reversed(objects):
        try:
            dyn.resources.get(api_version=obj["apiVersion"], kind=obj["kind"]).delete(
                name=obj["metadata"]["name"], namespace=obj["metadata"].get("namespace"))
        except (ApiException, ResourceNotFoundError):
            pass


def _failed_open(plane) -> float:
    """The API server's count of calls to validate.draguard.io that failed and were let through
    (apiserver_admission_webhook_fail_open_count)."""
    request = urllib.request.Request(f"{plane.url}/metrics", headers={"Authorization": f"Bearer {plane.token}"})
    with urllib.request.urlopen(request, context=ssl.create_default_context(cafile=str(plane.ca_file))) as answer:
        text = answer.read().decode()
    return sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
               if line.startswith("apiserver_admission_webhook_fail_open_count{") and "validate.draguard.io" in line)


def _namespace_created(plane, name: str) -> bool:
    try:
        client.CoreV1Api(plane.api()).create_namespace({"metadata": {"name": name}})
        return True
    except ApiException as exc:
        if exc.status == 409:
            return True
        assert "draguard" in exc.body, exc.body  # refused by the webhook, nothing else
        return False


def _failure_policy(plane) -> str:
    configuration = client.AdmissionregistrationV1Api(plane.api()).read_validating_webhook_configuration("draguard")
    return configuration.webhooks[0].failure_policy


def _set_failure_policy(plane, value: str) -> None:
    client.AdmissionregistrationV1Api(plane.api()).patch_validating_webhook_configuration(
        "draguard", [{"op": "replace", "path": "/webhooks/0/failurePolicy", "value": value}])


@pytest.fixture(scope="module")
def installed(bare_plane, draguard):
    checked = draguard("webhook", "manifests", "--check", "--kubeconfig", bare_plane.kubeconfig, "--namespace", NS)
    assert checked.code == 2 and checked.out == "" and "cert-manager" in checked.err  # said before anything applies
    objects = [o for o in yaml.safe_load_all(draguard("webhook", "manifests", "--self-signed", "--check", "--kubeconfig",
                                                 bare_plane.kubeconfig, "--namespace", NS).out) if o]
    try:
        yield bare_plane, objects, apply_in_order(bare_plane, objects)
    finally:
        delete_all(bare_plane, objects)


@pytest.fixture(scope="module")
def draguard():
    """draguard(*args) -> CliResult, in this process (module scope: the tests share one install)."""

    def run(*args) -> CliResult:
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main([str(a) for a in args])
        return CliResult(code, out.getvalue(), err.getvalue())

    return run


def test_the_manifests_apply_in_one_pass_and_the_cluster_admits_before_the_webhook_answers(installed):
    plane, objects, refused = installed
    assert refused == []
    before = _failed_open(plane)
    numbered = iter(range(100))
    # each namespace is created: the configuration routes Namespaces and fails open until the
    # API server has called it (and found no endpoint) at least once
    until("the API server to call the webhook", lambda: _namespace_created(plane, f"team-x-{next(numbered)}")
          and _failed_open(plane) > before, timeout=30)
    web = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
           "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}},
                    "template": {"metadata": {"labels": {"app": "web"}},
                                 "spec": {"containers": [{"name": "web", "image": "nginx"}]}}}}
    client.AppsV1Api(plane.api()).create_namespaced_deployment("default", web)
    client.AppsV1Api(plane.api()).delete_namespaced_deployment("web", "default")
    # the ReplicaSet controller made the webhook's pods: Pod Security "restricted" admitted them
    pods = until("the webhook's pods", lambda: client.CoreV1Api(plane.api()).list_namespaced_pod(
        NS, label_selector="app.kubernetes.io/name=draguard").items, timeout=30)
    assert len(pods) == 2
    assert client.CoreV1Api(plane.api()).read_namespace(NS).metadata.labels[
        "pod-security.kubernetes.io/enforce"] == "restricted"


def _own_address() -> str | None:
    """This machine's address that the API server may proxy to (not loopback), or None."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("10.255.255.255", 1))
            address = probe.getsockname()[0]
        except OSError:
            return None
    return None if address.startswith("127.") else address


def test_enforce_waits_for_the_service_and_the_break_glass_admits_again(installed, draguard):
    plane, _, _ = installed
    kubeconfig = ["--kubeconfig", plane.kubeconfig]
    early = draguard("webhook", "enforce", *kubeconfig)
    assert early.code == 2 and "no ready endpoint" in early.err and _failure_policy(plane) == "Ignore"
    address = _own_address()
    if address is None:
        pytest.skip("no address but loopback: the API server proxies to no loopback endpoint")
    core = client.CoreV1Api(plane.api())
    with running_webhook("--kube-version", "1.37", "--host", "0.0.0.0") as (url, _, _):
        # one of the webhook's pods plays the replica answering: its address, and an
        # EndpointSlice naming it (the endpoint controllers do not run in the harness)
        pod = core.list_namespaced_pod(NS, label_selector="app.kubernetes.io/name=draguard").items[0]
        core.patch_namespaced_pod_status(pod.metadata.name, NS, {"status": {
            "phase": "Running", "podIP": address, "podIPs": [{"ip": address}],
            "conditions": [{"type": "Ready", "status": "True"}]}})
        endpoints = {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
                     "metadata": {"name": "draguard-answering", "namespace": NS,
                                  "labels": {"kubernetes.io/service-name": "draguard"}},
                     "addressType": "IPv4", "ports": [{"name": "https", "port": int(url.rsplit(":", 1)[1])}],
                     "endpoints": [{"addresses": [address], "conditions": {"ready": True},
                                    "targetRef": {"kind": "Pod", "namespace": NS, "name": pod.metadata.name}}]}
        assert apply_in_order(plane, [endpoints]) == []
        enforced = draguard("webhook", "enforce", *kubeconfig)
        assert enforced.code == 0, enforced.err
    assert _failure_policy(plane) == "Fail"
    # the API server calls the webhook by its Service's cluster IP, which nothing serves here:
    # failing closed, every Namespace is refused (what enforcing before the Service answers does)
    numbered = iter(range(1000))
    until("the webhook to fail closed", lambda: not _namespace_created(plane, f"team-y-{next(numbered)}"), timeout=60)
    _set_failure_policy(plane, "Ignore")  # break-glass, one: fail open again
    until("the break-glass to admit", lambda: _namespace_created(plane, f"team-z-{next(numbered)}"), timeout=30)
    _set_failure_policy(plane, "Fail")
    until("the webhook to fail closed", lambda: not _namespace_created(plane, f"team-y-{next(numbered)}"), timeout=60)
    client.AdmissionregistrationV1Api(plane.api()).delete_validating_webhook_configuration("draguard")  # two
    until("the break-glass to admit", lambda: _namespace_created(plane, f"team-z-{next(numbered)}"), timeout=30)


def test_the_policies_applied_without_their_namespace_refuse_only_what_their_rules_concern(bare_plane, draguard):
    """Applied in one pass where their namespace does not exist, then with their parameters
    deleted: an unrelated Namespace and a claim template are admitted throughout; a Namespace
    opened to admin access is refused throughout (for what it is, then for the missing
    parameters)."""
    exported = draguard("policy", "export", "--kube-version", "1.37", "--namespace", "draguard-params")
    objects = [o for o in yaml.safe_load_all(exported.out) if o]
    core = client.CoreV1Api(bare_plane.api())
    opened = {"metadata": {"name": "opened", "labels": {"resource.kubernetes.io/admin-access": "true"}}}

    def refusal() -> str:
        try:
            core.create_namespace(opened, dry_run="All")
            return ""
        except ApiException as exc:
            assert "draguard-admin-access-label" in exc.body, exc.body
            return exc.body

    template = dict([d for d in yaml.safe_load_all(textwrap.dedent(COMPLIANT_POD)) if d][0],
                    metadata={"name": "unrelated", "namespace": "default"})
    try:
        assert apply_in_order(bare_plane, objects) == []
        assert "is not an admin namespace" in until("the policies to take effect", refusal, timeout=60)
        core.create_namespace({"metadata": {"name": "unrelated"}}, dry_run="All")
        core.delete_namespaced_config_map("draguard-policy-params", "draguard-params")
        until("the parameters to be missing", lambda: "no params found" in refusal(), timeout=60)
        core.create_namespace({"metadata": {"name": "unrelated"}}, dry_run="All")
        assert apply_in_order(bare_plane, [template]) == []
    finally:
        delete_all(bare_plane, [template] + [o for o in objects if o["kind"] != "Namespace"])


LEGACY_SPEC = yaml.safe_load(textwrap.dedent(REGISTRY.get("legacy-gpu-resource").noncompliant))["spec"]
COMPLIANT_SPEC = [d for d in yaml.safe_load_all(textwrap.dedent(COMPLIANT_POD)) if d and d["kind"] == "Pod"][0]["spec"]
GUARDED = "install-guarded"


def _wrapped(kind: str, spec: dict) -> dict:
    """`spec` as the pod spec of a `kind` that the judge models (their shapes: model.workloads)."""
    template = {"metadata": {"labels": {"app": "ml"}}, "spec": spec}
    body = {
        "RayCluster": ("ray.io/v1", {"headGroupSpec": {"template": template}}),
        "LeaderWorkerSet": ("leaderworkerset.x-k8s.io/v1",
                            {"replicas": 1, "leaderWorkerTemplate": {"size": 2, "workerTemplate": template}}),
        "JobSet": ("jobset.x-k8s.io/v1alpha2",
                   {"replicatedJobs": [{"name": "workers", "template": {"spec": {"template": template}}}]}),
        "PyTorchJob": ("kubeflow.org/v1", {"pytorchReplicaSpecs": {"Worker": {"replicas": 1, "template": template}}}),
        "InferenceService": ("serving.kserve.io/v1beta1", {"predictor": spec}),
    }
    if kind == "PodTemplate":
        return {"apiVersion": "v1", "kind": "PodTemplate", "metadata": {"name": "ml"}, "template": template}
    api_version, inner = body[kind]
    return {"apiVersion": api_version, "kind": kind, "metadata": {"name": "ml"}, "spec": inner}


@pytest.fixture(scope="module")
def guarded(bare_plane):
    """The CRDs, and the webhook as installed (its routes and match conditions, failing closed)
    registered by URL for one labelled namespace."""
    made = [crd for crd in CRDS if not apply_in_order(bare_plane, [crd])]  # another module may have made one
    core = client.CoreV1Api(bare_plane.api())
    core.create_namespace({"metadata": {"name": GUARDED, "labels": {"draguard.io/install-test": "true"}}})
    with running_webhook("--kube-version", "1.37") as (url, ca, _):
        configuration = {
            "apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
            "metadata": {"name": "draguard-routes"},
            "webhooks": [{"name": "routes.draguard.io", "admissionReviewVersions": ["v1"], "sideEffects": "None",
                          "failurePolicy": "Fail", "timeoutSeconds": 10, "matchPolicy": "Equivalent",
                          "clientConfig": {"url": f"{url}/validate", "caBundle": base64.b64encode(ca).decode()},
                          "namespaceSelector": {"matchLabels": {"draguard.io/install-test": "true"}},
                          "rules": routes()}]}
        assert apply_in_order(bare_plane, [configuration]) == []
        try:
            yield bare_plane
        finally:
            delete_all(bare_plane, [configuration, *made])
            extensions = client.ApiextensionsV1Api(bare_plane.api())
            until("the CRDs to go", lambda: not {c.metadata.name for c in extensions.list_custom_resource_definition().items}
                  & {c["metadata"]["name"] for c in made}, timeout=60)


def _create(plane, obj: dict) -> str:
    """'' when created (then deleted), else the refusal's body; CRD kinds are retried until the
    API server serves them."""
    deadline = time.monotonic() + 30
    while True:
        try:
            resource = dynamic.DynamicClient(plane.api()).resources.get(api_version=obj["apiVersion"], kind=obj["kind"])
            resource.create(body=obj, namespace=GUARDED, dry_run="All")
            return ""
        except ResourceNotFoundError:
            assert time.monotonic() < deadline, f"{obj['kind']} never served"
            time.sleep(0.5)
        except ApiException as exc:
            return exc.body if isinstance(exc.body, str) else exc.body.decode()


@pytest.mark.parametrize("kind", ["RayCluster", "LeaderWorkerSet", "JobSet", "PyTorchJob", "InferenceService",
                                  "PodTemplate"])
def test_the_webhook_as_routed_refuses_each_workload_asking_for_the_legacy_gpu_and_admits_its_dra_twin(guarded, kind):
    refusal = until(f"the webhook to judge {kind}", lambda: _create(guarded, _wrapped(kind, LEGACY_SPEC)), timeout=30)
    assert "routes.draguard.io" in refusal and "[legacy-gpu-resource]" in refusal, refusal
    assert _create(guarded, _wrapped(kind, COMPLIANT_SPEC)) == ""
