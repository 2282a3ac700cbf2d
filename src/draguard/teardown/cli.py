"""draguard-teardown: baseline, sidecar, drain, verify, servers. Each step prints one JSON
line on stdout (and appends it to --report FILE, e.g. /proc/1/fd/1 so that a hook's verdict
reaches the container log: the kubelet keeps a failed hook's output out of its events).

Exit status: 0 done (baseline recorded, drained, released), 1 deadline passed (processes or
memory still held), 2 usage error, 3 cannot verify or drain (NVML or the drain endpoint
failed), 4 ambiguous (a shared device: counts cannot be attributed to this pod)."""

from __future__ import annotations

import argparse
import json
import signal
import sys

from ..core.amounts import DEFAULT_MARGIN, amount
from ..core import servers
from .baseline import DEFAULT_PATH


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if getattr(args, "timeline", None) and args.backend != "fake":
        parser.error("--timeline plays a simulated device: give it with --backend fake")
    try:
        return args.run(args)
    except _UsageError as exc:
        parser.error(str(exc))
        return 2  # parser.error exits; kept for type checkers
    except KeyboardInterrupt:
        return 130


class _UsageError(Exception):
    pass


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="draguard-teardown", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    baseline = commands.add_parser("baseline", help="record the devices' process counts and used memory")
    _state_options(baseline)
    baseline.set_defaults(run=_baseline)

    sidecar = commands.add_parser("sidecar", help="record the baseline, then idle until the kubelet stops it "
                                  "(the main process of a native sidecar)")
    _state_options(sidecar)
    sidecar.set_defaults(run=_sidecar)

    drain = commands.add_parser("drain", help="mark not ready, wait for endpoints, ask the server to drain, "
                                "wait for it to exit")
    _deadline_options(drain, "--deadline")
    drain.add_argument("--server", choices=sorted(servers.BY_NAME), help="signal and process pattern of a known server")
    drain.add_argument("--not-ready-file", help="create this file (the readiness probe tests for it)")
    drain.add_argument("--not-ready-url", help="POST here to mark the server not ready")
    drain.add_argument("--endpoint-wait", type=amount("seconds"), default=0.0, metavar="SECONDS",
                       help="wait for the endpoints to drop the pod (default 0)")
    drain.add_argument("--drain-url", help="POST here to ask the server to drain")
    drain.add_argument("--signal", help="send this signal (TERM, INT, ...) to the serving processes")
    drain.add_argument("--process", metavar="REGEX", help="the serving processes' command line")
    drain.add_argument("--allow-pid1", action="store_true",
                       help="allow signalling PID 1 (ends this container: only when nothing follows)")
    drain.add_argument("--proc", default="/proc", help=argparse.SUPPRESS)
    _report_option(drain)
    drain.set_defaults(run=_drain)

    verify = commands.add_parser("verify", help="wait until the devices are back to their baseline")
    _state_options(verify, recording=False)
    _deadline_options(verify, "--timeout")
    verify.add_argument("--interval", type=amount("seconds", positive=True), default=0.5, metavar="SECONDS",
                        help="poll period (default 0.5)")
    verify.add_argument("--tolerance-mib", type=amount("MiB"), default=64.0,
                        help="used memory allowed above the baseline, MiB (default 64)")
    verify.set_defaults(run=_verify)

    table = commands.add_parser("servers", help="the inference servers' drain behaviour, as the helper and "
                                "the lint rules read it")
    table.add_argument("--json", action="store_true")
    table.set_defaults(run=_servers)
    return parser


def _state_options(command, recording: bool = True) -> None:
    command.add_argument("--backend", choices=["nvml", "fake"], default="nvml",
                         help="nvml: the GPUs this container sees (default); fake: a simulated NVML playing "
                              "--timeline, to try the helper without a GPU")
    command.add_argument("--timeline", metavar="FILE", help="with --backend fake: the scripted devices (JSON; "
                         "default: a built-in GPU and MIG slice released 3 s after verify starts)")
    command.add_argument("--state", default=DEFAULT_PATH, help=f"the baseline file (default {DEFAULT_PATH}; "
                         "env DRAGUARD_TEARDOWN_STATE)")
    if recording:
        command.add_argument("--device", action="append", metavar="UUID",
                             help="only this device (repeatable); default: every device NVML shows")
        command.add_argument("--shared", metavar="REASON", help="the claim is shared (MPS, time-slicing): "
                             "verify reports ambiguous instead of guessing")
    _report_option(command)


def _deadline_options(command, flag: str) -> None:
    command.add_argument(flag, type=amount("seconds"), dest="deadline", metavar="SECONDS",
                         help="the bound on this step")
    command.add_argument("--grace-period", type=amount("seconds"), metavar="SECONDS",
                         help=f"the pod's terminationGracePeriodSeconds: {flag} is this minus --margin")
    command.add_argument("--margin", type=amount("seconds"), default=DEFAULT_MARGIN, metavar="SECONDS",
                         help=f"kept free before SIGKILL (default {DEFAULT_MARGIN:g})")


