"""`draguard fix --jobs N`: the files fixed on every core, with the diff, the files written,
the summary and the exit status byte for byte those of one process.

The files are cut as `lint --jobs` cuts them (engine.parallel.cut: N runs of consecutive
files of about the same size) and each part, in its own process (engine.parallel.in_parts),
in two steps:

1. parses its files and sends the objects every part is sent (engine.parallel.SHIPPED: the
   cluster-wide kinds and ConfigMaps);
2. fixes its files, round after round as one process does (fix.run.fixed_with), beside its
   own objects and every other part's shipped ones, in the order one run holds them, and
   records, by file, what any judging of its objects looked up (model.objectset.ObjectSet.read)
   and every object the file held in any round (model.objectset.identity); it sends the
   fixed texts, the findings left (tagged with the file judged) and those records.

A file whose judging looked up what another part's files held in any round (a pod here,
the claim template a fix adds there) may be fixed otherwise in one run; so may two files
in two parts whose fixes add an object of one kind, namespace and name (one run adds the
second a round later, fix.run._clashes). Such files, the files holding what they looked up
and the files that looked up what they held (until no more is reached), are fixed again in
this process, together, beside every other file's shipped objects; their results replace
the parts'. A fix that changes a shipped object (a DeviceClass it adds, a ConfigMap it
edits), which every part read as it was, makes this process fix every file again.

The parent writes every file (cli.fix): each file is written by one process, atomically.
One process fixes the whole run where parts would gain nothing or could not see what one
run sees: --jobs 1, less than engine.parallel.MIN_BYTES_PER_JOB of text a job, no `fork`,
stdin, charts and kustomizations (their renders are judged with the files), `--reference`."""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field

from ..core.collector import cyclic_gc_paused
from ..core.config import Config
from ..core.finding import Finding
from ..core.value import replace
from ..engine.parallel import SHIPPED, cut, hidden_suppressions, in_parts, one_live_note, suppressed_across_parts
from ..engine.result import LintResult
from ..engine.run import LIVE_OBJECTS
from ..model.manifest import Manifest
from ..model.objectset import Touched
from ..sources.loader import Loaded, Source
from ..sources.yamlpos import remembering_parses
from .files import file_diff
from .relint import Relinter
from .run import Choice, FileText, FixRun, Left, fix_texts, fixed_with


#: the size of this process's part against another's (engine.parallel.cut), fix's own: lint's
#: PARENT_SHARE (1.1) weighs what lint's other parts pay more (their imports, the findings
#: pickled); fix pays those about alike per byte, and the parent's part, 52% of the bytes,
#: was the slower: CPU of the parent's part against the other's, from the fork (fix --diff of
#: the 20,196-object tree, two runs each, load 6-7): 1.08x-1.13x at 1.1, 0.95x-1.02x at 1.0;
#: 1.02x-1.06x at 1.03, a little over 1.0: the other part also pickles its answer (0.14 s)
PARENT_SHARE = 1.03


def fix_texts_jobs(files: list[FileText], config: Config, choice: Choice, context: Loaded | None,
                   reference: Loaded | None, jobs: int, diffs: bool = False) -> FixRun:
    """`fix.run.fix_texts` with the files fixed in up to `jobs` processes; the same result.
    With `diffs`, each changed file's `--diff` is made where it was fixed (FileText.diff)."""
    rendered = context is not None and (context.entries or context.sources or context.problems)
    if jobs <= 1 or rendered or reference is not None or not hasattr(os, "fork") or \
            any(f.display == "-" for f in files):
        return fix_texts(files, config, choice, context, reference)
    shares = cut(files, [len(f.text) for f in files], jobs, share=PARENT_SHARE)
    if len(shares) <= 1:
        return fix_texts(files, config, choice, context, reference)
    global _RUN
    with cyclic_gc_paused(), remembering_parses(len(files) + 4096):
        _RUN = _Parts(shares, config, choice, [f.display for f in files], diffs)
        try:
            read, fixed = in_parts(len(shares), _Part)
        finally:
            _RUN = None
        return _joined(files, shares, config, choice, read, fixed, diffs)


@dataclass(frozen=True)
class _Parts:
    """What the forked processes read: set by the parent just before it forks them."""

    shares: list[list[FileText]]
    config: Config
    choice: Choice
    order: list[str]  # every file's display, in order
    diffs: bool  # each part makes its files' --diff


_RUN: _Parts | None = None


@dataclass
class _Read:
    """A part after parsing: its files' shipped objects, in order."""

    shared: list[Manifest]


@dataclass
class _File:
    """One file as its part (or this process, fixing again) left it: its text when it changed,
    the fixes applied, and what one run's result counts of it."""

    text: str | None
    diff: str | None  # its --diff, when the run prints them
    applied: list[tuple[str, str]]
    objects: int
    sources: list[Source]
    refused: list[str]


