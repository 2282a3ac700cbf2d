"""rollout: rollouts and disruptions must never need more devices than the pool has."""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from ..core.finding import Finding, Severity
from ..core.fixes import Applicability, Fix, FixAvailability, add_document, remove, set_value
from ..core.intstr import is_zero, problem as intstr_problem, scaled_value
from ..core.selectors import matches
from ..facts.gates import gate_enabled
from ..model.objectset import BOTH_BUDGETS, budget_problems, pdb_selector
from ..model.gpu import LEGACY_RESOURCE, legacy_resources
from ..model.pods import claim_sites, mapping, pod_sites
from ..model.rollout import (DAEMONSET_DEFAULT_MAX_SURGE, DAEMONSET_DEFAULT_MAX_UNAVAILABLE, DEFAULT_MAX_SURGE,
                             DEFAULT_MAX_UNAVAILABLE, Strategy, statefulset_update_problems)
from ..model.values import Yaml, YamlMap
from ..model.workloads import replica_count
from ..model.manifest import edit_path
from ..sources.yamlpos import path_of
from .base import Admission, Needs, Option, Profile, Rule
from .examples import COMPLIANT_DEPLOYMENT, DAEMONSET_EXAMPLE, replace_last
from .registry import register

if TYPE_CHECKING:
    from ..model.manifest import Manifest
    from .context import Context

_DEPLOYMENT = frozenset({("apps", "Deployment")})
#: strategy types beside which the API server refuses a rollingUpdate (a DaemonSet's OnDelete takes one)
_NOT_ROLLING = {"Deployment": ("Recreate",), "StatefulSet": ("OnDelete",)}


def _no_surge(strategy: Strategy) -> Fix | None:
    """maxSurge 0, maxUnavailable 1: a device is released before one is claimed."""
    base = path_of(strategy.spec, "strategy")
    if base is None:
        return None
    edits = [set_value(base + ("rollingUpdate", "maxSurge"), 0),
             set_value(base + ("rollingUpdate", "maxUnavailable"), 1)]
    if mapping(strategy.spec.get("strategy")).get("type") not in (None, "RollingUpdate"):
        edits.append(set_value(base + ("type",), "RollingUpdate"))
    return Fix("roll out with maxSurge: 0, maxUnavailable: 1", Applicability.UNSAFE, tuple(edits))


def _surge_place(strategy: Strategy) -> tuple[YamlMap, str | None]:
    """Where a finding about the rollout points: maxSurge, else the strategy, else the spec."""
    rolling, spec = strategy.rolling, strategy.spec
    return (rolling, "maxSurge") if "maxSurge" in rolling else (spec, "strategy") if "strategy" in spec else (spec, None)


def _simulated(ctx: Context) -> bool:
    """With an inventory (not in an audit's snapshot), rollout-deadlock simulates the rollout
    and rollout-surge's heuristic stands down."""
    return ctx.inventory is not None and ctx.cluster is None


#: CEL: a container (`c`) asks for a device-plugin accelerator (model.gpu.LEGACY_RESOURCE)
_PLUGIN_GPU = " || ".join(
    f"(has(c.resources) && has(c.resources.{section}) && "
    f"c.resources.{section}.exists(k, k.matches(r'{LEGACY_RESOURCE.pattern}')))" for section in ("limits", "requests"))


def _plugin_gpus(obj: Manifest) -> bool:
    """Whether a pod of `obj` asks for device-plugin accelerators (nvidia.com/gpu and kin):
    each new pod needs a device of its own exactly as a claim template's does."""
    return any(True for site in pod_sites(obj) for c in site.containers
               for _ in legacy_resources(c.resources, c.gpu_aliases))


