"""fix.located: a block-read document's fixes located on the tree the loader built (what the
HTML report does with the tree its rule judged) make the same replacements as on the document
composed again. Generated streams are written in many ways (indentation steps, sequences
indented or not, comments and blank lines, quoted keys and values, plain and quoted scalars
over lines, nulls written three ways, one-line flow sequences, `{}`, trailing spaces), each
document cut out as the report cuts it and fixed with generated sets, appends, removals and
added documents; the splice located on the tree is compared with the composed one, and must
have been made without composing on a floor of cases (it cannot pass by always falling back)."""

from __future__ import annotations

import gc
import random
import weakref

import pytest
import yaml

import draguard.fix.located as located
import draguard.fix.splice as splice
from draguard.core.fixes import EditError, add_document, append, remove, set_value
from draguard.fix.located import Unlocated, located_root, value_at
from draguard.fix.splice import NotSpliceable, TextStyle, fixed_documents, parse, splice_document, splice_fixes
from draguard.sources.spans import content_end
from draguard.sources.yamlpos import BlockMap, YMap, parse_stream_remembered
from support.generated import random_value

from .test_hunks import _edits

NAMES = ["name", "image", "limits", "claims", "gpu", "memory", "a", "b", "nvidia.com/gpu", "x-y"]
STRINGS = ["gpu", "1", "8Gi", "memory: 8Gi", "x y", "a#b", "c # d", "-x", "--epochs", "a:b", "", "null", "it's",
           'say "hi"', "yes", "[x]", "*star", "x  y", "one two three four", "a, b]"]


def _value(rnd: random.Random, depth: int = 0):
    return random_value(rnd, NAMES, STRINGS + [1, 0, -3, 2.5, True, False, None, None], 4, 4, depth)


class _Style:
    """How a generated document is written."""

    def __init__(self, rnd: random.Random):
        self.rnd = rnd
        self.step = rnd.choice([2, 2, 4, 3])
        self.indented = rnd.random() < 0.4  # sequences indented under their key
        self.comments = rnd.random() < 0.4
        self.blanks = rnd.random() < 0.3
        self.quotes = rnd.random() < 0.3
        self.folds = rnd.random() < 0.3  # scalars written over lines
        self.flows = rnd.random() < 0.3  # lists of scalars as one-line flow sequences

    def key(self, key: str) -> str:
        return f'"{key}"' if self.quotes and self.rnd.random() < 0.2 else key

    def scalar(self, value, column: int) -> str:
        """`value` as a token; over lines (plain or quoted) indented past `column`."""
        rnd = self.rnd
        if value is None:
            return rnd.choice(["", "~", "null"])
        token = yaml.safe_dump(value, width=1 << 30).removesuffix("...\n").rstrip("\n")
        if isinstance(value, str) and self.quotes and rnd.random() < 0.6:
            quoted = "'" + value.replace("'", "''") + "'" if rnd.random() < 0.5 else \
                '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
            return self._folded(quoted, column)
        if isinstance(value, str) and token == value and " " in value.strip():
            return self._folded(token, column)
        return token + (" " if rnd.random() < 0.1 else "")  # a trailing space

    def _folded(self, token: str, column: int) -> str:
        at = token.find(" ", 1)
        if not self.folds or at < 0 or token[at + 1:at + 2] == " " or token[at - 1] == " ":
            return token
        return token[:at] + "\n" + " " * (column + 1 + self.rnd.randint(0, 2)) + token[at + 1:]

    def after(self) -> str:
        return " # note" if self.comments and self.rnd.random() < 0.2 else ""

    def between(self, column: int) -> list[str]:
        out = []
        if self.blanks and self.rnd.random() < 0.15:
            out.append("")
        if self.comments and self.rnd.random() < 0.15:
            out.append(" " * self.rnd.randint(0, column + 2) + "# between")
        return out

    def flow(self, value: list) -> str | None:
        """A list of scalars on one line, where this style writes one so."""
        if not self.flows or any(isinstance(item, (dict, list)) or item in ("", None) for item in value):
            return None
        return "[" + ", ".join(yaml.safe_dump(item, default_flow_style=True, width=1 << 30)
                               .removesuffix("...\n").rstrip("\n") for item in value) + "]"

    def mapping(self, data: dict, column: int) -> list[str]:
        lines: list[str] = []
        for key, value in data.items():
            lines += self.between(column)
            head = " " * column + f"{self.key(key)}:"
            flow = self.flow(value) if isinstance(value, list) and value else None
            if isinstance(value, dict) and value:
                lines += [head + self.after()] + self.between(column) + self.mapping(value, column + self.step)
            elif flow is not None:
                lines.append(head + " " + flow + self.after())
            elif isinstance(value, list) and value:
                lines += [head + self.after()] + self.sequence(value, column + (self.step if self.indented else 0))
            else:
                token = self.collection(value) if isinstance(value, (dict, list)) else self.scalar(value, column)
                lines.append(head + (" " + token if token else "") + ("" if "\n" in token else self.after()))
        return lines

    def sequence(self, data: list, column: int) -> list[str]:
        lines: list[str] = []
        for item in data:
            lines += self.between(column)
            if isinstance(item, dict) and item:
                inner = self.mapping(item, column + 2)
                lines += [" " * column + "- " + inner[0].lstrip(" ")] + inner[1:]
            elif isinstance(item, list) and item:
                lines += [" " * column + "-" + self.after()] + self.sequence(item, column + 2)
            else:
                token = self.collection(item) if isinstance(item, (dict, list)) else self.scalar(item, column)
                lines.append(" " * column + "-" + (" " + token if token else "") + ("" if "\n" in token else self.after()))
        return lines

    @staticmethod
    def collection(value) -> str:
        return "{}" if isinstance(value, dict) else "[]"


