"""Fixes beyond the rules' documented examples: what each fix writes, when it declines, and
that applying it removes the finding."""

from __future__ import annotations

import textwrap

import pytest
import yaml

from draguard.core.config import Config, RuleSettings
from draguard.core.fixes import Applicability, apply_edits
from draguard.engine import lint_objects


def docs(text: str) -> list:
    return [d for d in yaml.safe_load_all(textwrap.dedent(text)) if d]


def findings(documents, rule, kube="1.34"):
    return [f for f in lint_objects(documents, Config(kube_version=kube)).findings if f.rule == rule]


def fixed(documents, finding) -> list:
    index = finding.location.document
    return documents[:index] + apply_edits(documents[index], finding.fix.edits) + documents[index + 1:]


V1_FLAT_REQUEST = """
    apiVersion: resource.k8s.io/v1
    kind: ResourceClaim
    metadata: {name: c}
    spec:
      devices:
        requests:
        - name: gpu
          deviceClassName: gpu.nvidia.com
          count: 1
    """


def test_a_v1_request_in_the_v1beta1_shape_moves_under_exactly():
    documents = docs(V1_FLAT_REQUEST)
    [finding] = findings(documents, "request-device-class")
    assert finding.fix.applicability is Applicability.SAFE
    after = fixed(documents, finding)
    assert after[0]["spec"]["devices"]["requests"][0] == {
        "name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com", "count": 1}}
    assert not findings(after, "request-device-class")


@pytest.mark.parametrize("kube, api_version, structured", [
    ("1.32", "resource.k8s.io/v1beta1",
     {"name": "gpu", "deviceClassName": "gpu.nvidia.com", "allocationMode": "ExactCount", "count": 1}),
    ("1.33", "resource.k8s.io/v1beta2",
     {"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com", "allocationMode": "ExactCount", "count": 1}}),
    ("1.37", "resource.k8s.io/v1",
     {"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com", "allocationMode": "ExactCount", "count": 1}}),
])
def test_classic_claims_become_structured_in_the_version_the_target_serves(kube, api_version, structured):
    documents = docs("""
        apiVersion: resource.k8s.io/v1alpha2
        kind: ResourceClaimTemplate
        metadata: {name: t}
        spec:
          spec: {resourceClassName: gpu.nvidia.com, allocationMode: Immediate}
        """)
    first = findings(documents, "api-removed", kube)[0]
    after = fixed(documents, first)
    assert after[0]["apiVersion"] == api_version and after[0]["spec"]["spec"] == {"devices": {"requests": [structured]}}
    assert not findings(after, "api-removed", kube)


def test_classic_claims_with_opaque_parameters_are_not_converted():
    documents = docs("""
        apiVersion: resource.k8s.io/v1alpha2
        kind: ResourceClaim
        metadata: {name: c}
        spec:
          resourceClassName: example
          parametersRef: {kind: ConfigMap, name: params}
        """)
    assert all(f.fix is None for f in findings(documents, "api-removed"))


def test_surge_fix_writes_the_strategy_when_there_is_none():
    documents = docs("""
        apiVersion: resource.k8s.io/v1
        kind: ResourceClaimTemplate
        metadata: {name: t}
        spec: {spec: {devices: {requests: [{name: g, exactly: {deviceClassName: gpu.nvidia.com}}]}}}
        ---
        apiVersion: apps/v1
        kind: Deployment
        metadata: {name: d}
        spec:
          replicas: 3
          selector: {matchLabels: {app: d}}
          template:
            metadata: {labels: {app: d}}
            spec:
              resourceClaims: [{name: g, resourceClaimTemplateName: t}]
              containers: [{name: c, image: x, resources: {claims: [{name: g}]}}]
        """)
    [finding] = findings(documents, "rollout-surge")
    after = fixed(documents, finding)
    assert after[1]["spec"]["strategy"] == {"rollingUpdate": {"maxSurge": 0, "maxUnavailable": 1}}
    assert not findings(after, "rollout-surge")


