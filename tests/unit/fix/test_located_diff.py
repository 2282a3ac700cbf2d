"""fix.located_diff: the diff of a fix located on its document's tree, written from its
replacements (a migration's edits read from the tree's marks), is the general path's
(splice.splice_document, then hunks.splice_diff) byte for byte: on generated streams
(test_added_keys' files: test_located's documents with comment and blank lines after them,
several a file, a last line with or without its line break) and generated migrations
(rules/legacy.py's shapes: documents added, items appended to lists there or not, keys and
items removed, a sequence item's first key removed, whole collections emptied, keys set where
there are none or over a scalar, into `{}` too; several edits at one point), and on every fix
of the corpus, the examples and the rule fixtures; each shape read from the marks is answered
without splice's writers; what it declines goes the general way in the report."""

from __future__ import annotations

import random
from types import SimpleNamespace

import pytest

import draguard.fix.located_diff as located_diff_module
from hypothesis import given, settings
from hypothesis import strategies as st

from draguard.core.fixes import add_document, append, remove, set_value
from draguard.engine import lint_paths
from draguard.engine.config_file import load_config
from draguard.fix.located_diff import located_diff
from draguard.report import html
from draguard.report.lines import SourceLines
from draguard.sources.yamlpos import parse_stream_remembered
from support.paths import CORPUS, EXAMPLES, ROOT

from .test_added_keys import _general, answered
from .test_located import NAMES, STRINGS, _collections, _value

TEMPLATE = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate", "metadata": {"name": "t-gpu"},
            "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}}}}


def _entries(data, path: tuple = ()):
    """The path of every entry and item in `data`, outermost first."""
    if isinstance(data, (dict, list)):
        for key, value in (data.items() if isinstance(data, dict) else enumerate(data)):
            yield path + (key,)
            yield from _entries(value, path + (key,))


def _migration(rnd: random.Random, tree) -> tuple:
    """A fix of rules/legacy.py's shapes on the document: a document added (often), items
    appended to lists there or not (claims), entries there removed (a limit, a whole
    `limits`, a list item), now and then a key set or something not there removed; in any
    order (the splice orders them)."""
    mappings = [p for p in _collections(tree) if isinstance(_at(tree, p), dict)]
    lists = [p for p in _collections(tree) if isinstance(_at(tree, p), list)]
    entries = list(_entries(tree))
    edits = []
    if rnd.random() < 0.7:
        edits.append(add_document(dict(TEMPLATE, metadata={"name": rnd.choice(NAMES)})))
    for _ in range(rnd.choice([0, 1, 2, 2, 3])):
        if lists and rnd.random() < 0.4:
            path = rnd.choice(lists)
        else:
            path = rnd.choice(mappings) + (rnd.choice(NAMES),) * rnd.choice([1, 1, 2])
        edits.append(append(path, rnd.choice([{"name": rnd.choice(NAMES)}, _value(rnd, 2), rnd.choice(STRINGS)])))
    for _ in range(rnd.choice([0, 1, 1, 2])):
        if entries and rnd.random() < 0.9:
            edits.append(remove(rnd.choice(entries)))
        else:
            edits.append(remove(rnd.choice(mappings) + (rnd.choice(NAMES),)))
    if rnd.random() < 0.2:
        edits.append(set_value(rnd.choice(mappings) + (rnd.choice(NAMES),), rnd.choice(STRINGS + [1, None])))
    scalars = [path for path in entries if not isinstance(_at(tree, path), (dict, list))]
    if scalars and rnd.random() < 0.3:  # a scalar there replaced (an apiVersion moved on)
        edits.append(set_value(rnd.choice(scalars), rnd.choice(STRINGS + [1, True, None, _value(rnd, 2)])))
    rnd.shuffle(edits)
    return tuple(edits)


def _at(data, path: tuple):
    for part in path:
        data = data[part]
    return data


@settings(max_examples=100, deadline=None)
@given(st.randoms(use_true_random=False))
def test_the_located_diff_is_the_general_paths_on_generated_migrations(rnd):
    answered(rnd, 3, _migration, located_diff)


def test_most_generated_migrations_are_written_directly(monkeypatch):
    """Not vacuous: the direct path answers most generated migrations (the others: an edit
    that does not fit the data, two edits that meet), most of them with every edit read from
    the tree's marks (splice's writers not asked)."""
    asked, from_marks = [], []
    spliced = located_diff_module.spliced
    monkeypatch.setattr(located_diff_module, "spliced", lambda *args: asked.append(args) or spliced(*args))

    def counted(*args):
        before = len(asked)
        found = located_diff(*args)
        if found is not None and len(asked) == before:
            from_marks.append(args)
        return found

    direct, tried = answered(random.Random(14), 3000, _migration, counted)
    assert direct >= tried // 2, direct
    assert len(from_marks) >= direct // 2, (len(from_marks), direct)


@pytest.mark.parametrize("tree", [CORPUS, EXAMPLES, *sorted((ROOT / "tests" / "rules").glob("*/"))],
                         ids=lambda path: path.name)
def test_every_fix_of_the_corpus_and_the_fixtures_is_the_general_paths(tree):
    result = lint_paths([str(tree)], load_config(None))
    lines = SourceLines(result.sources)
    for finding in result.findings:
        text, document = lines.text(finding.file), finding.location.document
        span = lines.document_span(finding.file, document) if finding.fix and text is not None \
            and document is not None else None
        if span is None:
            continue
        start, end, line = span
        edits, tree_read = finding.fix.edits, html._block_read(finding, line)
        found = located_diff(finding.file, text, start, end, line, edits, tree_read)
        if found is not None:
            general = _general(text, start, end, line, edits, tree_read)
            assert found == general.replace("f.yaml", finding.file.lstrip("/")), (finding.file, edits)