def _document(rnd: random.Random) -> str:
    data = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"p{rnd.randint(0, 9)}"},
            "spec": {key: _value(rnd, 1) for key in rnd.sample(NAMES, rnd.randint(1, 4))}}
    return "\n".join(_Style(rnd).mapping(data, 0)) + "\n"


def _stream(rnd: random.Random) -> str:
    documents = [_document(rnd) for _ in range(rnd.randint(1, 3))]
    text = documents[0]
    for document in documents[1:]:
        text += rnd.choice(["---\n", "--- # next\n", "---\n# a comment\n\n"]) + document
    return text if rnd.random() < 0.85 else text.rstrip("\n")


def _cuts(text: str):
    """(start, end, document) of each document read, cut out as the HTML report cuts it: from
    the line its content starts on to the next one's (report.lines.SourceLines.document_span)."""
    documents, _ = parse_stream_remembered(text)
    starts = [0]
    for line in text.split("\n"):
        starts.append(starts[-1] + len(line) + 1)
    cuts = [starts[d.start_line - 1] for d in documents] + [len(text)]
    return [(cuts[k], cuts[k + 1], document) for k, document in enumerate(documents)]


def _pieces(text: str):
    """(piece, tree) of each block-read document (_cuts)."""
    for start, end, document in _cuts(text):
        if document.data.__class__ is BlockMap:
            yield text[start:end], document.data


def _outcome(piece: str, planned: list, trees: dict | None):
    try:
        return splice._spliced(piece, planned, {0: (0, 0, len(piece))}, TextStyle.of(piece), True, trees)
    except (NotSpliceable, EditError) as exc:
        return type(exc).__name__, str(exc)


def _cases(seed: int, count: int):
    rnd = random.Random(seed)
    made = 0
    while made < count:
        for piece, tree in _pieces(_stream(rnd)):
            made += 1
            yield piece, tree, [(0, _edits(rnd, tree))]


def test_the_located_splice_is_the_composed_one_on_generated_documents(monkeypatch):
    composed: list = []
    compose = splice._composed

    def counted(*args):
        composed.append(args)
        return compose(*args)
    monkeypatch.setattr(splice, "_composed", counted)
    located = unlocated = spliced = verified = 0
    for piece, tree, planned in _cases(41, 1500):
        expected = _outcome(piece, planned, None)
        composed.clear()
        try:
            found = _outcome(piece, planned, {0: tree})
        except Unlocated:
            unlocated += 1
            continue
        assert found == expected, (piece, planned)
        assert not composed, "a located splice composed its document"
        located += 1
        if isinstance(found[1], list):  # spliced: what the fix makes of the data, mostly
            spliced += 1
            before = parse(piece)
            try:
                verified += splice.verified(found[0], before.problems, fixed_documents(before.documents, planned)) \
                    is not None
            except (NotSpliceable, EditError):
                pass
    # not vacuous: every document located without composing, hundreds of them spliced and verified
    assert located >= 1400 and spliced >= 600 and verified >= 0.9 * spliced, (located, unlocated, spliced, verified)


