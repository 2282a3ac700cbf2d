"""claim-wiring: pods, containers and claims must reference each other correctly."""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from ..core.finding import Finding, Severity
from ..dra.apivalidation import dns_label, dns_subdomain, name_problems
from ..model.claims import RESOURCE_GROUP, request_names
from ..model.pods import named, pod_sites, text
from ..model.values import YamlMap
from ..model.workloads import POD_TARGETS, WORKLOADS
from .admission import SPEC_CONTAINERS
from .base import Admission, Needs, Rule
from .examples import COMPLIANT_POD
from .registry import register

if TYPE_CHECKING:
    from ..model.manifest import Manifest
    from ..model.pods import ContainerSite
    from .context import Context

_SOURCES = ("resourceClaimName", "resourceClaimTemplateName")


@register
class ContainerClaimUndefined(Rule):
    id = "claim-name-undefined"
    name = "Container uses a claim the pod does not define"
    category = "claim-wiring"
    severity = Severity.ERROR
    targets = POD_TARGETS
    admission = Admission(
        f"{SPEC_CONTAINERS}.all(c, !has(c.resources) || !has(c.resources.claims) || "
        "c.resources.claims.all(r, has(s.resourceClaims) && s.resourceClaims.exists(p, has(p.name) && "
        "has(r.name) && p.name == r.name)))",
        "a container uses a claim that spec.resourceClaims does not define", over="podSpecs")
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

    def check(self, obj: Manifest, ctx: Context) -> Iterator[Finding]:
        for site in pod_sites(obj):
            if not site.spec:
                # a CRD's container-like object (Argo, NIM, TrainJob) and no pod spec: its
                # operator writes the pod's resourceClaims (NIM's draResources, Argo's
                # podSpecPatch), which the object does not show; the policy judges pod specs
                continue
            defined = {text(c.get("name")) for c in site.claims}
            for c in site.containers:
                for claim in c.claims:
                    if text(claim.get("name")) not in defined or not text(claim.get("name")):
                        yield ctx.finding(self, obj, f"{c.label} uses {named('claim', claim.get('name'))}, which "
                                          f"spec.resourceClaims does not define (defined: "
                                          f"{', '.join(sorted(n for n in defined if n)) or 'none'})", claim, "name",
                                          value=True)


@register
class ContainerRequestUndefined(Rule):
    id = "claim-request-undefined"
    name = "Container names a request the claim does not have"
    category = "claim-wiring"
    severity = Severity.ERROR
    targets = POD_TARGETS
    needs = Needs.OBJECT_SET
    summary = "resources.claims[].request names no request of the claim or template."
    rationale = """
        A container may limit itself to one request of a claim. A name that the claim does
        not define leaves the container without the device (or the pod is rejected, depending
        on the release). A request with `firstAvailable` is named by its own name: the
        allocation picks the subrequest, and `request/subrequest` is no DNS label (the API
        server refuses it, pod-claim-invalid). Checked when the claim or template is in the
        linted set."""
    reference = "https://kubernetes.io/docs/concepts/scheduling-eviction/dynamic-resource-allocation/"
    noncompliant = COMPLIANT_POD.replace("claims: [{name: gpu}]", "claims: [{name: gpu, request: gpu-0}]")
    compliant = COMPLIANT_POD.replace("claims: [{name: gpu}]", "claims: [{name: gpu, request: gpu}]")

    def check(self, obj: Manifest, ctx: Context) -> Iterator[Finding]:
        for site in pod_sites(obj):
            entries = {text(c.get("name")): c for c in site.claims}
            for c in site.containers:
                for claim in c.claims:
                    request = claim.get("request")
                    entry = entries.get(text(claim.get("name")))
                    if not request or entry is None:
                        continue
                    target = ctx.objects.claims.referenced(obj.namespace, entry, site.generated_claims)
                    if target is None or target.kind == "ComputeDomain":
                        continue
                    names = request_names(target)
                    if not isinstance(request, str) or request not in names:
                        yield ctx.finding(self, obj, f"{c.label} asks for request '{request}' of "
                                          f"{target.kind} '{target.name}', which has {', '.join(sorted(names)) or 'none'}",
                                          claim, "request", value=True)


