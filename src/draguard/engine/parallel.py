"""`draguard lint --jobs N`: the files of a large run read, parsed and judged on every core,
with the report byte for byte that of one process.

The files are cut into N runs of consecutive files of about the same size; N-1 forked
processes and this one each read and parse one (a part), in two steps:

1. each part sends the objects every part is sent (SHIPPED: the cluster-wide kinds,
   DeviceClasses, slices and nodes, which any rule may read without a recorded lookup,
   model.objectset.CLUSTER_WIDE; and ConfigMaps: 1,020 of 20,196 objects in the replicated
   corpus) and what its other objects answer to (model.objectset.Touched);
2. each part judges its own objects with every rule, beside its own objects and every part's
   shipped ones, in the order one run holds them, recording what each judging looked up
   (model.objectset.ObjectSet.read: a claim by name, the budgets of a namespace...), and sends
   its findings, tagged with the object judged, and those lookups, with each finding's piece
   of the report (report.pieces: its text in the report's format, made beside the texts
   the part read, the fixes' diffs spliced on their documents), where the caller asks for
   them (`pieces`): what is left after the parts, which nobody shares, is ordering and
   joining them.

An object whose lookups another part's objects answer (a pod here, its claim in another
part's file) may judge otherwise in one run: its findings are dropped, and this process
judges it again beside the files that hold what it looked up (and what that judging then
looks up, until nothing more is reached), and renders those itself. The parts are joined in
order and sorted as one run sorts (tests/unit/engine/test_parallel.py compares the reports
on the corpus in every format).

Why not send the parsed objects to one process: positioned YAML trees cost about as much to
pickle as to parse (3,128 DeviceClasses, Namespaces, slices and nodes: 0.5 s, measured;
parsing all 20,196: 5.2 s), and 43% of the replicated corpus' objects (19% of its bytes) are
of a kind some rule looks up in the set.

One process does the whole run where parts would gain nothing: less than MIN_BYTES_PER_JOB
of files a job, no `fork` on the platform, stdin, charts and kustomizations (rendered,
their objects are not where the files are), and `--reference` inputs."""

from __future__ import annotations

import os
from functools import partial
from typing import Any, Callable, TypeVar

from ..core.collector import cyclic_gc_paused
from ..core.config import Config
from ..core.finding import Finding
from ..core.value import Record, Value, replace
from ..model.manifest import Manifest
from ..model.objectset import CLUSTER_WIDE, Touched, identity, touches
from ..rules.registry import load_catalog
from ..sources.discover import Unit, expand
from ..sources.loader import Source
from .lint import INTERNAL_ERROR, LIVE_OBJECTS, LintResult, Progress, Reading, lint_paths, read_units
from .result import Pieces
from .run import Inputs, Run, suppression_key
from .suppress import suppressions

#: below this many bytes of files a job, forking and each process building its own rule state
#: (the built-in GPU inventory, the CEL environment) cost more than the part saves (about
#: 500 objects of the corpus)
MIN_BYTES_PER_JOB = 384 * 1024
#: the kinds every part is sent from every other: those any rule may read without a recorded
#: lookup, and ConfigMaps (a device plugin's config, which a legacy pod's migration reads from
#: any namespace: 476 of the replicated corpus' objects)
SHIPPED = CLUSTER_WIDE | {"ConfigMap"}
#: the size of this process's part against another's. What only this process does (reading
#: the others' findings back, joining them, the report) starts when the last part is done, so
#: the wall time is the slowest part plus that tail: the parts are best done at the same time.
#: Another part also pickles its findings (0.3 s CPU of 20,000), and this one built the
#: interpreter's imports before forking; measured on 20,196 objects, CPU from the fork until
#: this process waits for the other's findings against the other's CPU (seconds): 3.2-3.4 to
#: 4.3-4.6 at 0.8, 3.8 to 4.1 at 1.0, 3.8-4.1 to 3.6-3.8 at 1.2
PARENT_SHARE = 1.1
#: units read where they are: a file, or nothing to read (said, not read)
_SPLIT = frozenset({"file", "component", "disabled", "skipped"})
_Item = TypeVar("_Item")
#: pieces(findings, suppressed, sources) -> (a piece or None for each finding, the same for
#: each suppressed one): report.piece_renderer
MakePieces = Callable[[list[Finding], list[Finding], list[Source]], tuple[list, list]]


