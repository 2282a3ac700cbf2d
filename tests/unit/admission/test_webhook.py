"""`draguard webhook --offline` on loopback, spoken to as the API server speaks: AdmissionReview
v1 in, the response the API server requires out (uid echoed, denial naming rule and path,
warnings under 120 characters), and bad bodies, big bodies and slow clients answered without
a crash or a hang."""

from __future__ import annotations

import json
import socket
import textwrap
import time

import pytest
import yaml

from draguard.rules import REGISTRY
from draguard.rules.examples import COMPLIANT_POD

from support.webhook import context_for, get, post, review, running_webhook


def _docs(text: str) -> list[dict]:
    return [d for d in yaml.safe_load_all(textwrap.dedent(text)) if d]


LEGACY_POD = _docs(REGISTRY.get("legacy-gpu-resource").noncompliant)[0]
SHM_POD = _docs(REGISTRY.get("shm-size-limit").noncompliant)[0]
GOOD_POD = [d for d in _docs(COMPLIANT_POD) if d["kind"] == "Pod"][0]


KUBERAY = "system:serviceaccount:ray-system:kuberay-operator"


@pytest.fixture(scope="module")
def webhook():
    with running_webhook("--kube-version", "1.34", "--controller-user", KUBERAY, "--profile", "strict") as running:
        yield running


def test_an_error_denies_naming_the_rule_and_the_field(webhook):
    url, ca, _ = webhook
    code, answer = post(url, ca, review(LEGACY_POD, uid="req-1"))
    assert code == 200 and answer["apiVersion"] == "admission.k8s.io/v1" and answer["kind"] == "AdmissionReview"
    body = answer["response"]
    assert body["uid"] == "req-1" and body["allowed"] is False and "patch" not in body
    assert body["status"]["code"] == 403
    assert '[legacy-gpu-resource] spec.containers[0].resources.limits["nvidia.com/gpu"]:' in body["status"]["message"]


def test_a_warning_admits_with_short_warnings(webhook):
    url, ca, _ = webhook
    body = post(url, ca, review(SHM_POD))[1]["response"]
    assert body["allowed"] is True and "status" not in body
    assert body["warnings"] and all(len(w) < 120 for w in body["warnings"])
    assert body["warnings"][0].startswith("[shm-size-limit] spec.volumes[0].emptyDir:")


def test_compliant_objects_dry_runs_and_generated_claims_are_admitted(webhook):
    url, ca, _ = webhook
    assert post(url, ca, review(GOOD_POD))[1]["response"] == {"uid": "7c9b8f0e-1", "allowed": True}
    dry = post(url, ca, review(LEGACY_POD, dryRun=True))[1]["response"]
    assert dry["allowed"] is False  # judged the same
    generated = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                 "metadata": {"name": "p-gpu-x", "namespace": "team-a",
                              "annotations": {"resource.kubernetes.io/pod-claim-name": "gpu"}},
                 "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "nope"}}]}}}
    assert post(url, ca, review(generated))[1]["response"]["allowed"] is True
    assert post(url, ca, review(LEGACY_POD, operation="DELETE"))[1]["response"]["allowed"] is True
    assert post(url, ca, review(LEGACY_POD, namespace="kube-system"))[1]["response"]["allowed"] is True
    # gpu-operator, where the NVIDIA GPU Operator's validator pods ask for nvidia.com/gpu, is
    # exempt only when named (--exempt-namespace): whoever may create it would be exempt too
    assert post(url, ca, review(LEGACY_POD, namespace="gpu-operator"))[1]["response"]["allowed"] is False
    config_map = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}}
    assert post(url, ca, review(config_map))[1]["response"]["allowed"] is True


def test_the_legacy_deployment_is_denied_at_the_deployment(webhook):
    url, ca, _ = webhook
    pod = dict(LEGACY_POD)
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "legacy", "namespace": "team-a"},
                  "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "x"}},
                           "template": {"metadata": {"labels": {"app": "x"}}, "spec": pod["spec"]}}}
    body = post(url, ca, review(deployment))[1]["response"]
    assert body["allowed"] is False
    assert "[legacy-gpu-resource] spec.template.spec.containers[0].resources.limits" in body["status"]["message"]


