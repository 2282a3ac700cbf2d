"""Linting again after each round of fixes, without paying for what did not change: a text
that did not change is not parsed again, and only the files that changed, or that hold an
object whose judging looked up one a change touched, are judged again (every object stays in
the set for the rules that read others), and only by the rules whose fixes the run may apply:
the others judge every file once, when no fix is left.

What each object's judging looked up is recorded by the object set (model.objectset: a claim
or template by name, the budgets or pod templates of a namespace, a ConfigMap, the HPAs, a
Namespace, or the whole set); a change to a cluster-wide object (a DeviceClass, a slice, a
node) reaches everything. An object that names no namespace may be applied to any, so a
change to it reaches every namespace, and a lookup from it sees every namespace."""

from __future__ import annotations

from ..core.config import Config
from ..core.finding import Finding
from ..core.location import Location
from ..core.value import replace
from ..engine.result import LintResult
from ..engine.run import Inputs, Run
from ..model.manifest import Manifest
from ..model.objectset import Touched, identity
from ..sources.loader import Loaded, Source, load_documents, load_text


class Relinter:
    """Lints the files as the rounds leave them. Each round only the rules whose fixes the
    run may apply (`fixing`) judge; the other rules, which cannot change what a round does,
    judge every file once, when no fix is left (complete)."""

    def __init__(self, config: Config, context: Loaded | None, fixing, reference: Loaded | None = None):
        self.config, self.context, self.fixing = config, context, fixing
        self.parsed: dict[str, tuple[str, Loaded, list]] = {}  # display -> (text, what it loaded to, manifests)
        #: the fixing rules' findings by the file whose judging found them: (findings, suppressed)
        self.found: dict[str | None, tuple[list, list]] = {}  # file judged (None: the run's own) -> findings
        self.first = True
        #: the renders are judged (their findings are reported); the reference (--reference) only read
        self.context_manifests = [Manifest.from_entry(e) for e in context.entries] if context else []
        self.reference_manifests = [Manifest.from_entry(e) for e in reference.entries] if reference else []
        self.unjudged = {id(m) for m in self.reference_manifests}
        self.everything = Loaded()
        #: id(manifest) -> (the manifest, what the fixing rules' judging of it looked up)
        self.reads: dict[int, tuple] = {}
        #: objects of files fixed elsewhere, read and never judged (fix.parallel), and the order
        #: of every file (display) that places them among this run's files
        self.beside: dict[str, list[Manifest]] = {}
        self.order: list[str] = []
        #: when tracked (fix.parallel): display -> what any judging of its objects looked up,
        #: and display -> the identities (model.objectset.identity) its objects had in any round
        self.looked: dict[str, set] | None = None
        self.seen: dict[str, set] = {}

    def track(self) -> None:
        """Keep what every judging looked up, and every object read, by file (looked, seen)."""
        self.looked = {}

    def place_beside(self, manifests: list[Manifest], order: list[str]) -> None:
        """Read `manifests` too (never judged: they are other files' objects, judged where
        those files are fixed), placed among this run's files by `order`, the displays of all."""
        for manifest in manifests:
            self.beside.setdefault(manifest.source.display, []).append(manifest)
            self.unjudged.add(id(manifest))
        self.order = order

    def lint(self, files) -> tuple[LintResult, set]:
        """(the fixing rules' findings of every file as it stands now, (file, document) of List items).
        A file whose fixes are held in memory (fix.run.FileText.documents) is read from that data."""
        changed, dirty = self.read(files)
        everything = self._assemble()
        list_items = {(e.source.display, e.document) for e in everything.entries if e.item is not None}
        if self.first:
            self._judge(None, {s.display for s in everything.sources}, self.fixing)
            self.first = False
        elif changed:
            again = changed | {m.source.display for m, keys in self.reads.values() if dirty.reaches(keys)}
            again &= self.parsed.keys()  # the renders are judged once: no fix is written into them
            self._judge(lambda m: m.source.display in again, again, self.fixing)
        return self._merged(self.found), list_items

    def read(self, files) -> tuple[set, "Dirty"]:
        """Parse the files whose state changed since they were last read: (their displays, what
        the changes touch)."""
        changed, dirty = set(), Dirty()
        for f in files:
            state = f.state
            cached = self.parsed.get(f.display)
            if cached is None or not _same(cached[0], state):
                part = _read(f)
                if cached is not None:
                    changed.add(f.display)
                    dirty.add(cached[1], part)
                    for manifest in cached[2]:
                        self.reads.pop(id(manifest), None)
                self.parsed[f.display] = (state, part, [Manifest.from_entry(e) for e in part.entries])
                if self.looked is not None:
                    self.seen.setdefault(f.display, set()).update(identity(e.data) for e in part.entries)
        return changed, dirty

    def settle(self, files) -> None:
        """Read `files` from their texts again, now that each was verified to hold the data
        it was judged on in memory, and place their findings on those texts (none is judged
        again: the data is the same)."""
        if not files:
            return
        placed: dict[tuple[str, int], Manifest] = {}  # (file, document) -> the object read there
        for f in files:
            part = _read(f)
            manifests = [Manifest.from_entry(e) for e in part.entries]
            self.parsed[f.display] = (f.state, part, manifests)
            placed.update(((f.display, m.document), m) for m in manifests)
        for group in self.found.values():
            for finding in (*group[0], *group[1]):
                manifest = placed.get((finding.location.file, finding.location.document))
                if manifest is not None:
                    finding.location = _placed(finding, manifest)
        self._assemble()

    def _assemble(self) -> Loaded:
        """Every file's objects as last read, with the renders' and the reference's, as the rules see them."""
        parsed = self.parsed
        if self.beside:
            mine = [m for display in self.order
                    for m in (parsed[display][2] if display in parsed else self.beside.get(display, ()))]
        else:
            mine = [m for _, _, manifests in parsed.values() for m in manifests]
        self.manifests = mine + self.context_manifests + self.reference_manifests
        everything = self.everything = Loaded()
        for part in [*(part for _, part, _ in self.parsed.values()), *([self.context] if self.context else [])]:
            everything.entries += part.entries
            everything.problems += part.problems
            everything.sources += part.sources
            everything.refused += part.refused
        return everything

    def complete(self) -> LintResult:
        """Every rule's findings of the files as the last lint() read them (the other rules
        judge them now), and the run's own (problems met reading, unknown suppression keys,
        the live-objects note)."""
        others: dict = {}
        self._judge(None, {s.display for s in self.everything.sources}, lambda rule: not self.fixing(rule), others,
                    notes=True)
        return self._merged(self.found, others)

    def _judge(self, only, displays: set, rules, found: dict | None = None, notes: bool = False) -> None:
        """Lint the run's objects with the `rules` the predicate lets through, judging what
        `only` lets through, and keep the findings of `displays` in `found` (the fixing
        rules' by default) in place of their earlier ones; with `notes`, the run's own
        findings too (under None)."""
        found = self.found if found is None else found
        unjudged = self.unjudged
        judged = (lambda m: id(m) not in unjudged and (only is None or only(m))) if unjudged else only
        inputs = Inputs.loaded(self.everything, self.manifests, judged)
        looked: dict | None = {} if found is self.found or self.looked is not None else None
        result = Run(self.config, inputs).findings(rules, notes=notes, reads=looked)
        if looked:
            if found is self.found:
                self.reads.update(looked)
            if self.looked is not None:
                for manifest, keys in looked.values():
                    if keys:
                        self.looked.setdefault(manifest.source.display, set()).update(keys)
        for display in [*displays, None]:
            found[display] = ([], [])
        for index, findings in enumerate((result.findings, result.suppressed)):
            for finding in findings:  # by the file judged, which may not be the file it is placed in
                judged = finding.judged
                found[judged.source.display if isinstance(judged, Manifest) else None][index].append(finding)

    def _merged(self, *tables: dict) -> LintResult:
        """One result of the findings kept in `tables` (by file: (findings, suppressed))."""
        groups = [group for table in tables for group in table.values()]
        findings = sorted((f for group in groups for f in group[0]), key=Finding.sort_key)
        suppressed = sorted((f for group in groups for f in group[1]), key=Finding.sort_key)
        loaded = self.everything
        return LintResult(findings, suppressed, self.config, len(loaded.entries), loaded.sources, loaded.refused)


