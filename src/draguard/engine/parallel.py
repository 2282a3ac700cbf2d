"""`draguard lint --jobs N`: the rules of a large run judged on every core, with the report
byte for byte that of one process.

The inputs are read and parsed once, here, and one object of each kind is judged here too,
so that what the rules load and build on first use (modules imported lazily, the GPU
catalog, the CEL environment, compiled schemas) is built once and shared; then N-1 forked
processes and this one each judge one run of consecutive objects with every rule, each
through a `Run` (engine.run) whose inputs judge only its part, each holding the whole object
set to read (copy-on-write: nothing is sent to them) and sending back only its findings. The
parts are joined in order and sorted as one run sorts, so the report is the same as
`--jobs 1`'s (tests/unit/engine/test_parallel.py compares them on the corpus).

Why not parse in the workers: parsed objects (positioned YAML trees) cost as much to send
back to one process as to parse (pickling 2,700 of the corpus' objects: 0.6 s, parsing them:
0.66 s, measured), and rules that read across objects need them all in one place.

One process does the whole run where parts would gain nothing: fewer than MIN_PER_JOB
objects a job, no `fork` on the platform, and `--reference` inputs."""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass

from collections.abc import Callable
from typing import TYPE_CHECKING

from ..core.collector import cyclic_gc_paused
from ..core.config import Config
from ..core.finding import Finding
from ..model.manifest import Manifest
from .lint import INTERNAL_ERROR, LIVE_OBJECTS, LintResult, Progress, Reading, lint_paths, read_inputs
from .run import Against, Inputs, Run, suppression_key
from .suppress import suppressions

if TYPE_CHECKING:
    from ..dra.inventory import Inventory

#: below this many objects a job, forking and each process building its own rule state
#: (the built-in GPU inventory, the CEL environment) cost more than the part saves
MIN_PER_JOB = 500


def available_cpus() -> int:
    """The CPUs this process may run on (its affinity, as a container or `taskset` sets it)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def lint_paths_jobs(inputs: list[str], config: Config, jobs: int, reading: Reading = Reading(), *,
                    progress: Progress | None = None) -> LintResult:
    """`lint_paths` with the rules judged in up to `jobs` processes; the same result."""
    if jobs <= 1 or reading.reference or not hasattr(os, "fork"):
        return lint_paths(inputs, config, reading, progress=progress)
    with cyclic_gc_paused():
        given = read_inputs(inputs, config, reading, progress)
        advance = progress("checking", len(given.manifests)) if progress else None
        parts = min(jobs, len(given.manifests) // MIN_PER_JOB)
        if parts <= 1:
            return Run(config, given).findings(advance=advance)
        return _judged_in_parts(given, config, parts, advance)


@dataclass(frozen=True)
class _Parts:
    """What the forked processes read: set by the parent just before it forks them."""

    given: Inputs
    config: Config
    inventory: Inventory | None
    size: int  # objects a part


_RUN: _Parts | None = None


def _judged_in_parts(given: Inputs, config: Config, parts: int, advance: Callable[[], object] | None) -> LintResult:
    global _RUN
    # here: importing them cost a one-file lint 20 ms
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    manifests = given.manifests
    inventory = None
    if config.inventory:  # read once, before the fork, as each part's Run would read it
        from ..dra.inventory_reader import load_inventory

        set_classes = [m for m in manifests if (m.group, m.kind) == ("resource.k8s.io", "DeviceClass")]
        inventory = load_inventory(config.inventory, config.kube_version, set_classes)
    _warm_up(given, config, inventory)
    _RUN = _Parts(given, config, inventory, -(-len(manifests) // parts))
    try:  # an executor, not a Pool: a worker killed (out of memory) is an error, not a wait forever
        with ProcessPoolExecutor(parts - 1, mp_context=multiprocessing.get_context("fork")) as pool:
            others = [pool.submit(_judge_part, index) for index in range(1, parts)]
            judged = [_judge_part(0), *(future.result() for future in others)]
    except BrokenProcessPool:
        raise OSError("a process judging part of the objects ended without answering (killed, or out of "
                      "memory?); --jobs 1 judges them all in this process") from None
    finally:
        _RUN = None
    if advance is not None:
        for _ in manifests:
            advance()
    findings = _one_live_note([f for part, _ in judged for f in part])
    suppressed = [f for _, part in judged for f in part]
    findings, suppressed = _suppressed_across_parts(findings, suppressed, manifests, config)
    findings.sort(key=Finding.sort_key)
    suppressed.sort(key=Finding.sort_key)
    return LintResult(findings, suppressed, config, len(manifests), given.sources, given.refused)


def _part(given: Inputs, config: Config, inventory: Inventory | None, judged: set[int], notes: bool) -> Run:
    """The run that judges the manifests in `judged` (ids) of `given`, reading them all;
    `notes`: with the problems met reading and the config's (one part brings them)."""
    part = dataclasses.replace(given, judged=lambda m: id(m) in judged, problems=given.problems if notes else [])
    return Run(config if notes else dataclasses.replace(config, problems=[]), part, Against(inventory))