def available_cpus() -> int:
    """The CPUs this process may run on (its affinity, as a container or `taskset` sets it)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def lint_paths_jobs(inputs: list[str], config: Config, jobs: int, reading: Reading = Reading(), *,
                    progress: Progress | None = None, pieces: MakePieces | None = None) -> LintResult:
    """`lint_paths` with the files read and judged in up to `jobs` processes; the same result,
    with the pieces of the report each part made of its findings (`pieces`) where there were
    parts."""
    if jobs <= 1 or reading.reference or not hasattr(os, "fork"):
        return lint_paths(inputs, config, reading, progress=progress)
    with cyclic_gc_paused():
        units = expand(inputs, reading.include, reading.exclude)
        shares = _shares(units, jobs)
        if len(shares) <= 1:
            given = read_units(units, config, reading, progress)
            advance = progress("checking", len(given.manifests)) if progress else None
            return Run(config, given).findings(advance=advance)
        result = _judged_in_parts(shares, config, reading, pieces)
        if progress is not None:
            for stage, count in (("reading", len(units)), ("checking", result.objects)):
                advance = progress(stage, count)
                for _ in range(count):
                    advance()
        return result


def _shares(units: list[Unit], jobs: int) -> list[list[Unit]]:
    """`units` cut into up to `jobs` runs of consecutive files of about the same size (cut),
    between folders where one is near."""
    if any(unit.kind not in _SPLIT for unit in units):
        return [units]
    return cut(units, [_size(unit) for unit in units], jobs, [os.path.dirname(unit.path) for unit in units])


def cut(items: list[_Item], sizes: list[int], jobs: int, folders: list[str] | None = None,
        share: float = PARENT_SHARE) -> list[list[_Item]]:
    """`items` cut into up to `jobs` runs of consecutive items of about the same size (at
    least MIN_BYTES_PER_JOB each), the first (this process's) `share` of the others' (lint's
    PARENT_SHARE unless given); each cut moved to the nearest change of folder (`folders`: each
    item's) within FOLDER_SLACK of a part's size."""
    total = sum(sizes)
    count = min(jobs, total // MIN_BYTES_PER_JOB)
    if count <= 1:
        return [items]
    weight = count - 1 + share
    ends = [total * (n + share) / weight for n in range(count - 1)]  # where each share would end, in bytes
    starts = [0]  # where each share starts
    filled = 0
    for index, size in enumerate(sizes):
        if len(starts) < count and filled >= ends[len(starts) - 1] and index > starts[-1]:
            starts.append(index)
        filled += size
    if folders is not None:
        starts = _between_folders(starts, ends, sizes, folders, total / weight * FOLDER_SLACK)
    return [items[start:end] for start, end in zip(starts, [*starts[1:], len(items)])]


#: how far (a fraction of a part's bytes) a cut between parts moves to fall between two
#: folders: files of a folder are often the objects of one namespace, which look each other
#: up (a pod its claim, a budget its pods), and an object whose lookups reach another part is
#: judged again after the parts, by this process alone (_judged_again: 21 objects, 0.025 s of
#: the 4,158-object tree's tail, cut in a folder). Small: the parts are best done at the same
#: time (PARENT_SHARE), and a part this much larger ends this much later
FOLDER_SLACK = 0.0625


def _between_folders(starts: list[int], ends: list[float], sizes: list[int], folders: list[str],
                     slack: float) -> list[int]:
    """Each start of a share but the first moved to the start of a folder, between its
    neighbours, whose bytes before are nearest the share's `ends` before it, where no more
    than `slack` bytes away."""
    before = [0]
    for size in sizes:
        before.append(before[-1] + size)
    moved = list(starts)
    for n in range(1, len(starts)):
        low, high = moved[n - 1] + 1, starts[n + 1] - 1 if n + 1 < len(starts) else len(sizes) - 1
        end = ends[n - 1]
        near = [i for i in range(low, high + 1) if folders[i] != folders[i - 1] and abs(before[i] - end) <= slack]
        if near:
            moved[n] = min(near, key=lambda i: abs(before[i] - end))
    return moved


def _size(unit: Unit) -> int:
    try:
        return os.stat(unit.path).st_size if unit.kind == "file" else 0
    except OSError:
        return 0  # said when it is read


class _Parts(Value):
    """What the forked processes read: set by the parent just before it forks them."""

    __slots__ = ("shares", "config", "reading", "pieces")

    def __init__(self, shares: list[list[Unit]], config: Config, reading: Reading, pieces: MakePieces | None) -> None:
        self.shares = shares
        self.config = config
        self.reading = reading
        self.pieces = pieces


_RUN: _Parts | None = None


class _Read(Record):
    """A part after reading: its shipped objects, what its others answer to, and the
    file and identity (model.objectset.identity) of each of its objects, in order."""

    __slots__ = ("shared", "touched", "identities")

    def __init__(self, shared: list[Manifest], touched: Touched,
                 identities: list[tuple[str, tuple[str, str, str, str | None]]]) -> None:
        self.shared = shared
        self.touched = touched
        self.identities = identities


class _Judged(Record):
    """A part after judging: its findings, each with the number of the object it judged
    (None: the run's own notes) and its piece of the report (None: not made), what each
    object's judging looked up, and the suppressions its objects carry
    (engine.run.suppression_key -> rule -> reason)."""

    __slots__ = ("found", "suppressed", "reads", "hidden", "objects", "sources", "refused")

    def __init__(self, found: list[tuple[int | None, Finding, object]],
                 suppressed: list[tuple[int | None, Finding, object]], reads: dict[int, set],
                 hidden: dict[tuple, dict[str, str]], objects: int, sources: list[Source], refused: list[str]) -> None:
        self.found = found
        self.suppressed = suppressed
        self.reads = reads
        self.hidden = hidden
        self.objects = objects  # judged
        self.sources = sources
        self.refused = refused


class _Raised(Record):
    """An exception met in a part, raised again by the parent."""

    __slots__ = ("error",)

    def __init__(self, error: BaseException) -> None:
        self.error = error


class _Part:
    """One part, in the process that reads and judges it."""

    def __init__(self, index: int):
        if _RUN is None:
            raise RuntimeError("a part judged outside a parallel run")
        self.index = index
        # the run's own notes, problems met in the config, come with part 0, as they come first in one run
        self.config = _RUN.config if index == 0 else replace(_RUN.config, problems=[])
        self.given = read_units(_RUN.shares[index], _RUN.config, _RUN.reading, None)

    def read(self) -> _Read:
        touched, shared, identities = Touched(), [], []
        for manifest in self.given.manifests:
            who = identity(manifest.data)
            identities.append((manifest.source.display, who))
            if who[0] in SHIPPED:
                shared.append(manifest)
            else:
                touched.touch(*who)
        return _Read(shared, touched, identities)

    def judge(self, shared: list[list[Manifest]]) -> _Judged:
        mine = self.given.manifests
        number = {id(m): n for n, m in enumerate(mine)}
        merged = [m for index, part in enumerate(shared) for m in (mine if index == self.index else part)]
        given = replace(self.given, manifests=merged, judged=lambda m: id(m) in number)
        reads: dict[int, tuple] = {}
        result = Run(self.config, given).findings(reads=reads)
        made = _RUN.pieces(result.findings, result.suppressed, result.sources) if _RUN and _RUN.pieces else ([], [])
        for source in result.sources:
            # its lines, split for the pieces, are sent as its text alone: as a list of lines they
            # doubled what crossed the pipe, and reading them back cost 20 times the text's time
            source.drop_lines()

        def tagged(found: list[Finding], pieces: list) -> list[tuple[int | None, Finding, object]]:
            numbers = [None if f.judged is None else number[id(f.judged)] for f in found]
            # the run's own notes have none: the parent may merge them (one_live_note)
            return [(n, f, piece if n is not None else None)
                    for n, f, piece in zip(numbers, found, pieces or [None] * len(found))]

        return _Judged(tagged(result.findings, made[0]), tagged(result.suppressed, made[1]),
                       {number[key]: keys for key, (_, keys) in reads.items() if keys},
                       hidden_suppressions(mine, self.config), result.objects, result.sources, result.refused)


def _serve(index: int, parent) -> None:
    """A forked process: part `index` (made by _MAKE), read, then judged with every part's shipped objects."""
    try:
        if _MAKE is None:
            raise RuntimeError("a part judged outside a parallel run")
        part = _MAKE(index)
        parent.send(part.read())
        parent.send(part.judge(parent.recv()))
    except (EOFError, BrokenPipeError):
        pass  # the parent stopped waiting: it raised
    except BaseException as exc:  # noqa: BLE001 - the parent raises it, as one process would
        for error in (exc, RuntimeError(f"{type(exc).__name__}: {exc}")):
            try:
                parent.send(_Raised(error))
                return
            except OSError:
                return  # the parent stopped waiting
            except Exception:  # noqa: BLE001 - one that cannot be pickled: said as what it was
                continue


def _answer(conn):
    try:
        answer = conn.recv()
    except EOFError:
        raise OSError("a process judging part of the files ended without answering (killed, or out of "
                      "memory?); --jobs 1 judges them all in this process") from None
    if isinstance(answer, _Raised):
        raise answer.error
    return answer


def _judged_in_parts(shares: list[list[Unit]], config: Config, reading: Reading,
                     pieces: MakePieces | None = None) -> LintResult:
    global _RUN
    _RUN = _Parts(shares, config, reading, pieces)
    try:
        read, judged = in_parts(len(shares), _Part)
    finally:
        _RUN = None
    return _joined(shares, config, reading, read, judged)


#: makes part `index` (in the process that reads and judges it): set by in_parts just before it forks
_MAKE: Callable[[int], Any] | None = None


def in_parts(count: int, make: Callable[[int], Any]) -> tuple[list, list]:
    """Parts 1 to `count`-1 in forked processes, part 0 in this one, in two steps: each part,
    `make(index)`, reads (`read()`, whose `shared` every part is then sent, in part order,
    its own left empty: it holds them), then judges (`judge(shared)`). (what each part read,
    what each judged), in part order; a part's exception is raised here (lint and fix share
    this: fix.parallel)."""
    global _MAKE
    # here: importing it (with pickle) cost a one-file lint 3 to 7 ms
    from ..facts.schemas import import_validators
    from .forked import fork, let_end

    # every rule module imported once, here, for the forked processes to inherit: each imported
    # those of the kinds it met (0.07 s CPU a process; a run this large meets nearly all of them);
    # and the schemas' validators, which every part of a run this large compiles
    load_catalog()
    import_validators()
    _MAKE = make
    workers = []
    try:
        for index in range(1, count):
            workers.append(fork(partial(_serve, index)))
        here = make(0)
        read = [here.read(), *(_answer(ours) for _, ours in workers)]
        shared = [part.shared for part in read]
        for index, (_, ours) in enumerate(workers, start=1):
            # not its own objects back: pickled here and read there before either judges
            ours.send([[] if other == index else objects for other, objects in enumerate(shared)])
        judged = [here.judge([[], *shared[1:]]), *(_answer(ours) for _, ours in workers)]
    finally:
        _MAKE = None
        # every channel closed before any wait: a part forked later holds a copy of the ends
        # to those forked before it, which then never read an end while it waits for its own
        for _, ours in workers:
            ours.close()
        for pid, _ in workers:
            let_end(pid)  # not waited for here: it ends while this process joins and writes the report
    return read, judged


def _joined(shares: list[list[Unit]], config: Config, reading: Reading, read: list[_Read],
            judged: list[_Judged]) -> LintResult:
    """The parts' findings as one run's, with the pieces of the report the parts made: those
    of objects that looked up what another part holds judged again here (_judged_again),
    their pieces left to the report."""
    unsure = []
    for index, part in enumerate(judged):
        others = Touched()
        for other, its in enumerate(read):
            if other != index:
                others.update(its.touched)
        unsure.append({n for n, keys in part.reads.items() if others.reaches(keys)})
    pieces = Pieces()
    findings = _kept(judged, unsure, pieces, False)
    suppressed = _kept(judged, unsure, pieces, True)
    if any(unsure):
        again = _judged_again([unit for share in shares for unit in share], config, reading, read, judged, unsure)
        findings += again.findings
        suppressed += again.suppressed
    hidden: dict[tuple, dict[str, str]] = {}
    for part in judged:
        for key, reasons in part.hidden.items():
            hidden.setdefault(key, {}).update(reasons)
    findings, suppressed = suppressed_across_parts(one_live_note(findings), suppressed, hidden)
    findings.sort(key=Finding.sort_key)
    suppressed.sort(key=Finding.sort_key)
    return LintResult(findings, suppressed, config, sum(part.objects for part in judged),
                      [s for part in judged for s in part.sources], [f for part in judged for f in part.refused],
                      pieces)


def _kept(judged: list[_Judged], unsure: list[set[int]], pieces: Pieces, suppressed: bool) -> list[Finding]:
    """The parts' findings (or suppressed ones) but those of the `unsure` objects, their
    pieces kept in `pieces`."""
    kept = []
    for part, drop in zip(judged, unsure):
        for n, finding, piece in (part.suppressed if suppressed else part.found):
            if n is None or n not in drop:
                kept.append(finding)
                if piece is not None:
                    pieces.add(finding, piece, suppressed)
    return kept


def _judged_again(units: list[Unit], config: Config, reading: Reading, read: list[_Read], judged: list[_Judged],
                  unsure: list[set[int]]) -> LintResult:
    """The `unsure` objects (by part, their numbers) judged here, beside every shipped object
    and the files holding an object of a kind and namespace that their judging looked
    up, read again; while that judging looks up what the files read do not hold, more are read."""
    order = {unit.display: n for n, unit in enumerate(units)}
    place: dict[int, tuple[str, int]] = {}  # id(manifest) -> (file, its number there)
    wanted: set[tuple[str, int]] = set()
    keys: set = set()
    for part, its, drop in zip(judged, read, unsure):
        first: dict[str, int] = {}
        numbered = [(file, n - first.setdefault(file, n)) for n, (file, _) in enumerate(its.identities)]
        wanted |= {numbered[n] for n in drop}
        keys |= {key for n in drop for key in part.reads[n]}
        place.update({id(m): numbered[n] for n, m in enumerate(_manifests_of(its)) if m is not None})
    everything = [m for its in read for m in its.shared]
    files = {file for file, _ in wanted}
    while True:
        files |= _holding(read, keys)
        again = read_units([u for u in units if u.display in files], config, reading, None)
        seen: dict[str, int] = {}
        for manifest in again.manifests:
            file = manifest.source.display
            place[id(manifest)] = (file, seen.setdefault(file, -1) + 1)
            seen[file] += 1
        merged = sorted([m for m in again.manifests if identity(m.data)[0] not in SHIPPED] + everything,
                        key=lambda m: (order[place[id(m)][0]], place[id(m)][1]))
        given = Inputs(merged, judged=lambda m: place[id(m)] in wanted)
        looked: dict[int, tuple] = {}
        result = Run(replace(config, problems=[]), given).findings(notes=False, reads=looked)
        more = set().union(*(found for _, found in looked.values())) - keys
        if not more or _holding(read, keys | more) <= files:
            return result
        keys |= more


def _manifests_of(read: _Read) -> list[Manifest | None]:
    """A part's objects by number, where only its shipped ones were sent (the others None)."""
    sent = iter(read.shared)
    return [next(sent) if who[0] in SHIPPED else None for _, who in read.identities]


def _holding(read: list[_Read], keys: set) -> set[str]:
    """The files holding an object of a kind, in a namespace, that one of `keys` may look up
    (names aside: more files than needed, never fewer)."""
    namespaces: dict[str, set[str]] = {}
    for kind, namespace, _ in keys:
        namespaces.setdefault(kind, set()).add(namespace)
    files = set()
    for its in read:
        for file, (kind, namespace, name, made) in its.identities:
            if kind in SHIPPED or file in files:
                continue
            for what, _ in touches(kind, name, made):
                looked = namespaces.get(what)
                if looked and ("" in looked or not namespace or namespace in looked):
                    files.add(file)
                    break
    return files


def hidden_suppressions(manifests: list[Manifest], config: Config) -> dict[tuple, dict[str, str]]:
    """The suppressions `manifests` carry, keyed as the run keys them (engine.run.suppression_key)."""
    hidden: dict[tuple, dict[str, str]] = {}
    for manifest in manifests:
        if manifest.annotations:
            reasons, _ = suppressions(manifest, config)
            if reasons:
                hidden.setdefault(suppression_key(manifest.location(), manifest.ref), {}).update(reasons)
    return hidden


def one_live_note(findings: list[Finding]) -> list[Finding]:
    """Each part that judged live cluster objects notes how many it judged; one run notes
    them all once, at the first, after every other finding (engine.lint._live_note): the
    parts' notes become that one, their counts summed."""
    notes = [f for f in findings if f.rule == LIVE_OBJECTS]
    if len(notes) <= 1:
        return findings
    total = sum(int(note.message.split(" ", 1)[0]) for note in notes)
    first = notes[0]
    merged = replace(first, message=f"{total} {first.message.split(' ', 1)[1]}")
    return [f for f in findings if f.rule != LIVE_OBJECTS] + [merged]


def suppressed_across_parts(findings: list[Finding], suppressed: list[Finding],
                             hidden: dict[tuple, dict[str, str]]) -> tuple[list[Finding], list[Finding]]:
    """A part knows the suppressions of the objects it judged; a rule may place a finding on
    another object (rollout-pdb reports on a workload's budget), judged in another part.
    Such a finding is suppressed here, by that object's annotation (`hidden`: every part's,
    _hidden), as one run would."""
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
