"""`draguard audit`: judge a live cluster (read-only) or a dump of one."""

from __future__ import annotations

import sys

from ..core.errors import EXIT_ERROR, EXIT_FINDINGS, EXIT_OK, UsageError
from ..report.audit import FORMATS
from ..core.amounts import amount
from .lint import profile_arguments


#: what the errors of a missing kubeconfig or client offer instead
_WITHOUT_CLUSTER = "audit a dump with --from"


def arguments(name, parser) -> None:
    profile_arguments(parser)
    source = parser.add_argument_group("what to audit (default: the current kubeconfig context, read-only)")
    source.add_argument("--from", dest="dump", metavar="DUMP",
                        help="audit a dump instead: `kubectl get ... -o yaml|json` output, a folder written by "
                             "--save-dump, or '-' for stdin")
    source.add_argument("--kubeconfig", help="kubeconfig file (default: $KUBECONFIG, ~/.kube/config, or the "
                                             "in-cluster service account)")
    source.add_argument("--context", help="kubeconfig context (default: its current context)")
    source.add_argument("--at", metavar="TIME", help="judge ages as of this RFC 3339 time (default: the dump's "
                                                     "capture time, else now)")
    parser.add_argument("--save-dump", metavar="DIR", help="also write what was read to DIR, for --from replays")
    parser.add_argument("-f", "--format", choices=FORMATS, default="text")
    parser.add_argument("-o", "--output", help="write the report to this file (atomically) instead of stdout")
    parser.add_argument("--fail-on", choices=["error", "warning", "info"],
                        help="lowest severity that makes the exit status 1 (default: error, or failOn)")
    parser.add_argument("--config", help="config file (default: .draguard.yaml in the current folder or above)")
    parser.add_argument("--no-config", action="store_true", help="ignore any .draguard.yaml")
    parser.add_argument("--kube-version", help="judge as this release (default: the server's, else the newest)")
    parser.add_argument("--feature-gates", metavar="GATE=BOOL,...",
                        help="DRA feature gates the cluster sets differently from the release defaults")
    parser.add_argument("--watch", action="store_true",
                        help="keep watching the cluster and print findings as they appear and resolve")
    parser.add_argument("--watch-for", type=amount("seconds", positive=True), metavar="SECONDS",
                        help="with --watch: stop after this many seconds (default: until interrupted)")


def _configure(args, snapshot):
    """The audit's config (`judging_config`) and the severity that fails it."""
    from ..core.finding import Severity

    config = judging_config(args, snapshot)
    return config, Severity.parse(args.fail_on) if args.fail_on else config.fail_on


def judging_config(args, snapshot):
    """The config a live judging uses (the audit's, the exporter's): the release is the
    server's unless --kube-version says otherwise; the gates are those the server reported,
    then the config file's, then --feature-gates."""
    from ..cluster.release import judge_as_cluster
    from ..engine.config_file import find_config, load_config
    from .lint import feature_gates, select_rules

    config = load_config(None if args.no_config else args.config or find_config(["."]))
    select_rules(config, args, selectors=False)
    note = judge_as_cluster(config, snapshot.server_version, snapshot.feature_gates, args.kube_version)
    if note:
        sys.stderr.write(f"draguard: {note}\n")
    config.feature_gates.update(feature_gates(args.feature_gates))
    return config


def _at(value: str | None):
    if value is None:
        return None
    from ..model.live import timestamp

    moment = timestamp(value)
    if moment is None:
        raise UsageError(f"--at: {value!r} is not an RFC 3339 time (e.g. 2026-12-01T12:00:00Z)")
    return moment


def read(args):
    """(snapshot, loaded) from the dump or the cluster; the dump is written when asked."""
    from ..sources.loader import Loaded

    if args.dump:
        if args.watch or args.save_dump or args.kubeconfig or args.context:
            raise UsageError("--from audits a dump: --watch, --save-dump, --kubeconfig and --context need a cluster")
        from ..cluster.dump import read_dump

        return read_dump(args.dump, sys.stdin, _at(args.at))
    from ..cluster.live import connect, read_snapshot

    snapshot, raw = read_snapshot(connect(args.kubeconfig, args.context, instead=_WITHOUT_CLUSTER))
    if args.at:
        snapshot.captured_at = _at(args.at)
    if args.save_dump:
        from ..cluster.dump import write_bundle

        write_bundle(args.save_dump, snapshot, raw)
    return snapshot, Loaded()


def run(args) -> int:
    from ..cluster.audit import audit
    from ..core.atomic import write_atomic
    from ..core.collector import cyclic_gc_paused
    from ..report.audit import render

    if args.watch:
        return _watch(args)
    with cyclic_gc_paused():
        snapshot, loaded = read(args)
        config, fail_on = _configure(args, snapshot)
        result = audit(snapshot, config, loaded)
        text = render(args.format, result)
    if args.output:
        write_atomic(args.output, text)
    else:
        sys.stdout.write(text)
    if result.lint.internal_errors:
        sys.stderr.write(f"draguard: {result.lint.internal_errors} rule failure(s) (internal-error findings): the "
                         "audit is incomplete\n")
        return EXIT_ERROR
    return EXIT_FINDINGS if result.lint.failed(fail_on) else EXIT_OK


def _watch(args) -> int:
    from ..cluster.live import connect, read_snapshot
    from ..cluster.watch import follow
    from ..report.audit import watch_lines

    if args.dump:
        raise UsageError("--from audits a dump: --watch needs a cluster")
    connection = connect(args.kubeconfig, args.context, instead=_WITHOUT_CLUSTER)
    snapshot, raw = read_snapshot(connection)
    config, _ = _configure(args, snapshot)
    try:
        for i, (stamp, appeared, resolved) in enumerate(follow(connection, snapshot, raw, config, args.watch_for)):
            if i == 0:
                sys.stdout.write(f"watching {snapshot.source} ({len(appeared)} finding(s) now)\n")
            sys.stdout.writelines(line + "\n" for line in watch_lines(stamp, appeared, resolved))
            sys.stdout.flush()
    except KeyboardInterrupt:
        pass
    return EXIT_OK