@register
class RolloutSurge(Rule):
    id = "rollout-surge"
    name = "Surge-first rollout of pods that each need a device"
    category = "rollout"
    severity = Severity.ERROR
    targets = _DEPLOYMENT
    fixable = FixAvailability.ALWAYS
    admission = Admission(
        "(!variables.podSpecs.exists(s, has(s.resourceClaims) && "
        "s.resourceClaims.exists(c, has(c.resourceClaimTemplateName))) && "
        f"!variables.containers.exists(g, g.exists(c, {_PLUGIN_GPU}))) || "
        "(has(object.spec.strategy) && has(object.spec.strategy.type) && object.spec.strategy.type == 'Recreate') || "
        "[has(object.spec.strategy) && has(object.spec.strategy.rollingUpdate) && "
        "has(object.spec.strategy.rollingUpdate.maxSurge) ? object.spec.strategy.rollingUpdate.maxSurge : "
        f"'{DEFAULT_MAX_SURGE}'].all(m, type(m) == int ? m == 0 : "
        "int(string(m).replace('%', '')) == 0 || (has(object.spec.replicas) && object.spec.replicas == 0))",
        "a Deployment whose pods each need a device may surge; roll out with maxSurge: 0, maxUnavailable: 1")
    summary = "A Deployment whose pods get claims from templates may surge (maxSurge > 0 or the 25% default)."
    rationale = """
        A surge-first rollout creates new pods before old ones go. Each new pod needs a fresh
        claim; on a full accelerator pool there is no free device, the new pod stays Pending
        ("cannot allocate all claims"), the old pods are never removed, and the rollout
        deadlocks. With `maxSurge: 0` and `maxUnavailable >= 1` (or `type: Recreate`) a device
        is released before one is claimed. maxSurge is scaled as the Deployment controller
        does: a percentage of the replicas, rounded up. A pod that asks for `nvidia.com/gpu`
        (or another device-plugin accelerator) through its limits is the same case: the
        scheduler holds the new pod Pending ("Insufficient nvidia.com/gpu") until an old pod
        is gone, which a surge-first rollout never does first. With `--inventory`,
        `rollout-deadlock` simulates the rollout of claim-template pods on it instead of
        this heuristic (device-plugin pods are still judged here)."""
    reference = "https://kubernetes.io/docs/concepts/workloads/controllers/deployment/#rolling-update-deployment"
    upstream_note = """
        The Deployment defaults (maxSurge 25%, maxUnavailable 25%) are surge-first; some
        guideline documents keep them for GPU workloads. Upstream DRA allocates a claim
        only when a pod is scheduled, so those defaults need spare devices to progress."""
    noncompliant = COMPLIANT_DEPLOYMENT.replace("rollingUpdate: {maxSurge: 0, maxUnavailable: 1}",
                                                "rollingUpdate: {maxSurge: 1, maxUnavailable: 0}")
    compliant = COMPLIANT_DEPLOYMENT

    def check(self, obj: Manifest, ctx: Context) -> Iterator[Finding]:
        templates = any(site.uses_template_claims() for site in pod_sites(obj))
        plugin = not templates and _plugin_gpus(obj)
        if not (templates and not _simulated(ctx)) and not plugin:
            return
        needs = "device-plugin GPUs" if plugin else "fresh claims"
        strategy = Strategy.of(obj)
        where = _surge_place(strategy)
        written, fix = "maxSurge" in strategy.rolling, _no_surge(strategy)
        try:
            surges = strategy.surges()
        except ValueError as exc:
            yield ctx.finding(self, obj, f"rollout strategy: {exc}; the API server rejects it", *where, value=written, fix=fix,
                              help="use an integer or a percentage such as '25%'")
            return
        if strategy.both_zero:
            yield ctx.finding(self, obj, "maxSurge and maxUnavailable are both 0: the API server rejects this "
                              "strategy", *where, value=written, fix=fix, help="set maxUnavailable: 1")
        elif surges:
            yield ctx.finding(self, obj, f"rollout may surge (maxSurge {strategy.max_surge}, maxUnavailable "
                              f"{strategy.max_unavailable}): new pods need {needs} before old ones release "
                              "theirs, which deadlocks a full pool", *where, value=written, fix=fix,
                              help="set strategy.rollingUpdate to {maxSurge: 0, maxUnavailable: 1}, or type: Recreate")


_DAEMONSET = frozenset({("apps", "DaemonSet")})


def _daemonset_surges(value: Yaml) -> bool:
    """Whether a DaemonSet's maxSurge (default 0) surges: scaled as the controller scales it,
    a percentage of the nodes rounded up, so any percentage above 0% is at least one pod on a
    node that has one. Values the API server rejects are schema-invalid's."""
    try:
        return scaled_value(DAEMONSET_DEFAULT_MAX_SURGE if value is None else value, 1, round_up=True) > 0
    except ValueError:
        return False


