"""`draguard fix`: apply the rules' fixes to the files in place, byte-minimal.

Exit status: with --check or --diff, 1 while any fix is pending (one that would apply, one
that waits for --unsafe-fixes, one in rendered output that is not written), else 0; otherwise 1 when
findings at or above --fail-on remain after fixing, else 0; 2 for usage and input errors, a
file that could not be written, a rule that failed (an internal-error finding, as lint), and
for a run that read no Kubernetes object (unless --allow-empty), as lint."""

from __future__ import annotations

import os
import sys
from collections import Counter

from ..core.config import Config, RuleSettings
from ..core.errors import EXIT_ERROR, EXIT_FINDINGS, EXIT_OK, UsageError
from ..sources.discover import DEFAULT_INCLUDE
from .lint import (configure, input_arguments, jobs_argument, profile_arguments, said_empty, said_incomplete,
                   select_rules)


def arguments(name, parser) -> None:
    input_arguments(parser)
    profile_arguments(parser)
    parser.add_argument("--unsafe-fixes", action="store_true",
                        help="also apply fixes that change behaviour (the migration to DRA is one)")
    parser.add_argument("--diff", action="store_true", help="print a unified diff of the fixes and write nothing")
    parser.add_argument("--check", action="store_true",
                        help="write nothing; exit 1 while any fix is pending, safe or unsafe (for CI)")
    parser.add_argument("--strategy", choices=["claims", "extended-resource"],
                        help="how device-plugin GPUs move to DRA: a ResourceClaimTemplate per container and resource "
                             "(claims, the default), or keep the limits and serve them with a DeviceClass that sets "
                             "extendedResourceName (extended-resource, KEP-5004, 1.34+); the config's "
                             "legacy-gpu-resource strategy otherwise")
    parser.add_argument("--select", action="append", default=[], metavar="RULES",
                        help="only these rules' fixes (comma-separated ids; repeatable)")
    parser.add_argument("--ignore", action="append", default=[], metavar="RULES",
                        help="never these rules' fixes (comma-separated ids; repeatable)")
    jobs_argument(parser, "fix the files", "what is written, printed and returned")


def _rule_ids(values: list[str], flag: str, config: Config) -> frozenset[str]:
    """The rule ids `values` name: the built-in rules and the config's own checks (which have
    no fixes, but are rules all the same)."""
    from ..rules.custom import catalog

    known = {rule.id for rule in catalog(config)}
    ids = frozenset(part.strip() for value in values for part in value.split(",") if part.strip())
    unknown = sorted(ids - known)
    if unknown:
        raise UsageError(f"{flag}: no such rule: {', '.join(unknown)} (see `draguard rules`)")
    return ids


def run(args) -> int:
    from ..sources.options import RenderOptions
    from ..fix.files import BOM, file_diff, gather, given_roots, remove_stale
    from ..engine.parallel import available_cpus
    from ..fix.parallel import fix_texts_jobs
    from ..fix.run import Choice, FileText
    from ..sources.loader import load_reference

    config, fail_on = configure(args)
    select_rules(config, args, selectors=False)
    if args.strategy:
        settings = config.rules.setdefault("legacy-gpu-resource", RuleSettings())
        settings.options = {**settings.options, "strategy": args.strategy}
    choice = Choice(args.unsafe_fixes, _rule_ids(args.select, "--select", config),
                    _rule_ids(args.ignore, "--ignore", config))
    options = RenderOptions(tuple(os.path.abspath(v) for v in args.values), tuple(args.set_values),
                            config.kube_version)
    gathered = gather(args.paths, tuple(args.include or DEFAULT_INCLUDE), tuple(args.exclude), options,
                      sys.stdin.buffer)
    reads, paths = gathered.reads, gathered.paths
    files = [FileText(r.display, r.text, r.bom) for r in reads.values() if r.text is not None]
    reference = load_reference(args.reference, gathered.units, tuple(args.include or DEFAULT_INCLUDE),
                               tuple(args.exclude), render_options=options) if args.reference else None
    run_ = fix_texts_jobs(files, config, choice, gathered.rendered, reference, args.jobs or available_cpus(),
                          diffs=args.diff)

    out = sys.stderr if "-" in reads else sys.stdout
    if args.diff:
        sys.stdout.write("".join(file_diff(f) for f in run_.changed if f.display != "-"))
    not_written = []
    dry = args.check or args.diff
    if not dry:
        folders = {os.path.dirname(os.path.realpath(path)) for path in paths.values()}
        for stale in remove_stale(folders):
            out.write(f"{stale}: removed: a temporary file a killed draguard run left\n")
        not_written = _write_all([f for f in run_.changed if f.display != "-"], paths, reads, given_roots(args.paths))
    if "-" in reads:
        stdin_file = next((f for f in files if f.display == "-"), None)
        if stdin_file is None:  # not UTF-8: passed through as it came, never lost
            if not (args.check or args.diff):
                sys.stdout.buffer.write(reads["-"].raw)
        elif args.diff:
            sys.stdout.write(file_diff(stdin_file))
        elif not args.check:
            sys.stdout.write((BOM if stdin_file.bom else "") + stdin_file.text)
    _summary(out, run_, gathered.skipped + not_written + gathered.unreadable, dry,
             {display for display, _ in not_written})
    _pending(out, run_)
    _target(out, run_, config)
    if said_empty(run_.result, args) or said_incomplete(run_.result):
        return EXIT_ERROR
    if dry:
        return EXIT_FINDINGS if run_.changed or any(item.pending for item in run_.left) else EXIT_OK
    if not_written or gathered.unreadable:
        return EXIT_ERROR
    return EXIT_FINDINGS if run_.result.failed(fail_on) else EXIT_OK


