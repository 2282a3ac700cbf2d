"""`draguard lint --jobs N`: the rules of a large run judged on every core, with the report
byte for byte that of one process.

The inputs are read and parsed once, here, and one object of each kind is judged here too,
so that what the rules load and build on first use (modules imported lazily, the GPU
catalog, the CEL environment, compiled schemas) is built once and shared; then N-1 forked
processes and this one each judge one run of consecutive objects with every rule, through
the one lint entry point (`lint_loaded` with `only`), each holding the whole object set to
read (copy-on-write: nothing is sent to them) and sending back only its findings. The parts are joined in order and sorted as one
run sorts, so the report is the same as `--jobs 1`'s (tests/unit/engine/test_parallel.py
compares them on the corpus).

Why not parse in the workers: parsed objects (positioned YAML trees) cost as much to send
back to one process as to parse (pickling 2,700 of the corpus' objects: 0.6 s, parsing them:
0.66 s, measured), and rules that read across objects need them all in one place.

One process does the whole run where parts would gain nothing: fewer than MIN_PER_JOB
objects a job, no `fork` on the platform, and `--reference` inputs."""

from __future__ import annotations

import dataclasses
import os

from ..core.collector import cyclic_gc_paused
from ..core.config import Config
from ..core.finding import Finding
from ..model.manifest import Manifest
from ..sources.discover import DEFAULT_INCLUDE, expand
from ..sources.loader import Loaded, load_units
from ..sources.render import RenderOptions
from ..sources.yamlpos import DEFAULT_LIMITS, Limits
from .lint import INTERNAL_ERROR, LIVE_OBJECTS, LintResult, lint_loaded, lint_paths
from .suppress import suppressions

#: below this many objects a job, forking and each process building its own rule state
#: (the built-in GPU inventory, the CEL environment) cost more than the part saves
MIN_PER_JOB = 500


def available_cpus() -> int:
    """The CPUs this process may run on (its affinity, as a container or `taskset` sets it)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def lint_paths_jobs(inputs: list[str], config: Config, jobs: int, *, include: tuple = DEFAULT_INCLUDE,
                    exclude: tuple = (), limits: Limits = DEFAULT_LIMITS, stdin=None, helm_values: tuple = (),
                    helm_set: tuple = (), progress=None, reference: tuple = ()) -> LintResult:
    """`lint_paths` with the rules judged in up to `jobs` processes; the same result."""
    if jobs <= 1 or reference or not hasattr(os, "fork"):
        return lint_paths(inputs, config, include=include, exclude=exclude, limits=limits, stdin=stdin,
                          helm_values=helm_values, helm_set=helm_set, progress=progress, reference=reference)
    options = RenderOptions(tuple(helm_values), tuple(helm_set), config.kube_version)
    units = expand(inputs, include, exclude)
    with cyclic_gc_paused():
        loaded = load_units(units, limits, stdin, options, progress("reading", len(units)) if progress else None)
        advance = progress("checking", len(loaded.entries)) if progress else None
        manifests = [Manifest.from_entry(entry) for entry in loaded.entries]
        parts = min(jobs, len(manifests) // MIN_PER_JOB)
        if parts <= 1:
            return lint_loaded(loaded, config, manifests=manifests, advance=advance)
        return _judged_in_parts(loaded, config, manifests, parts, advance)


#: what the forked processes read: set by the parent just before it forks them
_RUN: tuple | None = None


def _judged_in_parts(loaded: Loaded, config: Config, manifests: list[Manifest], parts: int,
                     advance) -> LintResult:
    global _RUN
    # here: importing them cost a one-file lint 20 ms
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    inventory = None
    if config.inventory:  # read once, before the fork, as lint_loaded would read it
        from ..dra.inventory_reader import load_inventory

        set_classes = [m for m in manifests if (m.group, m.kind) == ("resource.k8s.io", "DeviceClass")]
        inventory = load_inventory(config.inventory, config.kube_version, set_classes)
    _warm_up(loaded, config, manifests, inventory)
    size = -(-len(manifests) // parts)
    _RUN = (loaded, config, manifests, inventory, size)
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
    findings, suppressed = _suppressed_across_parts(findings, suppressed, manifests)
    findings.sort(key=Finding.sort_key)
    suppressed.sort(key=Finding.sort_key)
    return LintResult(findings, suppressed, config, len(manifests), list(loaded.sources), loaded.refused)


def _warm_up(loaded: Loaded, config: Config, manifests: list[Manifest], inventory) -> None:
    """Judge the first object of each kind here, its findings dropped (its part judges it
    again): each forked process would otherwise import and build on its own what the rules
    load on first use (measured: a 2,700-object run took 32% more CPU in two processes than
    in one, before this)."""
    first: dict = {}
    for manifest in manifests:
        first.setdefault((manifest.group, manifest.kind), manifest)
    sample = {id(m) for m in first.values()}
    lint_loaded(dataclasses.replace(loaded, problems=[]), dataclasses.replace(config, problems=[]),
                only=lambda m: id(m) in sample, manifests=manifests, inventory=inventory)


def _judge_part(index: int) -> tuple[list[Finding], list[Finding]]:
    """The findings of part `index`, judged in a forked process (part 0: in this one); the
    run's own notes, problems met reading and the config's, come with part 0, as they come
    first in one run."""
    loaded, config, manifests, inventory, size = _RUN
    mine = {id(m) for m in manifests[index * size:(index + 1) * size]}
    if index:
        loaded = dataclasses.replace(loaded, problems=[])
        config = dataclasses.replace(config, problems=[])
    result = lint_loaded(loaded, config, only=lambda m: id(m) in mine, manifests=manifests, inventory=inventory)
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


def _suppressed_across_parts(findings: list[Finding], suppressed: list[Finding],
                             manifests: list[Manifest]) -> tuple[list[Finding], list[Finding]]:
    """A part knows the suppressions of the objects it judged; a rule may place a finding on
    another object (rollout-pdb reports on a workload's budget), judged in another part.
    Such a finding is suppressed here, by that object's annotation, as one run would."""
    by_ref: dict = {}
    for manifest in manifests:
        if manifest.annotations:
            reasons, _ = suppressions(manifest)
            if reasons:
                by_ref.setdefault(manifest.ref, {}).update(reasons)
    if not by_ref:
        return findings, suppressed
    kept = []
    for finding in findings:
        reason = by_ref.get(finding.obj, {}).get(finding.rule)
        if reason is not None and finding.rule != INTERNAL_ERROR:
            finding.suppressed_by = reason
            suppressed.append(finding)
        else:
            kept.append(finding)
    return kept, suppressed
