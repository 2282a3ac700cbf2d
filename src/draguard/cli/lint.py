"""`draguard lint`."""

from __future__ import annotations

import argparse
import os
import sys

from ..core.errors import EXIT_ERROR, EXIT_FINDINGS, EXIT_OK, UsageError
from ..core.versions import DEFAULT_KUBE_VERSION, SUPPORTED_KUBE_VERSIONS
from ..report import FORMAT_NAMES
from ..sources.discover import DEFAULT_INCLUDE
from . import left_to_the_end


def arguments(name, parser) -> None:
    input_arguments(parser)
    selection_arguments(parser)
    parser.add_argument("-f", "--format", choices=FORMAT_NAMES, default="text")
    parser.add_argument("-o", "--output", help="write the report to this file (atomically) instead of stdout")
    parser.add_argument("--show-suppressed", action="store_true", help="also list suppressed findings")
    parser.add_argument("--color", choices=["auto", "always", "never"], default="auto")
    jobs_argument(parser, "judge the objects", "the report")


def jobs_argument(parser, what: str, same: str) -> None:
    """-j/--jobs: how many processes do the work (lint, fix); the output is the same whatever the number."""
    parser.add_argument("-j", "--jobs", type=_jobs, metavar="N",
                        help=f"processes that {what} (default: the CPUs available; 1: this process only); "
                             f"{same} is the same whatever the number")


def _jobs(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: a number of processes, 1 or more")
    return value


def input_arguments(parser) -> None:
    """What to read and how to judge it: shared by the commands that lint (lint, fix)."""
    parser.add_argument("paths", nargs="*", default=["."], help="inputs; '-' reads stdin (default: .)")
    parser.add_argument("--fail-on", choices=["error", "warning", "info"],
                        help="lowest severity that makes the exit status 1 (default: error, or failOn)")
    parser.add_argument("--config", help="config file (default: nearest .draguard.yaml above the first input)")
    parser.add_argument("--no-config", action="store_true", help="ignore any .draguard.yaml")
    parser.add_argument("--kube-version", help=f"target Kubernetes version, {SUPPORTED_KUBE_VERSIONS[0]} to "
                                               f"{SUPPORTED_KUBE_VERSIONS[-1]} (default {DEFAULT_KUBE_VERSION})")
    parser.add_argument("--feature-gates", metavar="GATE=BOOL,...",
                        help="feature gates the cluster sets differently from the release defaults, as given "
                             "to its components (DRA's, and MaxUnavailableStatefulSet; e.g. "
                             "DRAConsumableCapacity=true)")
    parser.add_argument("--values", action="append", default=[], metavar="PATH",
                        help="values file for Helm charts among the inputs (passed to helm template; repeatable)")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", dest="set_values",
                        help="value for Helm charts among the inputs (passed to helm template; repeatable)")
    parser.add_argument("--include", action="append", metavar="GLOB",
                        help=f"file globs taken from folders (default: {' '.join(DEFAULT_INCLUDE)})")
    parser.add_argument("--exclude", action="append", metavar="GLOB", default=[],
                        help="file or folder globs skipped in folders")
    parser.add_argument("--inventory", action="append", metavar="PATH",
                        help="ResourceSlices/Nodes/claims that request-unsatisfiable checks against "
                             "(default: the built-in GPU inventory)")
    parser.add_argument("--reference", action="append", default=[], metavar="PATH",
                        help="files and folders read only for what the rules read across objects (the template a "
                             "pod names, the budget that selects it), neither judged nor written: the pre-commit "
                             "hooks pass `--reference .` with the changed files")
    parser.add_argument("--allow-empty", action="store_true",
                        help="exit 0 when no Kubernetes object was found to check (default: exit 2)")


def profile_arguments(parser) -> None:
    """The profile and preview switches, which `fix` shares (its --select picks fixes)."""
    parser.add_argument("--profile", choices=["recommended", "strict"],
                        help="the rules to run: recommended (the default: what an engineer acts on) or strict "
                             "(everything the guideline documents ask); docs/profiles.md")
    parser.add_argument("--preview", action="store_true", help="run preview rules too")


def selection_arguments(parser) -> None:
    """Which rules judge (rules.selection), over the config's `profile`, `select`,
    `extendSelect`, `ignore` and `preview`."""
    profile_arguments(parser)
    parser.add_argument("--select", action="append", metavar="RULES",
                        help="run only these (comma-separated rule ids, categories or 'all'; repeatable), "
                             "instead of the profile's rules")
    parser.add_argument("--extend-select", action="append", default=[], metavar="RULES",
                        help="run these too (comma-separated rule ids, categories or 'all'; repeatable)")
    parser.add_argument("--ignore", action="append", default=[], metavar="RULES",
                        help="do not run these (comma-separated rule ids or categories; repeatable)")


def _selectors(values) -> tuple:
    return tuple(part.strip() for value in values for part in value.split(",") if part.strip())


def select_rules(config, args, selectors: bool = True) -> None:
    """The command line's selection over the config's: --profile and --select replace, the
    others add; without `selectors` (fix) only --profile and --preview are read."""
    from ..engine.config_file import apply_selection

    if getattr(args, "profile", None):  # a Namespace made in code may lack the switches
        config.profile = args.profile
    if selectors and args.select is not None:
        config.select = _selectors(args.select)
    if selectors:
        config.extend_select = (*config.extend_select, *_selectors(args.extend_select))
        config.ignore = (*config.ignore, *_selectors(args.ignore))
    config.preview = config.preview or getattr(args, "preview", False)
    try:
        apply_selection(config)
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def said_incomplete(result) -> bool:
    """Whether a rule failed (internal-error findings); said on stderr: the run exits 2."""
    if result.internal_errors:
        sys.stderr.write(f"draguard: {result.internal_errors} rule failure(s) (internal-error findings): the "
                         "result is incomplete\n")
    return bool(result.internal_errors)