@register
class PodClaimSource(Rule):
    id = "pod-claim-source"
    name = "Pod claim must name exactly one source"
    category = "claim-wiring"
    severity = Severity.ERROR
    targets = POD_TARGETS
    admission = Admission(
        "!has(s.resourceClaims) || s.resourceClaims.all(c, has(c.source) || "
        "((has(c.resourceClaimName) && c.resourceClaimName != '') != "
        "(has(c.resourceClaimTemplateName) && c.resourceClaimTemplateName != '')))",
        "a pod claim must set exactly one of resourceClaimName and resourceClaimTemplateName", over="podSpecs")
    summary = "A spec.resourceClaims entry sets neither or both of resourceClaimName and resourceClaimTemplateName."
    rationale = """
        Exactly one of the two must be set: a shared, pre-created ResourceClaim
        (`resourceClaimName`) or a per-pod claim generated from a template
        (`resourceClaimTemplateName`). The API server rejects anything else. (The old
        `source:` wrapper is reported by `api-removed`.)"""
    reference = "https://kubernetes.io/docs/reference/kubernetes-api/workload-resources/pod-v1/#resources"
    noncompliant = COMPLIANT_POD.replace("{name: gpu, resourceClaimTemplateName: mig-1g}", "{name: gpu}")
    compliant = COMPLIANT_POD

    def check(self, obj: Manifest, ctx: Context) -> Iterator[Finding]:
        for site in pod_sites(obj):
            for entry in site.claims:
                if "source" in entry:
                    continue
                count = sum(1 for key in _SOURCES if entry.get(key))
                if count != 1:
                    what = "both" if count == 2 else "neither of"
                    yield ctx.finding(self, obj, f"{named('pod claim', entry.get('name'))} sets {what} resourceClaimName and "
                                      "resourceClaimTemplateName; exactly one is required", entry, "name")


@register
class PodClaimInvalid(Rule):
    id = "pod-claim-invalid"
    name = "Pod claim fields the API server rejects"
    category = "claim-wiring"
    severity = Severity.ERROR
    targets = POD_TARGETS
    lint_only = "the API server validates the pod spec before admission and refuses it"
    summary = ("A pod claim's name is not a unique DNS label, the claim or template it names is not a DNS "
               "subdomain, a container lists one claim (or request) twice, or pod-level resources list claims.")
    rationale = """
        Mirrors kubernetes v1.37.2 pkg/apis/core/validation (validatePodResourceClaims,
        validateResourceClaimNames): spec.resourceClaims names are unique DNS labels, the
        ResourceClaim or template each names is a DNS subdomain; in a container's
        resources.claims each claim appears once, whole or by distinct requests (a whole
        claim already covers its requests), and each request is a DNS label; pod-level
        `resources` takes no claims. A Deployment
        with such a template is accepted, and its ReplicaSet then never creates a pod."""
    reference = "https://kubernetes.io/docs/reference/kubernetes-api/workload-resources/pod-v1/#resources"
    noncompliant = COMPLIANT_POD.replace("claims: [{name: gpu}]", "claims: [{name: gpu}, {name: gpu}]")
    compliant = COMPLIANT_POD

    def check(self, obj: Manifest, ctx: Context) -> Iterator[Finding]:
        for site in pod_sites(obj):
            seen: set[str] = set()
            for entry in site.claims:
                name = entry.get("name")
                problem = "is required" if name is None or name == "" else dns_label(name) if isinstance(name, str) \
                    else None
                if problem:
                    yield ctx.finding(self, obj, f"{named('pod claim', name)}: its name {problem}", entry,
                                      "name" if "name" in entry else None, value="name" in entry)
                elif isinstance(name, str) and name in seen:
                    yield ctx.finding(self, obj, f"pod claim '{name}' is defined twice", entry, "name", value=True)
                if isinstance(name, str):
                    seen.add(name)
                for key in _SOURCES:
                    for refused in name_problems(entry, key, key, dns_subdomain):
                        yield ctx.finding(self, obj, refused.message, entry, key, value=True)
            pod_resources = site.spec.get("resources")
            if isinstance(pod_resources, dict) and "claims" in pod_resources:
                yield ctx.finding(self, obj, "claims may not be set in pod-level resources: list them in each "
                                  "container's resources.claims", pod_resources, "claims")
            for container in site.containers:
                yield from self._container_claims(obj, ctx, container)

    def _container_claims(self, obj: Manifest, ctx: Context, container: ContainerSite) -> Iterator[Finding]:
        listed: set[str] = set()
        for entry in container.claims:
            name, request = entry.get("name"), entry.get("request")
            problem = dns_label(request) if isinstance(request, str) and request else None
            if problem:
                yield ctx.finding(self, obj, f"{container.label} asks for request {request!r}, which {problem}",
                                  entry, "request", value=True)
            if not isinstance(name, str) or not name:
                continue  # claim-name-undefined
            key = f"{name}/{request}" if isinstance(request, str) and request else name
            if key in listed or (key != name and name in listed) or \
                    (key == name and any(k.startswith(f"{name}/") for k in listed)):
                yield ctx.finding(self, obj, f"{container.label} lists claim '{key}' twice (a whole claim covers "
                                  "its requests)", entry, "name", value=True)
            listed.add(key)