def test_a_budget_with_min_available_is_rewritten_to_max_unavailable():
    documents = docs("""
        apiVersion: apps/v1
        kind: StatefulSet
        metadata: {name: s}
        spec:
          replicas: 3
          selector: {matchLabels: {app: s}}
          template:
            metadata: {labels: {app: s}}
            spec:
              resourceClaims: [{name: g, resourceClaimTemplateName: t}]
              containers: [{name: c, image: x, resources: {claims: [{name: g}]}}]
        ---
        apiVersion: policy/v1
        kind: PodDisruptionBudget
        metadata: {name: s}
        spec: {minAvailable: 2, selector: {matchLabels: {app: s}}}
        """)
    [finding] = findings(documents, "rollout-pdb")
    assert finding.location.document == 1
    after = fixed(documents, finding)
    assert after[1]["spec"] == {"selector": {"matchLabels": {"app": "s"}}, "maxUnavailable": 1}


def test_removing_a_volume_removes_every_mount_of_it():
    documents = docs("""
        apiVersion: v1
        kind: Pod
        metadata: {name: p}
        spec:
          containers:
          - name: a
            image: x
            volumeMounts: [{name: dev, mountPath: /dev}, {name: data, mountPath: /data}, {name: dev, mountPath: /d2}]
          - {name: b, image: x, volumeMounts: [{name: dev, mountPath: /dev}]}
          volumes: [{name: data, emptyDir: {}}, {name: dev, hostPath: {path: /dev/}}]
        """)
    [finding] = findings(documents, "host-device-mount")
    after = fixed(documents, finding)
    spec = after[0]["spec"]
    assert spec["volumes"] == [{"name": "data", "emptyDir": {}}]
    assert [c.get("volumeMounts") for c in spec["containers"]] == [[{"name": "data", "mountPath": "/data"}], None]


def test_all_devices_in_a_tenant_namespace_is_its_own_error_without_a_fix():
    text = V1_FLAT_REQUEST.replace("deviceClassName: gpu.nvidia.com\n          count: 1",
                                   "exactly: {deviceClassName: gpu.nvidia.com, allocationMode: All}")
    documents = docs(text.replace("metadata: {name: c}", "metadata: {name: c, namespace: team-a}"))
    [finding] = findings(documents, "request-all-devices")
    assert str(finding.severity) == "error" and finding.fix is None
    assert not findings(documents, "request-allocation-mode")  # spelled out: not this rule's business
    config = Config(kube_version="1.34", admin_namespaces={"team-a"})
    assert not [f for f in lint_objects(documents, config).findings if f.rule == "request-all-devices"]
    admin = docs(text.replace("allocationMode: All}", "allocationMode: All, adminAccess: true}"))
    assert not findings(admin, "request-all-devices")


def test_grace_period_fix_leaves_room_after_the_hooks_waits():
    documents = docs("""
        apiVersion: v1
        kind: Pod
        metadata: {name: p}
        spec:
          terminationGracePeriodSeconds: 60
          resourceClaims: [{name: g, resourceClaimTemplateName: t}]
          containers:
          - name: c
            image: x
            resources: {claims: [{name: g}]}
            lifecycle: {preStop: {exec: {command: [sh, -c, "sleep 5; timeout 85 drain"]}}}
        """)
    [finding] = findings(documents, "teardown-grace-period")
    after = fixed(documents, finding)
    assert after[0]["spec"]["terminationGracePeriodSeconds"] == 120
    assert not findings(after, "teardown-grace-period")


LEGACY_POD = """
    apiVersion: v1
    kind: Pod
    metadata: {name: clash, namespace: ns}
    spec:
      containers:
      - name: a
        image: img
        resources: {limits: {nvidia.com/gpu: %d}}
    """


def template(name: str, fields: dict, version: str = "v1") -> str:
    request = {"name": "gpu", **(fields if version == "v1beta1" else {"exactly": fields})}
    return yaml.safe_dump({"apiVersion": f"resource.k8s.io/{version}", "kind": "ResourceClaimTemplate",
                           "metadata": {"name": name, "namespace": "ns"},
                           "spec": {"spec": {"devices": {"requests": [request]}}}})


def migrated_template(documents) -> tuple[str, list]:
    """(the template name the pod's migration claims, the templates its fix adds)."""
    [finding] = findings(documents, "legacy-gpu-resource")
    after = fixed(documents, finding)
    pod = next(d for d in after if d["kind"] == "Pod")
    added = [d for d in after[len(documents):]]
    return pod["spec"]["resourceClaims"][0]["resourceClaimTemplateName"], added


