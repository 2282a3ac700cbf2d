"""draguard fix: the findings' fixes applied to the texts they came from, round after round.

Each round takes the fixes the run allows from the findings of all files together (so
cross-object rules see the whole set, charts and kustomizations included as context),
applies those that do not touch one another (per document: no edit path inside another's, a
collection that lost an item is not edited again, two fixes never add the same object), and
lints again what the round changed with the rules it may fix (relint); it stops when no fix
is left to apply, and then the other rules judge every file once. A plain file's fixes are
applied to its documents in memory, which the next round judges, and its text is written
once, when no fix is left (fix.rewrite), and parsed to verify it; a text that does not
verify, and any other text, is spliced and verified round by round. A fix whose edits cannot
be spliced exactly is not applied and is reported, never forced. Objects that come from a
render (Helm, Kustomize) or from a List item are reported, never written."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..core.collector import cyclic_gc_paused
from ..core.config import Config
from ..core.finding import Finding
from ..core.fixes import Applicability, EditError, Fix, FixAvailability, Op
from ..engine.result import INTERNAL_ERROR, LintResult
from ..sources.discover import patched_by
from ..sources.loader import Loaded, plain_stream
from ..sources.yamlpos import positioned, remembering_parses
from .relint import Relinter
from .rewrite import rewritten
from .splice import Changes, NotSpliceable, Parsed, TextStyle, apply_fixes, fixed_documents, parse, verified
from ..model.pods import mapping

MAX_ROUNDS = 50


@dataclass
class FileText:
    """One file (or stdin) as read, and its text as the fixes leave it."""

    display: str
    original: str
    bom: bool = False
    text: str = ""
    applied: list[tuple[str, str]] = field(default_factory=list)  # (rule, fix title)
    changes: Changes = field(default_factory=Changes)
    parsed: Parsed | None = None  # the text's last verified parse, reused by the next fix
    #: the documents the fixes made, held in memory until they are written into `text`
    documents: list | None = None
    origins: list | None = None  # for each of them, the document of `text` it was made from (None: added)
    #: whether the fixes are applied in memory, round after round, and the text written and
    #: verified once, at the end (None: not decided yet); else each round is spliced and verified
    deferred: bool | None = None
    #: its `--diff` (fix.files.file_diff), when the process that fixed it made it (fix.parallel)
    diff: str | None = None

    def __post_init__(self):
        self.text = self.text or self.original

    @property
    def changed(self) -> bool:
        return self.text != self.original

    @property
    def state(self):
        """What the file holds now: the documents held in memory, else its text."""
        return self.documents if self.documents is not None else self.text

    def restart(self) -> None:
        """Back to the text as read, to be fixed again verifying each round."""
        self.text, self.parsed, self.documents, self.origins, self.deferred = self.original, None, None, None, False
        self.applied, self.changes = [], Changes()


@dataclass
class Left:
    finding: Finding
    reason: str
    #: why a fix the run may choose is still to be applied, what `fix --check` fails on:
    #: "unsafe" (it waits for --unsafe-fixes), "source" (in rendered output or a List item: the
    #: source is to change), "failed" (its edits did not apply, or not yet); None for no fix, a
    #: display-only one, or one not selected
    pending: str | None = None


@dataclass
class FixRun:
    files: list[FileText]
    left: list[Left]
    result: LintResult  # the findings of the fixed texts
    #: diffs of Helm charts' values.yaml where fixes of rendered objects map to one value
    #: (fix.helm_values): offered, never written
    values_diffs: list[str] = field(default_factory=list)

    @property
    def changed(self) -> list[FileText]:
        return [f for f in self.files if f.changed]


@dataclass(frozen=True)
class Choice:
    """Which fixes a run applies."""

    unsafe: bool = False
    select: frozenset = frozenset()  # rule ids; empty: every rule
    ignore: frozenset = frozenset()

    def selects(self, rule_id: str) -> bool:
        """Whether --select and --ignore let this rule's fixes through."""
        return (not self.select or rule_id in self.select) and rule_id not in self.ignore

    def may_fix(self, rule) -> bool:
        """Whether the run may apply fixes of this rule's findings."""
        return rule.fixable is not FixAvailability.NEVER and self.selects(rule.id)

    def reason_not(self, finding: Finding) -> str | None:
        """Why this finding's fix is not applied, or None when it is wanted."""
        fix = finding.fix
        if fix is None:
            if finding.rule == INTERNAL_ERROR:
                return "a rule failed here: its findings, and their fixes, are missing"
            return finding.no_fix or "the rule has no fix for it"
        if not self.selects(finding.rule):
            return "not selected"
        if fix.applicability is Applicability.DISPLAY_ONLY:
            return "its fix is display-only: apply it by hand"
        if fix.applicability is Applicability.UNSAFE and not self.unsafe:
            return "its fix changes behaviour: pass --unsafe-fixes"
        return None


