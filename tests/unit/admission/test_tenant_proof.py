"""Admission as a tenant attacks it: nothing the object's writer chooses (a suppression
annotation, a forged "generated" annotation, an ownerReference) exempts it; each exemption's
Python test and its CEL match condition agree on every request; and an UPDATE that keeps a
violation may not grow it."""

from __future__ import annotations

import copy
import itertools
import textwrap

import pytest
import yaml

from draguard.admission.celcheck import evaluate
from draguard.cel.objects import evaluate as _evaluate
from draguard.admission.exemptions import (
    BEING_DELETED, CLAIM_MAKERS, GENERATED_CLAIM, WORKLOAD_CONTROLLERS, exemptions, made_from_judged_owner,
)
from draguard.admission.install import MATCH_CONDITIONS
from draguard.admission.install import manifests as install_manifests
from draguard.admission.judge import SUPPRESSIONS_IGNORED, judge, rules_for
from draguard.admission.policies import export
from draguard.admission.review import Request
from draguard.core.config import Config
from draguard.core.finding import Severity
from draguard.engine import lint_objects
from draguard.model.manifest import Manifest
from draguard.rules import REGISTRY

from support.webhook import LEGACY_DEPLOYMENT, post, review, running_webhook

CONFIG = rules_for(Config(kube_version="1.34"), offline=True)
KUBERAY = "system:serviceaccount:ray-system:kuberay-operator"
CLAIM_CONTROLLER = "system:serviceaccount:kube-system:resource-claim-controller"


def _doc(text: str) -> dict:
    return yaml.safe_load(textwrap.dedent(text))


LEGACY_POD = next(d for d in yaml.safe_load_all(textwrap.dedent(REGISTRY.get("legacy-gpu-resource").noncompliant))
                  if d)
ALL_DEVICES_CLAIM = _doc("""
    apiVersion: resource.k8s.io/v1
    kind: ResourceClaim
    metadata: {name: all-gpus, namespace: team-a}
    spec:
      devices:
        requests:
        - name: gpu
          exactly: {deviceClassName: gpu.nvidia.com, allocationMode: All}
    """)
LEGACY_POD_TEMPLATE = {"apiVersion": "v1", "kind": "PodTemplate", "metadata": {"name": "t", "namespace": "team-a"},
                       "template": {"spec": LEGACY_POD["spec"]}}
_KINDS = {"Pod": {"group": "", "version": "v1", "kind": "Pod"},
          "PodTemplate": {"group": "", "version": "v1", "kind": "PodTemplate"},
          "Deployment": {"group": "apps", "version": "v1", "kind": "Deployment"},
          "DaemonSet": {"group": "apps", "version": "v1", "kind": "DaemonSet"},
          "CronJob": {"group": "batch", "version": "v1", "kind": "CronJob"},
          "DynamoGraphDeployment": {"group": "nvidia.com", "version": "v1alpha1", "kind": "DynamoGraphDeployment"},
          "ResourceClaim": {"group": "resource.k8s.io", "version": "v1", "kind": "ResourceClaim"},
          "ConfigMap": {"group": "", "version": "v1", "kind": "ConfigMap"}}


def _request(obj: dict, user: str = "alice", operation: str = "CREATE", old: dict | None = None) -> Request:
    return Request("uid-1", _KINDS[obj["kind"]], operation, obj["metadata"].get("namespace", ""),
                   obj["metadata"]["name"], obj, old, False, user)


def _with(obj: dict, **metadata) -> dict:
    changed = copy.deepcopy(obj)
    changed["metadata"].update(metadata)
    return changed


def _owned_by(obj: dict, api_version: str, kind: str) -> dict:
    return _with(obj, ownerReferences=[{"apiVersion": api_version, "kind": kind, "name": "o", "uid": "u",
                                        "controller": True}])


# --- no annotation a tenant writes exempts anything -------------------------------------------

def test_a_suppression_annotation_exempts_nothing_in_admission_and_says_so():
    suppressed = _with(LEGACY_POD, annotations={"ignore.draguard.io/legacy-gpu-resource": "x"})
    verdict = judge(_request(suppressed), CONFIG)
    assert not verdict.allowed and [f.rule for f in verdict.denials] == ["legacy-gpu-resource"]
    assert SUPPRESSIONS_IGNORED in verdict.warning_lines()
    # the same annotation still suppresses in a repository's own files: lint honours it
    assert not any(f.rule == "legacy-gpu-resource" for f in lint_objects([suppressed], Config()).findings)


