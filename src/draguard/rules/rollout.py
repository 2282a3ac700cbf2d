"""rollout: rollouts and disruptions must never need more devices than the pool has."""

from __future__ import annotations

from ..findings import Severity
from ..model.selectors import matches
from ..model.workloads import pod_sites
from .base import Option, Rule, register
from .examples import COMPLIANT_DEPLOYMENT, replace_last
from .wiring import pod_claims


def _is_zero(value) -> bool:
    return value == 0 or (isinstance(value, str) and value.strip() in ("0", "0%"))


def _positive(value) -> bool:
    if isinstance(value, int):
        return value >= 1
    if isinstance(value, str) and value.strip().endswith("%"):
        try:
            return float(value.strip()[:-1]) > 0
        except ValueError:
            return False
    return False


def _pdbs(objects) -> list:
    return [m for m in objects if m.kind == "PodDisruptionBudget" and m.group == "policy"]


def _pod_templates(objects) -> list:
    return [(m, site) for m in objects for site in pod_sites(m) if site.metadata]


def _same_namespace(a, b) -> bool:
    return not a.namespace or not b.namespace or a.namespace == b.namespace


def _selector(pdb):
    spec = pdb.data.get("spec")
    return spec.get("selector") if isinstance(spec, dict) else None


def uses_template_claims(site) -> bool:
    return any(isinstance(entry.get("resourceClaimTemplateName"), str) for entry in pod_claims(site))


@register
class RolloutSurge(Rule):
    id = "rollout-surge"
    name = "Surge-first rollout of claim-template pods"
    category = "rollout"
    severity = Severity.ERROR
    kinds = frozenset({"Deployment"})
    summary = "A Deployment whose pods get claims from templates may surge (maxSurge > 0 or the 25% default)."
    rationale = """
        A surge-first rollout creates new pods before old ones go. Each new pod needs a fresh
        claim; on a full accelerator pool there is no free device, the new pod stays Pending
        ("cannot allocate all claims"), the old pods are never removed, and the rollout
        deadlocks. With `maxSurge: 0` and `maxUnavailable >= 1` (or `type: Recreate`) a device
        is released before one is claimed."""
    reference = "https://kubernetes.io/docs/concepts/workloads/controllers/deployment/#rolling-update-deployment"
    upstream_note = """
        The Deployment defaults (maxSurge 25%, maxUnavailable 25%) are surge-first; some
        guideline documents keep them for GPU workloads. Upstream DRA allocates a claim
        only when a pod is scheduled, so those defaults need spare devices to progress."""
    noncompliant = COMPLIANT_DEPLOYMENT.replace("rollingUpdate: {maxSurge: 0, maxUnavailable: 1}",
                                                "rollingUpdate: {maxSurge: 1, maxUnavailable: 0}")
    compliant = COMPLIANT_DEPLOYMENT

    def check(self, obj, ctx):
        if obj.group != "apps" or not any(uses_template_claims(site) for site in pod_sites(obj)):
            return
        spec = obj.data.get("spec") if isinstance(obj.data.get("spec"), dict) else {}
        strategy = spec.get("strategy") if isinstance(spec.get("strategy"), dict) else {}
        if strategy.get("type") == "Recreate":
            return
        rolling = strategy.get("rollingUpdate") if isinstance(strategy.get("rollingUpdate"), dict) else {}
        surge, unavailable = rolling.get("maxSurge", "25%"), rolling.get("maxUnavailable", "25%")
        if _is_zero(surge) and _positive(unavailable):
            return
        where = (rolling, "maxSurge") if "maxSurge" in rolling else (spec, "strategy") if strategy else (spec, None)
        yield ctx.finding(self, obj, f"rollout may surge (maxSurge {surge}, maxUnavailable {unavailable}): new pods "
                          "need fresh claims before old ones release theirs, which deadlocks a full pool",
                          *where, value="maxSurge" in rolling,
                          fix="set strategy.rollingUpdate to {maxSurge: 0, maxUnavailable: 1}, or type: Recreate")


@register
class RolloutPdb(Rule):
    id = "rollout-pdb"
    name = "Claim-consuming workload without a matching PodDisruptionBudget"
    category = "rollout"
    severity = Severity.WARNING
    kinds = frozenset({"Deployment", "StatefulSet"})
    summary = "No PodDisruptionBudget selects the workload's pods, or its budget differs from the configured maxUnavailable."
    rationale = """
        Node drains evict pods through the eviction API, which honours PodDisruptionBudgets.
        Without one, a drain can evict every replica at once, and their replacements compete
        for devices with everything else. A budget of `maxUnavailable: 1` (configurable)
        keeps eviction in step with device release."""
    reference = "https://kubernetes.io/docs/tasks/run-application/configure-pdb/"
    options = {"maxUnavailable": Option(1, "the budget expected on PDBs of claim-consuming workloads")}
    noncompliant = COMPLIANT_DEPLOYMENT.replace("maxUnavailable: 1\n      selector", "maxUnavailable: 3\n      selector")
    compliant = COMPLIANT_DEPLOYMENT

    def check(self, obj, ctx):
        sites = [site for site in pod_sites(obj) if pod_claims(site)]
        if not sites:
            return
        wanted = ctx.option(self, "maxUnavailable")
        labels = sites[0].labels
        pdbs = [p for p in ctx.memo("pdbs", _pdbs) if _same_namespace(p, obj) and matches(_selector(p), labels)]
        if not pdbs:
            yield ctx.finding(self, obj, "no PodDisruptionBudget selects this workload's pods; a drain may evict "
                              "every replica at once", fix=f"add a PodDisruptionBudget with maxUnavailable: {wanted}")
            return
        for pdb in pdbs:
            spec = pdb.data["spec"]
            if spec.get("maxUnavailable") != wanted:
                found = f"maxUnavailable {spec['maxUnavailable']}" if "maxUnavailable" in spec else \
                    f"minAvailable {spec.get('minAvailable')}"
                key = "maxUnavailable" if "maxUnavailable" in spec else "minAvailable" if "minAvailable" in spec else None
                yield ctx.finding(self, pdb, f"PodDisruptionBudget '{pdb.name}' for {obj.kind} '{obj.name}' uses "
                                  f"{found}; expected maxUnavailable {wanted}", spec, key, value=key is not None)


@register
class PdbSelectsNothing(Rule):
    id = "pdb-selects-nothing"
    name = "PodDisruptionBudget selects no pod"
    category = "rollout"
    severity = Severity.WARNING
    kinds = frozenset({"PodDisruptionBudget"})
    summary = "A PodDisruptionBudget whose selector matches no pod template of the linted set."
    rationale = """
        A budget that selects nothing protects nothing; it usually means the labels drifted
        apart (a renamed `app` label) and drains are no longer throttled."""
    reference = "https://kubernetes.io/docs/tasks/run-application/configure-pdb/#identify-an-application-to-protect"
    noncompliant = replace_last(COMPLIANT_DEPLOYMENT, "{app: inference}", "{app: inferense}")
    compliant = COMPLIANT_DEPLOYMENT

    def check(self, obj, ctx):
        if obj.group != "policy":
            return
        selector = _selector(obj)
        for owner, site in ctx.memo("pod-templates", _pod_templates):
            if _same_namespace(owner, obj) and matches(selector, site.labels):
                return
        spec = obj.data.get("spec") if isinstance(obj.data.get("spec"), dict) else {}
        yield ctx.finding(self, obj, f"PodDisruptionBudget '{obj.name}' selects no pod template in the linted set",
                          spec, "selector" if "selector" in spec else None)
