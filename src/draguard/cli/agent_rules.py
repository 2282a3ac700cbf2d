"""`draguard agent-rules`: write the rule files of AI coding assistants from the catalog, each
example checked by draguard first (generate.agent_rules): a core of a few kilobytes per
assistant and the detail per topic, each file's size in tokens said. The cluster rules are
left out: they judge a cluster's live state, not the manifests an assistant writes."""

from __future__ import annotations

import os
import sys

from ..core.errors import EXIT_ERROR, EXIT_FINDINGS, EXIT_OK


def arguments(name, parser) -> None:
    from ..generate.agent_rules import TARGETS

    parser.add_argument("--target", action="append", choices=[*TARGETS, "all"],
                        help="which assistant's files (repeatable; default all): " +
                             ", ".join(f"{name} -> {t.path}" for name, t in TARGETS.items()) +
                             "; with the topic files they link or scope")
    parser.add_argument("--output-dir", default=".", help="the repository root the files go in (default .)")
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 when a file is out of date")


def run(args) -> int:
    from ..core.atomic import write_atomic
    from ..generate.agent_rules import TARGETS, ExampleError, files, rules_for_agents, size, verify

    names = list(TARGETS) if not args.target or "all" in args.target else list(dict.fromkeys(args.target))
    rules = rules_for_agents()
    try:
        verify(rules)
    except ExampleError as exc:
        sys.stderr.write(f"draguard: not writing rule files: {exc}\n")
        return EXIT_ERROR

    def existing(relative: str) -> str | None:
        path = os.path.join(args.output_dir, relative)
        return open(path, encoding="utf-8").read() if os.path.exists(path) else None

    wanted: dict[str, str] = {}
    for name in names:
        wanted.update(files(TARGETS[name], rules, existing))
    stale = []
    for relative, text in wanted.items():
        if text == existing(relative):
            state = "up to date"
        else:
            stale.append(relative)
            state = "out of date" if args.check else "written"
            if not args.check:
                path = os.path.join(args.output_dir, relative)
                os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
                write_atomic(path, text)
        sys.stdout.write(f"{os.path.join(args.output_dir, relative)}: {state} ({size(text)})\n")
    verb = "out of date" if args.check else "written"
    sys.stdout.write(f"{len(stale)} of {len(wanted)} rule file(s) {verb}; {len(rules)} rules, every example checked\n")
    return EXIT_FINDINGS if args.check and stale else EXIT_OK