def test_a_suppression_of_every_rule_at_once_exempts_nothing_either():
    everything = {f"ignore.draguard.io/{rule.id}": "mine" for rule in REGISTRY}
    verdict = judge(_request(_with(ALL_DEVICES_CLAIM, annotations=everything)), CONFIG)
    assert not verdict.allowed and "request-all-devices" in {f.rule for f in verdict.denials}


@pytest.mark.parametrize("annotation", ["resource.kubernetes.io/pod-claim-name",
                                        "resource.kubernetes.io/extended-resource-claim"])
@pytest.mark.parametrize("user, owner, allowed", [
    ("alice", None, False),  # the annotation alone: anyone can write it
    ("alice", ("v1", "Pod"), False),  # and an ownerReference: so can they
    (CLAIM_CONTROLLER, None, False),  # the controller's identity without the pod that owns the claim
    (CLAIM_CONTROLLER, ("apps/v1", "Deployment"), False),
    (CLAIM_CONTROLLER, ("v1", "Pod"), True),  # what the resourceclaim controller makes
    ("system:kube-scheduler", ("v1", "Pod"), True),  # an extended resource's claim (KEP-5004)
    ("system:serviceaccount:team-a:resource-claim-controller", ("v1", "Pod"), False),  # the name in a tenant's namespace
])
def test_a_generated_claim_is_known_by_who_made_it_not_by_its_annotation(annotation, user, owner, allowed):
    claim = _with(ALL_DEVICES_CLAIM, annotations={annotation: "gpu"})
    if owner:
        claim = _owned_by(claim, *owner)
    assert judge(_request(claim, user), CONFIG).allowed is allowed
    # the webhook configuration's match conditions send it on exactly when the judge judges it
    sent = all(_evaluate(c["expression"], _activation(_request(claim, user)))[0] for c in MATCH_CONDITIONS)
    assert sent is not allowed


def test_a_pod_template_held_in_deletion_is_judged_when_its_template_changes():
    """A PodTemplate keeps its pod spec under `template`, not `spec`: a tenant's own finalizer
    holds it in deletion, and an update that rewrites its template is judged."""
    held = _with(copy.deepcopy(LEGACY_POD_TEMPLATE), deletionTimestamp="2026-12-06T00:00:00Z", finalizers=["x/hold"])
    clean = copy.deepcopy(held)
    clean["template"]["spec"]["containers"][0]["resources"] = {}
    verdict = judge(_request(held, operation="UPDATE", old=clean), CONFIG)
    assert not verdict.allowed and [f.rule for f in verdict.denials] == ["legacy-gpu-resource"]
    finalizer_off = _with(copy.deepcopy(held), finalizers=[])
    assert judge(_request(finalizer_off, operation="UPDATE", old=held), CONFIG).skipped


@pytest.mark.parametrize("owner, allowed", [
    (("ray.io/v1", "RayCluster"), True),  # judged when it was written: its pods go by its verdict
    (("example.com/v1", "Unjudged"), False),  # an owner admission never judged
    (("v1", "ConfigMap"), False),
    (None, False),
])
def test_an_operator_s_pod_goes_by_its_owner_only_where_admission_judges_the_owner(owner, allowed):
    pod = _owned_by(LEGACY_POD, *owner) if owner else LEGACY_POD
    controllers = frozenset({*WORKLOAD_CONTROLLERS, KUBERAY})
    assert judge(_request(pod, KUBERAY), CONFIG, controllers=controllers).allowed is allowed
    assert judge(_request(pod, "alice"), CONFIG, controllers=controllers).allowed is False


# --- one definition: each exemption's Python test and its CEL agree ---------------------------

def _activation(request: Request) -> dict:
    data = {"request": {"operation": request.operation, "kind": request.kind,
                        "userInfo": {"username": request.user}},
            "object": request.object}
    if request.old_object is not None:
        data["oldObject"] = request.old_object
    return data