#: the built-in kinds whose pod specs kustomize's field specs reach (group, kind)
_KUSTOMIZE_POD_KINDS = (("", "Pod"), ("apps", "Deployment"), ("apps", "StatefulSet"), ("apps", "DaemonSet"),
                        ("batch", "Job"), ("batch", "CronJob"))


def _pod_spec_path(group: str, kind: str) -> str:
    """Where the workload table says the kind holds its pod spec, as a kustomize field path."""
    workload = next(w for w in WORKLOADS if (w.group, w.kind) == (group, kind))
    dotted = workload.pod_specs[0] if workload.pod_specs else workload.templates[0] + ".spec"
    return dotted.replace(".", "/")


def _name_references() -> str:
    """The kustomize configuration that makes namePrefix/nameSuffix rewrite the pods' names of
    their ResourceClaimTemplates and ResourceClaims."""
    lines = ["nameReference:"]
    for kind, field in (("ResourceClaimTemplate", "resourceClaimTemplateName"), ("ResourceClaim", "resourceClaimName")):
        lines += [f"- kind: {kind}", "  fieldSpecs:"]
        lines += [f"  - {{kind: {owner}, path: {_pod_spec_path(group, owner)}/resourceClaims/{field}}}"
                  for group, owner in _KUSTOMIZE_POD_KINDS]
    return "\n".join(lines) + "\n"


_NAME_REFERENCE_HELP = ("give the kustomization `configurations: [dra-names.yaml]` with a nameReference for "
                        "ResourceClaimTemplate and ResourceClaim: `draguard explain claim-reference-missing` "
                        "prints the file")


