"""`draguard rules` and `draguard explain`: the catalog, from the registry alone."""

from __future__ import annotations

import json
import sys

from ..core.errors import EXIT_ERROR, EXIT_OK, UsageError


def arguments(name, parser) -> None:
    if name == "rules":
        parser.add_argument("-f", "--format", choices=["text", "json"], default="text")
        parser.add_argument("--kube-version", help="the release the admission column is for (default: the newest "
                                                   "draguard knows)")
    else:
        parser.add_argument("rule_id")


def run(args) -> int:
    from ..rules import REGISTRY

    if args.command == "explain":
        from ..generate.docs import rule_markdown

        rule = REGISTRY.get(args.rule_id)
        if rule is None:
            sys.stderr.write(f"draguard: unknown rule '{args.rule_id}' (see `draguard rules`)\n")
            return EXIT_ERROR
        sys.stdout.write(rule_markdown(rule))
        return EXIT_OK
    from ..admission.forms import form_of
    from ..core.versions import DEFAULT_KUBE_VERSION, check_kube_version

    try:
        kube_version = check_kube_version(args.kube_version or DEFAULT_KUBE_VERSION)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    forms = {rule.id: form_of(rule, kube_version) for rule in REGISTRY}
    if args.format == "json":
        described = [dict(rule.describe(), admissionForm={"kubeVersion": kube_version, "form": str(forms[rule.id]),
                                                          "reason": forms[rule.id].reason}) for rule in REGISTRY]
        sys.stdout.write(json.dumps(described, indent=2) + "\n")
        return EXIT_OK
    width = max(len(rule.id) for rule in REGISTRY)
    sys.stdout.write(f"{'id':<{width}}  {'category':<16} {'severity':<8} {'profile':<11} {'lifecycle':<10} "
                     f"{'fix':<9} {'admission':<12} summary\n")
    for rule in REGISTRY:
        fix = "" if str(rule.fixable) == "never" else str(rule.fixable)
        sys.stdout.write(f"{rule.id:<{width}}  {rule.category:<16} {str(rule.severity):<8} {str(rule.profile):<11} "
                         f"{str(rule.lifecycle):<10} {fix:<9} {str(forms[rule.id]):<12} {rule.summary}\n")
    sys.stdout.write("\nprofile: recommended runs by default, strict adds the rest (`--profile strict`); why each "
                     "rule is where it is: its docs and docs/profiles.md. lifecycle: stable, preview (only with "
                     "--preview), deprecated (still runs), removed (never runs).")
    sys.stdout.write(f"\nadmission (Kubernetes {kube_version}): vap = a ValidatingAdmissionPolicy (`draguard policy "
                     "export`), +map = its fix as a MutatingAdmissionPolicy; webhook-only = `draguard webhook`; lint-only = nothing reaches admission to judge. "
                     "The reasons: `draguard rules -f json` and each rule's docs.\n")
    return EXIT_OK