def fix_texts(files: list[FileText], config: Config, choice: Choice, context: Loaded | None = None,
              reference: Loaded | None = None) -> FixRun:
    """Apply the chosen fixes to `files` until none is left to apply. `context` holds what
    was read but is not written (renders: judged and reported), `reference` what is only
    read (--reference: neither judged nor written), so that rules see both."""
    # the text a fix verified is the text the next lint reads, a round later: every file's last parse is kept
    with cyclic_gc_paused(), remembering_parses(len(files) + 4096):
        return fixed_with(files, Relinter(config, context, choice.may_fix, reference), choice, context)


def fixed_with(files: list[FileText], relinter: Relinter, choice: Choice, context: Loaded | None = None) -> FixRun:
    """fix_texts with the Relinter given (fix.parallel gives one that also reads other files'
    objects); the caller keeps the parses remembered (yamlpos.remembering_parses)."""
    by_name = {f.display: f for f in files}
    failed: dict[tuple, str] = {}
    for _ in range(MAX_ROUNDS):
        fixable, list_items = relinter.lint(files)
        plan = _plan(fixable.findings, by_name, list_items, failed, choice)
        if not plan:
            if _settle(files, relinter, failed):
                continue  # a text that did not verify is fixed again, round by round
            break
        by_file: dict[str, dict[int, list]] = {}
        for (display, document), fixes in plan.items():
            by_file.setdefault(display, {})[document] = fixes
        for display, by_document in by_file.items():
            _apply(by_name[display], by_document, failed)
    else:  # a fix that keeps coming back: stop, keep what was done, say so
        _settle(files, relinter, failed)
        fixable, list_items = relinter.lint(files)
        for finding in _plan(fixable.findings, by_name, list_items, failed, choice).values():
            for f in finding:
                failed[_key(f)] = f"fixes still applied after {MAX_ROUNDS} rounds: stopped"
    result = relinter.complete()
    left = [Left(f, _reason(f, by_name, list_items, failed, choice), _pending(f, by_name, list_items, choice))
            for f in result.findings]
    return FixRun(files, left, result, _helm_values(left, context, choice))


def _pending(finding: Finding, by_name, list_items, choice: Choice) -> str | None:
    """Why a fix is still due for this finding (Left.pending), or None: it has none that is not
    display-only and that --select/--ignore let through."""
    fix = finding.fix
    if fix is None or fix.applicability is Applicability.DISPLAY_ONLY or not choice.selects(finding.rule):
        return None
    location = finding.location
    if location.file not in by_name or (location.file, location.document) in list_items:
        return "source"
    return "unsafe" if fix.applicability is Applicability.UNSAFE and not choice.unsafe else "failed"


def _helm_values(left: list[Left], context: Loaded | None, choice: Choice) -> list[str]:
    """Each finding of a Helm template with a fix says why the template is not rewritten; the
    fixes the run may apply that map to one value of the chart become diffs of its values.yaml
    (fix.helm_values), one per file, offered; an unsafe one without --unsafe-fixes says so."""
    from .helm_values import offer, values_diffs

    rendered: dict[tuple, dict] = {}  # (document, kind, name) -> the object helm rendered
    for entry in context.entries if context is not None else ():
        if entry.source.rendered_by == "helm" and entry.item is None:
            meta = mapping(entry.data.get("metadata"))
            rendered[(entry.document, entry.data.get("kind"), meta.get("name"))] = entry.data
    items, offers = [], []
    for item in left:
        finding = item.finding
        if item.pending != "source" or not _is_template(finding.location.file):
            continue
        made = offer(finding, rendered.get((finding.location.document, finding.obj.kind, finding.obj.name)))
        if made.values_file and choice.reason_not(finding) is not None:
            item.reason = f"{made.reason}: {choice.reason_not(finding)}"
            continue
        item.reason = made.reason
        items.append(item)
        offers.append(made)
    diffs, failed = values_diffs(offers)
    for index, why in failed.items():
        items[index].reason = why
    return diffs