def _requests():
    """Requests over every axis the exemptions read: users, owners, kinds, operations, deletion."""
    users = ["alice", CLAIM_CONTROLLER, "system:kube-scheduler", "system:kube-controller-manager", KUBERAY,
             "system:serviceaccount:kube-system:replicaset-controller"]
    owners = [None, ("v1", "Pod"), ("apps/v1", "ReplicaSet"), ("ray.io/v1", "RayCluster"),
              ("example.com/v1", "Widget"), ("v1", "ConfigMap"), ("apps", "ReplicaSet"), ("apps/v1/x", "ReplicaSet")]
    objects = [LEGACY_POD, ALL_DEVICES_CLAIM, LEGACY_DEPLOYMENT, LEGACY_POD_TEMPLATE]
    for user, owner, obj, operation, deleting in itertools.product(users, owners, objects, ("CREATE", "UPDATE"),
                                                                  ("no", "metadata", "spec")):
        new = _owned_by(obj, *owner) if owner else copy.deepcopy(obj)
        old = None
        if operation == "UPDATE":
            old = copy.deepcopy(new)
            if deleting != "no":
                new["metadata"]["deletionTimestamp"] = old["metadata"]["deletionTimestamp"] = "2026-12-06T00:00:00Z"
            if deleting == "spec":
                new["spec" if "spec" in new else "template"]["changed"] = True
        yield _request(new, user, operation, old)


@pytest.mark.parametrize("exemption", [*exemptions(), made_from_judged_owner([KUBERAY])],
                         ids=lambda e: e.name)
def test_each_exemption_s_cel_agrees_with_the_webhook_s_test(exemption):
    cases = list(_requests())
    for request in cases:
        value, error = _evaluate(exemption.cel, _activation(request))
        assert error is None and value is exemption.applies(request), (exemption.name, request)
    assert any(exemption.applies(r) for r in cases) and not all(exemption.applies(r) for r in cases)


def test_every_exported_policy_and_the_webhook_carry_the_shared_definitions():
    policies = [o for o in export(REGISTRY, Config(kube_version="1.34")).objects
                if o["kind"] == "ValidatingAdmissionPolicy"]
    for pol in policies:
        conditions = {c["name"]: c["expression"] for c in pol["spec"]["matchConditions"]}
        assert conditions[BEING_DELETED.name] == BEING_DELETED.match_condition()["expression"]
        assert conditions[made_from_judged_owner().name] == made_from_judged_owner().match_condition()["expression"]
        assert GENERATED_CLAIM.name not in conditions or \
            conditions[GENERATED_CLAIM.name] == GENERATED_CLAIM.match_condition()["expression"]
        assert not any("annotations" in expression for expression in conditions.values())
    assert {c["name"] for c in MATCH_CONDITIONS} == {BEING_DELETED.name, GENERATED_CLAIM.name}
    assert CLAIM_CONTROLLER in CLAIM_MAKERS


# --- the ratchet holds a violation where it is ------------------------------------------------

def _update(old: dict, new: dict):
    return judge(_request(new, operation="UPDATE", old=old), CONFIG)


def _spec(obj: dict, **changes) -> dict:
    changed = copy.deepcopy(obj)
    changed["spec"].update(changes)
    return changed


