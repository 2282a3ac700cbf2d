"""`draguard agent-rules`: write the rule files of AI coding assistants from the catalog, each
example checked by draguard first (report.agent_rules). The cluster rules are left out: they
judge a cluster's live state, not the manifests an assistant writes."""

from __future__ import annotations

import os
import sys

from ..core.errors import EXIT_ERROR, EXIT_FINDINGS, EXIT_OK


def arguments(name, parser) -> None:
    from ..report.agent_rules import TARGETS

    parser.add_argument("--target", action="append", choices=[*TARGETS, "all"],
                        help="which assistant's file (repeatable; default all): " +
                             ", ".join(f"{name} -> {t.path}" for name, t in TARGETS.items()))
    parser.add_argument("--output-dir", default=".", help="the repository root the files go in (default .)")
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 when a file is out of date")


def run(args) -> int:
    from ..core.atomic import write_atomic
    from ..report.agent_rules import TARGETS, ExampleError, guidelines, render, verify
    from ..rules import REGISTRY
    from ..rules.base import Needs

    names = list(TARGETS) if not args.target or "all" in args.target else list(dict.fromkeys(args.target))
    rules = [rule for rule in REGISTRY if rule.compliant and rule.noncompliant and rule.needs is not Needs.CLUSTER]
    try:
        verify(rules)
    except ExampleError as exc:
        sys.stderr.write(f"draguard: not writing rule files: {exc}\n")
        return EXIT_ERROR
    body = guidelines(rules)
    stale = []
    for name in names:
        target = TARGETS[name]
        path = os.path.join(args.output_dir, target.path)
        existing = open(path, encoding="utf-8").read() if os.path.exists(path) else None
        wanted = render(target, body, existing)
        if wanted == existing:
            continue
        stale.append(path)
        if not args.check:
            os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
            write_atomic(path, wanted)
    verb = "out of date" if args.check else "written"
    for path in stale:
        sys.stdout.write(f"{path}: {verb}\n")
    sys.stdout.write(f"{len(stale)} of {len(names)} rule file(s) {verb}; {len(rules)} rules, every example checked\n")
    return EXIT_FINDINGS if args.check and stale else EXIT_OK