@register
class DaemonSetSurge(Rule):
    id = "daemonset-surge"
    name = "Surge-first update of a claim-template DaemonSet"
    category = "rollout"
    severity = Severity.ERROR
    targets = _DAEMONSET
    fixable = FixAvailability.ALWAYS
    admission = Admission(
        "!variables.podSpecs.exists(s, has(s.resourceClaims) && "
        "s.resourceClaims.exists(c, has(c.resourceClaimTemplateName))) || !has(object.spec.updateStrategy) || "
        "(has(object.spec.updateStrategy.type) && object.spec.updateStrategy.type != 'RollingUpdate') || "
        "!has(object.spec.updateStrategy.rollingUpdate) || !has(object.spec.updateStrategy.rollingUpdate.maxSurge) || "
        "[object.spec.updateStrategy.rollingUpdate.maxSurge].all(m, type(m) == int ? m <= 0 : "
        "!string(m).endsWith('%') || int(string(m).replace('%', '')) == 0)",
        "a DaemonSet of claim-template pods surges on every node; update with maxSurge: 0, maxUnavailable: 1")
    summary = "A DaemonSet whose pods get claims from templates updates surge-first (maxSurge above 0)."
    rationale = """
        With `updateStrategy.rollingUpdate.maxSurge` above 0, the DaemonSet controller starts
        the updated pod on a node while the old one still runs there, and deletes the old pod
        only once the new one is available (KEP-1591; a percentage is of the nodes, rounded
        up to at least 1). A DaemonSet pod can only run on its node, so its new claim needs a
        second free device on that very node: where the old pod holds the node's devices the
        new pod stays Pending and the update stalls there. The default (maxSurge 0,
        maxUnavailable 1) releases the node's device first."""
    reference = "https://kubernetes.io/docs/tasks/manage-daemon/update-daemon-set/"
    noncompliant = DAEMONSET_EXAMPLE.replace("rollingUpdate: {maxSurge: 0, maxUnavailable: 1}",
                                             "rollingUpdate: {maxSurge: 1, maxUnavailable: 0}")
    compliant = DAEMONSET_EXAMPLE

    def check(self, obj: Manifest, ctx: Context) -> Iterator[Finding]:
        if not any(site.uses_template_claims() for site in pod_sites(obj)):
            return
        update = mapping(obj.spec.get("updateStrategy"))
        rolling = mapping(update.get("rollingUpdate"))
        if update.get("type", "RollingUpdate") != "RollingUpdate" or not _daemonset_surges(rolling.get("maxSurge")):
            return
        at = edit_path(rolling, "maxSurge")
        fix = Fix("update with maxSurge: 0, maxUnavailable: 1", Applicability.UNSAFE,
                  (set_value(at, 0), set_value(at[:-1] + ("maxUnavailable",), 1)))
        yield ctx.finding(self, obj, f"update may surge (maxSurge {rolling['maxSurge']}): on each node the new pod "
                          "needs a device before the old one releases its own, which stalls on a node whose "
                          "devices are all claimed", rolling, "maxSurge", fix=fix,
                          help="set updateStrategy.rollingUpdate to {maxSurge: 0, maxUnavailable: 1}")


