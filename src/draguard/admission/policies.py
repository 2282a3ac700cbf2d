"""`draguard policy export`: a ValidatingAdmissionPolicy and its binding for every rule whose
check is CEL on one object (admission.forms), for one target release, and the ConfigMap of
parameters the policies read.

Per release (the apiserver converts the request object to the version a policy matches,
`matchPolicy: Equivalent`): resource.k8s.io/v1beta1 on 1.32 (flat requests), v1beta2 on 1.33
and v1 from 1.34; the conditions read every shape (admission.variables.request_fields). New
expressions may use only the CEL libraries of the release before the target
(k8s.io/apiserver pkg/cel/environment base.go: a library is usable in new expressions one
release after it is introduced, so that a rollback keeps them valid), which
admission.celcheck verifies.

Errors deny and warnings warn (`validationActions`); a policy fails closed
(`failurePolicy: Fail`) and leaves out what the webhook leaves out, by the same definitions
(admission.exemptions: the claims the resourceclaim controller generates, an object being
deleted whose update changes only its metadata, what a workload controller makes from an
owner admission judges), and its binding exempts the same namespaces as the webhook. An
UPDATE ratchets as the webhook's does, per rule (CEL sees no field paths): it fails only
when its old object passed, so the workloads admitted before the policy keep their
controllers' updates; a mutating policy patches an UPDATE only where the old object passed,
as a pod's spec may not change in an update. A second validation denies an UPDATE that
keeps the error and grows what it concerns (admission.ratchet, as the webhook). The
parameters (the admin namespaces of `.draguard.yaml`, the fixes' options) are a
ConfigMap (`paramKind`), which the export writes first, with its Namespace, so that
`kubectl apply -f -` creates them before any binding. Missing parameters never refuse what a
rule does not concern (k8s.io/apiserver policy/generic CollectParams: `Deny` refuses every
object the binding matches before any condition is evaluated, `Allow` skips the binding): a
binding that selects only the objects its rule concerns (`CONCERNED`: the Namespaces that
carry the admin-access label) denies them while its parameters are missing rather than guess;
the others (every claim of a tenant, every pod a fix patches) skip their rule then. The
bindings exempt the parameters' namespace, so that it can always be made again."""

from __future__ import annotations

from dataclasses import dataclass

from ..core.config import Config
from ..core.finding import Severity
from ..core.fixes import Applicability
from ..core.versions import minor
from ..model.claims import RESOURCE_GROUP
from ..rules.base import Admission, Mutation, Rule
from .forms import form_of
from ..rules.admission import SPEC_CONTAINERS
from ..rules.isolation import ADMIN_LABEL
from .exemptions import GENERATED_CLAIM, WORKLOAD_CONTROLLERS, controllers_with, exemptions
from .install import LABELS, NAME, namespace_object, routes
from .kinds import WRITTEN_THROUGH
from .ratchet import grew_cel, grown_names_cel
from .variables import PARAMS_ADMIN_NAMESPACES, on_old, request_fields, variables_for

API_VERSION = "admissionregistration.k8s.io/v1"
PARAMS = f"{NAME}-policy-params"
PREFIX = f"{NAME}-"

#: rule id -> the objects its binding selects (matchResources.objectSelector): those its rule
#: concerns, where a label says it; such a binding denies them while its parameters are missing
CONCERNED = {"admin-access-label": {"matchExpressions": [{"key": ADMIN_LABEL, "operator": "Exists"}]}}
#: for each `over`: what the message calls an offending item, and CEL naming one
_ITEMS = {
    "containers": ("container", "(has(c.name) ? string(c.name) : object.kind)"),
    "podSpecs": ("pod of", SPEC_CONTAINERS + ".map(c, has(c.name) ? string(c.name) : '?').join(', ')"),
    "requests": ("request", "string(q.name)"),
}


def dra_version(kube_version: str) -> str:
    """The resource.k8s.io version a policy for `kube_version` matches."""
    return {32: "v1beta1", 33: "v1beta2"}.get(minor(kube_version), "v1")