def _report_option(command) -> None:
    command.add_argument("--report", metavar="FILE", help="also append the JSON line here (e.g. /proc/1/fd/1)")


def _deadline(args, flag: str) -> float:
    if args.deadline is not None:
        return args.deadline
    if args.grace_period is None:
        raise _UsageError(f"give {flag} SECONDS or --grace-period SECONDS")
    if args.grace_period - args.margin <= 0:
        raise _UsageError(f"--grace-period {args.grace_period:g} leaves nothing after --margin {args.margin:g}")
    return args.grace_period - args.margin


def _emit(args, record: dict, code: int) -> int:
    if getattr(args, "backend", "nvml") == "fake":
        record = {**record, "backend": "fake"}  # a simulated run is never mistaken for a check
    line = json.dumps(record, sort_keys=True)
    print(line, flush=True)
    if getattr(args, "report", None):
        try:
            with open(args.report, "a") as handle:
                handle.write(line + "\n")
        except OSError as exc:
            print(f"draguard-teardown: cannot append to {args.report}: {exc}", file=sys.stderr)
    return code


def _problem(args, step: str, exc: Exception) -> int:
    kind = getattr(exc, "kind", "error")
    return _emit(args, {"step": step, "verdict": "cannot-verify", "problem": kind, "reason": str(exc)}, 3)


def _nvml(args, phase: str):
    """The NVML session of this step: the real one, or with --backend fake the timeline's."""
    from .nvml import Nvml
    if args.backend != "fake":
        return Nvml.open()
    from .fake import TimelineError, load
    try:
        return Nvml.open(load(args.timeline, phase))
    except TimelineError as exc:
        raise _UsageError(str(exc)) from None


def _baseline(args) -> int:
    """Record the baseline and say so (0), or say why not (3)."""
    from .baseline import record, save
    from .nvml import NvmlProblem
    try:
        nvml = _nvml(args, "baseline")
        try:
            baseline = record(nvml, args.device, args.shared)
        finally:
            nvml.close()
        save(baseline, args.state)
    except (NvmlProblem, ValueError, OSError) as exc:
        return _problem(args, "baseline", exc)
    return _emit(args, {"step": "baseline", "state": args.state, **baseline.to_json()}, 0)


def _sidecar(args) -> int:
    """Record, then idle: a native sidecar's main process. A failed baseline is said and the
    sidecar stays up (exiting would restart it and hold back the pod's containers); verify
    then reports that it has no baseline."""
    stops = {signal.SIGTERM, signal.SIGINT}
    signal.pthread_sigmask(signal.SIG_BLOCK, stops)  # a stop that comes while recording waits for sigwait
    _baseline(args)
    signal.sigwait(stops)
    return 0


def _drain(args) -> int:
    from .drain import Plan, drain, signal_number
    signal_name, process = args.signal, args.process
    if args.server:
        server = servers.BY_NAME[args.server]
        signal_name = signal_name or server.signal.removeprefix("SIG")
        process = process or server.process
    if signal_name and not process:
        raise _UsageError("--signal needs --process REGEX (or --server NAME)")
    try:
        if signal_name:
            signal_number(signal_name)
    except ValueError as exc:
        raise _UsageError(str(exc)) from exc
    plan = Plan(_deadline(args, "--deadline"), args.not_ready_file, args.not_ready_url, args.endpoint_wait,
                args.drain_url, signal_name, process, args.allow_pid1)
    try:
        outcome = drain(plan, proc_root=args.proc)
    except OSError as exc:
        return _emit(args, {"step": "drain", "verdict": "failed", "reason": str(exc)}, 3)
    return _emit(args, outcome.to_json(), outcome.exit_code)


def _verify(args) -> int:
    from .baseline import load
    from .nvml import NvmlProblem
    from .verify import verify
    timeout = _deadline(args, "--timeout")
    try:
        baseline = load(args.state)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        return _emit(args, {"step": "verify", "verdict": "cannot-verify", "problem": "no-baseline",
                            "reason": f"no usable baseline at {args.state}: {exc}"}, 3)
    try:
        nvml = _nvml(args, "verify")
    except NvmlProblem as exc:
        return _problem(args, "verify", exc)
    try:
        verdict = verify(nvml, baseline, timeout, args.interval, args.tolerance_mib)
    finally:
        nvml.close()
    return _emit(args, verdict.to_json(), verdict.exit_code)


def _servers(args) -> int:
    if args.json:
        print(json.dumps([{name: getattr(s, name) for name in s.__slots__} for s in servers.SERVERS], indent=2))
        return 0
    for s in servers.SERVERS:
        budget = "undocumented" if s.drain_seconds is None else f"{s.drain_seconds:g} s"
        flag = f"{s.drain_flag} bounds it" if s.drain_flag else "no flag"
        print(f"{s.name:8} {s.title}: {s.signal} starts the drain; without a flag {budget}; {flag}.\n"
              f"         {s.note}\n         source: {s.source}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