def _is_template(path: str) -> bool:
    """Whether `path` is a Helm template: Go template text, no YAML until rendered."""
    try:
        with open(path, encoding="utf-8-sig") as handle:
            return "{{" in handle.read()
    except (OSError, UnicodeDecodeError):
        return False


def _apply(target: FileText, by_document: dict[int, list], failed: dict) -> None:
    """This round's fixes of one file: all at once when they apply together, else one at a
    time (a fix that fails alone is reported and left out). A plain stream (no template, no
    List, no JSON, no alias) that parsed without a problem is fixed in memory, round after
    round, and its text written and verified once (_settle); any other text is spliced and
    verified round by round."""
    ordered = [(document, finding) for document in sorted(by_document, reverse=True) for finding in by_document[document]]
    if target.deferred is None:
        parsed = target.parsed = target.parsed or parse(target.text)
        target.deferred = _plain(target.text) and not parsed.problems
    take = _fix_in_memory if target.deferred else _splice_verified
    try:
        take(target, ordered)
        return
    except (NotSpliceable, EditError):
        pass
    for one in ordered:  # highest document first: an added document renumbers those after it
        try:
            take(target, [one])
        except (NotSpliceable, EditError) as exc:
            failed[_key(one[1])] = f"its edits could not be applied exactly ({exc}): left unchanged"


#: what may be a YAML alias (`*name`); a `*` in a script or a glob only costs the faster way
_ALIAS = re.compile(r"(?:^|[\s\[{,])\*[\w.-]")


def _plain(text: str) -> bool:
    """Whether a text's fixes may be written once, from the data they made (fix.rewrite): a
    plain stream, without aliases (their copies have no text of their own: splicing refuses
    them) and not JSON (where no document can be added). Any other text is fixed round by
    round, as is one that turns out not to verify."""
    return ("*" not in text or _ALIAS.search(text) is None) and plain_stream(text) and not TextStyle.of(text).json


def _splice_verified(target: FileText, fixes: list) -> None:
    target.text, target.parsed = apply_fixes(target.text, [(d, _fix(f).edits) for d, f in fixes], target.changes,
                                             target.parsed)
    target.applied.extend((f.rule, _fix(f).title) for _, f in fixes)


def _fix_in_memory(target: FileText, fixes: list) -> None:
    """The fixes applied to the documents held for the file (first: its parse's), each document
    remembering the one of the text it was made from."""
    if target.documents is None or target.origins is None:
        parsed = target.parsed = target.parsed or parse(target.text)
        target.documents, target.origins = list(parsed.documents), list(range(len(parsed.documents)))
    origins = list(target.origins)
    documents = fixed_documents(target.documents, [(d, _fix(f).edits) for d, f in fixes], origins)
    # paths on every node, once for the rounds to come (a document no fix touched is kept as it is)
    target.documents, target.origins = [positioned(d) for d in documents], origins
    target.applied.extend((f.rule, _fix(f).title) for _, f in fixes)


def _settle(files: list[FileText], relinter: Relinter, failed: dict) -> bool:
    """Write each file's documents held in memory into its text (fix.rewrite) and verify it:
    the text must parse, without a problem, to those documents. Those that do are read from
    their texts from now on; one that does not starts again from the text as read, spliced
    and verified round by round. Whether any starts again."""
    settled, again = [], []
    for f in files:
        if f.documents is None or f.origins is None or f.parsed is None:  # set together by _fix_in_memory
            continue
        try:
            text, steps = rewritten(f.text, f.parsed, f.documents, f.origins)
            after = verified(text, f.parsed.problems, f.documents)
        except (NotSpliceable, EditError):
            after = None
        if after is None:
            again.append(f)
            continue
        for step in steps:
            f.changes.record(*step)
        f.text, f.parsed, f.documents, f.origins = text, after, None, None
        settled.append(f)
    relinter.settle(settled)
    for f in again:
        f.restart()
        for key in [key for key in failed if key[0] == f.display]:
            del failed[key]
    return bool(again)


def _key(finding: Finding) -> tuple:
    location = finding.location
    return location.file, location.document, finding.rule, location.path, _fix(finding).title


def _fix(finding: Finding) -> Fix:
    """The fix of a finding being applied (only findings with one are)."""
    if finding.fix is None:
        raise ValueError(f"{finding.rule}: a finding without a fix reached the fixer")
    return finding.fix


