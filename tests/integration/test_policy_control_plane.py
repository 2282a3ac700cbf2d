"""`draguard policy export` loaded into the real kube-apiserver (issue: admission), without any
webhook: for every exported rule its failing example is refused (errors) or warned about
(warnings) by the ValidatingAdmissionPolicy alone, naming the rule, and its passing example is
admitted without a word from it; a claim the resourceclaim controller generates is admitted
even where its request would be refused; an admin namespace from the parameters is admitted.

Where the API server's own validation refuses a failing Pod first (a claim name the pod does
not define), the same pod spec inside a CRD workload (RayCluster, whose schema preserves
unknown fields and so validates no pod spec) must be refused by the policy: that is what the
policy adds there.

The bindings are narrowed to the test's namespaces (the plane is shared with other modules):
the exempt-namespace selector the export writes is unit-tested."""

from __future__ import annotations

import json
import textwrap
import time

import pytest
import yaml
from kubernetes import dynamic

from draguard.admission.policies import export
from draguard.core.config import Config
from draguard.rules import REGISTRY

pytestmark = pytest.mark.cluster
NS, ADMIN_NS = "policed", "gpu-ops"
LABEL = {"draguard.io/policy-test": "true"}
CONFIG = Config(kube_version="1.37", admin_namespaces={ADMIN_NS})
EXPORTED = export(REGISTRY, CONFIG)
RULES = [REGISTRY.get(o["metadata"]["labels"]["draguard.io/rule"]) for o in EXPORTED.objects
         if o["kind"] == "ValidatingAdmissionPolicy"]


def _narrowed(objects: list[dict]) -> list[dict]:
    """The export but its Namespace (made by the fixture, shared with other modules), its
    bindings selecting the test's namespaces."""
    for obj in objects:
        if obj["kind"] == "ValidatingAdmissionPolicyBinding":
            obj["spec"]["matchResources"] = {"namespaceSelector": {"matchLabels": LABEL}}
    return [obj for obj in objects if obj["kind"] != "Namespace"]


def dry_run(plane, obj: dict, namespace: str = NS, user: str | None = None) -> tuple[int, str, list[str]]:
    """(HTTP status, body, warnings) of a server-side dry-run create of `obj`, as `user` when
    given."""
    resource = dynamic.DynamicClient(plane.api()).resources.get(api_version=obj["apiVersion"], kind=obj["kind"])
    if resource.namespaced:
        obj = dict(obj, metadata=dict(obj["metadata"], namespace=namespace))
    return plane.dry_run_create(obj, namespace if resource.namespaced else None, user, timeout=10)


def _docs(text: str) -> list[dict]:
    return [d for d in yaml.safe_load_all(textwrap.dedent(text)) if d]


def _matched(rule, text: str) -> list[dict]:
    kinds = rule.admission.kinds(rule.targets)
    found = []
    for obj in _docs(text):
        group = obj["apiVersion"].rpartition("/")[0]
        if (group, obj["kind"]) in kinds:
            if obj["kind"] == "Namespace":  # the binding selects the test's namespaces by label
                obj["metadata"].setdefault("labels", {}).update(LABEL)
            found.append(obj)
    return found


def _crd(group: str, kind: str) -> dict:
    """A CRD that keeps whatever its spec holds (as the operators' own do for pod templates)."""
    plural = kind.lower() + "s"
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": f"{plural}.{group}"},
            "spec": {"group": group, "scope": "Namespaced",
                     "names": {"plural": plural, "singular": kind.lower(), "kind": kind},
                     "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
                         "type": "object", "properties": {"spec": {"type": "object",
                                                                   "x-kubernetes-preserve-unknown-fields": True}}}}}]}}


CRDS = [_crd("ray.io", "RayCluster"), _crd("kubeflow.org", "PyTorchJob")]


def in_a_raycluster(pod: dict) -> dict:
    template = {"metadata": {"labels": {"app": "ray"}}, "spec": pod["spec"]}
    return {"apiVersion": "ray.io/v1", "kind": "RayCluster", "metadata": {"name": pod["metadata"]["name"]},
            "spec": {"headGroupSpec": {"template": template}}}