def _read(f) -> Loaded:
    """A file's objects: from the data its fixes left in memory, else from its text."""
    part = Loaded()
    if f.documents is not None:
        load_documents(Source(f.display, f.text), f.documents, part)
    else:
        load_text(Source(f.display, f.text), part)
    return part


def _same(before, now) -> bool:
    """Whether a file's state (its text, or the documents a round of fixes made: a new list
    each round) is what was read last."""
    return before is now or isinstance(now, str) and before == now


def _placed(finding: Finding, manifest: Manifest) -> Location:
    """A finding judged on data held in memory, placed on the text that holds that data: where
    its rule pointed (Finding.site), else on the object, keeping its path."""
    location = manifest.located(finding.site) if finding.site is not None else None
    return location or replace(manifest.location(), path=finding.location.path)


class Dirty(Touched):
    """What a round's changes touch, as the read keys (model.objectset) of the objects that
    changed, were added or went: whose judging looked one of them up must be judged again."""

    def add(self, before: Loaded, after: Loaded) -> None:
        old = [entry.data for entry in before.entries]
        new = [entry.data for entry in after.entries]
        for data in _unmatched(old, new) + _unmatched(new, old):
            self.touch(*identity(data))


def _unmatched(these: list, those: list) -> list:
    """The objects of `these` equal to none of `those` (`not in`, in their order), each compared
    only with those of its own kind, namespace and name (equal objects have the same): `not in`
    the whole list compared every object with every other, quadratic in a stream whose objects
    a round all changes (9 s of the 24 s that fixing a 1 MB stream of 3,400 pods took)."""
    named: dict[tuple, list] = {}
    for data in those:
        named.setdefault(identity(data)[:3], []).append(data)
    return [data for data in these if data not in named.get(identity(data)[:3], ())]
