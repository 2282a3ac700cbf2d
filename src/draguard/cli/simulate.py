"""`draguard simulate SCENARIO | rollout | drain`: will these steps (a Deployment's next
rollout, a scale, a node's drain) finish on this inventory, and in how long? Exit status 0
when they complete, 1 when one deadlocks, livelocks, is stuck or is still moving at the horizon, 2 for
input it cannot simulate (a scenario's mistakes at their file:line:column)."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..core import jsonindent
from ..core.errors import EXIT_FINDINGS, EXIT_OK, InputError, UsageError
from ..core.amounts import amount

if TYPE_CHECKING:
    from ..simulate.world import Durations

DEFAULT_HORIZON = 3600.0


def _default_durations() -> Durations:
    from ..simulate.world import Durations

    return Durations()


@dataclass(frozen=True)
class Setting:
    """Where a simulation runs: the inventory files (ResourceSlices and Nodes), the pods'
    durations, the horizon (seconds a step may run), the release and its feature gates set
    differently from its defaults. Shared by the rollout, the drain and the scale."""

    inventory: list[str]
    durations: Durations = field(default_factory=_default_durations)
    horizon: float = DEFAULT_HORIZON
    kube_version: str | None = None
    gates: dict | None = None


def arguments(name, parser) -> None:
    from .lint import target_arguments

    parser.add_argument("what", metavar="SCENARIO|rollout|drain|scale",
                        help="a scenario file (manifests, inventory, steps); or rollout: the Deployment's next "
                             "revision rolled out; or drain NODE: the node drained (cordon, evictions through the "
                             "PodDisruptionBudgets); or scale REPLICAS: the Deployment (or StatefulSet) scaled")
    parser.add_argument("paths", nargs="*", metavar="MANIFESTS",
                        help="rollout, drain and scale (the node's name or the replicas first): the workloads, "
                             "the ResourceClaimTemplates (and DeviceClasses) they use, and their "
                             "PodDisruptionBudgets")
    parser.add_argument("--deployment", metavar="NAME",
                        help="rollout and scale: which workload, when there are several")
    parser.add_argument("--horizon", type=amount("seconds", positive=True), metavar="SECONDS",
                        help="stop a step still moving after this long (default 3600, or the scenario's)")
    parser.add_argument("--image", metavar="IMAGE",
                        help="rollout: the new revision's image (said in the report; its pull takes --pull)")
    parser.add_argument("--pull", type=amount("seconds"), metavar="SECONDS", help="a pod's image pull (default 0: cached)")
    parser.add_argument("--start", type=amount("seconds"), metavar="SECONDS", help="pod start-up time (default 2)")
    parser.add_argument("--ready", type=amount("seconds"), metavar="SECONDS",
                        help="from start-up to passing the readiness probe (default 5)")
    parser.add_argument("--shutdown", type=amount("seconds"), metavar="SECONDS",
                        help="from SIGTERM to the containers' exit (default 1; SIGKILL cuts it short)")
    target_arguments(parser, "rollout, drain and scale: ResourceSlices and Nodes (`draguard inventory generate`, "
                             "or a cluster's)")
    parser.add_argument("-f", "--format", choices=["text", "json", "html"], default="text")
    parser.add_argument("-o", "--output", help="write the report to this file (atomically)")


def run(args) -> int:
    from ..report.progress import for_run
    from ..simulate.world import Durations

    defaults = Durations()
    durations = Durations(pull=_or(args.pull, defaults.pull), start=_or(args.start, defaults.start),
                          ready=_or(args.ready, defaults.ready), shutdown=_or(args.shutdown, defaults.shutdown))
    if args.what not in ("rollout", "drain", "scale"):
        if args.paths or args.inventory:
            raise UsageError("a scenario file names its manifests and inventory itself")
        given = [flag for flag, value in (("--start", args.start), ("--ready", args.ready), ("--shutdown", args.shutdown),
                                          ("--pull", args.pull), ("--image", args.image),
                                          ("--deployment", args.deployment), ("--kube-version", args.kube_version),
                                          ("--feature-gates", args.feature_gates), ("--config", args.config))
                 if value is not None]
        if given:
            raise UsageError(f"{', '.join(given)}: a scenario file sets these itself (durations, kubeVersion, "
                             "featureGates, its steps' deployments; it reads no .draguard.yaml)")
        from ..simulate.reader import load_scenario

        scenario = load_scenario(args.what)
        dump = None
        if scenario.dump_path:
            from ..cluster.dump import read_dump
            from ..core.versions import DEFAULT_KUBE_VERSION
            from ..dra.inventory_reader import refuse_invalid

            dump = read_dump(scenario.dump_path)[0].manifests
            refuse_invalid(dump, scenario.kube_version or DEFAULT_KUBE_VERSION, "dump")
        simulation = scenario.run(args.horizon, dump)
        heading, subtitle = f"scenario {args.what}", ", ".join(s.step.kind for s in simulation.results) or "no step"
        return _report(args, simulation, heading, subtitle)
    from .lint import project_config

    manifests = args.paths[1:] if args.what in ("drain", "scale") else args.paths
    config = project_config(args, manifests)
    if not config.inventory or not args.paths:
        raise UsageError(f"draguard simulate {args.what} needs the manifests and an inventory (--inventory PATH, or "
                         "`inventory` in .draguard.yaml)")
    setting = Setting(config.inventory, durations, args.horizon or DEFAULT_HORIZON, config.kube_version,
                      config.feature_gates)
    if args.what == "drain":
        if len(args.paths) < 2:
            raise UsageError("draguard simulate drain NODE MANIFESTS...: name the node, then the manifests")
        simulation = simulate_drain(args.paths[0], args.paths[1:], setting)
        heading, subtitle = f"drain of node {simulation.node}", "cordon, then evictions through the budgets"
    elif args.what == "scale":
        simulation, heading = simulate_scale(args.paths[0], args.paths[1:], setting, args.deployment)
        subtitle = "the workload's controller, the scheduler and the kubelet until it is whole again"
    else:
        progress = for_run(args.format)
        try:
            simulation = simulate(args.paths, setting, args.deployment, progress, args.image)
        finally:
            if progress:
                progress.close()
        heading = f"rollout of Deployment {simulation.deployment}"
        subtitle = f"{simulation.replicas} replicas, {_strategy(simulation)}"
    return _report(args, simulation, heading, subtitle)


def _report(args, simulation, heading: str, subtitle: str) -> int:
    if args.format == "html":
        from ..report.simulate_html import render

        report = render(simulation, heading, subtitle)
    elif args.format == "json":
        report = _json_text(as_json(simulation)) + "\n"
    else:
        report = _text(simulation, heading, subtitle)
    if args.output:
        from ..core.atomic import write_atomic

        write_atomic(args.output, report)
    else:
        sys.stdout.write(report)
    return EXIT_OK if simulation.verdict.ok else EXIT_FINDINGS


def _json_text(document: dict) -> str:
    """json.dumps(document, indent=2): its timeline (240,000 records at 40,000 pods) written
    by the C encoder (core.jsonindent.rows), not the pure-Python walk an indent takes. That
    writes what is not ASCII as it is and json.dumps escapes it: a text that is all ASCII is
    the same either way, another is written by json.dumps."""
    text = jsonindent.dumps({**document, "timeline": jsonindent.Encoded(jsonindent.rows(document["timeline"],
                                                                                        level=1))})
    return text if text.isascii() else json.dumps(document, indent=2)


def _inputs(paths: list[str], inventory_paths: list[str], kube_version: str | None):
    """(manifests, the inventory with their DeviceClasses, the release) for a simulation."""
    from ..core.versions import DEFAULT_KUBE_VERSION, check_kube_version
    from ..dra.inventory_reader import load_inventory, load_manifests

    try:
        release = check_kube_version(kube_version or DEFAULT_KUBE_VERSION)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    manifests = load_manifests(paths, "manifests", release)
    return manifests, load_inventory(inventory_paths, release, [m for m in manifests if m.kind == "DeviceClass"]), \
        release


def simulate_drain(node: str, paths: list[str], setting: Setting):
    from ..simulate.drain import simulate_drain as run_drain

    manifests, inventory, release = _inputs(paths, setting.inventory, setting.kube_version)
    return _simulated(f"drain of {node}", lambda: run_drain(node, manifests, inventory, setting.durations,
                                                            setting.horizon, release, gates=setting.gates))


def simulate_scale(replicas: str, paths: list[str], setting: Setting, name: str | None = None):
    """(the scale of a Deployment or StatefulSet of `paths` to `replicas`, run as a one-step
    scenario; its heading)."""
    from ..simulate.scenario import Step, run_scenario

    if not (replicas.isascii() and replicas.isdigit()) or not paths:
        raise UsageError("draguard simulate scale REPLICAS MANIFESTS... --inventory INV: the replicas (a whole "
                         "number), then the manifests")
    manifests, inventory, release = _inputs(paths, setting.inventory, setting.kube_version)
    workload = _workload(manifests, name, ("Deployment", "StatefulSet"))
    step = Step("scale", {workload.kind.lower(): workload.name, "replicas": int(replicas)})
    run = _simulated(f"scale of {workload.name}", lambda: run_scenario(manifests, inventory, [step],
                                                                       setting.durations, setting.horizon, release,
                                                                       gates=setting.gates))
    return run, f"scale of {workload.kind} {workload.name} to {replicas}"


def simulate(paths: list[str], setting: Setting, deployment: str | None = None, progress=None,
             image: str | None = None):
    """The rollout of the Deployment in `paths` on the inventory `setting` names (the CLI and
    the MCP tool); InputError or UsageError for what cannot be simulated."""
    from ..simulate.rollout import simulate_rollout
    from ..simulate.workloads import templates_for

    manifests, inventory, release = _inputs(paths, setting.inventory, setting.kube_version)
    chosen = _workload(manifests, deployment, ("Deployment",))
    return _simulated(chosen.source.display, lambda: simulate_rollout(
        chosen, templates_for(manifests, chosen.namespace), inventory, setting.durations, setting.horizon,
        kube_version=release, progress=progress, image=image, gates=setting.gates))


def _simulated(where: str, simulation):
    """`simulation()`, what it cannot simulate an InputError prefixed with `where`."""
    from ..dra.devices import ModelError
    from ..simulate.template import ScenarioError

    try:
        return simulation()
    except (ScenarioError, ModelError) as exc:
        raise InputError(f"{where}: {exc}") from None


def _or(value, default):
    return default if value is None else value


def _workload(manifests, name: str | None, kinds: tuple):
    """The one workload of `kinds` (named `name`, when given) among the manifests."""
    found = [m for m in manifests if m.kind in kinds and (name is None or m.name == name)]
    if len(found) == 1:
        return found[0]
    if not found:
        raise InputError(f"no {' or '.join(kinds)}{f' named {name!r}' if name else ''} in the manifests")
    names = ", ".join(sorted(m.name for m in found))
    raise UsageError(f"several {' or '.join(kind + 's' for kind in kinds)} ({names}): pick one with --deployment")


def _strategy(simulation) -> str:
    strategy = simulation.strategy
    if strategy.type == "Recreate":
        return "Recreate"
    return f"RollingUpdate maxSurge {strategy.max_surge}, maxUnavailable {strategy.max_unavailable}"


def _text(simulation, heading: str, subtitle: str) -> str:
    verdict = simulation.verdict
    lines = [f"{heading} ({subtitle})"]
    for record in simulation.timeline():
        lines.append(f"  {record.time:8.1f} s  {record.what}" + (f" {record.pod}" if record.pod else "")
                     + (f": {record.detail}" if record.detail else ""))
    for i, result in enumerate(getattr(simulation, "results", ()), 1):
        said = f"completes in {result.verdict.seconds:.1f} s" if result.verdict.ok else result.verdict.kind
        lines.append(f"step {i} ({result.step.kind}, from {result.started:.1f} s): {said}")
    lines.append(verdict.said + (" (--horizon)" if verdict.kind == "horizon" else ""))
    lines.extend(("  " if i == 0 else "  <- ") + link for i, link in enumerate(verdict.chain))
    if verdict.remedy:
        lines.append(f"remedy: {verdict.remedy}")
    if verdict.deadline_exceeded is not None:
        lines.append(f"ProgressDeadlineExceeded at {verdict.deadline_exceeded:.0f} s (no rollback)")
    return "\n".join(lines) + "\n"


def as_json(simulation) -> dict:
    verdict = simulation.verdict
    from ..simulate.drain import DrainSimulation
    from ..simulate.scenario import ScenarioRun

    subject: dict[str, object]
    if isinstance(simulation, ScenarioRun):
        subject = {"steps": [{"step": r.step.kind, **r.step.args, "started": r.started, "verdict": r.verdict.kind,
                              "seconds": r.verdict.seconds} for r in simulation.results]}
    elif isinstance(simulation, DrainSimulation):
        subject = {"node": simulation.node}
    else:
        subject = {"deployment": simulation.deployment, "replicas": simulation.replicas,
                   "strategy": _strategy(simulation)}
    return {
        **subject,
        "verdict": {"kind": verdict.kind, "seconds": verdict.seconds, "chain": verdict.chain,
                    "remedy": verdict.remedy, "progressDeadlineExceeded": verdict.deadline_exceeded},
        "timeline": [{"time": r.time, "what": r.what, "pod": r.pod, "detail": r.detail}
                     for r in simulation.timeline()],
        "samples": simulation.samples(),
    }