@register
class RolloutDeadlock(Rule):
    id = "rollout-deadlock"
    name = "Rollout that deadlocks on the inventory"
    category = "rollout"
    severity = Severity.ERROR
    targets = _DEPLOYMENT
    needs = Needs.INVENTORY
    fixable = FixAvailability.SOMETIMES  # when the remedy is a release-first rolling update
    lint_only = ("simulates the rollout on `--inventory`; at admission the webhook judges the heuristic "
                 "rollout-surge")
    summary = "With --inventory: the Deployment's next rollout, simulated on the inventory, deadlocks."
    rationale = """
        `draguard simulate rollout` runs the Deployment's next rollout on the inventory: its
        replicas running, then the Deployment and ReplicaSet controllers, the scheduler's DRA
        allocation and the kubelet's teardown over time. A rollout that can never finish is
        reported with its certificate (what waits for what) and the smallest strategy change
        that lets it finish, proven by simulating it again. Without an inventory the
        heuristic `rollout-surge` runs instead. A Deployment whose replicas do not fit the
        inventory in the first place is reported as info: there is no rollout to judge."""
    reference = "https://kubernetes.io/docs/concepts/workloads/controllers/deployment/#rolling-update-deployment"
    example_inventory = {"nodes": [{"namePrefix": "gpu", "count": 1, "gpus": {
        "model": "H100-80GB", "count": 1, "mig": "static", "layout": ["1g.10gb", "1g.10gb"]}}]}
    noncompliant = COMPLIANT_DEPLOYMENT.replace("rollingUpdate: {maxSurge: 0, maxUnavailable: 1}",
                                                "rollingUpdate: {maxSurge: 1, maxUnavailable: 0}")
    compliant = COMPLIANT_DEPLOYMENT

    def check(self, obj: Manifest, ctx: Context) -> Iterator[Finding]:
        inventory = ctx.inventory
        if not _simulated(ctx) or inventory is None or not any(site.uses_template_claims() for site in pod_sites(obj)):
            return
        # here: the simulator cost a one-file lint without --inventory 15 ms to import
        from ..simulate.rollout import RELEASE_FIRST, simulate_rollout
        from ..simulate.template import ScenarioError

        templates = ctx.objects.claims.templates_in(obj.namespace)
        strategy = Strategy.of(obj)
        try:
            verdict = simulate_rollout(obj, templates, inventory, kube_version=ctx.kube_version,
                                       gates=ctx.config.feature_gates).verdict
        except ScenarioError as exc:
            yield ctx.finding(self, obj, f"the rollout was not simulated: {exc}", severity=Severity.INFO)
            return
        if verdict is None or verdict.kind != "deadlock":  # simulate_rollout gives every run its verdict
            return
        fix = _no_surge(strategy) if verdict.remedy.startswith(RELEASE_FIRST) else None
        yield ctx.finding(self, obj, "the next rollout deadlocks on the inventory: " + " <- ".join(verdict.chain),
                          *_surge_place(strategy), help=verdict.remedy, fix=fix)


@register
class RolloutPdb(Rule):
    id = "rollout-pdb"
    name = "Claim-consuming workload without a matching PodDisruptionBudget"
    category = "rollout"
    severity = Severity.WARNING
    profile = Profile.STRICT
    profile_reason = """
        a PodDisruptionBudget for every claim-consuming workload is a policy choice: a
        workload of one replica, or one whose pods may be drained freely, is right without
        one, and the finding names no fault in the manifest itself"""
    targets = frozenset({("apps", "Deployment"), ("apps", "StatefulSet")})
    needs = Needs.OBJECT_SET
    set_wide = True
    fixable = FixAvailability.SOMETIMES  # a budget can be added when the pods have labels to select
    summary = "No PodDisruptionBudget selects the workload's pods, or its budget differs from the configured maxUnavailable."
    rationale = """
        Node drains evict pods through the eviction API, which honours PodDisruptionBudgets.
        Without one, a drain can evict every replica at once, and their replacements compete
        for devices with everything else. A budget of `maxUnavailable: 1` (configurable)
        keeps eviction in step with device release. The fix adds a budget that selects the
        workload's pods by its pod template's labels. Workloads of one replica are not
        checked: `maxUnavailable: 1` lets a drain evict the only pod anyway, and
        `minAvailable: 1` blocks every drain of its node; only a second replica keeps the
        service up through a drain."""
    reference = "https://kubernetes.io/docs/tasks/run-application/configure-pdb/"
    options = {"maxUnavailable": Option(1, "the budget expected on PDBs of claim-consuming workloads")}
    noncompliant = COMPLIANT_DEPLOYMENT.replace("maxUnavailable: 1\n      selector", "maxUnavailable: 3\n      selector")
    compliant = COMPLIANT_DEPLOYMENT

    def check(self, obj: Manifest, ctx: Context) -> Iterator[Finding]:
        sites = claim_sites(obj)
        if not sites or self._single_replica(obj, ctx):
            return
        wanted = ctx.option(self, "maxUnavailable")
        labels = sites[0].labels
        pdbs = [p for p in ctx.objects.pdbs_near(obj.namespace) if matches(pdb_selector(p), labels)]
        if not pdbs:
            yield ctx.finding(self, obj, "no PodDisruptionBudget selects this workload's pods; a drain may evict "
                              "every replica at once", help=f"add a PodDisruptionBudget with maxUnavailable: {wanted}",
                              fix=self._new_budget(obj, ctx, labels, wanted))
            return
        for pdb in pdbs:
            spec = pdb.spec
            if spec.get("maxUnavailable") != wanted:
                found = f"maxUnavailable {spec['maxUnavailable']}" if "maxUnavailable" in spec else \
                    f"minAvailable {spec['minAvailable']}" if "minAvailable" in spec else "no budget"
                key = "maxUnavailable" if "maxUnavailable" in spec else "minAvailable" if "minAvailable" in spec else None
                edits = [set_value(edit_path(spec, "maxUnavailable"), wanted)]
                if "minAvailable" in spec:  # the API allows one of the two
                    edits.append(remove(edit_path(spec, "minAvailable")))
                yield ctx.finding(self, pdb, f"PodDisruptionBudget '{pdb.name}' for {obj.kind} '{obj.name}' uses "
                                  f"{found}; expected maxUnavailable {wanted}", spec, key, value=key is not None,
                                  fix=Fix(f"set maxUnavailable: {wanted}", Applicability.UNSAFE, tuple(edits)))

    @staticmethod
    def _single_replica(obj: Manifest, ctx: Context) -> bool:
        """One replica, stated or by default; an HPA of the set may scale an unset count."""
        if ctx.objects.autoscales(obj.namespace, obj.kind, obj.name) and "replicas" not in obj.spec:
            return False
        return replica_count(obj) == 1

    @staticmethod
    def _new_budget(obj: Manifest, ctx: Context, labels: YamlMap, wanted: Yaml) -> Fix | None:
        if not labels or any(p.name == obj.name for p in ctx.objects.pdbs_near(obj.namespace)):
            return None
        metadata = {"name": obj.name}
        if obj.namespace:
            metadata["namespace"] = obj.namespace
        budget = {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": metadata,
                  "spec": {"maxUnavailable": wanted, "selector": {"matchLabels": dict(labels)}}}
        return Fix(f"add PodDisruptionBudget '{obj.name}' (maxUnavailable: {wanted})", Applicability.UNSAFE,
                   (add_document(budget),))