def in_a_pytorchjob(pod: dict, **replicas) -> dict:
    specs = replicas or {"Worker": pod["spec"]}
    return {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "metadata": {"name": pod["metadata"]["name"]},
            "spec": {"pytorchReplicaSpecs": {key: {"template": {"spec": spec}} for key, spec in specs.items()}}}


def _refused_by_validation(body: str) -> bool:
    status = json.loads(body)
    return status.get("reason") == "Invalid" and "ValidatingAdmissionPolicy" not in status.get("message", "")


@pytest.fixture(scope="module")
def policed(bare_plane):
    core = dynamic.DynamicClient(bare_plane.api()).resources.get(api_version="v1", kind="Namespace")
    for name in (NS, ADMIN_NS, "draguard"):
        try:
            core.create(body={"metadata": {"name": name, "labels": LABEL if name != "draguard" else {}}})
        except Exception:  # noqa: BLE001 - it exists already: another module made it
            pass
    objects = CRDS + _narrowed(EXPORTED.objects)
    bare_plane.apply(objects)
    first = REGISTRY.get("teardown-grace-zero")
    failing = _matched(first, first.noncompliant)[0]
    deadline = time.monotonic() + 60
    while dry_run(bare_plane, failing)[0] != 422 or dry_run(bare_plane, in_a_raycluster(failing))[0] != 422:
        # the policies are loaded through an informer, the CRD's resource after discovery
        assert time.monotonic() < deadline, "the exported policies never took effect"
        time.sleep(0.5)
    try:
        yield bare_plane
    finally:
        dyn = dynamic.DynamicClient(bare_plane.api())
        for obj in reversed(objects):
            resource = dyn.resources.get(api_version=obj["apiVersion"], kind=obj["kind"])
            resource.delete(name=obj["metadata"]["name"], namespace=obj["metadata"].get("namespace"))


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.id)
def test_the_policy_alone_refuses_the_failing_example_and_admits_the_passing_one(policed, rule):
    name = f"draguard-{rule.id}"
    refused = str(rule.severity) == "error"
    failing = _matched(rule, rule.noncompliant)
    assert failing
    for obj in failing:
        status, body, warnings = dry_run(policed, obj)
        if refused:
            assert status == 422, (obj["kind"], status, body)
            if obj["kind"] == "Pod" and _refused_by_validation(body):
                status, body, _ = dry_run(policed, in_a_raycluster(obj))
                assert status == 422, body
            assert f"ValidatingAdmissionPolicy '{name}'" in body and f"{rule.id}: " in body, body
        else:
            assert status in (200, 201), (status, body)
            assert any(name in w and f"{rule.id}: " in w for w in warnings), warnings
    for obj in _matched(rule, rule.compliant):
        status, body, warnings = dry_run(policed, obj)
        assert status in (200, 201), (obj["kind"], status, body)
        assert not any(name in w for w in warnings), warnings


def test_a_generated_claim_is_known_by_who_made_it_not_by_its_annotation(policed):
    """The annotation and the pod owner a generated claim carries can be written by anyone: a
    tenant's claim with both is refused; the resourceclaim controller's is admitted."""
    claim = _docs("""
        apiVersion: resource.k8s.io/v1
        kind: ResourceClaim
        metadata:
          name: inference-gpu-x7k2p
          annotations: {resource.kubernetes.io/pod-claim-name: gpu}
          ownerReferences:
          - {apiVersion: v1, kind: Pod, name: inference, uid: 5d1c3f0e-0000-4000-8000-000000000001, controller: true}
        spec:
          devices:
            requests:
            - name: gpu
              exactly: {deviceClassName: gpu.nvidia.com, allocationMode: All}
        """)[0]
    status, body, _ = dry_run(policed, claim, user="system:serviceaccount:kube-system:resource-claim-controller")
    assert status in (200, 201), body
    for user in ("alice", "system:serviceaccount:team-a:resource-claim-controller"):
        status, body, _ = dry_run(policed, claim, user=user)
        assert status == 422 and "request-all-devices: " in body and "(request gpu)" in body, (user, body)


