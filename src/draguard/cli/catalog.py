"""`draguard rules` and `draguard explain`: the catalog, the built-in rules and the checks the
project's `.draguard.yaml` declares (rules.custom), each said to be one (`--config`, else
the nearest `.draguard.yaml` above the working folder; none with `--no-config`)."""

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
    parser.add_argument("--config", help="config file whose checks are listed too (default: the nearest "
                                         ".draguard.yaml above the working folder)")
    parser.add_argument("--no-config", action="store_true", help="ignore any .draguard.yaml: the built-in rules only")


def _rules(args) -> list:
    """The built-in rules, then the checks of the project's config."""
    from ..engine.config_file import find_config, load_config
    from ..rules.custom import catalog

    return catalog(load_config(None if args.no_config else args.config or find_config([])))


def origin(rule) -> str:
    """Where a rule comes from: draguard, or the config file line that declares a check."""
    from ..rules.custom import UserCheck

    return f"user check from {rule.declared_at}" if isinstance(rule, UserCheck) else "built-in"


def run(args) -> int:
    rules = _rules(args)
    if args.command == "explain":
        from ..generate.docs import rule_markdown

        rule = next((r for r in rules if r.id == args.rule_id), None)
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
    forms = {rule.id: form_of(rule, kube_version) for rule in rules}
    if args.format == "json":
        described = [dict(rule.describe(), origin=origin(rule),
                          admissionForm={"kubeVersion": kube_version, "form": str(forms[rule.id]),
                                         "reason": forms[rule.id].reason}) for rule in rules]
        sys.stdout.write(json.dumps(described, indent=2) + "\n")
        return EXIT_OK
    width = max(len(rule.id) for rule in rules)
    sys.stdout.write(f"{'id':<{width}}  {'category':<16} {'severity':<8} {'profile':<11} {'lifecycle':<10} "
                     f"{'fix':<9} {'admission':<12} summary\n")
    for rule in rules:
        fix = "" if str(rule.fixable) == "never" else str(rule.fixable)
        summary = rule.summary if origin(rule) == "built-in" else f"{origin(rule)}: {rule.name}"
        sys.stdout.write(f"{rule.id:<{width}}  {rule.category:<16} {str(rule.severity):<8} {str(rule.profile):<11} "
                         f"{str(rule.lifecycle):<10} {fix:<9} {str(forms[rule.id]):<12} {summary}\n")
    sys.stdout.write("\nprofile: recommended runs by default, strict adds the rest (`--profile strict`); why each "
                     "rule is where it is: its docs and docs/profiles.md. lifecycle: stable, preview (only with "
                     "--preview), deprecated (still runs), removed (never runs).")
    sys.stdout.write(f"\nadmission (Kubernetes {kube_version}): vap = a ValidatingAdmissionPolicy (`draguard policy "
                     "export`), +map = its fix as a MutatingAdmissionPolicy; webhook-only = `draguard webhook`; lint-only = nothing reaches admission to judge. "
                     "The reasons: `draguard rules -f json` and each rule's docs.\n")
    return EXIT_OK
