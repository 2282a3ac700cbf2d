"""`draguard fix --unsafe-fixes` on every file of the corpus (tests/support/data/corpus): every
line no edit touched is kept byte for byte and in order, the result parses to what the edits say
(checked inside each splice), and a second run changes nothing. On the legacy corpus every
finding that has a fix is fixed, and no request is left that the built-in GPU inventory cannot satisfy."""

from __future__ import annotations

from collections import Counter

import pytest

from draguard.core.config import Config
from draguard.fix.files import read
from draguard.fix.run import Choice, FileText, fix_texts
from draguard.fix.splice import NotSpliceable
from support.byteminimal import untouched_lines_lost
from support.paths import corpus, corpus_files

EVERYTHING = Choice(unsafe=True)


def fixed(path) -> tuple[FileText, object]:
    source = read(str(path), path.name)
    assert source.text is not None
    file = FileText(path.name, source.text, source.bom)
    return file, fix_texts([file], Config(), EVERYTHING)


@pytest.mark.parametrize("path", corpus_files(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_fix_is_byte_minimal_and_idempotent(path):
    file, run = fixed(path)
    assert untouched_lines_lost(file.original, file.text, file.changes.original_regions()) == []
    again = FileText(path.name, file.text)
    fix_texts([again], Config(), EVERYTHING)
    assert not again.changed, again.applied
    assert not [left.reason for left in run.left if "could not be applied" in left.reason]


@pytest.mark.parametrize("path", sorted(p for p in (corpus() / "legacy").glob("*") if p.suffix in (".yaml", ".yml")),
                         ids=lambda p: p.name)
def test_legacy_files_end_with_every_fixable_finding_fixed_and_satisfiable(path):
    _, run = fixed(path)
    unfixed = [(left.finding.rule, left.reason) for left in run.left if left.finding.fix is not None]
    assert unfixed == []
    assert not [left for left in run.left if left.finding.rule == "request-unsatisfiable"]


def test_the_migration_reaches_most_of_the_legacy_corpus():
    """How much of the legacy corpus the migration turns into DRA claims (a floor, not a tally:
    the corpus is fixed, and a regression in the fix shows here)."""
    migrated = 0
    for path in sorted((corpus() / "legacy").glob("*.yaml")):
        file, _ = fixed(path)
        migrated += any(rule == "legacy-gpu-resource" for rule, _ in file.applied)
    assert migrated >= 40, migrated


def test_fixes_located_together_land_as_spliced_edit_by_edit(monkeypatch):
    """A document's fixes are located on one composition of it (fix.splice); on every corpus
    file the texts must be those that splicing each edit into the text the previous one left
    gives."""
    import draguard.fix.splice as splice

    def run():
        files = [FileText(f"{p.parent.name}/{p.name}", read(str(p), p.name).text) for p in corpus_files()]
        fix_texts(files, Config(), EVERYTHING)
        return [f.text for f in files]
    spliced, ways = splice._spliced, Counter()

    def counted(text, planned, starts, newline, together, *trees):
        ways[together] += 1
        return spliced(text, planned, starts, newline, together, *trees)
    monkeypatch.setattr(splice, "_spliced", counted)
    together = run()
    assert ways[False] * 20 < ways[True], ways  # one by one only where edits meet

    def refuse(*_):
        raise NotSpliceable("edit by edit, for the comparison")
    monkeypatch.setattr(splice, "_splice_together", refuse)
    assert run() == together


def test_incremental_lints_end_where_a_full_lint_of_the_result_does():
    """fix judges again only what a round's changes can reach; its final findings must be
    those of a fresh lint of the fixed texts (all corpus files in one run: cross-file
    references, namespaces shared between files)."""
    from draguard.engine import Inputs, Run
    from draguard.sources.loader import Loaded, Source, load_text

    files = []
    for path in corpus_files():
        source = read(str(path), f"{path.parent.name}/{path.name}")
        files.append(FileText(source.display, source.text, source.bom))
    run = fix_texts(files, Config(), EVERYTHING)
    fresh = Loaded()
    for f in files:
        load_text(Source(f.display, f.text), fresh)
    full = Run(Config(), Inputs.loaded(fresh)).findings()

    def key(f):
        return f.rule, f.location.file, f.location.line, f.location.column, f.message
    assert sorted(map(key, run.result.findings)) == sorted(map(key, full.findings))
    assert sum(f.changed for f in files) > 80


def test_a_text_that_does_not_verify_is_fixed_again_round_by_round(monkeypatch):
    """Plain files are fixed in memory and written once (fix.rewrite); one whose text does not
    parse back to the documents fixed in memory starts again and is spliced and verified round
    by round. Refusing every such text must give the texts and findings the fast way gives."""
    import draguard.fix.run as run_module

    def run():
        files = [FileText(f"{p.parent.name}/{p.name}", read(str(p), p.name).text) for p in corpus_files()]
        result = fix_texts(files, Config(), EVERYTHING)
        return [f.text for f in files], sorted((f.rule, f.file, f.line, f.column) for f in result.result.findings)

    fast = run()
    written_once = []

    def refused(text, problems, expected):
        written_once.append(text)
        return None
    monkeypatch.setattr(run_module, "verified", refused)
    assert run() == fast
    assert len(written_once) > 80  # every changed plain file took the fast way first