@register
class PdbSelectsNothing(Rule):
    id = "pdb-selects-nothing"
    name = "PodDisruptionBudget selects no pod"
    category = "rollout"
    severity = Severity.WARNING
    targets = frozenset({("policy", "PodDisruptionBudget")})
    needs = Needs.OBJECT_SET
    set_wide = True
    summary = "A PodDisruptionBudget whose selector matches no pod template of the linted set."
    rationale = """
        A budget that selects nothing protects nothing; it usually means the labels drifted
        apart (a renamed `app` label) and drains are no longer throttled."""
    reference = "https://kubernetes.io/docs/tasks/run-application/configure-pdb/#identify-an-application-to-protect"
    noncompliant = replace_last(COMPLIANT_DEPLOYMENT, "{app: inference}", "{app: inferense}")
    compliant = COMPLIANT_DEPLOYMENT

    def check(self, obj: Manifest, ctx: Context) -> Iterator[Finding]:
        selector = pdb_selector(obj)
        for site in ctx.objects.pod_templates_near(obj.namespace):
            if matches(selector, site.labels):
                return
        spec = obj.spec
        yield ctx.finding(self, obj, f"PodDisruptionBudget '{obj.name}' selects no pod template in the linted set",
                          spec, "selector" if "selector" in spec else None)