def _admission(rule: Rule) -> Admission:
    """The rule's admission expression (admission.forms exports only rules that have one)."""
    if rule.admission is None:
        raise ValueError(f"rule {rule.id}: no admission expression to export")
    return rule.admission


def _mutation(rule: Rule) -> Mutation:
    """The rule's fix as a patch (admission.forms exports only rules that have one)."""
    if rule.mutation is None:
        raise ValueError(f"rule {rule.id}: no mutation to export")
    return rule.mutation


def _kinds(rule: Rule) -> frozenset:
    """The (group, kind) pairs a rule's policy matches."""
    kinds = _admission(rule).kinds(rule.targets)
    if kinds is None:
        raise ValueError(f"rule {rule.id}: a policy matches the kinds its rule names, and it names none")
    return kinds


def validation_expression(rule: Rule) -> str:
    admission = _admission(rule)
    if admission.over == "containers":
        return f"variables.containers.all(g, g.all(c, {admission.condition}))"
    if admission.over == "podSpecs":
        return f"variables.podSpecs.all(s, {admission.condition})"
    if admission.over == "requests":
        return f"variables.requests.all(q, {request_fields('q')}.all(r, {admission.condition}))"
    return admission.condition


def ratcheted(expression: str) -> str:
    """CEL: `expression` holds, or the UPDATE does not bring its failure (the old object
    failed it already)."""
    return f"({expression}) || (request.operation == 'UPDATE' && !({on_old(expression)}))"


def message_expression(rule: Rule) -> str | None:
    """CEL naming what fails (the containers, pod specs or requests), after the rule id and
    its message; None for conditions on the whole object (the message says it all)."""
    admission = _admission(rule)
    if admission.over is None:
        return None
    label, name = _ITEMS[admission.over]
    failing = f"!({admission.condition})"
    if admission.over == "containers":
        names = f"variables.containers.map(g, g.filter(c, {failing}).map(c, {name}).join(', ')).filter(t, t != '')"
    elif admission.over == "podSpecs":
        names = f"variables.podSpecs.filter(s, {failing}).map(s, {name})"
    else:
        names = f"variables.requests.filter(q, {request_fields('q')}.exists(r, {failing})).map(q, {name})"
    return f"{_literal(_message(rule) + f' ({label} ')} + {names}.join('; ') + ')'"


def _message(rule: Rule) -> str:
    return f"{rule.id}: {_admission(rule).message}"


def _literal(text: str) -> str:
    """`text` as a CEL string literal."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _resource_rules(kinds: frozenset, kube_version: str) -> list[dict]:
    """The webhook's routes (install.routes) for `kinds`, resource.k8s.io at the one version
    the policy's CEL reads (`matchPolicy: Equivalent` converts the others to it)."""
    return [dict(rule, apiVersions=[dra_version(kube_version)]) if rule["apiGroups"] == [RESOURCE_GROUP] else rule
            for rule in routes(kinds, WRITTEN_THROUGH)]