def _gpus(deployment: dict, count: int) -> dict:
    changed = copy.deepcopy(deployment)
    changed["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] = count
    return changed


def test_an_update_may_keep_or_shrink_an_existing_violation():
    bumped = copy.deepcopy(LEGACY_DEPLOYMENT)
    bumped["spec"]["template"]["spec"]["containers"][0]["image"] = "vllm/vllm-openai:v0.7"
    verdict = _update(LEGACY_DEPLOYMENT, bumped)
    assert verdict.allowed and any(f.rule == "legacy-gpu-resource" for f in verdict.warnings)
    assert _update(_spec(_gpus(LEGACY_DEPLOYMENT, 4), replicas=3), LEGACY_DEPLOYMENT).allowed


@pytest.mark.parametrize("grow, says", [
    (lambda d: _gpus(d, 8), "device-plugin GPUs 1 -> 8"),
    (lambda d: _spec(d, replicas=50), "pods 1 -> 50"),
    (lambda d: _spec(_gpus(d, 8), replicas=50), "pods 1 -> 50; device-plugin GPUs 1 -> 8"),
])
def test_an_update_that_grows_an_existing_violation_is_denied_saying_what_grew(grow, says):
    verdict = _update(LEGACY_DEPLOYMENT, grow(LEGACY_DEPLOYMENT))
    assert not verdict.allowed and not verdict.denials  # no new fault: the growth denies
    assert f"the update grows what its existing errors concern ({says})" in verdict.message()
    assert "[legacy-gpu-resource]" in verdict.message()


def _request_fields(claim: dict, **fields) -> dict:
    changed = copy.deepcopy(claim)
    changed["spec"]["devices"]["requests"][0]["exactly"].update(fields)
    return changed


def test_a_claim_s_existing_violation_may_not_take_more_devices_or_lose_selectors():
    counted = _request_fields(ALL_DEVICES_CLAIM, allocationMode="ExactCount", count=2,
                              selectors=[{"cel": {"expression": "device.attributes['gpu.nvidia.com'].type == 'gpu'"}}])
    counted["spec"]["devices"]["requests"][0]["name"] = "counted"
    counted["spec"]["devices"]["requests"].append(ALL_DEVICES_CLAIM["spec"]["devices"]["requests"][0])  # the error
    again = _update(counted, _request_fields(counted, count=2))
    assert again.allowed and any(f.rule == "request-all-devices" for f in again.warnings)  # kept as it is
    more = _update(counted, _request_fields(counted, count=4))
    assert not more.allowed and "request 'counted' devices 2 -> 4" in more.message()
    wider = _update(counted, _request_fields(counted, selectors=[]))
    assert not wider.allowed and "request 'counted' selectors 1 -> 0" in wider.message()


def test_a_shared_claim_may_not_gain_tenants_under_an_existing_violation():
    shared = copy.deepcopy(LEGACY_DEPLOYMENT)
    pod = shared["spec"]["template"]["spec"]
    pod["resourceClaims"] = [{"name": "gpu", "resourceClaimName": "one-gpu"}]
    pod["containers"][0]["resources"]["claims"] = [{"name": "gpu"}]
    second = copy.deepcopy(pod["containers"][0])
    second["name"] = "sidecar"
    second["resources"] = {"claims": [{"name": "gpu"}]}
    crowded = copy.deepcopy(shared)
    crowded["spec"]["template"]["spec"]["containers"].append(second)
    verdict = _update(shared, crowded)
    assert not verdict.allowed and "containers on shared claims 1 -> 2" in verdict.message()


def test_the_webhook_denies_an_annotated_tenant_and_a_grown_update_end_to_end():
    """The same attacks through the served webhook, as the API server sends them."""
    with running_webhook("--kube-version", "1.34") as (url, ca, _):
        suppressed = _with(LEGACY_POD, annotations={"ignore.draguard.io/legacy-gpu-resource": "x"})
        body = post(url, ca, review(suppressed))[1]["response"]
        assert body["allowed"] is False and SUPPRESSIONS_IGNORED in body["warnings"]
        forged = _with(ALL_DEVICES_CLAIM, annotations={"resource.kubernetes.io/pod-claim-name": "gpu"})
        assert post(url, ca, review(forged))[1]["response"]["allowed"] is False
        grown = post(url, ca, review(_spec(LEGACY_DEPLOYMENT, replicas=50), operation="UPDATE",
                                     oldObject=LEGACY_DEPLOYMENT))[1]["response"]
        assert grown["allowed"] is False and "pods 1 -> 50" in grown["status"]["message"]


def _scale(deployment: dict, replicas: int, old_replicas: int = 1) -> Request:
    """`kubectl scale deployment --replicas`, as the API server sends it to the webhook: an
    autoscaling/v1 Scale through deployments/scale, no template in sight."""
    meta = {"name": deployment["metadata"]["name"], "namespace": deployment["metadata"]["namespace"]}
    scale = {"apiVersion": "autoscaling/v1", "kind": "Scale", "metadata": meta, "spec": {"replicas": replicas}}
    return Request("uid-1", {"group": "autoscaling", "version": "v1", "kind": "Scale"}, "UPDATE", meta["namespace"],
                   meta["name"], scale, dict(scale, spec={"replicas": old_replicas}), False, "alice",
                   ("apps", "deployments"), "scale")


def test_scaling_a_legacy_deployment_through_its_scale_subresource_is_the_same_growth():
    """The attack review scaled the legacy Deployment to 50 with `kubectl scale`: the Scale
    carries no template, and nothing routed deployments/scale. The webhook routes it and
    judges it as the Deployment's update, read from its cache."""
    cached = [Manifest.from_data(LEGACY_DEPLOYMENT)]
    verdict = judge(_scale(LEGACY_DEPLOYMENT, 50), CONFIG, cached)
    assert not verdict.allowed and "pods 1 -> 50" in verdict.message()
    assert judge(_scale(_spec(LEGACY_DEPLOYMENT, replicas=3), 2, 3), CONFIG,
                 [Manifest.from_data(_spec(LEGACY_DEPLOYMENT, replicas=3))]).allowed  # shrinking
    compliant = copy.deepcopy(LEGACY_DEPLOYMENT)
    del compliant["spec"]["template"]["spec"]["containers"][0]["resources"]
    assert judge(_scale(compliant, 50), CONFIG, [Manifest.from_data(compliant)]).allowed
    unseen = judge(_scale(LEGACY_DEPLOYMENT, 50), CONFIG, [])
    assert unseen.allowed and unseen.notes == [unseen.skipped] and "cache does not hold it" in unseen.skipped
    [webhook] = [o for o in install_manifests() if o["kind"] == "ValidatingWebhookConfiguration"][0]["webhooks"]
    routed = {(rule["apiGroups"][0], r) for rule in webhook["rules"] for r in rule["resources"]}
    assert {("apps", "deployments/scale"), ("apps", "statefulsets/scale"), ("apps", "replicasets/scale")} <= routed


TENANT_DAEMONSET = _doc("""
    apiVersion: apps/v1
    kind: DaemonSet
    metadata: {name: on-every-node, namespace: team-a}
    spec:
      selector: {matchLabels: {app: x}}
      template:
        metadata: {labels: {app: x}}
        spec:
          containers:
          - name: grab
            image: cuda
            env: [{name: NVIDIA_VISIBLE_DEVICES, value: all}]
          volumes:
          - {name: dev, hostPath: {path: /dev}}
    """)


def test_a_tenant_s_daemonset_is_judged_as_any_workload():
    """A DaemonSet that takes every GPU of every node (/dev and NVIDIA_VISIBLE_DEVICES=all) was
    admitted: the tenant rules left DaemonSets to daemonset-host-access, an info. In a judged
    namespace a DaemonSet is a tenant's (the platform's node agents run in the namespaces the
    install exempts): the webhook and the policies deny it; lint still takes a repository's
    DaemonSets for node agents."""
    verdict = judge(_request(TENANT_DAEMONSET), CONFIG)
    assert not verdict.allowed and {f.rule for f in verdict.denials} == {"host-device-mount", "env-device-visibility"}
    policies = {o["metadata"]["labels"]["draguard.io/rule"]: o for o in export(REGISTRY, Config(kube_version="1.34"))
                .objects if o["kind"] == "ValidatingAdmissionPolicy"}
    for rule in ("host-device-mount", "env-device-visibility"):
        assert evaluate(policies[rule], TENANT_DAEMONSET, {"data": {"adminNamespaces": ""}}).passed is False
    linted = lint_objects([TENANT_DAEMONSET], Config(kube_version="1.34")).findings
    assert {(f.rule, f.severity) for f in linted} >= {("daemonset-host-access", Severity.INFO),
                                                        ("env-device-visibility", Severity.INFO)}
    assert not any(f.rule == "host-device-mount" for f in linted)


def _with_pod_spec(deployment: dict, **spec) -> dict:
    changed = copy.deepcopy(deployment)
    changed["spec"]["template"]["spec"].update(spec)
    return changed


def _env(deployment: dict, value: str) -> dict:
    changed = copy.deepcopy(deployment)
    changed["spec"]["template"]["spec"]["containers"][0]["env"] = [{"name": "CUDA_VISIBLE_DEVICES", "value": value}]
    return changed


@pytest.mark.parametrize("old, new, says", [
    (_env(LEGACY_DEPLOYMENT, "0"), _env(LEGACY_DEPLOYMENT, "all"), "device variable values CUDA_VISIBLE_DEVICES=all"),
    (_with_pod_spec(LEGACY_DEPLOYMENT, volumes=[{"name": "d", "hostPath": {"path": "/dev/nvidia0"}}]),
     _with_pod_spec(LEGACY_DEPLOYMENT, volumes=[{"name": "d", "hostPath": {"path": "/dev"}}]), "host GPU paths /dev"),
])
def test_an_existing_violation_may_not_select_other_devices_in_place(old, new, says):
    """The attack review changed a kept error's value in place (the fault's field is the same,
    so it was kept, with a warning): CUDA_VISIBLE_DEVICES from 0 to all, a hostPath from one
    device node to all of /dev. Each selects devices anew, which no update may do (back
    included); taking the selection out is allowed."""
    verdict = _update(old, new)
    assert not verdict.allowed and not verdict.denials and says in verdict.message()
    assert not _update(new, old).allowed
    assert _update(old, LEGACY_DEPLOYMENT).allowed


def test_a_legacy_daemonset_may_not_reach_more_nodes():
    """A DaemonSet's pods are its nodes: dropping its nodeSelector or tolerating a taint grows
    a legacy one as 50 replicas grow a Deployment."""
    legacy = copy.deepcopy(TENANT_DAEMONSET)
    pod = legacy["spec"]["template"]["spec"]
    pod.update(nodeSelector={"gpu": "a100"}, volumes=[])
    pod["containers"][0] = {"name": "grab", "image": "cuda", "resources": {"limits": {"nvidia.com/gpu": 1}}}
    everywhere = _with_pod_spec(legacy, nodeSelector={})
    tolerant = _with_pod_spec(legacy, tolerations=[{"operator": "Exists"}])
    assert "DaemonSet nodes (nodeSelector gpu=a100 dropped)" in _update(legacy, everywhere).message()
    assert not _update(legacy, tolerant).allowed and "toleration" in _update(legacy, tolerant).message()
    assert _update(everywhere, legacy).allowed
    pinned = _with_pod_spec(legacy, nodeSelector={}, affinity={"nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "In", "values": ["n1"]}]}]}}})
    unpinned = _with_pod_spec(pinned, affinity={})
    assert "required node affinity changed" in _update(pinned, unpinned).message()


def test_a_crd_s_own_gpu_count_and_a_cronjob_s_parallelism_grow_too():
    """The attack review grew a legacy DynamoGraphDeployment's `gpu` from 1 to 8 (the CRD's own
    name for nvidia.com/gpu, which the measure did not count) and a legacy CronJob's
    parallelism from 1 to 100 (no pods measure): both are growth now."""
    dynamo = {"apiVersion": "nvidia.com/v1alpha1", "kind": "DynamoGraphDeployment",
              "metadata": {"name": "d", "namespace": "team-a"},
              "spec": {"services": {"worker": {"resources": {"limits": {"gpu": "1"}}}}}}
    more = copy.deepcopy(dynamo)
    more["spec"]["services"]["worker"]["resources"]["limits"]["gpu"] = "8"
    assert "device-plugin GPUs 1 -> 8" in _update(dynamo, more).message()
    cron = {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "c", "namespace": "team-a"},
            "spec": {"schedule": "* * * * *", "jobTemplate": {"spec": {"parallelism": 1, "template": {
                "spec": {"restartPolicy": "Never", "containers": [LEGACY_POD["spec"]["containers"][0]]}}}}}}
    wider = copy.deepcopy(cron)
    wider["spec"]["jobTemplate"]["spec"]["parallelism"] = 100
    assert "pods 1 -> 100" in _update(cron, wider).message()


@pytest.mark.parametrize("resource", ["deviceclass.resource.kubernetes.io/gpu.nvidia.com", "example.com/gpu"])
def test_a_gpu_asked_for_as_a_dra_extended_resource_makes_a_gpu_pod(resource):
    """privileged and hostIPC are denied in a GPU pod; the attack review got both past with the
    GPU asked for as an extended resource that DRA serves (KEP-5004: the implicit name of a
    DeviceClass, or the extendedResourceName of one in the set)."""
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "team-a"},
           "spec": {"hostIPC": True, "containers": [{"name": "c", "image": "cuda", "securityContext": {"privileged": True},
                                                     "resources": {"limits": {resource: 1}}}]}}
    gpu_class = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "example-gpu"},
                 "spec": {"extendedResourceName": "example.com/gpu",
                          "selectors": [{"cel": {"expression": "device.driver == 'gpu.nvidia.com'"}}]}}
    verdict = judge(_request(pod), CONFIG, [Manifest.from_data(gpu_class)])
    assert {"privileged-gpu-container", "host-ipc"} <= {f.rule for f in verdict.denials}