def test_an_admin_namespace_from_the_parameters_may_take_all_devices(policed):
    rule = REGISTRY.get("request-all-devices")
    template = _matched(rule, rule.noncompliant)[0]
    assert dry_run(policed, template, namespace=ADMIN_NS)[0] in (200, 201)
    assert dry_run(policed, template, namespace=NS)[0] == 422


def _before_the_policies(plane, name: str, objects: list[dict]):
    """Create `objects` in a new namespace the bindings do not select yet, then label it so
    that they do: what a cluster holds when the policies are installed. (namespace, its
    resources by kind)."""
    dyn = dynamic.DynamicClient(plane.api())
    namespaces = dyn.resources.get(api_version="v1", kind="Namespace")
    namespaces.create(body={"metadata": {"name": name}})
    made = {}
    for obj in objects:
        made[obj["kind"]] = dyn.resources.get(api_version=obj["apiVersion"], kind=obj["kind"])
        made[obj["kind"]].create(namespace=name, body=obj)
    namespaces.patch(name=name, body={"metadata": {"labels": LABEL}}, content_type="application/merge-patch+json")
    return made


def _until_selected(plane, namespace: str, probe: dict, status: int) -> None:
    deadline = time.monotonic() + 30
    while dry_run(plane, probe, namespace)[0] != status:  # the binding sees the label through an informer
        assert time.monotonic() < deadline, "the policies never selected the namespace"
        time.sleep(0.5)


def test_objects_from_before_the_policies_keep_their_updates_and_only_new_faults_are_refused(policed):
    """A pod failing teardown-grace-zero and a Deployment of it, created before the policies
    selected their namespace: the pod's finalizer comes off and its labels change, the
    Deployment's image is bumped (the fault was there before: ratcheted per rule) and the
    controllers roll it out (what they make from the template is theirs), but its replicas
    may not grow under the fault it kept; a passing
    Deployment updated to fail is refused; the pod, deleted, loses its last finalizer."""
    rule = REGISTRY.get("teardown-grace-zero")
    pod = _matched(rule, rule.noncompliant)[0]
    pod = dict(pod, metadata={"name": "ran-before", "finalizers": ["batch.kubernetes.io/job-tracking",
                                                                   "draguard.io/test"]})
    fine = dict(pod["spec"], terminationGracePeriodSeconds=30)

    def deployment(name: str, spec: dict) -> dict:
        return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
                "spec": {"replicas": 1, "selector": {"matchLabels": {"app": name}},
                         "template": {"metadata": {"labels": {"app": name}}, "spec": spec}}}
    namespace, merge = "policed-before", "application/merge-patch+json"
    made = _before_the_policies(policed, namespace, [pod, deployment("old", pod["spec"]), deployment("fine", fine)])
    try:
        apps = made["Deployment"]
        _until_selected(policed, namespace, dict(pod, metadata={"name": "probe"}), 422)
        pods = made["Pod"]
        pods.patch(namespace=namespace, name="ran-before", content_type=merge,
                   body={"metadata": {"labels": {"done": "yes"}, "finalizers": ["draguard.io/test"]}})
        container = pod["spec"]["containers"][0]
        bumped = container["image"] + "-patched"
        apps.patch(namespace=namespace, name="old", content_type=merge, body={"spec": {"template": {"spec": {
            "containers": [dict(container, image=bumped)]}}}})
        deadline = time.monotonic() + 60  # the controllers roll it out: their ReplicaSet and pods are admitted
        while bumped not in {c.image for p in pods.get(namespace=namespace).items for c in p.spec.containers}:
            assert time.monotonic() < deadline, "the controllers never rolled the bump out"
            time.sleep(0.5)
        with pytest.raises(Exception) as caught:  # the fault it kept may not grow: more pods
            apps.patch(namespace=namespace, name="old", content_type=merge, body={"spec": {"replicas": 50}})
        assert "the update keeps this error and grows what it concerns (pods)" in str(caught.value.body)
        with pytest.raises(Exception) as caught:
            apps.patch(namespace=namespace, name="fine", content_type=merge,
                       body={"spec": {"template": {"spec": {"terminationGracePeriodSeconds": 0}}}})
        assert "draguard-teardown-grace-zero" in str(caught.value.body)
        pods.delete(namespace=namespace, name="ran-before")
        pods.patch(namespace=namespace, name="ran-before", content_type=merge, body={"metadata": {"finalizers": None}})
        deadline = time.monotonic() + 30
        while "ran-before" in {p.metadata.name for p in pods.get(namespace=namespace).items}:
            assert time.monotonic() < deadline, "the deleted pod never went"
            time.sleep(0.5)
    finally:
        dynamic.DynamicClient(policed.api()).resources.get(api_version="v1", kind="Namespace").delete(name=namespace)