@pytest.mark.parametrize("body, says", [
    (b"{not json", "not JSON"),
    (json.dumps({"apiVersion": "admission.k8s.io/v1beta1", "kind": "AdmissionReview", "request": {"uid": "u"}}).encode(),
     "register the webhook with admissionReviewVersions: [v1]"),
    (json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {}}).encode(), "no request.uid"),
    (json.dumps({"apiVersion": "v1", "kind": "Pod"}).encode(), "not an AdmissionReview"),
    (b"[" * 100_000 + b"]" * 100_000, "nests too deeply"),  # json raised RecursionError: a 500
])
def test_malformed_reviews_get_400_with_the_reason(webhook, body, says):
    url, ca, _ = webhook
    code, answer = post(url, ca, body)
    assert code == 400 and says in answer["error"]


def test_oversize_bodies_are_refused_before_they_are_read(webhook):
    url, ca, _ = webhook
    host, port = url.removeprefix("https://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as raw:
        with context_for(ca).wrap_socket(raw, server_hostname=host) as tls:
            tls.sendall(b"POST /validate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                        b"Content-Length: 50000000\r\n\r\n")
            reply = tls.recv(4096).decode()
    assert reply.startswith("HTTP/1.1 413")


@pytest.mark.parametrize("length", [b"\xb2", b"-1", b"1e3", b""])
def test_a_content_length_that_is_no_count_gets_411(webhook, length):
    """'\xb2' (superscript two) passed str.isdigit and int() raised in the handler."""
    url, ca, _ = webhook
    host, port = url.removeprefix("https://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as raw:
        with context_for(ca).wrap_socket(raw, server_hostname=host) as tls:
            tls.sendall(b"POST /validate HTTP/1.1\r\nHost: x\r\nContent-Length: " + length + b"\r\n\r\n")
            reply = tls.recv(4096).decode()
    assert reply.startswith("HTTP/1.1 411")


def test_a_slow_client_holds_no_one_else_up(webhook):
    url, ca, _ = webhook
    host, port = url.removeprefix("https://").split(":")
    slow = socket.create_connection((host, int(port)), timeout=30)  # connects, never says anything
    tls_slow = socket.create_connection((host, int(port)), timeout=30)
    wrapped = context_for(ca).wrap_socket(tls_slow, server_hostname=host)
    wrapped.sendall(b"POST /validate HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{")  # then stalls
    try:
        started = time.monotonic()
        assert post(url, ca, review(GOOD_POD))[1]["response"]["allowed"] is True
        assert time.monotonic() - started < 5
    finally:
        slow.close()
        wrapped.close()


def test_health_readiness_and_metrics(webhook):
    url, ca, _ = webhook
    assert get(url, ca, "/healthz") == (200, "ok\n")
    assert get(url, ca, "/readyz") == (200, "ok\n")
    post(url, ca, review(LEGACY_POD))
    code, metrics = get(url, ca, "/metrics")
    assert code == 200
    assert 'draguard_webhook_denials_total{rule="legacy-gpu-resource"}' in metrics
    assert 'draguard_webhook_requests_total{path="/validate",result="denied"}' in metrics
    assert "draguard_webhook_latency_seconds_bucket" in metrics


def test_logs_are_json_lines(webhook):
    _, _, process = webhook
    lines = [json.loads(line) for line in open(process.log_path) if line.strip()]
    reviews = [line for line in lines if line["event"] == "review"]
    assert reviews and {"uid", "kind", "allowed", "denied"} <= set(reviews[0])


def test_plain_http_is_refused_by_tls(webhook):
    url, _, _ = webhook
    host, port = url.removeprefix("https://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as raw:
        raw.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        assert not raw.recv(4096).startswith(b"HTTP/1.1 200")


def test_the_options_are_checked(cli):
    assert cli("webhook").code == 2
    done = cli("webhook", "--offline")
    assert done.code == 2 and "--self-signed" in done.err


def test_without_a_kubeconfig_the_webhook_offers_offline(cli, monkeypatch, tmp_path):
    """Offering audit's `--from` to a webhook (which has none) sent users nowhere."""
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "absent"))
    monkeypatch.setenv("HOME", str(tmp_path))
    done = cli("webhook", "--self-signed", "--port", "0")
    assert done.code == 2 and "judge without a cluster with --offline" in done.err and "--from" not in done.err


def test_an_object_whose_metadata_is_no_mapping_is_judged_not_answered_500(webhook):
    """The API server decodes objects before it asks, but a webhook answers whoever calls:
    `metadata: [1]` or annotations that are a number raised (a 500, no reason given)."""
    url, ca, _ = webhook
    for metadata in ([1], {"name": "p", "annotations": 7}):
        body = review(GOOD_POD)
        body["request"]["object"] = {**GOOD_POD, "metadata": metadata}
        code, answer = post(url, ca, body)
        assert code == 200 and answer["response"]["allowed"] is False, answer  # schema-invalid denies it


def _with(obj: dict, **metadata) -> dict:
    return {**obj, "metadata": {**obj["metadata"], **metadata}}


def test_an_update_is_refused_only_for_what_it_brings(webhook):
    """A legacy pod that ran before the webhook: the Job controller taking its tracking
    finalizer off, a label, are admitted (the error warns: it was there before); an update
    that adds a GPU container is refused for that container and for growing the old one; a pod
    being deleted is not judged while only its metadata changes."""
    url, ca, _ = webhook
    tracked = _with(LEGACY_POD, finalizers=["batch.kubernetes.io/job-tracking"])
    finished = _with(LEGACY_POD, finalizers=[], labels={"done": "yes"})
    body = post(url, ca, review(finished, operation="UPDATE", oldObject=tracked))[1]["response"]
    assert body["allowed"] is True and any(w.startswith("[legacy-gpu-resource]") for w in body["warnings"])
    second = dict(LEGACY_POD["spec"]["containers"][0], name="second")
    grown = {**LEGACY_POD, "spec": {**LEGACY_POD["spec"], "containers": [*LEGACY_POD["spec"]["containers"], second]}}
    body = post(url, ca, review(grown, operation="UPDATE", oldObject=LEGACY_POD))[1]["response"]
    assert body["allowed"] is False and "spec.containers[1]" in body["status"]["message"]
    assert "the update grows what its existing errors concern (device-plugin GPUs 1 -> 2)" in \
        body["status"]["message"]  # the old container's error is kept, and grown
    body = post(url, ca, review(LEGACY_POD, operation="UPDATE", oldObject=GOOD_POD))[1]["response"]
    assert body["allowed"] is False  # a compliant object turned legacy
    deleting = _with(LEGACY_POD, deletionTimestamp="2026-12-04T00:00:00Z", finalizers=[])
    assert post(url, ca, review(deleting, operation="UPDATE", oldObject=tracked))[1]["response"]["allowed"] is True
    # a tenant's own finalizer keeps an object being deleted: an update of its spec is judged
    grown_deleting = _with(grown, deletionTimestamp="2026-12-04T00:00:00Z")
    assert post(url, ca, review(grown_deleting, operation="UPDATE",
                                oldObject=_with(tracked, deletionTimestamp="2026-12-04T00:00:00Z")))[1][
        "response"]["allowed"] is False


@pytest.mark.parametrize("user, owned, allowed", [
    ("system:serviceaccount:kube-system:replicaset-controller", True, True),
    ("system:kube-controller-manager", True, True),
    ("alice", True, False),  # an ownerReference anyone can write
    ("system:serviceaccount:kube-system:replicaset-controller", False, False),
    ("system:serviceaccount:team-a:replicaset-controller", True, False),
    (KUBERAY, True, True),  # an operator the installation names (--controller-user)
    (KUBERAY, False, False),
    ("system:serviceaccount:team-a:kuberay-operator", True, False),  # that name in a tenant's namespace
])
def test_what_a_workload_controller_makes_from_its_owner_is_not_judged(webhook, user, owned, allowed):
    """A ReplicaSet's pod, made by the Kubernetes controller from a template the webhook
    judged at its owner (or that ran before it): a legacy workload must still heal."""
    url, ca, _ = webhook
    owner = [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "uid": "u", "controller": True}]
    pod = _with(LEGACY_POD, **({"ownerReferences": owner} if owned else {}))
    body = post(url, ca, review(pod, userInfo={"username": user}))[1]["response"]
    assert body["allowed"] is allowed


def test_mutate_admits_with_the_safe_fixes_as_a_json_patch():
    import base64

    import jsonpatch

    helper = _docs(REGISTRY.get("teardown-helper-claim").noncompliant)
    pod = next(d for d in helper if d["kind"] == "Pod")
    with running_webhook("--mutate", "--kube-version", "1.34") as (url, ca, _):
        body = post(url, ca, review(pod, uid="m-1"), path="/mutate")[1]["response"]
        assert body["uid"] == "m-1" and body["allowed"] is True and body["patchType"] == "JSONPatch"
        patch = json.loads(base64.b64decode(body["patch"]))
        assert patch and all(op["path"].startswith("/spec/initContainers/0/") for op in patch)  # the helper sidecar
        fixed = jsonpatch.apply_patch(pod, patch)
        assert any(w.startswith("draguard fixed [teardown-helper-claim]") for w in body["warnings"])
        again = post(url, ca, review(fixed), path="/validate")[1]["response"]
        assert not any("[teardown-helper-claim]" in w for w in again.get("warnings", []))
        assert post(url, ca, review(GOOD_POD), path="/mutate")[1]["response"] == {"uid": "7c9b8f0e-1", "allowed": True}
        # a pod admitted before, relabelled: its spec may not change in an update, and is not patched
        relabelled = post(url, ca, review(_with(pod, labels={"a": "b"}), operation="UPDATE", oldObject=pod),
                          path="/mutate")[1]["response"]
        assert relabelled == {"uid": "7c9b8f0e-1", "allowed": True}
        fresh = post(url, ca, review(pod, operation="UPDATE", oldObject=GOOD_POD), path="/mutate")[1]["response"]
        assert fresh["patchType"] == "JSONPatch"  # the update brought the fault: fixed


def test_mutate_is_served_only_when_asked(webhook):
    url, ca, _ = webhook
    code, answer = post(url, ca, review(GOOD_POD), path="/mutate")
    assert code == 404 and "/mutate needs --mutate" in answer["error"]


@pytest.mark.parametrize("version, request_", [
    ("v1beta1", {"name": "gpus", "deviceClassName": "gpu.nvidia.com", "allocationMode": "All"}),
    ("v1beta2", {"name": "gpus", "exactly": {"deviceClassName": "gpu.nvidia.com", "allocationMode": "All"}}),
    ("v1", {"name": "gpus", "exactly": {"deviceClassName": "gpu.nvidia.com", "allocationMode": "All"}}),
])
def test_every_served_resource_version_shape_is_decoded(webhook, version, request_):
    url, ca, _ = webhook
    template = {"apiVersion": f"resource.k8s.io/{version}", "kind": "ResourceClaimTemplate",
                "metadata": {"name": "all", "namespace": "team-a"},
                "spec": {"spec": {"devices": {"requests": [request_]}}}}
    answer = post(url, ca, review(template))[1]["response"]
    assert answer["allowed"] is False and "[request-all-devices]" in answer["status"]["message"], answer


def test_a_lone_surrogate_in_a_selector_is_judged_as_the_api_server_decodes_it(webhook):
    """A JSON `\\ud800` with no pair: Go's decoder stores U+FFFD, Python's kept the lone
    surrogate, which the CEL engine refused with a TypeError: three rules crashed and the
    claim was denied as a draguard bug. Judged now as the text the API server would store."""
    url, ca, _ = webhook
    claim = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "c", "namespace": "t"},
             "spec": {"devices": {"requests": [{"name": "g", "exactly": {
                 "deviceClassName": "gpu.nvidia.com",
                 "selectors": [{"cel": {"expression": "device.attributes['gpu.nvidia.com'].productName == '\ud800'"}}],
             }}]}}}
    code, answer = post(url, ca, review(claim))
    assert code == 200 and "internal-error" not in json.dumps(answer), answer
    paired = json.loads(json.dumps(review(claim)).replace("\\ud800", "\\ud83d\\ude00"))  # a valid pair stays
    from draguard.admission.review import parse

    assert "\U0001f600" in json.dumps(parse(json.dumps(paired).encode()).object, ensure_ascii=False)
    assert "\ufffd" in json.dumps(parse(json.dumps(review(claim)).encode()).object, ensure_ascii=False)
