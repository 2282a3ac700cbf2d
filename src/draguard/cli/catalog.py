"""`draguard rules` and `draguard explain`: the catalog, from the registry alone."""

from __future__ import annotations

import json
import sys

from ..core.errors import EXIT_ERROR, EXIT_OK


def arguments(name, parser) -> None:
    if name == "rules":
        parser.add_argument("-f", "--format", choices=["text", "json"], default="text")
    else:
        parser.add_argument("rule_id")


def run(args) -> int:
    from ..rules import REGISTRY

    if args.command == "explain":
        from ..report.docs import rule_markdown

        rule = REGISTRY.get(args.rule_id)
        if rule is None:
            sys.stderr.write(f"draguard: unknown rule '{args.rule_id}' (see `draguard rules`)\n")
            return EXIT_ERROR
        sys.stdout.write(rule_markdown(rule))
        return EXIT_OK
    if args.format == "json":
        sys.stdout.write(json.dumps([rule.describe() for rule in REGISTRY], indent=2) + "\n")
        return EXIT_OK
    width = max(len(rule.id) for rule in REGISTRY)
    sys.stdout.write(f"{'id':<{width}}  {'category':<16} {'severity':<8} {'fix':<9} summary\n")
    for rule in REGISTRY:
        fix = "" if str(rule.fixable) == "never" else str(rule.fixable)
        sys.stdout.write(f"{rule.id:<{width}}  {rule.category:<16} {str(rule.severity):<8} {fix:<9} {rule.summary}\n")
    return EXIT_OK
