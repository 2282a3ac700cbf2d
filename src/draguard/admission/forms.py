"""Where each rule can be enforced at admission, with the reason, for `draguard rules`, the docs
and `draguard policy export`:

- `vap`: a ValidatingAdmissionPolicy: the check is CEL on the one object admitted;
- `map`: a MutatingAdmissionPolicy applies the rule's fix (with `vap`, never alone; from 1.34,
  where the API is beta behind the MutatingAdmissionPolicy gate, GA and on from 1.36);
- `webhook-only`: the webhook judges it (it reads the cluster through its cache, or runs
  what CEL cannot);
- `lint-only`: nothing reaches admission for it to judge.

A rule's form depends on the release: a condition may be complete only up to one."""

from __future__ import annotations

from dataclasses import dataclass

from ..core.finding import Severity
from ..core.fixes import Applicability
from ..core.versions import minor
from ..rules.base import Needs, Rule

VAP, MAP, WEBHOOK_ONLY, LINT_ONLY = "vap", "map", "webhook-only", "lint-only"

_NEEDS_REASONS = {
    Needs.INPUT: (LINT_ONLY, "reported while reading the input text, not on an object"),
    Needs.CLUSTER: (LINT_ONLY, "an audit check on live cluster state over time (`draguard audit`); no single request "
                               "carries it"),
    Needs.OBJECT_SET: (WEBHOOK_ONLY, "reads objects besides the one admitted (a claim's template, a DeviceClass, a "
                                     "budget, a ConfigMap): the webhook reads them from its cache of the cluster, "
                                     "CEL on one object cannot"),
    Needs.INVENTORY: (WEBHOOK_ONLY, "judges the request on the cluster's devices (ResourceSlices), which the webhook's "
                                    "cache holds"),
}


@dataclass(frozen=True)
class Form:
    forms: tuple[str, ...]
    reason: str

    @property
    def exported(self) -> bool:
        return VAP in self.forms

    @property
    def mutates(self) -> bool:
        return MAP in self.forms

    def __str__(self) -> str:
        return "+".join(self.forms)


def form_of(rule: Rule, kube_version: str) -> Form:
    """The form of `rule` on `kube_version`."""
    if not rule.has_check:
        return Form((LINT_ONLY,), f"reported by the {rule.reported_by} while reading the input, not on an object")
    if rule.needs in (Needs.INPUT, Needs.CLUSTER):
        return Form(*_reason(rule.needs))
    if rule.authored_only:
        return Form((LINT_ONLY,), "judges how a manifest is written; before admission the API server fills in "
                                  "defaults and converts the object to the version a policy matches")
    if rule.severity is Severity.INFO:
        return Form((LINT_ONLY,), "info: reported by lint; admission denies errors and warns on warnings")
    if rule.lint_only:
        return Form((LINT_ONLY,), rule.lint_only)
    admission = rule.admission
    if admission is None:
        if rule.set_wide:
            return Form((WEBHOOK_ONLY,), "concludes from what the cluster lacks; the webhook's cache of the cluster "
                                         "sees that, CEL on one object cannot")
        if rule.webhook_only:
            return Form((WEBHOOK_ONLY,), rule.webhook_only)
        if rule.needs in _NEEDS_REASONS:
            return Form(*_reason(rule.needs))
        raise ValueError(f"rule {rule.id}: no admission condition and no reason (webhook_only or lint_only)")
    if admission.through and minor(kube_version) > minor(admission.through):
        return Form((WEBHOOK_ONLY,), admission.beyond)
    reason = "CEL on the object admitted"
    if rule.needs is Needs.OBJECT_SET:
        reason += "; what it reads besides the object (ConfigMaps, DeviceClasses) only the webhook sees"
    mutation = rule.mutation
    if mutation is not None and minor(kube_version) >= minor(mutation.since):
        unsafe = mutation.applicability is Applicability.UNSAFE
        return Form((VAP, MAP), reason + "; its fix as a MutatingAdmissionPolicy"
                    + (" (an unsafe fix: with `draguard policy export --unsafe-fixes`)" if unsafe else ""))
    return Form((VAP,), reason)


def _reason(needs: Needs) -> tuple[tuple[str, ...], str]:
    form, reason = _NEEDS_REASONS[needs]
    return (form,), reason