def test_a_device_variable_cannot_be_imported_whole_through_a_config_map_or_a_prefix():
    """The attack review created the pod first and then the ConfigMap holding
    NVIDIA_VISIBLE_DEVICES=all (the kubelet starts the container once it exists), and took a
    key VISIBLE_DEVICES with the envFrom prefix NVIDIA_ from a Secret, which the webhook never
    reads. The ConfigMap write is refused, and so is a prefix that makes a device variable of
    some key, in the webhook and the policies alike."""
    config_map = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "later", "namespace": "team-a"},
                  "data": {"NVIDIA_VISIBLE_DEVICES": "all", "LOG_LEVEL": "info"}}
    verdict = judge(_request(config_map), CONFIG)
    assert not verdict.allowed and [f.rule for f in verdict.denials] == ["env-device-visibility"]
    assert judge(_request(dict(config_map, data={"LOG_LEVEL": "info"})), CONFIG).allowed
    prefixed = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "team-a"},
                "spec": {"containers": [{"name": "c", "image": "cuda", "envFrom": [
                    {"secretRef": {"name": "s"}, "prefix": "NVIDIA_"}]}]}}
    assert not judge(_request(prefixed), CONFIG).allowed
    plain = copy.deepcopy(prefixed)
    plain["spec"]["containers"][0]["envFrom"][0]["prefix"] = "APP_"
    assert judge(_request(plain), CONFIG).allowed
    [pol] = [o for o in export(REGISTRY, Config(kube_version="1.34")).objects
             if o["kind"] == "ValidatingAdmissionPolicy" and o["metadata"]["name"] == "draguard-env-device-visibility"]
    params = {"data": {"adminNamespaces": ""}}
    assert evaluate(pol, prefixed, params).passed is False and evaluate(pol, plain, params).passed is True


