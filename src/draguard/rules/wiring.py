"""claim-wiring: pods, containers and claims must reference each other correctly."""

from __future__ import annotations

from ..findings import Severity
from ..model.claims import ClaimIndex, request_names
from ..model.workloads import POD_KINDS, pod_sites
from .base import Rule, register
from .examples import COMPLIANT_POD

_SOURCES = ("resourceClaimName", "resourceClaimTemplateName")


def pod_claims(site) -> list[dict]:
    claims = site.spec.get("resourceClaims")
    return [c for c in claims if isinstance(c, dict)] if isinstance(claims, list) else []


def container_claims(c) -> list[dict]:
    claims = c.resources.get("claims")
    return [x for x in claims if isinstance(x, dict)] if isinstance(claims, list) else []


def _claim_index(objects) -> ClaimIndex:
    return ClaimIndex.build(objects)


def referenced_object(ctx, namespace: str, entry: dict):
    """The claim or template a pod claim entry names, from the set (None if absent)."""
    index = ctx.memo("claim-index", _claim_index)
    if isinstance(entry.get("resourceClaimName"), str):
        return index.claim(namespace, entry["resourceClaimName"])
    if isinstance(entry.get("resourceClaimTemplateName"), str):
        return index.template(namespace, entry["resourceClaimTemplateName"])
    return None


@register
class ContainerClaimUndefined(Rule):
    id = "claim-name-undefined"
    name = "Container uses a claim the pod does not define"
    category = "claim-wiring"
    severity = Severity.ERROR
    kinds = POD_KINDS
    summary = "A container's resources.claims[].name names no entry of the pod's spec.resourceClaims."
    rationale = """
        The API server rejects the pod ("must be the name of an entry in
        pod.spec.resourceClaims"); in a Deployment the ReplicaSet simply never creates pods."""
    reference = "https://kubernetes.io/docs/concepts/scheduling-eviction/dynamic-resource-allocation/#resourceclaims-and-resourceclaimtemplates"
    noncompliant = """
        apiVersion: v1
        kind: Pod
        metadata: {name: inference}
        spec:
          resourceClaims:
          - {name: gpu, resourceClaimTemplateName: mig-1g}
          containers:
          - name: server
            image: vllm/vllm-openai
            resources: {claims: [{name: gpus}]}
        """
    compliant = COMPLIANT_POD

    def check(self, obj, ctx):
        for site in pod_sites(obj):
            defined = {c.get("name") for c in pod_claims(site)}
            for c in site.containers:
                for claim in container_claims(c):
                    if claim.get("name") not in defined:
                        yield ctx.finding(self, obj, f"container '{c.name}' uses claim '{claim.get('name')}', which "
                                          f"spec.resourceClaims does not define (defined: "
                                          f"{', '.join(sorted(map(str, defined))) or 'none'})", claim, "name",
                                          value=True)


@register
class ContainerRequestUndefined(Rule):
    id = "claim-request-undefined"
    name = "Container names a request the claim does not have"
    category = "claim-wiring"
    severity = Severity.ERROR
    kinds = POD_KINDS
    summary = "resources.claims[].request names no request (or subrequest) of the claim or template."
    rationale = """
        A container may limit itself to one request of a claim. A name that the claim does
        not define leaves the container without the device (or the pod is rejected, depending
        on the release). Checked when the claim or template is in the linted set."""
    reference = "https://kubernetes.io/docs/concepts/scheduling-eviction/dynamic-resource-allocation/"
    noncompliant = COMPLIANT_POD.replace("claims: [{name: gpu}]", "claims: [{name: gpu, request: gpu-0}]")
    compliant = COMPLIANT_POD.replace("claims: [{name: gpu}]", "claims: [{name: gpu, request: gpu}]")

    def check(self, obj, ctx):
        for site in pod_sites(obj):
            entries = {c.get("name"): c for c in pod_claims(site)}
            for c in site.containers:
                for claim in container_claims(c):
                    request = claim.get("request")
                    entry = entries.get(claim.get("name"))
                    if not request or entry is None:
                        continue
                    target = referenced_object(ctx, obj.namespace, entry)
                    if target is None or target.kind == "ComputeDomain":
                        continue
                    names = request_names(target)
                    if request not in names:
                        yield ctx.finding(self, obj, f"container '{c.name}' asks for request '{request}' of "
                                          f"{target.kind} '{target.name}', which has {', '.join(sorted(names)) or 'none'}",
                                          claim, "request", value=True)


