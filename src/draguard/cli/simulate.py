"""`draguard simulate rollout`: will this Deployment's next rollout finish on this inventory,
and in how long? Exit status 0 when it completes, 1 when it deadlocks or is still moving at
the horizon, 2 for input it cannot simulate."""

from __future__ import annotations

import json
import sys

from ..core.errors import EXIT_FINDINGS, EXIT_OK, InputError, UsageError


def arguments(name, parser) -> None:
    parser.add_argument("what", choices=["rollout"], help="rollout: the Deployment's next revision rolled out")
    parser.add_argument("paths", nargs="+", metavar="MANIFESTS",
                        help="the Deployment and the ResourceClaimTemplates (and DeviceClasses) it uses")
    parser.add_argument("--inventory", required=True, action="append", metavar="PATH",
                        help="ResourceSlices and Nodes (`draguard inventory generate`, or a cluster's)")
    parser.add_argument("--deployment", metavar="NAME", help="which Deployment, when the manifests hold several")
    parser.add_argument("--horizon", type=float, default=3600.0, metavar="SECONDS",
                        help="stop a rollout still moving after this long (default 3600)")
    parser.add_argument("--start", type=float, metavar="SECONDS", help="pod start-up time (default 2)")
    parser.add_argument("--ready", type=float, metavar="SECONDS",
                        help="from start-up to passing the readiness probe (default 5)")
    parser.add_argument("--shutdown", type=float, metavar="SECONDS",
                        help="from SIGTERM to the containers' exit (default 1; SIGKILL cuts it short)")
    parser.add_argument("--kube-version", help="the cluster's release (default: the newest draguard knows)")
    parser.add_argument("-f", "--format", choices=["text", "json", "html"], default="text")
    parser.add_argument("-o", "--output", help="write the report to this file (atomically)")


def run(args) -> int:
    from ..simulate.world import Durations

    defaults = Durations()
    durations = Durations(start=_or(args.start, defaults.start), ready=_or(args.ready, defaults.ready),
                          shutdown=_or(args.shutdown, defaults.shutdown))
    from ..report.progress import for_run

    progress = for_run(args.format)
    try:
        simulation = simulate(args.paths, args.inventory, args.deployment, durations, args.horizon,
                              args.kube_version, progress)
    finally:
        if progress:
            progress.close()
    if args.format == "html":
        from ..report.simulate_html import render

        report = render(simulation)
    else:
        report = json.dumps(as_json(simulation), indent=2) + "\n" if args.format == "json" else _text(simulation)
    if args.output:
        from ..core.atomic import write_atomic

        write_atomic(args.output, report)
    else:
        sys.stdout.write(report)
    return EXIT_OK if simulation.verdict.ok else EXIT_FINDINGS


def simulate(paths: list[str], inventory_paths: list[str], deployment: str | None = None, durations=None,
             horizon: float = 3600.0, kube_version: str | None = None, progress=None):
    """The rollout of the Deployment in `paths` on the inventory in `inventory_paths` (the CLI
    and the MCP tool); InputError or UsageError for what cannot be simulated."""
    from ..core.versions import DEFAULT_KUBE_VERSION, check_kube_version
    from ..dra.devices import ModelError
    from ..engine.inventory import load_inventory, load_manifests
    from ..simulate.rollout import ScenarioError, simulate_rollout
    from ..simulate.world import Durations

    manifests = load_manifests(paths, "manifests")
    chosen = _deployment(manifests, deployment)
    templates = {m.name: m for m in manifests if m.kind == "ResourceClaimTemplate"
                 and (m.namespace or None) == (chosen.namespace or None)}
    inventory = load_inventory(inventory_paths, [m for m in manifests if m.kind == "DeviceClass"])
    try:
        release = check_kube_version(kube_version or DEFAULT_KUBE_VERSION)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    try:
        return simulate_rollout(chosen, templates, inventory, durations or Durations(), horizon, kube_version=release,
                                progress=progress)
    except (ScenarioError, ModelError) as exc:
        raise InputError(f"{chosen.source.display}: {exc}") from None


def _or(value, default):
    if value is not None and value < 0:
        raise UsageError("durations are seconds >= 0")
    return default if value is None else value


def _deployment(manifests, name: str | None):
    deployments = [m for m in manifests if m.kind == "Deployment" and (name is None or m.name == name)]
    if len(deployments) == 1:
        return deployments[0]
    if not deployments:
        raise InputError(f"no Deployment{f' named {name!r}' if name else ''} in the manifests")
    names = ", ".join(sorted(m.name for m in deployments))
    raise UsageError(f"several Deployments ({names}): pick one with --deployment")


def _strategy(simulation) -> str:
    strategy = simulation.strategy
    if strategy.type == "Recreate":
        return "Recreate"
    return f"RollingUpdate maxSurge {strategy.max_surge}, maxUnavailable {strategy.max_unavailable}"


def _text(simulation) -> str:
    verdict = simulation.verdict
    lines = [f"rollout of Deployment '{simulation.deployment}' ({simulation.replicas} replicas, {_strategy(simulation)})"]
    for record in simulation.timeline():
        lines.append(f"  {record.time:8.1f} s  {record.what}" + (f" {record.pod}" if record.pod else "")
                     + (f": {record.detail}" if record.detail else ""))
    if verdict.kind == "completes":
        lines.append(f"completes in {verdict.seconds:.1f} s")
    elif verdict.kind == "deadlock":
        lines.append("deadlock: nothing can happen any more")
        lines.extend(("  " if i == 0 else "  <- ") + link for i, link in enumerate(verdict.chain))
        if verdict.remedy:
            lines.append(f"remedy: {verdict.remedy}")
    else:
        lines.append("still moving at the horizon (--horizon)")
    if verdict.deadline_exceeded is not None:
        lines.append(f"ProgressDeadlineExceeded at {verdict.deadline_exceeded:.0f} s (no rollback)")
    return "\n".join(lines) + "\n"


def as_json(simulation) -> dict:
    verdict = simulation.verdict
    return {
        "deployment": simulation.deployment, "replicas": simulation.replicas, "strategy": _strategy(simulation),
        "verdict": {"kind": verdict.kind, "seconds": verdict.seconds, "chain": verdict.chain,
                    "remedy": verdict.remedy, "progressDeadlineExceeded": verdict.deadline_exceeded},
        "timeline": [{"time": r.time, "what": r.what, "pod": r.pod, "detail": r.detail}
                     for r in simulation.timeline()],
        "samples": simulation.samples(),
    }