def _either(splicing, *args):
    try:
        return splicing(*args)
    except (NotSpliceable, EditError) as exc:
        return type(exc).__name__, str(exc)


def test_a_document_alone_is_spliced_as_splice_fixes_splices_it():
    """splice.splice_document (the HTML report's: one fix on one document cut out of its file)
    gives what splice_fixes gives that piece, its tree held or not, and with a `%` directive
    (no piece found: the document composed from the text's start)."""
    spliced = 0
    for piece, tree, planned in _cases(43, 300):
        for text in (piece, "%YAML 1.2\n---\n" + piece):
            for held in (tree, None):
                found = _either(splice.splice_document, text, planned[0][1], held)
                assert found == _either(splice_fixes, text, planned, [1], {0: held} if held is not None else None)
                spliced += isinstance(found[1], list)
    assert spliced > 400  # not vacuous: half were spliced (596 of 1,200)


def test_a_tree_that_is_not_its_texts_is_not_located_on():
    """A key of the tree not at its place in the text (a tree of another text): the splice
    composes the document and gives the composed answer."""
    piece = "a:\n  b: 1\nc: 2\n"
    other = parse_stream_remembered("a:\n  x: 1\nc: 2\n")[0][0].data
    planned = [(0, (set_value(("a", "b"), 3),))]
    with pytest.raises(Unlocated):
        splice._spliced(piece, planned, {0: (0, 0, len(piece))}, TextStyle.of(piece), True, {0: other})
    assert splice_fixes(piece, planned, [1], {0: other}) == splice_fixes(piece, planned, [1]) == \
        ("a:\n  b: 3\nc: 2\n", [(8, 1, 1)])


POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: trainer  # a comment
spec:
  containers:
  - name: main
    image: registry.example.com/train:1.0
    args: ["--epochs", '10']
    resources:
      limits:
        nvidia.com/gpu: 1
        memory: 8Gi
"""


def test_a_pods_fix_is_located_without_composing(monkeypatch):
    monkeypatch.setattr(splice, "_composed", _composing)
    monkeypatch.setattr(splice, "document_node", _composing)
    tree = parse_stream_remembered(POD)[0][0].data
    planned = [(0, (remove(("spec", "containers", 0, "resources", "limits", "nvidia.com/gpu")),
                    append(("spec", "containers", 0, "resources", "claims"), {"name": "gpu"}),
                    set_value(("spec", "resourceClaims"), [{"name": "gpu", "resourceClaimTemplateName": "t"}])))]
    fixed, _ = splice_fixes(POD, planned, [1], {0: tree})
    assert "      claims:\n      - name: gpu\n" in fixed and "nvidia.com/gpu" not in fixed
    assert fixed.endswith("  resourceClaims:\n  - name: gpu\n    resourceClaimTemplateName: t\n")


INDENTED = """\
kind: Pod
metadata:
    name: trainer
spec:
    containers:
        - name: main
          args: [a, b]
          env:
              - name: X
                value: "1"  # last
