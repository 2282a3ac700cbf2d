"""isolation: one tenant must not reach another tenant's devices."""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from ..core.finding import Finding, Severity
from ..model.claims import CLAIM_TARGETS, DEVICE_CLASS_TARGETS, device_requests
from ..dra.gpuclasses import is_gpu_class
from ..model.pods import pod_sites
from ..model.workloads import replica_count
from .base import Admission, Needs, Rule
from .examples import COMPLIANT_DEPLOYMENT, COMPLIANT_POD, resource_claim
from .registry import register

if TYPE_CHECKING:
    from ..model.manifest import Manifest
    from .context import Context

ADMIN_LABEL = "resource.kubernetes.io/admin-access"


@register
class AdminAccessNamespace(Rule):
    id = "admin-access-namespace"
    name = "adminAccess outside an admin namespace"
    category = "isolation"
    severity = Severity.ERROR
    targets = CLAIM_TARGETS
    needs = Needs.OBJECT_SET  # the Namespace and its label
    summary = "A request sets adminAccess: true in a namespace not labelled for admin access."
    rationale = """
        adminAccess grants a device that is already allocated to someone else (for
        monitoring or debugging), bypassing the allocator's isolation. Upstream
        (DRAAdminAccess) only admits it in namespaces labelled
        `resource.kubernetes.io/admin-access: "true"`. draguard checks that label when the
        Namespace is in the linted set, and otherwise requires the namespace to be listed
        under `adminNamespaces` in `.draguard.yaml`."""
    reference = "https://kubernetes.io/docs/concepts/scheduling-eviction/dynamic-resource-allocation/#admin-access"
    noncompliant = COMPLIANT_POD.replace("count: 1\n", "count: 1\n              adminAccess: true\n")
    compliant = COMPLIANT_POD

    def check(self, obj: Manifest, ctx: Context) -> Iterator[Finding]:
        for request in device_requests(obj):
            if not request.admin_access:
                continue
            namespace = ctx.objects.namespace(obj.namespace)
            if namespace is not None:
                if str(namespace.labels.get(ADMIN_LABEL)).lower() == "true":
                    continue
                why = f"Namespace '{obj.namespace}' is not labelled {ADMIN_LABEL}: \"true\""
            elif obj.namespace and obj.namespace in ctx.config.admin_namespaces:
                continue
            else:
                why = f"namespace '{obj.namespace}' is not an admin namespace" if obj.namespace else \
                    "the object sets no namespace, so draguard cannot tell that it goes to an admin namespace"
            yield ctx.finding(self, obj, f"request '{request.full_name}' sets adminAccess: true but {why}",
                              request.fields, "adminAccess")


@register
class AdminAccessLabel(Rule):
    id = "admin-access-label"
    name = "Namespace opened to admin access"
    category = "isolation"
    severity = Severity.ERROR
    targets = frozenset({("", "Namespace")})
    admission = Admission(
        f"object.metadata.name in variables.adminNamespaces || !has(object.metadata.labels) || "
        f"!('{ADMIN_LABEL}' in object.metadata.labels) || "
        f"string(object.metadata.labels['{ADMIN_LABEL}']).lowerAscii() != 'true'",
        "a Namespace labelled for DRA admin access is not an admin namespace")
    summary = "A Namespace labelled for DRA admin access that the config does not list as an admin namespace."
    rationale = """
        The label `resource.kubernetes.io/admin-access: "true"` lets every ResourceClaim in
        the namespace request admin access: access to devices other tenants hold. Whoever can
        create or label a namespace can grant it. In a tenant's manifests that label is an
        escalation; namespaces that really serve operators are listed under
        `adminNamespaces` in `.draguard.yaml`, and only those may carry it."""
    reference = "https://kubernetes.io/docs/concepts/scheduling-eviction/dynamic-resource-allocation/#admin-access"
    noncompliant = f"""
        apiVersion: v1
        kind: Namespace
        metadata:
          name: team-a
          labels: {{{ADMIN_LABEL}: "true"}}
        """
    compliant = """
        apiVersion: v1
        kind: Namespace
        metadata:
          name: team-a
          labels: {team: a}
        """

    def check(self, obj: Manifest, ctx: Context) -> Iterator[Finding]:
        labels = obj.labels
        if str(labels.get(ADMIN_LABEL)).lower() == "true" and obj.name not in ctx.config.admin_namespaces:
            yield ctx.finding(self, obj, f"Namespace '{obj.name}' is labelled {ADMIN_LABEL}: \"true\", which lets "
                              "its claims reach devices other tenants hold, but the config does not list it under "
                              "adminNamespaces", labels, ADMIN_LABEL,
                              help="remove the label, or list the namespace under adminNamespaces in .draguard.yaml")


