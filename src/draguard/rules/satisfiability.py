"""satisfiability: can a request ever be allocated?"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Iterator

# with the module, not once an object (an import there cost 2 us an object, 13,000 a lint of 20,000): the
# allocator and the CEL engine still load only for claims (cel.summary compiles a selector not seen before)
from ..cel.summary import all_compile
from ..core.finding import Finding, Severity
from ..dra.extended import asks_served, served_resources, special_claim_object
from ..facts.gates import gate_enabled
from ..model.claims import CLAIM_TARGETS, device_requests, requests_of
from ..dra.gpuclasses import is_gpu_class
from ..model.pods import mapping, pod_sites
from ..model.workloads import POD_TARGETS
from .base import Needs, Rule
from .examples import COMPLIANT_POD
from .registry import register

if TYPE_CHECKING:
    from ..dra.devices import Claim
    from ..dra.funnel import RequestExplanation
    from ..model.claims import DeviceRequest
    from ..model.manifest import Manifest
    from ..model.values import YamlMap

    #: (mapping, key) a finding on the scheduler's own claim points at: the container's resource
    Where = tuple[YamlMap, str]
    from .context import Context


def _hint(class_name: str, expression: str) -> str:
    if class_name == "gpu.nvidia.com" and "profile" in expression:
        return " (class gpu.nvidia.com selects only full GPUs; MIG slices are in class mig.nvidia.com)"
    if class_name == "mig.nvidia.com" and "memory" in expression:
        return " (a MIG slice's memory is that of its profile, e.g. 3g.40gb has 40Gi)"
    return ""


@register
class RequestUnsatisfiable(Rule):
    id = "request-unsatisfiable"
    name = "Request can never be satisfied"
    category = "satisfiability"
    severity = Severity.ERROR
    targets = CLAIM_TARGETS | POD_TARGETS
    needs = Needs.INVENTORY
    admission_warns = ("the cluster's devices change while the claim waits: a node pool that scales from zero gets "
                       "its node when a claim needs one (the cluster autoscaler), a driver publishes its slices after "
                       "it starts; denying would keep the autoscaler from ever adding the node")
    summary = ("No device of the inventory (or of the built-in GPU inventory) passes the request's class and selectors "
               "(a claim's, or that of the claim the scheduler makes for extended resources a DeviceClass serves).")
    rationale = """
        A claim that no device can satisfy leaves its pod Pending forever with the
        scheduler's bare "cannot allocate all claims". draguard runs the request through
        the allocator against `--inventory` (ResourceSlices, Nodes and allocated claims, e.g.
        from `draguard inventory generate`) or, by default, against a built-in inventory of
        every GPU model it knows (A100, A30, H100, H200, B200, whole GPUs and every MIG
        profile, as the NVIDIA driver publishes them), and names the class or selector
        that excluded every device. Against the built-in inventory only the selection counts (not the
        count or availability); against an inventory the whole claim must fit on one node.
        What cannot be judged is said as `info`, never as an error: requests for other
        vendors' GPUs and accelerators without an inventory (the built-in one is NVIDIA's). The
        allocator models every variant upstream may run (the experimental one's list-typed
        attributes, optional node operations, compatibility groups and derived attributes
        included) and follows the target release and `--feature-gates`: with
        DRADeviceBindingConditions on (1.36+), devices with binding conditions count; with
        DRAConsumableCapacity (1.36+), capacity requests take their share of a device and
        devices with allowMultipleAllocations are shared by claims. With
        DRAExtendedResource on (1.36+), a pod asking for an extended resource that a
        DeviceClass serves (`extendedResourceName`, or the implicit
        `deviceclass.resource.kubernetes.io/<class>`) is judged through the claim the scheduler
        makes for it on a node without that resource in its allocatable: one ExactCount
        request per container and resource, as kube-scheduler builds it."""
    reference = "https://kubernetes.io/docs/concepts/scheduling-eviction/dynamic-resource-allocation/"
    noncompliant = COMPLIANT_POD.replace("deviceClassName: mig.nvidia.com", "deviceClassName: gpu.nvidia.com")
    compliant = COMPLIANT_POD

    def check(self, obj: Manifest, ctx: Context) -> Iterator[Finding]:
        if (obj.group, obj.kind) not in CLAIM_TARGETS:
            yield from self._extended_resources(obj, ctx)
            return
        if not all_compile(e for r in device_requests(obj) for e in r.selectors):
            return  # cel-invalid says what is wrong; nothing can be judged about the claim
        sites = {r.full_name: r for r in device_requests(obj)}
        if ctx.judges_builtin:  # only what each request selects counts: no claim to build
            yield from self._against_builtin(obj, ctx, requests_of(obj), ctx.builtin_funnel, sites)
            return
        from ..dra.devices import ModelError, claim_from

        try:
            claim = claim_from(obj)
        except ModelError:
            return
        yield from self._judge(obj, ctx, claim, sites)

    def _extended_resources(self, obj: Manifest, ctx: Context) -> Iterator[Finding]:
        """The claim kube-scheduler makes for the pod's extended resources that DeviceClasses
        serve (dra.extended), judged as a claim; found at the first container that asks."""
        served = ctx.objects.extended_resource_classes
        if not served or not gate_enabled("DRAExtendedResource", ctx.kube_version, ctx.config.feature_gates):
            return  # no DeviceClass serves an extended resource: the scheduler makes no claim
        for site in pod_sites(obj):
            claim = special_claim_object(site.spec, served, f"{obj.name}-extended-resources", obj.namespace) \
                if site.path is not None and any(asks_served(c.resources, served) for c in site.containers) else None
            if claim is None:
                continue
            container, name = next((c, n) for c in site.containers for n in served_resources(c.container, served))
            resources = mapping(container.container.get("resources"))
            where = (mapping(resources.get("requests")) if name in mapping(resources.get("requests"))
                     else mapping(resources.get("limits")), name)
            if ctx.judges_builtin:  # only what each request selects counts, as for a claim: no device model
                yield from self._against_builtin(obj, ctx, requests_of(claim), ctx.builtin_funnel, {}, where)
                continue
            from ..dra.devices import claim_from

            yield from self._judge(obj, ctx, claim_from(claim), {}, where)

    def _judge(self, obj: Manifest, ctx: Context, claim: Claim, sites: dict[str, DeviceRequest],
               where: Where | None = None) -> Iterator[Finding]:
        """`claim` judged on the target (the built-in inventory judges requests alone: the callers'
        own branch, without the device model)."""
        target = ctx.satisfiability
        if target.is_builtin:  # the caller's (the webhook's), built once
            yield from self._against_builtin(obj, ctx, claim.requests, target.explain, sites, where)
            return
        from ..dra.explain import verdict

        result = verdict(target.allocator, claim, target.inventory.nodes)
        if result.satisfiable:
            return
        if result.budget_exceeded:
            yield ctx.finding(self, obj, f"could not decide on the inventory: {result.error}", *(where or ()),
                              severity=Severity.INFO)
            return
        reason = result.error or "; ".join(r.text() for r in result.requests)
        first = next((r for r in result.requests if r.emptied_at is not None), None)
        what = "the claim the scheduler makes for its extended resources" if where else "claim"
        yield self._finding(obj, ctx, sites, first, f"{what} cannot be allocated on the inventory: {reason}", where)

    def _against_builtin(self, obj: Manifest, ctx: Context, requests: list[DeviceRequest],
                         funnel: Callable[[DeviceRequest, str], RequestExplanation],
                         sites: dict[str, DeviceRequest], where: Where | None = None) -> Iterator[Finding]:
        """Only selection counts here (`funnel`: a request's against the built-in inventory).
        A class that keeps no built-in device is for hardware
        the built-in inventory does not model: said out loud for other vendors' GPUs and accelerators,
        quiet for NICs and channels (no tenant slicing to judge there)."""
        for request in requests:
            options = request.leaves()
            explained = [funnel(option, option.full_name) for option in options]
            unjudged = next((e for e in explained if e.unjudged), None)
            if unjudged is not None:  # the engine's limit, not the request's: upstream may well allocate it
                yield self._finding(obj, ctx, sites, unjudged, f"not judged: {unjudged.unjudged[0]}", where,
                                    severity=Severity.INFO)
                continue
            if all(_excluded_by_class(e) for e in explained):
                not_modelled = [o.class_name for o in options
                                if o.class_name is not None and is_gpu_class(ctx.objects, o.class_name)]
                if not_modelled:
                    yield self._finding(obj, ctx, sites, explained[0], (
                        f"not judged: the built-in GPU inventory (NVIDIA GPUs and their MIG slices) has no device of class "
                        f"{', '.join(sorted(set(not_modelled)))}; pass --inventory with the driver's ResourceSlices "
                        "to check this request"), where, severity=Severity.INFO)
                continue
            emptying = [i for e in explained if (i := _emptying_selector(e)) is not None]
            if len(emptying) == len(explained):
                for option, e, i in zip(options, explained, emptying):
                    hint = _hint(option.class_name or "", option.selectors[i])
                    yield self._finding(obj, ctx, sites, e, f"no GPU of the built-in inventory can satisfy it: {e.text()}{hint}",
                                        where)

    def _finding(self, obj: Manifest, ctx: Context, sites: dict[str, DeviceRequest],
                 explanation: RequestExplanation | None, message: str, where: Where | None = None,
                 severity: Severity | None = None) -> Finding:
        """At the request's selector or class in a claim; at `where` (container, resource)
        for the scheduler's claim; else at the object."""
        site = sites.get(explanation.request) if explanation else None
        if site is None or explanation is None:
            return ctx.finding(self, obj, message, *(where or ()), severity=severity)
        stage = explanation.emptied_at
        if stage is not None and stage.selector is not None:
            cel_sites = site.selector_sites
            if stage.selector < len(cel_sites) and cel_sites[stage.selector][0]:
                return ctx.finding(self, obj, message, cel_sites[stage.selector][0], "expression", value=True,
                                   severity=severity)
        return ctx.finding(self, obj, message, site.fields, "deviceClassName" if "deviceClassName" in site.fields
                           else None, value="deviceClassName" in site.fields, severity=severity)


def _excluded_by_class(explanation: RequestExplanation) -> bool:
    """The class (its driver or its own selectors) keeps no built-in device."""
    stage = explanation.emptied_at
    return stage is not None and stage.selector is None


def _emptying_selector(explanation: RequestExplanation) -> int | None:
    """The index of the request's own selector that dropped every built-in device the class
    kept, else None."""
    stage = explanation.emptied_at
    return stage.selector if stage is not None else None