@dataclass
class _Fixed:
    """A part after fixing: its files (by display), the findings left and suppressed, each
    with the display of the file judged (None: the run's own notes), what each file's
    judging looked up and the identities its objects had (Relinter.looked, .seen), whether a
    fix changed a shipped object, and the suppressions its objects carry
    (engine.parallel.hidden_suppressions)."""

    files: dict[str, _File]
    left: list[tuple[str | None, Left]]
    suppressed: list[tuple[str | None, Finding]]
    looked: dict[str, set]
    seen: dict[str, set]
    added: dict[str, set]  # display -> the identities of the objects its fixes added
    shipped_changed: bool
    hidden: dict[tuple, dict[str, str]] = field(default_factory=dict)


class _Part:
    """One part, in the process that fixes it."""

    def __init__(self, index: int):
        if _RUN is None:
            raise RuntimeError("a part fixed outside a parallel run")
        self.index = index
        # the run's own notes, problems met in the config, come with part 0, as they come first in one run
        config = _RUN.config if index == 0 else replace(_RUN.config, problems=[])
        self.files = _RUN.shares[index]
        self.relinter = Relinter(config, None, _RUN.choice.may_fix)
        self.relinter.track()
        self.shipped: dict[str, list] = {}
        self.initial: dict[str, set] = {}

    def read(self) -> _Read:
        self.relinter.read(self.files)
        self.initial = {display: set(identities) for display, identities in self.relinter.seen.items()}
        shared = []
        for f in self.files:
            mine = [m for m in self.relinter.parsed[f.display][2] if m.kind in SHIPPED]
            self.shipped[f.display] = [m.data for m in mine]
            shared += mine
        return _Read(shared)

    def judge(self, shared: list[list[Manifest]]) -> _Fixed:
        if _RUN is None:
            raise RuntimeError("a part fixed outside a parallel run")
        relinter = self.relinter
        relinter.place_beside([m for index, part in enumerate(shared) if index != self.index for m in part],
                              _RUN.order)
        run = fixed_with(self.files, relinter, _RUN.choice)
        return _outcome(run, relinter, _RUN.diffs, self.shipped, self.initial)


def _outcome(run: FixRun, relinter: Relinter, diffs: bool, shipped: dict[str, list] | None = None,
             initial: dict[str, set] | None = None) -> _Fixed:
    """What a run of some files sends back (or keeps, fixing again here); with `shipped` (each
    file's shipped objects as read), whether a fix changed one, and with `initial` (each file's
    identities as read), the objects its fixes added."""
    files, changed = {}, False
    for f in run.files:
        _, loaded, manifests = relinter.parsed[f.display]
        files[f.display] = _File(f.text if f.changed else None, file_diff(f) if diffs and f.changed else None,
                                 f.applied, len(loaded.entries), loaded.sources, loaded.refused)
        if shipped is not None and f.changed:
            changed = changed or [m.data for m in manifests if m.kind in SHIPPED] != shipped[f.display]
    final = [m for f in run.files for m in relinter.parsed[f.display][2]]
    suppressed = [(_judged_file(f), f) for f in run.result.suppressed]
    added = {display: identities - initial.get(display, set())
             for display, identities in relinter.seen.items()} if initial is not None else {}
    return _Fixed(files, [(_judged_file(item.finding), item) for item in run.left], suppressed,
                  relinter.looked or {}, relinter.seen, {d: a for d, a in added.items() if a}, changed,
                  hidden_suppressions(final, relinter.config))


def _judged_file(finding: Finding) -> str | None:
    judged = finding.judged
    return judged.source.display if isinstance(judged, Manifest) else None


def _joined(files: list[FileText], shares: list[list[FileText]], config: Config, choice: Choice,
            read: list[_Read], fixed: list[_Fixed], diffs: bool) -> FixRun:
    """The parts' results as one run's: the files whose fixing another part's files could
    change fixed again here (_fixed_again), with what they reach (_reach)."""
    part_of = {f.display: index for index, share in enumerate(shares) for f in share}
    looked: dict[str, set] = {}
    seen: dict[str, set] = {}
    for part in fixed:
        looked.update(part.looked)
        seen.update(part.seen)
    held = {display: _touched(identities) for display, identities in seen.items()}
    if any(part.shipped_changed for part in fixed):
        again = set(part_of)
    else:
        again = _unsure(part_of, looked, held, {d: its for part in fixed for d, its in part.added.items()})
    redone: _Fixed | None = None
    if again:
        again = _reach(again, part_of, looked, held)
    while again:
        redone = _fixed_again([f for f in files if f.display in again], config, choice, read, list(part_of), again,
                              diffs)
        looked.update(redone.looked)  # what one run's fixing of them looked up
        for display, identities in redone.seen.items():
            seen[display] = seen.get(display, set()) | identities
            held[display] = _touched(seen[display])
        # a fix that changed a shipped object here, as no part's did, changes what every file read
        wider = set(part_of) if redone.shipped_changed else _reach(again, part_of, looked, held)
        if wider == again:
            break
        again = wider
    return _result(files, config, fixed, redone, again)


