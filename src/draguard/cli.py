"""The `draguard` command line. Exit status: 0 nothing at or above --fail-on, 1 findings,
2 usage, input or tool errors (never 1 for a failure of the tool itself)."""

from __future__ import annotations

import argparse
import json
import os
import sys

from . import __version__
from .config import ConfigError, check_kube_version, find_config, load_config
from .docs import rule_markdown
from .engine import LintRequest, run
from .findings import Severity
from .commands import allocate_command, inventory_command
from .fsutil import write_atomic
from .load.sources import DEFAULT_INCLUDE, InputError
from .report import FORMATS
from .rules import REGISTRY

EXIT_OK, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
COMMANDS = ("lint", "rules", "explain", "inventory", "allocate")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="draguard",
        description="GPU-partitioning guardrails for Kubernetes Dynamic Resource Allocation.")
    parser.add_argument("--version", action="version", version=f"draguard {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    lint = sub.add_parser("lint", help="lint manifests (files, folders, charts, kustomizations, '-')")
    lint.add_argument("paths", nargs="*", default=["."], help="inputs; '-' reads stdin (default: .)")
    lint.add_argument("-f", "--format", choices=sorted(FORMATS), default="text")
    lint.add_argument("-o", "--output", help="write the report to this file (atomically) instead of stdout")
    lint.add_argument("--fail-on", choices=["error", "warning", "info"],
                      help="lowest severity that makes the exit status 1 (default: error, or failOn)")
    lint.add_argument("--config", help="config file (default: nearest .draguard.yaml above the first input)")
    lint.add_argument("--no-config", action="store_true", help="ignore any .draguard.yaml")
    lint.add_argument("--kube-version", help="target Kubernetes version, 1.32 to 1.37 (default 1.32)")
    lint.add_argument("--include", action="append", metavar="GLOB",
                      help=f"file globs taken from folders (default: {' '.join(DEFAULT_INCLUDE)})")
    lint.add_argument("--exclude", action="append", metavar="GLOB", default=[],
                      help="file or folder globs skipped in folders")
    lint.add_argument("--show-suppressed", action="store_true", help="also list suppressed findings")
    lint.add_argument("--color", choices=["auto", "always", "never"], default="auto")
    lint.add_argument("--inventory", action="append", metavar="PATH",
                      help="ResourceSlices/Nodes/claims that request-unsatisfiable checks against "
                           "(default: the built-in GPU catalog)")

    rules = sub.add_parser("rules", help="list the rule catalog")
    rules.add_argument("-f", "--format", choices=["text", "json"], default="text")

    explain = sub.add_parser("explain", help="print a rule's documentation")
    explain.add_argument("rule_id")

    inventory = sub.add_parser("inventory", help="inventory tools")
    inventory_sub = inventory.add_subparsers(dest="inventory_command", required=True)
    generate = inventory_sub.add_parser("generate", help="Nodes and ResourceSlices from a short spec")
    generate.add_argument("spec", help="the spec file (see docs: nodes, gpus.model, mig layout)")
    generate.add_argument("-o", "--output", help="write to this file (atomically) instead of stdout")

    allocate = sub.add_parser("allocate", help="allocate claims on an inventory, or explain why not")
    allocate.add_argument("claims", nargs="+", help="files with ResourceClaims or ResourceClaimTemplates")
    allocate.add_argument("--inventory", action="append", required=True, metavar="PATH",
                          help="ResourceSlices, Nodes, DeviceClasses and allocated claims")
    allocate.add_argument("-f", "--format", choices=["text", "json"], default="text")
    return parser


def _colour(choice: str, stream) -> bool:
    if choice != "auto":
        return choice == "always"
    return stream.isatty() and "NO_COLOR" not in os.environ


def _lint(args) -> int:
    if args.no_config:
        config = load_config(None)
    else:
        config = load_config(args.config if args.config else find_config(args.paths))
    if args.kube_version:
        config.kube_version = check_kube_version(args.kube_version)
    fail_on = Severity.parse(args.fail_on) if args.fail_on else config.fail_on
    if args.inventory:
        config.inventory = args.inventory
    request = LintRequest(args.paths, config, tuple(args.include or DEFAULT_INCLUDE), tuple(args.exclude))
    result = run(request)
    to_file = bool(args.output)
    text = FORMATS[args.format](result, colour=not to_file and _colour(args.color, sys.stdout),
                                show_suppressed=args.show_suppressed, fail_on=fail_on)
    if to_file:
        write_atomic(args.output, text)
    else:
        sys.stdout.write(text)
    return EXIT_FINDINGS if result.failed(fail_on) else EXIT_OK


def _rules(args) -> int:
    if args.format == "json":
        sys.stdout.write(json.dumps([rule.describe() for rule in REGISTRY], indent=2) + "\n")
        return EXIT_OK
    width = max(len(rule.id) for rule in REGISTRY)
    for rule in REGISTRY:
        sys.stdout.write(f"{rule.id:<{width}}  {rule.category:<16} {str(rule.severity):<7}  {rule.summary}\n")
    return EXIT_OK


def _explain(args) -> int:
    rule = REGISTRY.get(args.rule_id)
    if rule is None:
        sys.stderr.write(f"draguard: unknown rule '{args.rule_id}' (see `draguard rules`)\n")
        return EXIT_ERROR
    sys.stdout.write(rule_markdown(rule))
    return EXIT_OK


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] not in COMMANDS and argv[0] not in ("-h", "--help", "--version"):
        argv.insert(0, "lint")  # `draguard deploy/` means `draguard lint deploy/`
    try:
        args = _parser().parse_args(argv)
    except SystemExit as exc:  # argparse already printed the usage error
        return EXIT_OK if exc.code == 0 else EXIT_ERROR
    handlers = {"lint": _lint, "rules": _rules, "explain": _explain, "inventory": inventory_command,
                "allocate": allocate_command}
    try:
        return handlers[args.command](args)
    except (InputError, ConfigError, ValueError, OSError) as exc:
        sys.stderr.write(f"draguard: {exc}\n")
        return EXIT_ERROR
    except KeyboardInterrupt:
        return EXIT_ERROR
    except Exception as exc:  # a bug must still not look like "findings" (exit 1) or a traceback
        if os.environ.get("DRAGUARD_DEBUG"):
            raise
        sys.stderr.write(f"draguard: internal error: {type(exc).__name__}: {exc}\n"
                         "draguard: please report this with the input that caused it\n")
        return EXIT_ERROR