@pytest.mark.parametrize("version, fields", [
    ("v1", {"deviceClassName": "gpu.nvidia.com", "allocationMode": "ExactCount", "count": 2}),
    ("v1", {"deviceClassName": "gpu.nvidia.com", "count": 2}),  # API defaults are the same request
    ("v1beta1", {"deviceClassName": "gpu.nvidia.com", "allocationMode": "ExactCount", "count": 2}),
])
def test_the_migration_reuses_a_template_that_asks_for_what_it_would(version, fields):
    documents = docs(template("clash-a-gpu", fields, version) + "---" + LEGACY_POD % 2)
    assert migrated_template(documents) == ("clash-a-gpu", [])


@pytest.mark.parametrize("fields", [
    {"deviceClassName": "nic.example.com"},  # a user's template of the same name
    {"deviceClassName": "gpu.nvidia.com", "count": 1},  # a same-named workload's, with another count
    {"deviceClassName": "gpu.nvidia.com", "count": 2, "selectors": [{"cel": {"expression": "true"}}]},
    {"deviceClassName": "gpu.nvidia.com", "allocationMode": "All"},
])
def test_the_migration_never_claims_a_same_named_template_that_asks_for_other_devices(fields):
    documents = docs(template("clash-a-gpu", fields) + "---" + LEGACY_POD % 2)
    name, [added] = migrated_template(documents)
    assert name == added["metadata"]["name"] == "clash-a-gpu-2"
    assert added["spec"]["spec"]["devices"]["requests"][0]["exactly"]["count"] == 2
    taken = docs(template("clash-a-gpu", fields) + "---\n" + template("clash-a-gpu-2", {"deviceClassName": "x"})
                 + "---" + LEGACY_POD % 2)
    assert migrated_template(taken)[0] == "clash-a-gpu-3"


def ray_cluster(group: dict, containers: list) -> list:
    worker = {"groupName": "gpu", **group, "template": {"spec": {"containers": containers}}}
    return [{"apiVersion": "ray.io/v1", "kind": "RayCluster", "metadata": {"name": "llm", "namespace": "ml"},
             "spec": {"headGroupSpec": {"template": {"spec": {"containers": [{"name": "head", "image": "ray"}]}}},
                      "workerGroupSpecs": [worker]}}]


def ray_worker(resource: str) -> dict:
    return {"name": "worker", "image": "ray", "resources": {"limits": {resource: 2}}}


@pytest.mark.parametrize("group, containers, num_gpus", [
    ({"replicas": 1}, [ray_worker("nvidia.com/gpu")], "2"),
    ({"rayStartParams": {"block": "true"}}, [ray_worker("nvidia.com/mig-1g.10gb")], "2"),
    ({"rayStartParams": {"num-gpus": "1"}}, [ray_worker("nvidia.com/gpu")], "1"),  # the user's own stays
    ({"resources": {"GPU": "2"}}, [ray_worker("nvidia.com/gpu")], None),  # KubeRay refuses num-gpus beside it
    ({}, [ray_worker("gpu.intel.com/i915")], None),  # not a GPU to KubeRay
    ({}, [{"name": "ray", "image": "ray"}, ray_worker("nvidia.com/gpu")], None),  # not the Ray container
])
def test_a_ray_group_keeps_the_gpu_count_kuberay_read_from_the_limit(group, containers, num_gpus):
    """KubeRay passes the Ray container's GPU limit to `ray start` as --num-gpus and its
    autoscaler reads it, unless rayStartParams set num-gpus: migrated, the group says it there."""
    documents = ray_cluster(group, containers)
    [finding] = findings(documents, "legacy-gpu-resource")
    worker = fixed(documents, finding)[0]["spec"]["workerGroupSpecs"][0]
    assert (worker.get("rayStartParams") or {}).get("num-gpus") == num_gpus
    wrote = num_gpus is not None and "num-gpus" not in group.get("rayStartParams", {})
    assert ("num-gpus" in finding.fix.title) == wrote