@register
class PodClaimSource(Rule):
    id = "pod-claim-source"
    name = "Pod claim must name exactly one source"
    category = "claim-wiring"
    severity = Severity.ERROR
    kinds = POD_KINDS
    summary = "A spec.resourceClaims entry sets neither or both of resourceClaimName and resourceClaimTemplateName."
    rationale = """
        Exactly one of the two must be set: a shared, pre-created ResourceClaim
        (`resourceClaimName`) or a per-pod claim generated from a template
        (`resourceClaimTemplateName`). The API server rejects anything else. (The old
        `source:` wrapper is reported by `api-removed`.)"""
    reference = "https://kubernetes.io/docs/reference/kubernetes-api/workload-resources/pod-v1/#resources"
    noncompliant = COMPLIANT_POD.replace("{name: gpu, resourceClaimTemplateName: mig-1g}", "{name: gpu}")
    compliant = COMPLIANT_POD

    def check(self, obj, ctx):
        for site in pod_sites(obj):
            for entry in pod_claims(site):
                if "source" in entry:
                    continue
                count = sum(1 for key in _SOURCES if entry.get(key))
                if count != 1:
                    what = "both" if count == 2 else "neither of"
                    yield ctx.finding(self, obj, f"pod claim '{entry.get('name')}' sets {what} resourceClaimName and "
                                      "resourceClaimTemplateName; exactly one is required", entry, "name")


@register
class ClaimReferenceMissing(Rule):
    id = "claim-reference-missing"
    name = "Referenced claim or template is not defined"
    category = "claim-wiring"
    severity = Severity.ERROR
    kinds = POD_KINDS
    summary = "The ResourceClaim or ResourceClaimTemplate a pod names is not in the linted set (same namespace)."
    rationale = """
        A pod whose claim does not exist stays Pending forever ("waiting for resource claim").
        Declare claims that are created elsewhere under `external` in `.draguard.yaml`.
        NVIDIA ComputeDomains count as defining the template they create
        (`spec.channel.resourceClaimTemplate.name`)."""
    reference = "https://kubernetes.io/docs/concepts/scheduling-eviction/dynamic-resource-allocation/"
    noncompliant = COMPLIANT_POD.replace("resourceClaimTemplateName: mig-1g}", "resourceClaimTemplateName: mig-2g}")
    compliant = COMPLIANT_POD

    def check(self, obj, ctx):
        for site in pod_sites(obj):
            for entry in pod_claims(site):
                for key, what, external in (("resourceClaimName", "ResourceClaim", "resourceClaims"),
                                            ("resourceClaimTemplateName", "ResourceClaimTemplate",
                                             "resourceClaimTemplates")):
                    name = entry.get(key)
                    if not isinstance(name, str) or not name:
                        continue
                    if referenced_object(ctx, obj.namespace, {key: name}) is None and \
                            not ctx.config.is_external(external, name, obj.namespace):
                        ns = f" in namespace '{obj.namespace}'" if obj.namespace else ""
                        yield ctx.finding(self, obj, f"{what} '{name}'{ns} is not in the linted set; the pod would "
                                          f"stay Pending (declare it under external.{external} if it is created "
                                          "elsewhere)", entry, key, value=True)


@register
class PodClaimUnused(Rule):
    id = "pod-claim-unused"
    name = "Pod claim used by no container"
    category = "claim-wiring"
    severity = Severity.WARNING
    kinds = POD_KINDS
    summary = "A spec.resourceClaims entry that no container or init container lists in resources.claims."
    rationale = """
        The device is allocated and held for the pod's lifetime, but no container gets it:
        a tenant blocks a slice it cannot use. Usually a typo or a forgotten
        `resources.claims` entry."""
    reference = "https://kubernetes.io/docs/concepts/scheduling-eviction/dynamic-resource-allocation/"
    noncompliant = COMPLIANT_POD.replace("claims: [{name: gpu}]", "claims: []")
    compliant = COMPLIANT_POD

    def check(self, obj, ctx):
        for site in pod_sites(obj):
            used = {claim.get("name") for c in site.containers for claim in container_claims(c)}
            for entry in pod_claims(site):
                if entry.get("name") not in used:
                    yield ctx.finding(self, obj, f"pod claim '{entry.get('name')}' is allocated but no container "
                                      "lists it in resources.claims", entry, "name")