MUTATIONS = [o for o in export(REGISTRY, CONFIG, unsafe_fixes=True).objects
             if o["kind"].startswith("MutatingAdmissionPolicy")]


@pytest.fixture(scope="module")
def mutating(policed):
    """The fixes as MutatingAdmissionPolicies (after the validation tests: they change what the
    failing examples become), their parameters in the ConfigMap the export writes."""
    dyn = dynamic.DynamicClient(policed.api())
    configmaps = dyn.resources.get(api_version="v1", kind="ConfigMap")
    params = export(REGISTRY, CONFIG, unsafe_fixes=True).objects[1]
    configmaps.replace(body=params, name=params["metadata"]["name"], namespace="draguard")
    objects = _narrowed(MUTATIONS)
    for obj in objects:
        if obj["kind"] == "MutatingAdmissionPolicyBinding":
            obj["spec"]["matchResources"] = {"namespaceSelector": {"matchLabels": LABEL}}
    policed.apply(objects)
    grace = REGISTRY.get("teardown-grace-zero")
    failing = _matched(grace, grace.noncompliant)[0]
    deadline = time.monotonic() + 60
    # each kind: the policies' matcher learns a CRD's resource through its own discovery
    while any(dry_run(policed, obj)[0] != 201 for obj in (failing, in_a_raycluster(failing), in_a_pytorchjob(failing))):
        assert time.monotonic() < deadline, "the mutating policies never took effect"
        time.sleep(0.5)
    try:
        yield policed
    finally:
        for obj in reversed(objects):
            resource = dyn.resources.get(api_version=obj["apiVersion"], kind=obj["kind"])
            resource.delete(name=obj["metadata"]["name"])


def test_the_grace_period_fix_is_applied_to_every_failing_pod_spec_with_the_configured_value(mutating):
    rule = REGISTRY.get("teardown-grace-zero")
    pod = _matched(rule, rule.noncompliant)[0]
    status, body, warnings = dry_run(mutating, pod)
    assert status == 201 and json.loads(body)["spec"]["terminationGracePeriodSeconds"] == 60, body
    cluster = in_a_raycluster(pod)
    fine = dict(pod["spec"], terminationGracePeriodSeconds=30)
    cluster["spec"]["workerGroupSpecs"] = [{"template": {"spec": fine}}, {"template": {"spec": pod["spec"]}}]
    status, body, _ = dry_run(mutating, cluster)
    assert status == 201, body
    spec = json.loads(body)["spec"]
    assert spec["headGroupSpec"]["template"]["spec"]["terminationGracePeriodSeconds"] == 60
    assert [g["template"]["spec"]["terminationGracePeriodSeconds"] for g in spec["workerGroupSpecs"]] == [30, 60]
    job = in_a_pytorchjob(pod, **{"Master": fine, "Worker/0~": pod["spec"]})
    status, body, _ = dry_run(mutating, job)
    assert status == 201, body
    replicas = json.loads(body)["spec"]["pytorchReplicaSpecs"]
    assert {k: r["template"]["spec"]["terminationGracePeriodSeconds"] for k, r in replicas.items()} == \
        {"Master": 30, "Worker/0~": 60}  # the key escaped in the pointer (RFC 6901)
    configmaps = dynamic.DynamicClient(mutating.api()).resources.get(api_version="v1", kind="ConfigMap")
    configmaps.patch(name="draguard-policy-params", namespace="draguard",
                     body={"data": {"teardown-grace-zero.graceSeconds": "90"}},
                     content_type="application/merge-patch+json")
    deadline = time.monotonic() + 30
    while json.loads(dry_run(mutating, pod)[1])["spec"]["terminationGracePeriodSeconds"] != 90:
        assert time.monotonic() < deadline, "the parameter change never reached the policy"
        time.sleep(0.5)