@pytest.mark.parametrize("quantity, count", [(2, 2), ("2", 2), (2.0, 2), ("2000m", 2), ("1.5", None), ("\u00b2", None)])
def test_the_migration_reads_the_gpu_count_as_the_api_server_reads_the_quantity(quantity, count):
    """`2.0` and `"2000m"` are the quantity 2 (a whole number of devices, as the API server
    requires of an extended resource); a superscript two raised in the rule (str.isdigit)."""
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "n"},
           "spec": {"containers": [{"name": "c", "image": "x", "resources": {"limits": {"nvidia.com/gpu": quantity}}}]}}
    found = lint_objects([pod], Config(kube_version="1.34")).findings
    assert not [f for f in found if f.rule == "internal-error"]
    [legacy] = [f for f in found if f.rule == "legacy-gpu-resource"]
    if count is None:
        assert legacy.fix is None and "is not a whole number of devices" in legacy.no_fix
        return
    template = next(d for d in fixed([pod], legacy) if d["kind"] == "ResourceClaimTemplate")
    assert template["spec"]["spec"]["devices"]["requests"][0]["exactly"]["count"] == count


@pytest.mark.parametrize("requests, limits, count", [(1, 2, None), ("2", 2, 2), ("2000m", "2", 2), (None, 3, 3)])
def test_the_migration_takes_no_side_where_requests_and_limits_differ(requests, limits, count):
    """The API server refuses an extended resource's request that differs from its limit
    (validateResourceRequirements): which count was meant is a guess, so there is no fix."""
    resources = {"limits": {"nvidia.com/gpu": limits}, **({"requests": {"nvidia.com/gpu": requests}}
                                                          if requests is not None else {})}
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "n"},
           "spec": {"containers": [{"name": "c", "image": "x", "resources": resources}]}}
    [legacy] = [f for f in lint_objects([pod], Config()).findings if f.rule == "legacy-gpu-resource"]
    if count is None:
        assert legacy.fix is None and "differ, which the API server refuses" in legacy.no_fix
        return
    template = next(d for d in fixed([pod], legacy) if d["kind"] == "ResourceClaimTemplate")
    assert template["spec"]["spec"]["devices"]["requests"][0]["exactly"]["count"] == count


INIT_AND_APP = """
    apiVersion: v1
    kind: Pod
    metadata: {name: p, namespace: t}
    spec:
      initContainers:
      - {name: warm, image: i, resources: {limits: {nvidia.com/gpu: 1}}}
      - {name: side, image: i, restartPolicy: Always, resources: {limits: {nvidia.com/gpu: 1}}}
      - {name: big, image: i, resources: {limits: {nvidia.com/gpu: 4}}}
      containers:
      - {name: a, image: i, resources: {limits: {nvidia.com/gpu: 1}}}
      - {name: b, image: i, resources: {limits: {nvidia.com/gpu: 2}}}
    """


def _pod_devices(documents) -> tuple[int, dict]:
    """(the devices the pod's claims hold, container -> the pod claims it uses)."""
    pod = next(d for d in documents if d["kind"] == "Pod")["spec"]
    templates = {d["metadata"]["name"]: d for d in documents if d["kind"] == "ResourceClaimTemplate"}
    held = sum(templates[e["resourceClaimTemplateName"]]["spec"]["spec"]["devices"]["requests"][0]["exactly"]["count"]
               for e in pod["resourceClaims"])
    uses = {c["name"]: [x["name"] for x in c["resources"]["claims"]] for c in pod["initContainers"] + pod["containers"]}
    return held, uses


def test_an_init_container_shares_the_app_containers_claims_as_the_device_plugin_lends_its_devices():
    """The kubelet hands an init container's devices on to the containers after it, and the
    scheduler counts the larger of its request and the app containers' sum: here 4 for
    `big` plus the sidecar's 1 started before it. A claim of its own per init container
    made the pod hold 10 devices where it held 5 (on a smaller node it never scheduled)."""
    from draguard.fix.run import Choice, FileText, fix_texts

    text = textwrap.dedent(INIT_AND_APP)
    [warm] = [f for f in findings(docs(text), "legacy-gpu-resource") if "'warm'" in f.message]
    assert warm.fix is None and "migrated once container 'a', container 'b' ask for nvidia.com/gpu" in warm.no_fix
    file = FileText("pod.yaml", text)
    fix_texts([file], Config(kube_version="1.34"), Choice(unsafe=True))
    held, uses = _pod_devices(docs(file.text))
    assert held == 5
    assert uses["warm"] == ["a-gpu"] and uses["side"] == ["side-gpu"] and uses["a"] == ["a-gpu"]
    assert uses["big"] == ["a-gpu", "b-gpu", "big-gpu"]  # the app containers' 3, and 1 more of its own
    assert any("share the app containers' claim(s) a-gpu" in title for _, title in file.applied)
    again = FileText("pod.yaml", file.text)
    fix_texts([again], Config(kube_version="1.34"), Choice(unsafe=True))
    assert not again.changed