#: Left.pending -> how the summary counts it
_PENDING = {"unsafe": "need --unsafe-fixes (they change behaviour)",
            "source": "are in rendered output or List items: their source is to change (see why above)",
            "failed": "could not be applied (see why above)"}


def _pending(out, run_) -> None:
    """How many of the fixes left are still due, by why: --check fails on them too (a legacy
    GPU limit's migration is unsafe, and a CI gate must not let it through). Then the changes
    of Helm charts' values.yaml that the fixes of rendered objects map to, offered as diffs."""
    counts = Counter(item.pending for item in run_.left if item.pending)
    if counts:
        parts = [f"{counts[kind]} {said}" for kind, said in _PENDING.items() if counts[kind]]
        out.write(f"{sum(counts.values())} fix(es) pending: {'; '.join(parts)}\n")
    for diff in run_.values_diffs:
        out.write("offered, not written: the chart's values change these fixes map to\n" + diff)


def _target(out, run_, config) -> None:
    """Which Kubernetes release the fixes wrote for, when nobody chose it: the default (the
    newest) writes resource.k8s.io/v1, which a 1.32 or 1.33 cluster does not serve."""
    from ..facts.shipped import structured_claim_version

    if config.kube_version_from is not None or not (run_.changed or any(item.pending for item in run_.left)):
        return
    version = structured_claim_version(config.kube_version)
    api = f" (DRA objects as resource.k8s.io/{version})" if version else ""
    out.write(f"the fixes are for Kubernetes {config.kube_version}{api}, the default target: pass --kube-version "
              f"or set kubeVersion in .draguard.yaml for an older cluster\n")


def _write_all(changed: list, paths: dict, reads: dict, roots: tuple) -> list[tuple[str, str]]:
    """Write each fixed file; (display, why) for those not written. Names of one file (a
    symbolic link and its target, hard links: one inode) are written once: the second write
    saw the first's bytes as a change made by someone else."""
    from ..fix.files import NotWritten, destination, encode, write

    not_written: list[tuple[str, str]] = []
    written: dict[object, tuple[str, bytes]] = {}  # the file written (_inode) -> (by which name, what)
    for f in changed:
        try:
            path = destination(paths[f.display], roots)
        except NotWritten as exc:
            not_written.append((f.display, str(exc)))
            continue
        data = encode(f.text, f.bom)
        inode = _inode(path)
        if inode in written:
            if written[inode][1] != data:
                not_written.append((f.display, f"it is the same file as {written[inode][0]}, which was written with "
                                               "other fixes: run fix again"))
            continue
        reason = write(path, reads[f.display].raw, data)
        if reason:
            not_written.append((f.display, reason))
        else:
            written[_inode(path)] = (f.display, data)  # a rename made a new inode
    return not_written


def _inode(path: str):
    try:
        status = os.stat(path)
    except OSError:
        return path
    return status.st_dev, status.st_ino


def _summary(out, run_, problems: list[tuple[str, str]], dry: bool, unwritten: set) -> None:
    """What was fixed, file by file, and the totals: a file that was not written counts in
    neither (its reason is said below it)."""
    verb = "would fix" if dry else "fixed"
    fixed = files = 0
    for f in run_.changed:
        if f.display in unwritten:
            out.write(f"{f.display}: {len(f.applied)} fix(es) not written\n")
            continue
        fixed += len(f.applied)
        files += 1
        rules = sorted({rule for rule, _ in f.applied})
        out.write(f"{f.display}: {verb} {len(f.applied)} ({', '.join(rules)})\n")
        for (rule, title), count in Counter(f.applied).items():
            out.write(f"  {rule}: {title}{f' (x{count})' if count > 1 else ''}\n")
    for display, why in problems:
        out.write(f"{display}: {why}\n")
    for item in run_.left:
        loc = item.finding.location
        where = f"{loc.file}:{loc.line}:{loc.column}" if loc.line else loc.file
        out.write(f"{where}: {item.finding.severity} [{item.finding.rule}] left: {item.reason}\n")
    out.write(f"{verb} {fixed} finding(s) in {files} file(s); {len(run_.left)} left\n")