def policy(rule: Rule, kube_version: str, exempt: list[str], namespace: str = NAME,
           severity: Severity | None = None, controllers=WORKLOAD_CONTROLLERS) -> list[dict]:
    """The ValidatingAdmissionPolicy of `rule` and its binding; `severity` as configured
    (default: the rule's) decides between Deny and Warn; what `controllers` make is not judged."""
    kinds = _kinds(rule)
    denies = (severity or rule.severity) is Severity.ERROR
    expression, message = ratcheted(validation_expression(rule)), message_expression(rule)
    validation: dict[str, str] = {"expression": expression, "message": _message(rule), "reason": "Invalid"}
    if message:
        validation["messageExpression"] = message
    validations = [validation] + ([growth_validation(rule, kinds)] if denies and grew_cel(kinds) else [])
    variables = variables_for([e for v in validations for e in (v["expression"], v.get("messageExpression", ""))],
                              kinds)
    uses_params = any(v["name"] == PARAMS_ADMIN_NAMESPACES for v in variables)
    name = PREFIX + rule.id
    spec: dict[str, object] = {
        "failurePolicy": "Fail",
        "matchConstraints": {"matchPolicy": "Equivalent", "resourceRules": _resource_rules(kinds, kube_version)}}
    if uses_params:
        spec["paramKind"] = {"apiVersion": "v1", "kind": "ConfigMap"}
    spec["matchConditions"] = _match_conditions(kinds, controllers)
    spec["variables"] = variables
    spec["validations"] = validations
    labels = {**LABELS, "draguard.io/rule": rule.id}
    metadata = {"name": name, "labels": labels, "annotations": {"draguard.io/kube-version": kube_version}}
    match_resources = _exempting(exempt)
    if rule.id in CONCERNED:
        match_resources["objectSelector"] = CONCERNED[rule.id]
    binding: dict[str, object] = {"policyName": name, "validationActions": ["Deny"] if denies else ["Warn"],
                                  "matchResources": match_resources}
    if uses_params:
        binding["paramRef"] = {"name": PARAMS, "namespace": namespace,
                               "parameterNotFoundAction": "Deny" if rule.id in CONCERNED else "Allow"}
    return [{"apiVersion": API_VERSION, "kind": "ValidatingAdmissionPolicy", "metadata": metadata, "spec": spec},
            {"apiVersion": API_VERSION, "kind": "ValidatingAdmissionPolicyBinding",
             "metadata": {"name": name, "labels": dict(labels)}, "spec": binding}]


def growth_validation(rule: Rule, kinds) -> dict:
    """The ratchet's second half (admission.ratchet): an UPDATE that keeps the rule's error may
    not grow what it concerns."""
    message = f"{rule.id}: the update keeps this error and grows what it concerns"
    return {"expression": f"({validation_expression(rule)}) || request.operation != 'UPDATE' || !({grew_cel(kinds)})",
            "message": message, "messageExpression": f"{_literal(message + ' (')} + {grown_names_cel(kinds)} + ')'",
            "reason": "Invalid"}


def _match_conditions(kinds, controllers) -> list[dict]:
    """The webhook's exemptions (admission.exemptions), the generated claims' only where the
    policy matches claims."""
    return [e.match_condition() for e in exemptions(controllers)
            if e is not GENERATED_CLAIM or any(group == RESOURCE_GROUP for group, _ in kinds)]


def mutation_expression(rule: Rule) -> str:
    """CEL: the JSON Patch of the rule's fix on every pod spec its condition fails on; none
    on an UPDATE whose old object failed the rule already."""
    mutation = _mutation(rule)
    patches = (f"variables.podSpecSites.filter(site, [site.spec].exists(s, !({_admission(rule).condition})))"
               f".map(site, [site.spec].map(s, {mutation.patch})[0])")
    patches = patches + ".flatten()" if mutation.many else patches
    return f"request.operation == 'UPDATE' && !({on_old(validation_expression(rule))}) ? [] : {patches}"