def test_a_limit_of_no_device_is_removed_safely():
    """`nvidia.com/gpu: 0` asks for nothing: its fix was refused ("0 is not a whole number")."""
    pod = docs(LEGACY_POD % 0)
    [finding] = findings(pod, "legacy-gpu-resource")
    assert finding.fix.applicability is Applicability.SAFE and finding.fix.title == "remove nvidia.com/gpu: 0 (it asks for no device)"
    after = fixed(pod, finding)
    assert after == [{**pod[0], "spec": {"containers": [{"name": "a", "image": "img"}]}}]


def _selecting(node: dict, count: int = 1) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "n"},
            "spec": {**node, "containers": [{"name": "c", "image": "x",
                                             "resources": {"limits": {"nvidia.com/gpu": count}}}]}}


def _affinity(key: str, values: list) -> dict:
    return {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [{"key": key, "operator": "In", "values": values}]}]}}}}


@pytest.mark.parametrize("node, profile", [
    ({"nodeSelector": {"cloud.google.com/gke-gpu-partition-size": "1g.5gb"}}, "1g.5gb"),  # a GKE GPU partition
    ({"nodeSelector": {"nvidia.com/gpu.product": "A100-SXM4-40GB-MIG-3g.20gb"}}, "3g.20gb"),  # GFD, single strategy
    (_affinity("nvidia.com/gpu.product", ["H100-80GB-HBM3-MIG-1g.10gb+me"]), "1g.10gb+me"),
    (_affinity("nvidia.com/gpu.product", ["A100-SXM4-40GB-MIG-3g.20gb", "A100-SXM4-40GB"]), None),  # either
    ({"nodeSelector": {"nvidia.com/gpu.product": "A100-SXM4-40GB"}}, None),
])
def test_a_gpu_on_nodes_that_serve_mig_slices_as_nvidia_com_gpu_migrates_to_that_slice(node, profile):
    """Under the single MIG strategy (and on GKE GPU partitions) each nvidia.com/gpu is one
    MIG slice, named by the node label the pod selects: a whole-GPU claim asked for devices
    those nodes do not have."""
    pod = [_selecting(node, 2)]
    [finding] = findings(pod, "legacy-gpu-resource")
    template = next(d for d in fixed(pod, finding) if d["kind"] == "ResourceClaimTemplate")
    request = template["spec"]["spec"]["devices"]["requests"][0]["exactly"]
    assert request["count"] == 2
    if profile is None:
        assert request["deviceClassName"] == "gpu.nvidia.com" and "selectors" not in request
        return
    assert request["deviceClassName"] == "mig.nvidia.com"
    assert request["selectors"] == [{"cel": {"expression": f"device.attributes['gpu.nvidia.com'].profile == '{profile}'"}}]
    assert f"a MIG {profile} slice" in finding.fix.title


@pytest.mark.parametrize("node, said", [
    ({"nodeSelector": {"nvidia.com/gpu.product": "Tesla-T4-SHARED"}}, "nvidia.com/gpu.product=Tesla-T4-SHARED"),
    ({"nodeSelector": {"nvidia.com/gpu.product": "A100-SXM4-40GB-MIG-1g.5gb-SHARED"}}, "-SHARED"),
    # GKE's label names the strategy: one shared claim instead (test_shared_gpu_migration)
    (_affinity("nvidia.com/gpu.replicas", ["4"]), "nvidia.com/gpu.replicas=4"),
])
def test_a_gpu_that_is_a_shared_replica_gets_no_whole_gpu_claim(node, said):
    """Where time-slicing or MPS replicas keep the name nvidia.com/gpu, the node labels say so
    (GFD appends -SHARED to the product; GKE labels its sharing strategy): a claim template
    would give every pod a whole GPU of its own (ten pods sharing two GPUs, unschedulable)."""
    [finding] = findings([_selecting(node)], "legacy-gpu-resource")
    assert finding.fix is None and "is a shared replica" in finding.no_fix and said in finding.no_fix