@register
class ClaimReferenceMissing(Rule):
    id = "claim-reference-missing"
    name = "Referenced claim or template is not defined"
    category = "claim-wiring"
    severity = Severity.ERROR
    targets = POD_TARGETS
    needs = Needs.OBJECT_SET
    summary = "The ResourceClaim or ResourceClaimTemplate a pod names is not in the linted set (same namespace)."
    admission_warns = ("the object may come right after the workload: Helm installs the kinds it does not know "
                       "(ResourceClaimTemplate among them) after Deployments, and `kubectl apply -f DIR` goes file by "
                       "file; the pods wait for it, and denying would fail those installs")
    rationale = """
        A pod whose claim does not exist stays Pending forever ("waiting for resource claim").
        Declare claims that are created elsewhere under `external` in `.draguard.yaml`.
        A live Pod (`kubectl get -o yaml`) whose `status.resourceClaimStatuses` names the
        claim generated for an entry is not waiting for it, whatever else the set holds.
        NVIDIA ComputeDomains count as defining the template they create
        (`spec.channel.resourceClaimTemplate.name`). Kustomize renames objects with
        `namePrefix` and `nameSuffix` and rewrites the references it knows, but it knows none
        for DRA kinds (kustomize 5.8, `nameReference` in its builtin config): built, the pod
        still names the template's old name. The finding then names the renamed template;
        the file below teaches kustomize those references."""
    remedy_file = ("`dra-names.yaml`, named in the kustomization as `configurations: [dra-names.yaml]`:",
                   _name_references())
    reference = "https://kubernetes.io/docs/concepts/scheduling-eviction/dynamic-resource-allocation/"
    noncompliant = COMPLIANT_POD.replace("resourceClaimTemplateName: mig-1g}", "resourceClaimTemplateName: mig-2g}")
    compliant = COMPLIANT_POD

    def check(self, obj: Manifest, ctx: Context) -> Iterator[Finding]:
        for site in pod_sites(obj):
            for entry in site.claims:
                if text(entry.get("name")) in site.generated_claims:
                    continue  # a live pod whose claim was generated (or found not needed): nothing is pending
                for key, what, external in (("resourceClaimName", "ResourceClaim", "resourceClaims"),
                                            ("resourceClaimTemplateName", "ResourceClaimTemplate",
                                             "resourceClaimTemplates")):
                    name = entry.get(key)
                    if not isinstance(name, str) or not name:
                        continue
                    if ctx.objects.claims.referenced(obj.namespace, {key: name}) is None and \
                            not ctx.config.is_external(external, name, obj.namespace):
                        yield self._missing(obj, ctx, entry, key, what, name, external)

    def _missing(self, obj: Manifest, ctx: Context, entry: YamlMap, key: str, what: str, name: str,
                 external: str) -> Finding:
        renamed = next((m.name for m in ctx.objects.of_kind(RESOURCE_GROUP, what, obj.namespace)
                        if m.renamed_from == name), None)
        if renamed is not None:
            return ctx.finding(self, obj, f"{what} '{name}' was renamed '{renamed}' by the kustomization's "
                               f"namePrefix/nameSuffix, but kustomize does not rewrite {key} (it has no name "
                               "reference for DRA kinds): the pod would stay Pending", entry, key, value=True,
                               help=_NAME_REFERENCE_HELP)
        ns = f" in namespace '{obj.namespace}'" if obj.namespace else ""
        return ctx.finding(self, obj, f"{what} '{name}'{ns} is not in the linted set; the pod would stay Pending "
                           f"(declare it under external.{external} if it is created elsewhere)", entry, key,
                           value=True)


@register
class PodClaimUnused(Rule):
    id = "pod-claim-unused"
    name = "Pod claim used by no container"
    category = "claim-wiring"
    severity = Severity.WARNING
    targets = POD_TARGETS
    admission = Admission(
        "!has(s.resourceClaims) || s.resourceClaims.all(p, "
        f"{SPEC_CONTAINERS}.exists(c, has(c.resources) && has(c.resources.claims) && "
        "c.resources.claims.exists(r, has(r.name) && has(p.name) && r.name == p.name)))",
        "a pod claim is allocated but no container lists it in resources.claims", over="podSpecs")
    summary = "A spec.resourceClaims entry that no container or init container lists in resources.claims."
    rationale = """
        The device is allocated and held for the pod's lifetime, but no container gets it:
        a tenant blocks a slice it cannot use. Usually a typo or a forgotten
        `resources.claims` entry."""
    reference = "https://kubernetes.io/docs/concepts/scheduling-eviction/dynamic-resource-allocation/"
    noncompliant = COMPLIANT_POD.replace("claims: [{name: gpu}]", "claims: []")
    compliant = COMPLIANT_POD

    def check(self, obj: Manifest, ctx: Context) -> Iterator[Finding]:
        for site in pod_sites(obj):
            used = {text(claim.get("name")) for c in site.containers for claim in c.claims}
            for entry in site.claims:
                if text(entry.get("name")) not in used or not text(entry.get("name")):
                    yield ctx.finding(self, obj, f"{named('pod claim', entry.get('name'))} is allocated but no container "
                                      "lists it in resources.claims", entry, "name")