def _warm_up(given: Inputs, config: Config, inventory: Inventory | None) -> None:
    """Judge the first object of each kind here, its findings dropped (its part judges it
    again): each forked process would otherwise import and build on its own what the rules
    load on first use (measured: a 2,700-object run took 32% more CPU in two processes than
    in one, before this)."""
    first: dict[tuple[str, str], Manifest] = {}
    for manifest in given.manifests:
        first.setdefault((manifest.group, manifest.kind), manifest)
    _part(given, config, inventory, {id(m) for m in first.values()}, notes=False).findings()


def _judge_part(index: int) -> tuple[list[Finding], list[Finding]]:
    """The findings of part `index`, judged in a forked process (part 0: in this one); the
    run's own notes, problems met reading and the config's, come with part 0, as they come
    first in one run."""
    if _RUN is None:
        raise RuntimeError("a part judged outside a parallel run")
    shared, size = _RUN, _RUN.size
    mine = {id(m) for m in shared.given.manifests[index * size:(index + 1) * size]}
    result = _part(shared.given, shared.config, shared.inventory, mine, notes=index == 0).findings()
    return result.findings, result.suppressed


def _one_live_note(findings: list[Finding]) -> list[Finding]:
    """Each part that judged live cluster objects notes how many it judged; one run notes
    them all once, at the first, after every other finding (engine.lint._live_note): the
    parts' notes become that one, their counts summed."""
    notes = [f for f in findings if f.rule == LIVE_OBJECTS]
    if len(notes) <= 1:
        return findings
    total = sum(int(note.message.split(" ", 1)[0]) for note in notes)
    first = notes[0]
    merged = dataclasses.replace(first, message=f"{total} {first.message.split(' ', 1)[1]}")
    return [f for f in findings if f.rule != LIVE_OBJECTS] + [merged]


def _suppressed_across_parts(findings: list[Finding], suppressed: list[Finding], manifests: list[Manifest],
                             config: Config) -> tuple[list[Finding], list[Finding]]:
    """A part knows the suppressions of the objects it judged; a rule may place a finding on
    another object (rollout-pdb reports on a workload's budget), judged in another part.
    Such a finding is suppressed here, by that object's annotation, as one run would: keyed
    as the run keys them (engine.run.suppression_key), and with the config's own checks."""
    hidden: dict[tuple, dict[str, str]] = {}
    for manifest in manifests:
        if manifest.annotations:
            reasons, _ = suppressions(manifest, config)
            if reasons:
                hidden.setdefault(suppression_key(manifest.location(), manifest.ref), {}).update(reasons)
    if not hidden:
        return findings, suppressed
    kept = []
    for finding in findings:
        reason = hidden.get(suppression_key(finding.location, finding.obj), {}).get(finding.rule)
        if reason is not None and finding.rule != INTERNAL_ERROR:
            finding.suppressed_by = reason
            suppressed.append(finding)
        else:
            kept.append(finding)
    return kept, suppressed