@pytest.mark.parametrize("shares, said", [
    ({"nvidia.com/gpumem": 3000, "nvidia.com/gpucores": 30}, "nvidia.com/gpumem, nvidia.com/gpucores: HAMi"),
    ({"nvidia.com/gpumem-percentage": 50}, "nvidia.com/gpumem-percentage: HAMi"),
])
def test_a_gpu_shared_by_a_scheduler_extension_gets_no_whole_gpu_claim(shares, said):
    """HAMi's own example: nvidia.com/gpu counts the GPUs a container shares, gpumem and
    gpucores its share of each; a whole-GPU claim would give it every GPU whole and leave the
    share asked of a scheduler that no longer places it."""
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "gpu-pod"}, "spec": {"containers": [{
        "name": "c", "image": "ubuntu", "resources": {"limits": {"nvidia.com/gpu": 1, **shares}}}]}}
    [finding] = findings([pod], "legacy-gpu-resource")
    assert finding.fix is None and said in finding.no_fix and "a claim of whole GPUs" in finding.no_fix
    pod["spec"]["containers"][0]["resources"]["limits"] = {"nvidia.com/gpu": 1}
    [plain_gpu] = findings([pod], "legacy-gpu-resource")
    assert plain_gpu.fix is not None


KNATIVE_SERVICE = """
    apiVersion: serving.knative.dev/v1
    kind: Service
    metadata: {name: llm, namespace: ml}
    spec:
      template:
        spec:
          containers:
          - name: server
            image: vllm/vllm-openai
            resources: {limits: {nvidia.com/gpu: 1}}
    """


def test_no_fix_writes_what_knative_serving_refuses_in_its_pod_specs():
    """Knative's webhook keeps only limits and requests of a container's resources and no
    pod resourceClaims (knative/serving fieldmask.go): the claim migration would be refused
    at apply, so there is none, and the reason names the strategy that works there."""
    [legacy] = findings(docs(KNATIVE_SERVICE), "legacy-gpu-resource")
    assert legacy.fix is None
    assert legacy.no_fix.startswith("Knative Serving refuses resourceClaims in its pod specs")
    assert "--strategy extended-resource" in legacy.no_fix
    config = Config()
    config.rules["legacy-gpu-resource"] = RuleSettings(options={"strategy": "extended-resource"})
    [bridged] = [f for f in lint_objects(docs(KNATIVE_SERVICE), config).findings if f.rule == "legacy-gpu-resource"]
    assert [d["kind"] for d in fixed(docs(KNATIVE_SERVICE), bridged)] == ["Service", "DeviceClass"]


INFERENCE_SERVICE = """
    apiVersion: serving.kserve.io/v1beta1
    kind: InferenceService
    metadata: {{name: llm, namespace: ml{annotations}}}
    spec:
      predictor:
        containers:
        - name: kserve-container
          image: vllm/vllm-openai
          resources: {{limits: {{nvidia.com/gpu: 1}}}}
    """


@pytest.mark.parametrize("mode, migrated", [
    ("Knative", False), ("serverless", False),  # Serverless is the name before KServe 0.15
    ("Standard", True), ("RawDeployment", True),
    (None, True),  # the cluster's default: unknown here
])
def test_an_inference_service_in_knative_mode_gets_what_knative_keeps(mode, migrated):
    """In Knative mode KServe runs the predictor as a Knative Service, whose field mask keeps no
    claims: the migration would be refused there, so it is offered only where the mode is not
    Knative by the object's own annotation."""
    annotations = f", annotations: {{serving.kserve.io/deploymentMode: {mode}}}" if mode else ""
    [legacy] = findings(docs(INFERENCE_SERVICE.format(annotations=annotations)), "legacy-gpu-resource")
    assert (legacy.fix is not None) is migrated
    if not migrated:
        assert legacy.no_fix.startswith("KServe in Knative mode (serving.kserve.io/deploymentMode")
        assert "refuses resourceClaims in its pod specs" in legacy.no_fix


def test_the_knative_field_mask_matches_each_container_and_nothing_beside_it():
    from draguard.model.workloads import KNATIVE_SERVING

    assert KNATIVE_SERVING.refusal(("containers", 2, "lifecycle", "preStop"))
    assert KNATIVE_SERVING.refusal(("containers", 0, "resources", "claims"))
    assert KNATIVE_SERVING.refusal(("containers", 0, "resources", "limits")) is None
    assert KNATIVE_SERVING.refusal(("containers", "x", "lifecycle")) is None
    assert KNATIVE_SERVING.refusal(("volumes", 0, "emptyDir", "sizeLimit")) is None