@register
class RolloutFieldsInvalid(Rule):
    id = "rollout-fields-invalid"
    name = "Budget or rolling update the API server rejects"
    category = "rollout"
    severity = Severity.ERROR
    lint_only = "the API server runs its own validation before admission and refuses the object"
    targets = frozenset({("policy", "PodDisruptionBudget"), ("apps", "Deployment"), ("apps", "DaemonSet"),
                         ("apps", "StatefulSet")})
    summary = ("A PodDisruptionBudget, or a Deployment's, DaemonSet's or StatefulSet's update strategy, has a value "
               "the API server refuses: a negative or malformed count, an unavailability above 100% or of 0, both "
               "minAvailable and maxUnavailable, maxSurge and maxUnavailable both 0, a DaemonSet with both "
               "non-zero, or a rollingUpdate beside another strategy type.")
    rationale = """
        The schema only says "integer or string", so such a budget or strategy passes a
        client-side dry run, and the API server then refuses it (ValidatePodDisruptionBudgetSpec,
        ValidateDeploymentStrategy, ValidateRollingUpdateDaemonSet, ValidateStatefulSetSpec):
        counts are 0 or more, percentages are whole numbers with `%` (at most 100%, but for a
        Deployment's maxSurge), a budget sets minAvailable or maxUnavailable but not both, a
        rolling update cannot have both maxSurge and maxUnavailable at 0 (it could never
        replace a pod), and a DaemonSet's has exactly one of them non-zero: `maxSurge: 1` alone
        is refused, as maxUnavailable defaults to 1. A StatefulSet's partition is 0 or more, and
        its maxUnavailable neither 0 nor 0% where MaxUnavailableStatefulSet is on (by default
        from 1.37; before, the API server drops the field unchecked). A `rollingUpdate` beside
        `type: Recreate` (Deployment) or `OnDelete` (StatefulSet) is refused too. The budget and
        the strategy are what keeps a GPU rollout or drain moving: the other rollout rules and
        `draguard simulate` read them as the cluster would store them."""
    reference = "https://kubernetes.io/docs/tasks/run-application/configure-pdb/"
    noncompliant = replace_last(COMPLIANT_DEPLOYMENT, "maxUnavailable: 1\n", "maxUnavailable: 150%\n")
    compliant = COMPLIANT_DEPLOYMENT

    def check(self, obj: Manifest, ctx: Context) -> Iterator[Finding]:
        if obj.kind == "PodDisruptionBudget":
            holder, found = obj.spec, budget_problems(obj.spec)
        else:
            daemon = obj.kind == "DaemonSet"
            strategy = mapping(obj.spec.get("strategy" if obj.kind == "Deployment" else "updateStrategy"))
            holder = mapping(strategy.get("rollingUpdate"))
            kind = strategy.get("type", "RollingUpdate")
            if kind in _NOT_ROLLING.get(obj.kind, ()) and strategy.get("rollingUpdate") is not None:
                yield ctx.finding(self, obj, f"rollingUpdate may not be set with type {kind}: only with RollingUpdate",
                                  strategy, "rollingUpdate")
            if kind != "RollingUpdate" or not holder:
                return
            if obj.kind == "StatefulSet":
                found = statefulset_update_problems(holder, gate_enabled("MaxUnavailableStatefulSet", ctx.kube_version,
                                                                         ctx.config.feature_gates))
            else:
                found = [(key, said) for key in ("maxSurge", "maxUnavailable") if holder.get(key) is not None
                         and (said := intstr_problem(holder[key], at_most_100=daemon or key == "maxUnavailable"))]
                yield from self._one_side(obj, ctx, holder, daemon)
        for key, said in found:
            if said != BOTH_BUDGETS and (isinstance(holder[key], bool) or not isinstance(holder[key], (int, str))):
                continue  # not an IntOrString at all: schema-invalid says so
            yield ctx.finding(self, obj, f"{key} {holder[key]!r}: {said}", holder, key, value=True)

    def _one_side(self, obj: Manifest, ctx: Context, rolling: YamlMap, daemon: bool) -> Iterator[Finding]:
        """Both 0 never replaces a pod; a DaemonSet takes exactly one of the two, with the
        defaults (a Deployment's: 25% each, a DaemonSet's: maxUnavailable 1, maxSurge 0)."""
        surge, unavailable = (
            _or_default(rolling, "maxSurge", DAEMONSET_DEFAULT_MAX_SURGE if daemon else DEFAULT_MAX_SURGE),
            _or_default(rolling, "maxUnavailable", DAEMONSET_DEFAULT_MAX_UNAVAILABLE if daemon else
                        DEFAULT_MAX_UNAVAILABLE))
        if is_zero(surge) and is_zero(unavailable):
            yield ctx.finding(self, obj, "maxUnavailable may not be 0 when maxSurge is 0: the rollout could never "
                              "replace a pod", rolling, "maxUnavailable" if "maxUnavailable" in rolling else None,
                              value="maxUnavailable" in rolling)
        elif daemon and _nonzero(surge) and _nonzero(unavailable):
            yield ctx.finding(self, obj, f"maxSurge may not be set when maxUnavailable is non-zero (it is "
                              f"{unavailable!r}{'' if 'maxUnavailable' in rolling else ', the default'}): a DaemonSet "
                              "takes one of the two", rolling, "maxSurge", value=True)


def _or_default(rolling: YamlMap, key: str, default: Yaml) -> Yaml:
    value = rolling.get(key)
    return default if value is None else value


def _nonzero(value: Yaml) -> bool:
    return not intstr_problem(value, at_most_100=False) and not is_zero(value)