"""


@pytest.mark.parametrize("text", [POD, INDENTED])
def test_the_sequence_style_the_indent_step_and_an_end_are_read_from_the_tree(monkeypatch, text):
    """The document's sequence style and indentation step, and where a block collection's
    last token ends, are the composed document's, found from the tree without an entry
    list made for the mappings and sequences passed (fix.located)."""
    composed = splice._Document(text, 0, TextStyle.of(text))
    doc = splice._Document(text, 0, TextStyle.of(text), parse_stream_remembered(text)[0][0].data)
    containers = doc.node(("spec", "containers"))
    monkeypatch.setattr(located, "_Entries", _making)
    monkeypatch.setattr(located, "_Items", _making)
    assert (doc.indented_sequences, doc.indent_step) == (composed.indented_sequences, composed.indent_step)
    assert (doc.indented_sequences, doc.indent_step) == ((False, 2) if text is POD else (True, 4))
    assert doc.content_end(doc.root) == composed.content_end(composed.root) == len(text.rstrip("\n").removesuffix("  # last"))
    assert doc.content_end(containers) == composed.content_end(composed.node(("spec", "containers")))


def _making(*_):
    raise AssertionError("an entry list was made")


def _composing(*_):
    raise AssertionError("the document was composed")


def test_only_a_tree_that_is_its_text_key_for_key_is_marked_block_read():
    def root(text: str):
        return parse_stream_remembered(text)[0][0].data.__class__

    assert root(POD) is BlockMap
    assert root("a: 1\na: 2\n") is YMap  # a repeated key: the tree keeps one
    assert root("metadata:\n  uid: u\n  managedFields:\n  - manager: m\nkind: Pod\n") is YMap  # dropped
    assert root("a: &x 1\nb: *x\n") is YMap  # read by libyaml


def test_located_nodes_are_freed_without_the_cyclic_collector():
    """The report renders with the cyclic collector paused: a node that a cycle held would
    stay until the end of the run (32 MiB more at the 2,125-file tree's peak)."""
    tree = parse_stream_remembered(POD)[0][0].data
    gc.disable()
    try:
        root = located_root(tree, POD)
        content_end(root, POD)  # the last entries, down to the last scalar
        node = root.value[-1][1]
        nested = list(node.value)
        refs = [weakref.ref(root), weakref.ref(node), weakref.ref(nested[0][1])]
        del root, node, nested
        assert [ref() for ref in refs] == [None, None, None]
    finally:
        gc.enable()


def _collections(data, path: tuple = ()):
    """The path of every mapping and list in `data`, outermost first."""
    if isinstance(data, (dict, list)):
        yield path
        for key, value in (data.items() if isinstance(data, dict) else enumerate(data)):
            yield from _collections(value, path + (key,))


def _common_edits(rnd: random.Random, tree) -> tuple:
    """The edits most fixes are (docs/performance.md, thirteenth round): a key added to a
    mapping that is there (or with mappings above it that are not), an item appended to a
    list that is there or not, a scalar replaced, a key removed."""
    paths = [p for p in _collections(tree) if p]
    edits = []
    for _ in range(rnd.randint(1, 3)):
        path = rnd.choice(paths)
        kind = rnd.randrange(5)
        if kind == 0:
            edits.append(set_value(path + (rnd.choice(NAMES),), _value(rnd, 2)))
        elif kind == 1:
            edits.append(set_value(path + (rnd.choice(NAMES), rnd.choice(NAMES)), _value(rnd, 3)))
        elif kind == 2:
            edits.append(append(path if rnd.random() < 0.7 else path + (rnd.choice(NAMES),), _value(rnd, 2)))
        elif kind == 3:
            edits.append(set_value(path + (rnd.choice(NAMES),), rnd.choice(STRINGS + [1, True, None])))
        else:
            edits.append(remove(path + (rnd.choice(NAMES),)) if rnd.random() < 0.5 else remove(path))
    return tuple(edits)


def test_the_common_edits_located_from_the_tree_are_the_composed_ones(monkeypatch):
    """Keys added, items appended, scalars replaced and keys removed, in documents written in
    many ways (indentation steps, sequences indented or not, comments, blank lines, quoted,
    plain and folded scalars, one-line flow sequences, `{}`, `---` streams): the collection
    an edit writes into is found from the tree (fix.located.value_at, tree_node) and gives
    the composed document's replacements or refusal, never composing; where the tree cannot
    say (a key not at its place) the located splice raises Unlocated and the composed one is
    used (test_a_tree_that_is_not_its_texts_is_not_located_on)."""
    composed: list = []
    monkeypatch.setattr(splice, "_composed", lambda *args: composed.append(args) or splice.document_node(*args))
    rnd = random.Random(13)
    located = spliced = 0
    while located < 1000:
        for piece, tree in _pieces(_stream(rnd)):
            planned = [(0, _common_edits(rnd, tree))]
            expected = _outcome(piece, planned, None)
            composed.clear()
            found = _outcome(piece, planned, {0: tree})
            assert found == expected, (piece, planned)
            assert not composed, "a located splice composed its document"
            located += 1
            spliced += isinstance(found[1], list)
    assert spliced >= 400, spliced  # not vacuous: hundreds spliced (660 of 1,500 when written)


def test_the_collections_found_from_the_tree_are_where_composing_puts_them():
    """Every mapping and list of generated block-read documents: the node made from its own
    mark in the tree is where the composed node starts, in the same style."""
    rnd = random.Random(8)
    checked = 0
    for _ in range(150):
        for piece, tree in _pieces(_stream(rnd)):
            doc = splice._Document(piece, 0, TextStyle.of(piece), tree)
            composed = splice._Document(piece, 0, TextStyle.of(piece))
            for path in _collections(tree):
                node, expected = doc.collection(path), composed.collection(path)
                assert (node.start_mark.index, bool(node.flow_style)) == \
                    (expected.start_mark.index, bool(expected.flow_style)), (piece, path)
                checked += 1
    assert checked >= 1500, checked


def test_a_stream_with_crlf_is_not_located_on():
    """The block reader reads no CR: a CRLF stream has no tree to locate on, so its fixes are
    spliced on the document composed (with its line breaks)."""
    text = POD.replace("\n", "\r\n")
    assert parse_stream_remembered(text)[0][0].data.__class__ is not BlockMap


def test_a_key_added_and_an_item_appended_make_no_entry_list(monkeypatch):
    """The mapping a key is added to and the list an item is appended to are found from the
    tree: no entry list or item list made for the collections on the way (through the
    located nodes, each level made them), the same text as composed."""
    tree = parse_stream_remembered(POD)[0][0].data
    planned = [(0, (set_value(("spec", "containers", 0, "lifecycle", "preStop"), {"sleep": {"seconds": 10}}),
                    set_value(("spec", "terminationGracePeriodSeconds"), 60),
                    append(("spec", "containers"), {"name": "side"})))]
    expected = splice_fixes(POD, planned, [1])
    monkeypatch.setattr(located, "_Entries", _making)
    monkeypatch.setattr(located, "_Items", _making)
    assert splice._spliced(POD, planned, {0: (0, 0, len(POD))}, TextStyle.of(POD), True, {0: tree}) == expected
    assert "    lifecycle:\n      preStop:\n        sleep:\n          seconds: 10\n" in expected[0]


def test_a_migrations_paths_are_each_walked_once(monkeypatch):
    """A legacy migration (a limit removed, claims appended, a key set, a document added)
    asks about the same parents again and again (whether absent, then the collection; an
    entry's parent): each path of the tree is walked once for the document, and each
    collection's node made once, the same text."""
    tree = parse_stream_remembered(POD)[0][0].data
    planned = [(0, (remove(("spec", "containers", 0, "resources", "limits")),
                    append(("spec", "containers", 0, "resources", "claims"), {"name": "gpu"}),
                    append(("spec", "resourceClaims"), {"name": "gpu", "resourceClaimTemplateName": "t"}),
                    set_value(("spec", "nodeSelector", "gpu.product"), "T4"),
                    add_document({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate"})))]
    expected = splice_fixes(POD, planned, [1])
    walked: list = []

    def walking(tree, path):
        walked.append(path)
        return value_at(tree, path)
    made: list = []

    def making(value, root):
        if value is not None:
            made.append(id(value))
        return located.tree_node(value, root)
    monkeypatch.setattr(splice, "value_at", walking)
    monkeypatch.setattr(splice, "tree_node", making)
    assert splice_document(POD, planned[0][1], tree) == expected
    assert walked and len(walked) == len(set(walked)), walked
    assert made and len(made) == len(set(made)), made


def test_a_collections_content_end_is_found_once_for_walks_that_pass_it(monkeypatch):
    """The root's content end found first is what a later walk from a collection on the way
    reads, not found in the text again (the walks of a migration pass the same collections);
    a walk from a collection off that way finds its own, and both end where composing ends
    them."""
    tree = parse_stream_remembered(POD)[0][0].data
    root, composed = located_root(tree, POD), yaml.compose(POD)
    ends: list = []

    def scalar_end(*args):
        ends.append(args[1])
        return located_scalar_end(*args)
    located_scalar_end = located.scalar_end
    monkeypatch.setattr(located, "scalar_end", scalar_end)
    known: dict = {}
    assert located.located_content_end(root, POD, known) == content_end(composed, POD)
    resources = located.tree_node(value_at(tree, ("spec", "containers", 0, "resources")), root)
    assert located.located_content_end(resources, POD, known) == content_end(composed, POD)
    assert len(ends) == 1
    metadata = located.tree_node(value_at(tree, ("metadata",)), root)
    assert located.located_content_end(metadata, POD, known) == POD.index("trainer") + len("trainer")
    assert len(ends) == 2