POD = ("kind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n  - name: c\n    resources:\n      limits:\n"
       "        nvidia.com/gpu: 1\n        memory: 1Gi\n")
MIGRATION = (add_document(TEMPLATE), append(("spec", "resourceClaims"), {"name": "gpu"}),
             append(("spec", "containers", 0, "resources", "claims"), {"name": "gpu"}),
             remove(("spec", "containers", 0, "resources", "limits", "nvidia.com/gpu")))


def _shown(monkeypatch, text: str, edits: tuple) -> str:
    """What report.html._fix_diff shows for `edits` on the document `text` (POD's tree)."""
    tree = parse_stream_remembered(POD)[0][0].data
    start = 0 if text.startswith("%") else text.index("kind")
    finding = SimpleNamespace(file="f.yaml", location=SimpleNamespace(document=0), fix=SimpleNamespace(edits=edits))
    lines = SimpleNamespace(text=lambda _: text, document_span=lambda *_: (start, len(text), 1 + text.count("\n", 0, start)))
    monkeypatch.setattr(html, "_block_read", lambda *_: tree)
    return html._fix_diff(finding, lines)  # type: ignore[arg-type]


def test_the_report_writes_a_migration_from_its_replacements(monkeypatch):
    """report.html._fix_diff answers a legacy pod's migration from fix.located_diff, not the
    splice's fixed text."""
    tree = parse_stream_remembered(POD)[0][0].data
    expected = _general(POD, 0, len(POD), 1, MIGRATION, tree)
    monkeypatch.setattr("draguard.fix.splice.splice_document", None)
    assert _shown(monkeypatch, POD, MIGRATION) == expected
    assert "-        nvidia.com/gpu: 1\n" in expected and "+      claims:\n+      - name: gpu\n" in expected
    assert "+---\n+apiVersion: resource.k8s.io/v1\n" in expected


@pytest.mark.parametrize("text, edits", [
    (POD.replace("\n", "\r\n"), MIGRATION),  # CRLF
    (POD.replace("name: p", "name: p\x0c"), MIGRATION),  # another line break
    ("%YAML 1.1\n---\n" + POD, MIGRATION),  # a directive in the document's text
    (POD, (remove(("spec", "containers", 0, "resources", "limits")),  # two edits that meet: one at a time
           remove(("spec", "containers", 0, "resources", "limits", "memory")))),
    (POD, (append(("spec", "containers", 0, "name"), "b"),)),  # not spliceable: the edits as text
])
def test_what_it_declines_goes_the_general_way(monkeypatch, text, edits):
    start = 0 if text.startswith("%") else text.index("kind")
    tree = parse_stream_remembered(POD)[0][0].data
    line = 1 + text.count("\n", 0, start)
    assert located_diff("f.yaml", text, start, len(text), line, edits, tree) is None
    general = _general(text, start, len(text), line, edits, tree)
    assert _shown(monkeypatch, text, edits) == (general if general is not None else
                                                "".join(f"{e.op} {'.'.join(map(str, e.path))}\n" for e in edits))


@pytest.mark.parametrize("edits", [
    (remove(("spec", "containers", 0, "resources", "limits", "nvidia.com/gpu")),),  # a key of a mapping
    (remove(("spec", "containers", 0, "resources")),),  # a key and the mappings below it
    (remove(("spec", "containers", 1)),),  # a sequence item
    (remove(("spec", "containers", 0, "name")),),  # a sequence item's first key
    (append(("spec", "containers"), {"name": "d"}),),  # to a block sequence there
    (append(("spec", "containers", 0, "resources", "claims"), {"name": "gpu"}),),  # with its key
    (set_value(("spec", "nodeSelector", "gpu"), "a100"),),  # a key where there is none
    (set_value(("spec", "containers", 1, "args", "a"), 1),),  # into `{}`
    (set_value(("apiVersion",), "v2"), set_value(("spec", "containers", 1, "image"), "it's")),  # scalars there
    (add_document(TEMPLATE),),
    MIGRATION,
])
def test_each_migration_shape_is_read_from_the_marks(monkeypatch, edits):
    """Each edit of a migration's shape is written from the tree's marks, not by splice's
    writers, and is the general path's diff."""
    text = (POD + "  - name: e\n    image: 'i'\n    args: {}\n    command: [sh, -c]\n  nodeSelector:\n"
            "    zone: a  # the zone\n")
    tree = parse_stream_remembered(text)[0][0].data
    monkeypatch.setattr(located_diff_module, "spliced", None)
    found = located_diff("f.yaml", text, 0, len(text), 1, edits, tree)
    assert found is not None and found == _general(text, 0, len(text), 1, edits, tree)


@pytest.mark.parametrize("text", ["kind: Pod\nspec:\n  restartPolicy:\n  image: i\n",
                                  "kind: Pod\nspec:\n  image: i\n  restartPolicy:   # unset\n"])
def test_a_set_over_an_empty_value_writes_its_entrys_line(text):
    """An empty value (`key:`) set: its entry's line written again, as composing the document
    writes it, not the new token at its place (`restartPolicy:Never`, one plain scalar)."""
    tree = parse_stream_remembered(text)[0][0].data
    edits = (set_value(("spec", "restartPolicy"), "Never"),)
    found = located_diff("f.yaml", text, 0, len(text), 1, edits, tree)
    assert found is not None and found == _general(text, 0, len(text), 1, edits, tree)
    assert found == _general(text, 0, len(text), 1, edits, None)
    assert "\n+  restartPolicy: Never\n" in found