def mutating_policy(rule: Rule, kube_version: str, exempt: list[str], namespace: str = NAME,
                    controllers=WORKLOAD_CONTROLLERS) -> list[dict]:
    """The MutatingAdmissionPolicy that applies the rule's fix, and its binding: v1beta1 on
    1.34 and 1.35 (beta: the MutatingAdmissionPolicy gate and runtime-config must be on), v1
    from 1.36."""
    if _admission(rule).over != "podSpecs":
        raise ValueError(f"rule {rule.id}: mutations patch pod specs")
    expression = mutation_expression(rule)
    kinds = _kinds(rule)
    api_version = API_VERSION if minor(kube_version) >= 36 else "admissionregistration.k8s.io/v1beta1"
    name = f"{PREFIX}fix-{rule.id}"
    labels = {**LABELS, "draguard.io/rule": rule.id}
    spec = {"paramKind": {"apiVersion": "v1", "kind": "ConfigMap"}, "failurePolicy": "Fail",
            "reinvocationPolicy": "Never",
            "matchConstraints": {"matchPolicy": "Equivalent", "resourceRules": _resource_rules(kinds, kube_version)},
            "matchConditions": _match_conditions(kinds, controllers),
            "variables": variables_for([expression], kinds),
            "mutations": [{"patchType": "JSONPatch", "jsonPatch": {"expression": expression}}]}
    return [{"apiVersion": api_version, "kind": "MutatingAdmissionPolicy",
             "metadata": {"name": name, "labels": labels, "annotations": {"draguard.io/kube-version": kube_version}},
             "spec": spec},
            {"apiVersion": api_version, "kind": "MutatingAdmissionPolicyBinding",
             "metadata": {"name": name, "labels": dict(labels)},
             "spec": {"policyName": name, "paramRef": {"name": PARAMS, "namespace": namespace,
                                                       "parameterNotFoundAction": "Allow"},
                      "matchResources": _exempting(exempt)}}]


def _exempting(exempt: list[str]) -> dict:
    return {"namespaceSelector": {"matchExpressions": [
        {"key": "kubernetes.io/metadata.name", "operator": "NotIn", "values": sorted(exempt)}]}}


def parameters(config: Config, mutated: list[Rule], namespace: str = NAME) -> dict:
    """The ConfigMap the policies read their parameters from: the admin namespaces, and the
    options of the rules whose fixes are exported (`<rule id>.<option>`)."""
    data = {PARAMS_ADMIN_NAMESPACES: ",".join(sorted(config.admin_namespaces))}
    data.update((f"{rule.id}.{name}", str(config.rule_option(rule, name))) for rule in mutated for name in rule.options)
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": PARAMS, "namespace": namespace, "labels": dict(LABELS)}, "data": data}


@dataclass
class Export:
    objects: list[dict]  # the parameters' Namespace and ConfigMap, then each rule's policy and binding (and mutation)
    left_out: dict[str, str]  # rule id -> why it has no policy (its form and reason, or the config)


def export(rules, config: Config, namespace: str = NAME, exempt: list[str] | None = None,
           unsafe_fixes: bool = False, controller_users=()) -> Export:
    """The policies of `rules` for `config`'s release, as `config` sets them (rules switched
    off are left out, a severity changed to info too: admission ignores info), and the
    MutatingAdmissionPolicies of their safe fixes (`unsafe_fixes`: the unsafe ones too);
    `exempt`: the namespaces the bindings leave out (default kube-system), always with
    `namespace`, the parameters';
    `controller_users`: operators whose objects made from a template are not judged, besides
    the Kubernetes workload controllers."""
    exempt = sorted({*(exempt if exempt is not None else ["kube-system"]), namespace})
    controllers = controllers_with(controller_users)
    objects, left_out, mutated = [], {}, []
    for rule in rules:
        settings = config.settings(rule.id)
        form = form_of(rule, config.kube_version)
        severity = config.severity(rule.id, rule.severity)
        if not settings.enabled:
            left_out[rule.id] = "switched off in the config" if rule.id in config.rules else \
                f"not selected: the {config.profile} profile leaves it out (`--profile strict` or `select`)"
        elif not form.exported:
            left_out[rule.id] = f"{form}: {form.reason}"
        elif severity is Severity.INFO:
            left_out[rule.id] = "set to info in the config: admission denies errors and warns on warnings"
        else:
            objects.extend(policy(rule, config.kube_version, exempt, namespace, severity, controllers))
            if form.mutates and (unsafe_fixes or _mutation(rule).applicability is Applicability.SAFE):
                objects.extend(mutating_policy(rule, config.kube_version, exempt, namespace, controllers))
                mutated.append(rule)
    return Export([namespace_object(namespace), parameters(config, mutated, namespace)] + objects, left_out)