def _unsure(part_of: dict[str, int], looked: dict[str, set], held: dict[str, Touched],
            fixes_added: dict[str, set]) -> set[str]:
    """The files whose judging looked up what another part's files held (`held`, by file),
    and those of two parts whose fixes added an object of one kind, namespace and name (one
    run adds the second a round later: fix.run._clashes)."""
    by_part: dict[int, Touched] = {}
    for display, touched in held.items():
        by_part.setdefault(part_of[display], Touched()).update(touched)
    unsure = {display for display, keys in looked.items()
              if any(part != part_of[display] and touched.reaches(keys) for part, touched in by_part.items())}
    added: dict[tuple, set[str]] = {}
    for display, identities in fixes_added.items():
        for who in identities:
            added.setdefault(who[:3], set()).add(display)
    for displays in added.values():
        if len({part_of[d] for d in displays}) > 1:
            unsure |= displays
    return unsure


def _reach(files: set[str], part_of: dict[str, int], looked: dict[str, set], held: dict[str, Touched]) -> set[str]:
    """`files` with the files holding what their judging looked up and the files whose judging
    looked up what they held, until no more is reached: one run fixes them together, and no
    other file reads them or is read by them."""
    files = set(files)
    while True:
        keys = set().union(*(looked.get(d, ()) for d in files))
        theirs = Touched()
        for display in files:
            if display in held:
                theirs.update(held[display])
        more = {d for d in part_of if d not in files and
                (d in held and held[d].reaches(keys) or theirs.reaches(looked.get(d, set())))}
        if not more:
            return files
        files |= more


def _touched(identities: set) -> Touched:
    """What objects of these identities (model.objectset.identity) answer to, the shipped
    kinds left out: every part read those as they were."""
    touched = Touched()
    for who in identities:
        if who[0] not in SHIPPED:
            touched.touch(*who)
    return touched


def _fixed_again(files: list[FileText], config: Config, choice: Choice, read: list[_Read], order: list[str],
                 again: set[str], diffs: bool) -> _Fixed:
    """`files` (those of `again`; `order`: every file's display) fixed here from their texts as read, together, beside every
    other file's shipped objects, and whether a fix changed one of their own."""
    fresh = [FileText(f.display, f.original, f.bom) for f in files]
    relinter = Relinter(replace(config, problems=[]), None, choice.may_fix)
    relinter.track()
    shipped: dict[str, list] = {f.display: [] for f in files}
    beside = []
    for manifest in (m for part in read for m in part.shared):
        display = manifest.source.display
        if display in again:
            shipped[display].append(manifest.data)
        else:
            beside.append(manifest)
    relinter.place_beside(beside, order)
    return _outcome(fixed_with(fresh, relinter, choice), relinter, diffs, shipped)


def _result(files: list[FileText], config: Config, fixed: list[_Fixed], redone: _Fixed | None,
            again: set[str]) -> FixRun:
    """One FixRun of the parts' files and findings, those of `again` taken from `redone`."""
    def ours(display: str | None, left: Left | Finding) -> bool:
        finding = left.finding if isinstance(left, Left) else left
        return (display or finding.location.file) not in again

    left = [item for part in fixed for display, item in part.left if ours(display, item)]
    suppressed = [f for part in fixed for display, f in part.suppressed if ours(display, f)]
    by_file = {display: its for part in fixed for display, its in part.files.items()}
    if redone is not None:
        left += [item for display, item in redone.left if not ours(display, item)]
        suppressed += [f for display, f in redone.suppressed if not ours(display, f)]
        by_file.update(redone.files)
    hidden: dict[tuple, dict[str, str]] = {}
    for part in [*fixed, *([redone] if redone is not None else [])]:
        for key, reasons in part.hidden.items():
            hidden.setdefault(key, {}).update(reasons)
    findings, suppressed = suppressed_across_parts(one_live_note([item.finding for item in left]), suppressed, hidden)
    findings.sort(key=Finding.sort_key)
    suppressed.sort(key=Finding.sort_key)
    left = _left_for(findings, left)
    for f in files:
        its = by_file[f.display]
        f.text, f.applied, f.diff = its.text if its.text is not None else f.original, its.applied, its.diff
    its_files = [by_file[f.display] for f in files]
    result = LintResult(findings, suppressed, config, sum(its.objects for its in its_files),
                        [s for its in its_files for s in its.sources], [r for its in its_files for r in its.refused])
    return FixRun(files, left, result)


def _left_for(findings: list[Finding], left: list[Left]) -> list[Left]:
    """The items left of `findings`, in their order: the item each came with, and for the
    live-objects note the parts' notes became (one_live_note), the first part's note's reason."""
    by_finding = {id(item.finding): item for item in left}
    live = [item for item in left if item.finding.rule == LIVE_OBJECTS]
    return [by_finding[id(f)] if id(f) in by_finding else dataclasses.replace(live[0], finding=f) for f in findings]