def test_the_shm_fix_sets_the_configured_size_limit_and_the_warning_goes(mutating):
    rule = REGISTRY.get("shm-size-limit")
    pod = _matched(rule, rule.noncompliant)[0]
    status, body, warnings = dry_run(mutating, pod)
    assert status == 201, body
    shm = [v for v in json.loads(body)["spec"]["volumes"] if v.get("emptyDir", {}).get("medium") == "Memory"]
    assert [v["emptyDir"]["sizeLimit"] for v in shm] == [rule.options["sizeLimit"].default]
    assert not any("draguard-shm-size-limit" in w for w in warnings), warnings


def test_a_pod_from_before_the_mutating_policies_keeps_its_spec_when_relabelled(mutating):
    """A pod's spec may not change in an update: the grace-period fix, which patches a new
    pod, leaves a pod that failed before alone when its labels change (the update would be
    refused otherwise), and the validating policy ratchets it."""
    rule = REGISTRY.get("teardown-grace-zero")
    pod = dict(_matched(rule, rule.noncompliant)[0], metadata={"name": "ran-before"})
    namespace = "mutated-before"
    made = _before_the_policies(mutating, namespace, [pod])
    try:
        _until_selected(mutating, namespace, dict(pod, metadata={"name": "probe"}), 201)
        patched = made["Pod"].patch(namespace=namespace, name="ran-before", content_type="application/merge-patch+json",
                                    body={"metadata": {"labels": {"relabelled": "yes"}}})
        assert patched.metadata.labels["relabelled"] == "yes"
        assert patched.spec.terminationGracePeriodSeconds == pod["spec"]["terminationGracePeriodSeconds"]
    finally:
        dynamic.DynamicClient(mutating.api()).resources.get(api_version="v1", kind="Namespace").delete(name=namespace)


USER_CHECK = """\
checks:
- id: pods-name-a-team
  kinds: [Pod]
  expression: "has(object.metadata.labels) && 'team' in object.metadata.labels"
  message: every pod names its team
  severity: error
"""


def test_a_check_declared_in_the_config_is_enforced_by_its_exported_policy(policed, tmp_path):
    """A `.draguard.yaml` check, exported by the code that exports the built-in rules: the real
    API server refuses what lint reports and admits what lint passes."""
    from draguard.engine import lint_objects
    from draguard.engine.config_file import load_config

    (tmp_path / ".draguard.yaml").write_text(USER_CHECK)
    config = load_config(str(tmp_path / ".draguard.yaml"))
    config.kube_version = CONFIG.kube_version
    objects = [o for o in _narrowed(export(config.checks, config).objects)
               if o["kind"].startswith("ValidatingAdmissionPolicy")]
    assert len(objects) == 2
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "unlabelled"},
           "spec": {"containers": [{"name": "c", "image": "busybox:1.36"}]}}
    labelled = dict(pod, metadata={"name": "labelled", "labels": {"team": "a"}})
    policed.apply(objects)
    try:
        deadline = time.monotonic() + 60
        while (answer := dry_run(policed, pod))[0] != 422:
            assert time.monotonic() < deadline, f"the check's policy never took effect: {answer}"
            time.sleep(0.5)
        assert "pods-name-a-team: every pod names its team" in answer[1]
        assert dry_run(policed, labelled)[0] == 201
        linted = {o["metadata"]["name"]: [f.rule for f in lint_objects([o], config).findings
                                          if f.rule == "pods-name-a-team"] for o in (pod, labelled)}
        assert linted == {"unlabelled": ["pods-name-a-team"], "labelled": []}
    finally:
        dyn = dynamic.DynamicClient(policed.api())
        for obj in objects:
            dyn.resources.get(api_version=obj["apiVersion"], kind=obj["kind"]).delete(name=obj["metadata"]["name"])
