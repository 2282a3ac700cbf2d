"""`draguard policy export`: the catalog as ValidatingAdmissionPolicies for one release."""

from __future__ import annotations

import sys

from ..core.errors import EXIT_OK, UsageError
from .lint import profile_arguments, select_rules


def arguments(name, parser) -> None:
    parser.add_argument("action", choices=["export"],
                        help="export: print the parameters' Namespace and ConfigMap, then a ValidatingAdmissionPolicy "
                             "and binding for every rule that is CEL on one object (kubectl apply -f - in one pass)")
    parser.add_argument("--kube-version", help="the release the policies are for (default: the newest draguard "
                                               "knows): it decides the resource.k8s.io version matched and the "
                                               "CEL libraries allowed")
    parser.add_argument("--config", help="config file (rules switched off, severities, adminNamespaces)")
    parser.add_argument("--namespace", default="draguard", help="the namespace of the parameters' ConfigMap")
    parser.add_argument("--exempt-namespace", action="append", metavar="NS",
                        help="namespaces the bindings exempt (repeatable; default: kube-system), always with "
                             "--namespace. Whoever can create or write in one is exempt: name only namespaces that "
                             "exist and tenants cannot create (gpu-operator, for the NVIDIA GPU Operator)")
    parser.add_argument("--controller-user", action="append", default=[], metavar="USER",
                        help="an operator's user (system:serviceaccount:NS:NAME) whose objects made from their "
                             "owner's template the policies leave out, as they leave out the Kubernetes workload "
                             "controllers' (repeatable)")
    parser.add_argument("--unsafe-fixes", action="store_true",
                        help="also write MutatingAdmissionPolicies for unsafe fixes (from 1.34; beta behind the "
                             "MutatingAdmissionPolicy gate before 1.36), their values in the ConfigMap")
    parser.add_argument("--rule", action="append", metavar="ID", help="export only these rules (repeatable)")
    profile_arguments(parser)
    parser.add_argument("-o", "--output", help="write to this file (atomically) instead of standard output")
    parser.add_argument("-v", "--verbose", action="store_true",
                        help="also list each rule that has no policy, and why (on standard error)")


def run(args) -> int:
    import yaml

    from ..admission.policies import export
    from ..core.atomic import write_atomic
    from ..core.versions import check_kube_version
    from ..engine.config_file import load_config
    from ..rules.custom import catalog, rule_named

    config = load_config(args.config)
    select_rules(config, args, selectors=False)
    if args.kube_version:
        try:
            config.kube_version = check_kube_version(args.kube_version)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
    rules = catalog(config)  # the built-in rules and the config's own checks
    if args.rule:
        named = {r: rule_named(config, r) for r in args.rule}  # each once, in the order given
        unknown = [r for r, rule in named.items() if rule is None]
        if unknown:
            raise UsageError(f"unknown rule {', '.join(map(repr, unknown))} (see `draguard rules`)")
        rules = [rule for rule in named.values() if rule is not None]
    result = export(rules, config, args.namespace, args.exempt_namespace, args.unsafe_fixes, args.controller_user)
    text = yaml.safe_dump_all(result.objects, sort_keys=False, explicit_start=True, width=1 << 16)
    if args.output:
        write_atomic(args.output, text)
    else:
        sys.stdout.write(text)
    policies = sum(1 for o in result.objects if o["kind"] == "ValidatingAdmissionPolicy")
    mutations = sum(1 for o in result.objects if o["kind"] == "MutatingAdmissionPolicy")
    sys.stderr.write(f"draguard: {policies} ValidatingAdmissionPolicies and {mutations} MutatingAdmissionPolicies "
                     f"for Kubernetes {config.kube_version}; "
                     f"{len(result.left_out)} rules without one"
                     f"{':' if args.verbose else ' (--verbose lists them and why)'}\n")
    if args.verbose:  # one line a rule: asked for, not on every run
        for rule_id, why in result.left_out.items():
            sys.stderr.write(f"  {rule_id}: {why}\n")
    return EXIT_OK