@register
class DeviceClassNoSelectors(Rule):
    id = "deviceclass-no-selectors"
    name = "DeviceClass without selectors"
    category = "isolation"
    severity = Severity.WARNING
    targets = DEVICE_CLASS_TARGETS
    admission = Admission("has(object.spec) && has(object.spec.selectors) && size(object.spec.selectors) > 0",
                          "a DeviceClass without selectors matches every device of every driver")
    summary = "A DeviceClass with no selectors matches every device of every driver."
    rationale = """
        A class is the administrator's boundary around a kind of device. Without selectors it
        admits any device in the cluster (GPUs, NICs, MIG slices of any profile), so a
        request that names it can land on hardware it was never meant for."""
    reference = "https://kubernetes.io/docs/concepts/scheduling-eviction/dynamic-resource-allocation/#deviceclass"
    noncompliant = """
        apiVersion: resource.k8s.io/v1
        kind: DeviceClass
        metadata: {name: any-device}
        spec: {}
        """
    compliant = """
        apiVersion: resource.k8s.io/v1
        kind: DeviceClass
        metadata: {name: h100-mig}
        spec:
          selectors:
          - cel:
              expression: device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'mig'
        """

    def check(self, obj: Manifest, ctx: Context) -> Iterator[Finding]:
        spec = obj.data.get("spec")
        if not isinstance(spec, dict) or not spec.get("selectors"):
            yield ctx.finding(self, obj, f"DeviceClass '{obj.name}' has no selectors: it matches every device",
                              obj.data, "spec" if "spec" in obj.data else None)


@register
class SharedClaimReplicas(Rule):
    id = "shared-claim-replicas"
    name = "Replicas share one claim"
    category = "isolation"
    severity = Severity.WARNING
    targets = frozenset({("apps", "Deployment"), ("apps", "StatefulSet"), ("apps", "ReplicaSet"), ("batch", "Job"),
                         ("leaderworkerset.x-k8s.io", "LeaderWorkerSet")})
    needs = Needs.OBJECT_SET
    summary = "A workload of more than one pod whose pods reference one GPU ResourceClaim: every pod shares the device."
    rationale = """
        `resourceClaimName` names one pre-created claim; all pods are then reserved on the
        same device (and pinned to its node). Pods are counted as the controllers run them:
        replicas, a Job's parallelism, a LeaderWorkerSet's replicas times its group size. That is sharing, not scaling: memory and
        faults are shared, and replicas beyond the device's capacity cannot run. Use
        `resourceClaimTemplateName` so that each pod gets its own claim. Only claims of the
        linted set that request GPUs are checked: channels and NICs meant to be shared
        (IMEX compute-domain channels, for instance) are not flagged."""
    reference = "https://kubernetes.io/docs/concepts/scheduling-eviction/dynamic-resource-allocation/"
    noncompliant = COMPLIANT_DEPLOYMENT.replace("resourceClaimTemplateName: mig-1g", "resourceClaimName: shared-gpu") \
        + "---\n" + resource_claim("shared-gpu")
    compliant = COMPLIANT_DEPLOYMENT

    def check(self, obj: Manifest, ctx: Context) -> Iterator[Finding]:
        replicas = replica_count(obj)
        if replicas is None or replicas <= 1:
            return
        for site in pod_sites(obj):
            for entry in site.claims:
                if not isinstance(entry.get("resourceClaimName"), str):
                    continue
                claim = ctx.objects.claims.referenced(obj.namespace, entry)
                if claim is not None and any(is_gpu_class(ctx.objects, r.class_name) for r in device_requests(claim)):
                    yield ctx.finding(self, obj, f"all {replicas} pods share ResourceClaim "
                                      f"'{entry['resourceClaimName']}' (one allocation for every pod)", entry,
                                      "resourceClaimName", help="use resourceClaimTemplateName for a claim per pod")