_TAKES_EVERYTHING = {"hostIPC": True, "volumes": [{"name": "d", "hostPath": {"path": "/dev"}}], "containers": [{
    "name": "c", "image": "cuda", "securityContext": {"privileged": True},
    "env": [{"name": "NVIDIA_VISIBLE_DEVICES", "value": "all"}], "resources": {"limits": {"nvidia.com/gpu": 8}}}]}


@pytest.mark.parametrize("api_version, kind, spec", [
    ("ray.io/v1", "RayJob", {"submitterPodTemplate": {"spec": _TAKES_EVERYTHING}}),
    ("ray.io/v1", "RayCluster", {"autoscalerOptions": {"env": [{"name": "NVIDIA_VISIBLE_DEVICES", "value": "all"}]}}),
    ("serving.kserve.io/v1beta1", "InferenceService", {"predictor": {"workerSpec": _TAKES_EVERYTHING}}),
    ("trainer.kubeflow.org/v1alpha1", "TrainJob", {"podTemplateOverrides": [{"spec": {
        "volumes": [{"name": "d", "hostPath": {"path": "/dev"}}]}}]}),
])
def test_every_pod_shaping_field_of_an_operator_s_kind_is_judged(api_version, kind, spec):
    """With the operator named (--controller-user), the pods it makes go by their owner's
    verdict; the attack review hid a whole pod spec in fields draguard did not read (a RayJob's
    submitter, KubeRay's autoscaler sidecar, KServe's multi-node workers, a TrainJob's
    overrides), admitted with the owner and then exempt. Those fields are read now."""
    group, _, version = api_version.rpartition("/")
    obj = {"apiVersion": api_version, "kind": kind, "metadata": {"name": "x", "namespace": "team-a"}, "spec": spec}
    request = Request("uid-1", {"group": group, "version": version, "kind": kind}, "CREATE", "team-a", "x", obj,
                      None, False, "alice")
    assert not judge(request, CONFIG).allowed