def _reason(finding, by_name, list_items, failed, choice) -> str:
    location = finding.location
    if finding.fix is None:
        return choice.reason_not(finding)
    if location.file not in by_name:
        return "it is in rendered output (Helm, Kustomize): reported, never written" + _source_fix(location.file)
    if (location.file, location.document) in list_items:
        return "it is an item of a List (cluster output): not written in place"
    return failed.get(_key(finding)) if finding.fix and _key(finding) in failed else \
        choice.reason_not(finding) or "its fix applies in a later run"


def _source_fix(path: str) -> str:
    """Where a rendered finding points into a plain manifest file (a Kustomize resource, as
    sources.origins maps it back), how to fix that file itself; for a Kustomize patch, that
    it takes an edit by hand (fixes write whole objects); nothing for a Helm template, which
    is no YAML until rendered."""
    try:
        with open(path, encoding="utf-8-sig") as handle:
            text = handle.read()
    except (OSError, UnicodeDecodeError):
        return ""
    if "{{" in text or not path.endswith((".yaml", ".yml", ".json")):
        return ""
    if patched_by(path) is not None:
        return f"; it comes from the Kustomize patch {path}: edit the patch by hand (a fix writes whole objects)"
    return f"; it comes from {path}: `draguard fix {path}` fixes that file"


def _plan(findings, by_name, list_items, failed, choice) -> dict:
    """(file, document) -> the fixes to apply this round, none touching another's paths."""
    plan: dict[tuple, list] = {}
    touched: dict[tuple, list] = {}
    added: dict = {}  # the objects the round's fixes add: (kind, namespace, name) -> (the object, files)
    for finding in findings:
        location = finding.location
        where = (location.file, location.document)
        if location.file not in by_name or where in list_items or location.document is None \
                or choice.reason_not(finding) is not None or _key(finding) in failed:
            continue
        paths, objects = _paths(finding.fix.edits), _added(finding)
        seen = touched.setdefault(where, [])
        if any(_related(p, q) for p in paths for q in seen) or \
                any(_clashes(key, value, location.file, added) for key, value in objects.items()):
            continue
        seen.extend(paths)
        for key, value in objects.items():
            added.setdefault(key, (value, set()))[1].add(location.file)
        plan.setdefault(where, []).append(finding)
    return plan


#: kinds a cluster holds one of by name, whatever the namespace a file gives them
_CLUSTER_SCOPED = frozenset({"DeviceClass"})


def _clashes(key: tuple, value: dict, file: str, added: dict) -> bool:
    """Whether an object a fix adds clashes with one an earlier fix of the round adds: the
    same one again in a file, another of that name, or a cluster-scoped one twice. An equal
    namespaced object in another file does not: the same workload in two files (folders per
    environment) gets it in each, so that each file still applies alone. A clashing fix waits
    for the next round, which sees the object there."""
    if key not in added:
        return False
    earlier, files = added[key]
    return earlier != value or file in files or key[0] in _CLUSTER_SCOPED


def _paths(edits) -> list[tuple]:
    """(path, op) for each place a fix touches: each edit's path, and for a removal the whole
    collection it removes from (a list's items are renumbered; a fix that removes keys may be
    reshaping the mapping, as moving a request's fields under `exactly` does)."""
    paths = []
    for edit in edits:
        if edit.op is Op.ADD_DOCUMENT:
            continue
        paths.append((tuple(edit.path), edit.op))
        if edit.op is Op.REMOVE and edit.path:
            paths.append((tuple(edit.path[:-1]), Op.REMOVE))  # a list renumbered, a mapping reshaped
    return paths


def _added(finding: Finding) -> dict:
    """(kind, namespace as written, name) -> the object, of the objects a fix adds (two that
    name no namespace count as one: the conservative reading)."""
    objects = {}
    for edit in _fix(finding).edits:
        if edit.op is Op.ADD_DOCUMENT and isinstance(edit.value, dict):
            meta = edit.value.get("metadata") or {}
            objects[(edit.value.get("kind"), meta.get("namespace", ""), meta.get("name"))] = edit.value
    return objects


def _related(a: tuple, b: tuple) -> bool:
    """Two touched places that must not change in one round: one inside the other, unless
    both append to the same list (appends renumber nothing; they land in plan order)."""
    (path_a, op_a), (path_b, op_b) = a, b
    if op_a is Op.APPEND and op_b is Op.APPEND and path_a == path_b:
        return False
    shorter = min(len(path_a), len(path_b))
    return path_a[:shorter] == path_b[:shorter]