def said_empty(result, args) -> bool:
    """Whether the run read no Kubernetes object at all, which it then says (unless
    --allow-empty): a mistyped path or a folder of other YAML must not pass as a clean run."""
    if result.objects or args.allow_empty:
        return False
    summary = result.summary()
    hidden = _hidden_folders(args.paths)
    sys.stderr.write(f"draguard: no Kubernetes object was checked in {summary['files']} file(s) "
                     f"({summary['refused']} refused, {summary['total']} finding(s) above say why); "
                     + (f"a walk skips hidden folders ({', '.join(hidden)}): name one to check it; " if hidden else "")
                     + "pass --allow-empty if that is expected\n")
    return True


def _hidden_folders(paths) -> list[str]:
    """The hidden folders right inside the folders given (`.tekton`, `.github`), which a walk
    skips: a tree whose manifests all live there reads as empty (.git is never one)."""
    found = []
    for path in paths:
        try:
            names = sorted(os.listdir(path)) if path != "-" and os.path.isdir(path) else []
        except OSError:
            continue
        found += [os.path.join(path, n) for n in names
                  if n.startswith(".") and n != ".git" and os.path.isdir(os.path.join(path, n))]
    return found


def feature_gates(text: str | None) -> dict:
    """--feature-gates as the components take it (`A=true,B=false`); UsageError naming the
    entry that is wrong."""
    from ..facts.gates import parse_gates

    try:
        return parse_gates(text or "")
    except ValueError as exc:
        raise UsageError(f"--feature-gates: {exc}") from None


def target_arguments(parser, inventory_help: str) -> None:
    """Which cluster a command judges for, over the project's `.draguard.yaml`: shared by
    the commands that take no lint options (allocate, simulate)."""
    parser.add_argument("--inventory", action="append", metavar="PATH",
                        help=f"{inventory_help} (default: the config's `inventory`)")
    parser.add_argument("--kube-version", help=f"the cluster's Kubernetes version, {SUPPORTED_KUBE_VERSIONS[0]} to "
                                               f"{SUPPORTED_KUBE_VERSIONS[-1]} (default: the config's kubeVersion, "
                                               f"else {DEFAULT_KUBE_VERSION}): its feature gate defaults decide "
                                               "what the allocator may do")
    parser.add_argument("--feature-gates", metavar="GATE=BOOL,...",
                        help="feature gates the cluster sets differently from the release defaults, over the "
                             "config's featureGates (DRA's: the allocator the scheduler runs; "
                             "MaxUnavailableStatefulSet)")
    parser.add_argument("--config", help="config file (default: nearest .draguard.yaml above the first manifest)")
    parser.add_argument("--no-config", action="store_true", help="ignore any .draguard.yaml")


def project_config(args, near: list[str]):
    """The project's `.draguard.yaml` (--config, else the nearest above the first of `near`;
    none with --no-config) with --kube-version, --feature-gates and --inventory over it: every
    command judges for the cluster the project names, unless told otherwise."""
    from ..core.versions import check_kube_version
    from ..engine.config_file import find_config, load_config

    config = load_config(None if args.no_config else args.config or find_config(near))
    if args.kube_version:
        config.kube_version = check_kube_version(args.kube_version)
        config.kube_version_from = "--kube-version"
    config.feature_gates.update(feature_gates(args.feature_gates))
    if args.inventory:
        config.inventory = args.inventory
    return config


def configure(args):
    """(config, fail-on severity) from the config file and the command line."""
    from ..core.finding import Severity

    config = project_config(args, args.paths)
    missing = [v for v in args.values if not os.path.isfile(v)]
    if missing:
        raise UsageError(f"--values: no such file: {missing[0]}")
    return config, Severity.parse(args.fail_on) if args.fail_on else config.fail_on


def _colour(choice: str, stream) -> bool:
    if choice != "auto":
        return choice == "always"
    return stream.isatty() and "NO_COLOR" not in os.environ


def run(args) -> int:
    from ..core.atomic import atomic_writer
    from ..core.collector import cyclic_gc_paused
    from ..engine.lint import Reading
    from ..engine.parallel import available_cpus, lint_paths_jobs
    from ..report import chunk_renderer, piece_renderer
    from ..report.progress import for_run

    config, fail_on = configure(args)
    select_rules(config, args)
    progress = for_run(args.format)
    reading = Reading(include=tuple(args.include or DEFAULT_INCLUDE), exclude=tuple(args.exclude),
                      helm_values=tuple(os.path.abspath(v) for v in args.values), helm_set=tuple(args.set_values),
                      reference=tuple(args.reference))
    to_file = bool(args.output)
    options = dict(colour=not to_file and _colour(args.color, sys.stdout), show_suppressed=args.show_suppressed,
                   fail_on=fail_on)
    # each part of a --jobs run makes its findings' pieces of the report (report.pieces)
    result = lint_paths_jobs(args.paths, config, args.jobs or available_cpus(), reading, progress=progress,
                             pieces=piece_renderer(args.format, config=config, **options))
    if progress:
        progress.close()
    with cyclic_gc_paused():  # a report makes many objects beside every manifest still held: no walk of them all
        pieces = chunk_renderer(args.format)(result, **options)
        if to_file:
            with atomic_writer(args.output) as handle:
                handle.writelines(pieces)
        else:
            sys.stdout.writelines(pieces)
    left_to_the_end(args, result)
    if said_empty(result, args):
        return EXIT_ERROR
    if said_incomplete(result):
        return EXIT_ERROR
    return EXIT_FINDINGS if result.failed(fail_on) else EXIT_OK
