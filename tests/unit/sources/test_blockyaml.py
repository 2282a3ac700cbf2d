"""sources.blockyaml against libyaml's path (sources.libyaml.documents): the same documents
(index, lines, span), trees (values and their types), positions of every key, value and item,
paths and problems, on every manifest the repository holds and on generated block YAML, both
what the reader reads and what it must leave to libyaml."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from draguard.sources import blockyaml, libyaml, yamlpos
from draguard.sources.yamlpos import Limits, Paths, YMap, YSeq, parse_stream

from support.paths import EXAMPLES, ROOT, corpus_files


def _shape(value):
    """Everything a parse says of a value: type, value, positions and path, all the way down."""
    if isinstance(value, YMap):
        return ("map", value.path, value.marks, [(k, _shape(v)) for k, v in value.items()])
    if isinstance(value, YSeq):
        return ("seq", value.path, value.marks, [_shape(v) for v in value])
    return (type(value).__name__, repr(value))


def _said(documents, problems):
    return ([(d.index, d.start_line, d.end_line, d.span, _shape(d.data), list(d.problems))
             for d in documents], list(problems))


def _libyaml(text: str, *args, **kwargs):
    fast = yamlpos.FAST
    yamlpos.FAST = False
    try:
        return _said(*parse_stream(text, *args, **kwargs))
    finally:
        yamlpos.FAST = fast


class _Counted:
    """libyaml's reader as blockyaml's fallback, counting the texts handed to it."""

    def __init__(self):
        self.texts: list[str] = []

    def __call__(self, text, *args):
        self.texts.append(text)
        return (yield from libyaml.documents(text, *args))


def _fast(text: str, limits: Limits = yamlpos.DEFAULT_LIMITS, root_path: tuple = (), line_offset: int = 0):
    """(what blockyaml says, the texts it left to libyaml)."""
    problems: list = []
    fallback = _Counted()
    documents = list(blockyaml.documents(text, problems, limits, root_path, line_offset, Paths(), fallback))
    return _said(documents, problems), fallback.texts


def _same(text: str, **kwargs) -> list[str]:
    said, left = _fast(text, **kwargs)
    assert said == _libyaml(text, **kwargs), text
    return left


def _manifests() -> list:
    files = corpus_files() + sorted((ROOT / "tests" / "rules").rglob("*.y*ml")) + sorted(EXAMPLES.rglob("*.y*ml"))
    return [pytest.param(path, id=str(path.relative_to(ROOT))) for path in files]


@pytest.mark.parametrize("path", _manifests())
def test_every_manifest_in_the_repository_parses_the_same(path):
    text = path.read_bytes().decode("utf-8-sig", errors="replace")
    _same(text)
    _same(text, line_offset=7, root_path=("items", 2))


def test_the_reader_reads_nearly_every_document_of_the_corpus_itself():
    """The comparison above would pass with everything left to libyaml: the corpus's block-style
    documents must be read here. What is left: flow mappings, block scalars and the Helm
    templates (35 of 311 documents when written)."""
    documents = left = 0
    for path in corpus_files():
        text = path.read_bytes().decode("utf-8-sig", errors="replace")
        said, texts = _fast(text)
        documents += len(said[0])
        left += sum(len(_fast(t)[0][0]) for t in texts)
    assert documents > 300 and left / documents < 0.15, (left, documents)


CASES = {
    "quotes with # and ': '": "a: 'x # y'\nb: \"p: q\"\nc: 'it''s'\nd: \"\"\ne: ''\n",
    "trailing spaces": "a: x   \nb:   \nc:\n  - y  \n  -   \n'k':  'v'  \n",
    "comments at every indentation": "# top\na:  # after a key\n    # deep\n  b: 1 # c\n# col 0\n  c:\n      # more\n  - x\nd: 2\n  # after\n",
    "empty values": "a:\nb:\n- \n-\nc: {}\nd: []\ne: [] # c\n",
    "nested - - x": "- - x\n  - y\n- - - z\n-   - w\n",
    "zero-indented sequences": "a:\n- x\n- y: 1\n  z: 2\n- - n\nb: 1\n",
    "quoted keys": "\"a: b\": 1\n'c # d': 2\n\"\": 3\n",
    "resolved scalars": "- on\n- yes\n- No\n- 010\n- 0o7\n- 0x1F\n- 0x\n- 1_000\n- 1:30\n- 1e3\n- .5\n- +1\n- -.inf\n"
                        "- .NaN\n- ~\n- null\n- 2001-12-14\n- 2001-12-14t21:59:43.10-05:00\n- =\n- <<\n- 1.0e+3\n",
    "merge-like and odd keys": "<<: x\n'<<': y\non: 1\n~: 2\n1: 3\n",
    "CRLF": "a: 1\r\nb:\r\n  - x\r\n",
    "BOM": "\ufeffa: 1\n",
    "unicode": "é€: ü\nb: 💥 ok\nc: '日本'\n",
    "--- on content lines": "--- # c\na: 1\n---\n- x\n--- a\n---\nb: 2\n",
    "empty documents": "---\n---\n# only\n---\na: 1\n---\n",
    "trailing ...": "a: 1\n...\n",
    "... then ---": "a: 1\n...\n---\nb: 2\n...\n",
    "no final newline": "a: 1\nb: x",
    "no final newline, empty document": "a: 1\n---",
    "spaces after the end": "a: 1\n   ",
    "plain over lines": "a: one\n  two\n\n  three\nb:\n- x\n  y # c\nc: 1\n",
    "plain over lines: - and ? are text there": "- x\n  - y\n  ? z\na:\n - b\n   - c\n",
    "quoted over lines": "a: 'one\n  two\n\n  three'\nb: \"x\\\n  y \\n\\u00e9\"\nc: \"p\n\n\n  q  \"\n",
    "escaped space before a break": "a: \"x\\ \n  y\"\n",
    "flow sequences on one line": "a: [\"sh\", \"-c\", 1]\nb: [x, y,]\nc: [ ]\nd: [p q , 'r''s'] # c\n- [1.5, on, ~]\n"
                                  "e: [ a ]\nf: [-1, x-y]\n",
    "flow sequences it leaves": "a: [a:b]\nb: [,]\nc: [a,,b]\nd: [a]x\ne: [a, [b]]\nf: [a\n  , b]\ng: [\"a\": 1]\nh: [- 1]\n",
    "flow sequences over lines": "a: [\"x\", \"y\",\n     \"z\"]\nb:\n- [1,\n   on, # c\n\n   ~]\nc: [\n  p,\n  q,\n  ]\nd: [\n ]\n"
                                 "e:\n  f: [a, # c\n    # between\n    b]  # after\n",
    "flow sequences over lines it leaves": "a: [x,\ny]\n---\nb: [x\n  , y]\n---\nc: [x\n  y]\n---\nd: [x,\n  y\n  ]\n"
                                           "---\ne: ['x\n  y']\n---\nf: [x,\n  [y]]\n---\ng: [\n  x,\n]\n---\nh: [x,\n",
    "plain scalars after : or ?": "a: :8080\nb: ?x\nc: :x # c\ne: :x\n  y\nf:\n- :z\n- ?q\ng: :#x\nh: -:x\n",
    ": or ? and a space": "a: : x\n---\nb: ? x\n---\nc: :\n---\n- :\n---\nd: ?\n---\ne: ::\n",
    "flow mappings on one line": "a: {name: x, namespace: 'y', n: 1}\nb: {p: \"q r\", s: -1, t: ~, u: on}  # c\nc:\n"
                                 "- {name: gpu, image: x}\n- {}\nd: {a: b, }\ne: { x: 1 }\nf: {'k:': \"v,}\"}\n",
    "flow mappings it leaves": "a: {b}\n---\na: {b: }\n---\na: {b: [1]}\n---\na: {b: {c: d}}\n---\na: {b: c, b: d}\n---\n"
                               "a: {b: c\n  , d: e}\n---\na: {b:c}\n---\na: {b: c: d}\n---\na: {b: c # x}\n---\n"
                               "a: {'b': c}x\n---\na: {? b: c}\n---\na: {<<: c}\n---\na: {b: 'c'd}\n---\na: {b: c,,}\n---\n"
                               "a: {, b: c}\n---\na: {b: c}}\n---\na: {\n  b: c}\n---\na: {b: &x c}\n",
    "flow, anchors, tags, block scalars": "a: [1, 2]\nb: &x {c: 1}\nd: *x\ne: !!str 1\nf: |\n  t\n",
    "tabs": "a:\t1\nb: 2\n",
    "? keys and directives": "? a\n: b\n",
    "directive": "%YAML 1.1\n---\na: 1\n",
    "syntax error after documents": "a: 1\n---\nb: [1\n---\nc: 3\n",
    "a: b: c": "a: b: c\n",
    "bad indentation": "a:\n  b: 1\n c: 2\n",
    "a sequence where a key should be": "a: 1\n- x\n",
    "duplicate keys": "a: 1\nb:\n  c: 1\n  c: 2\na: 3\n",
    "managedFields": "metadata:\n  managedFields:\n  - a: 1\n    a: 2\n  name: x\n  other:\n    managedFields:\n    - y\n"
                     "---\nmetadata:\n  managedFields: []\n---\nmetadata:\n  managedFields:\n",
    "root scalar": "just text\n",
    "indented root": "  a: 1\n  b: 2\n",
    "integer too long": "a: " + "9" * 5000 + "\n",
    "long key": "k" * 1100 + ": 1\n",
    "control character": "a: \x07\n",
    "document marker inside a quoted scalar": "a: 'x\n---\n  y'\n",
    "a block entry in a flow collection": "a: [- ,a]\nb: [a, - ]\nc: {x: - ,y: 1}\nd: [-, -x]\ne: {x: -}\n",
    "a block entry as a value": "a: -\nb:\n  c: -\n  d: -\n    e\n",
}


@pytest.mark.parametrize("text", CASES.values(), ids=list(CASES))
def test_cases_parse_the_same(text):
    _same(text)
    _same(text, line_offset=3, root_path=("items", 0))


def test_the_reader_reads_what_it_claims_and_leaves_the_rest():
    assert _same(CASES["zero-indented sequences"]) == []
    assert _same(CASES["quoted over lines"]) == []
    assert _same(CASES["resolved scalars"]) == []
    assert _same(CASES["plain scalars after : or ?"]) == []  # `value: :8080`, as libyaml reads it
    assert _same(CASES["flow mappings on one line"]) == []  # `metadata: {name: web}`
    for text in CASES["flow mappings it leaves"].split("---\n"):
        assert _same(text)[:1] == [text]  # left whole (twice where a syntax error stops libyaml)
    assert _same("a: [\"sh\", \"-c\", 1]\nb: [x, y,]\nc: [ ]\n") == []
    assert _same(CASES["flow sequences over lines"]) == []
    left = _same(CASES["flow sequences over lines it leaves"])
    assert all(any(f"\n{key}: [" in "\n" + text for text in left) for key in "abcdefgh")  # every document
    assert _same(CASES["flow, anchors, tags, block scalars"]) == [CASES["flow, anchors, tags, block scalars"]]
    # a document left to libyaml costs only itself: the others are read here
    assert _same("a: 1\n---\nb: {x: [1]}\n---\nc: 3\n") == ["---\nb: {x: [1]}\n"]


def test_limits_are_refused_as_libyaml_refuses_them():
    deep = "".join("  " * i + f"k{i}:\n" for i in range(30)) + "  " * 30 + "x: 1\n"
    _same(deep, limits=Limits(max_depth=20))
    _same("a:\n" + "".join(f"- {i}\n" for i in range(50)), limits=Limits(max_nodes=20))
    _same("a: " + "x" * 5000 + "\n", limits=Limits(max_document_bytes=1000))


def test_a_document_past_the_largest_part_is_left_to_libyaml():
    """One huge document (a ConfigMap of 300,000 keys) cost this reader's rows 90 MB above
    libyaml's nodes at its peak: past LARGEST_PART it is libyaml's, and its neighbours stay here."""
    huge = "data:\n" + "".join(f"  k{i}: v\n" for i in range(blockyaml.LARGEST_PART // 9))
    assert len(huge) > blockyaml.LARGEST_PART
    assert _same("a: 1\n---\n" + huge + "---\nb: 2\n") == ["---\n" + huge]


def test_paths_are_shared_across_documents():
    documents, _ = parse_stream("spec:\n  a: 1\n---\nspec:\n  b: 2\n")
    assert documents[0].data["spec"].path is documents[1].data["spec"].path


def test_the_table_of_paths_is_bounded_between_documents():
    """The block reader shares paths through the table's own setdefault (Paths.sharing), bounded
    once a document: a stream of many documents of distinct paths leaves it at the bound
    and one document's paths at most, and paths met within a document are still shared."""
    paths = Paths()
    text = "".join(f"---\nk{i}:\n  a:\n    b: 1\n  c:\n  - d: 2\n" for i in range(3000))
    documents, _ = parse_stream(text, paths=paths)
    assert len(documents) == 3000 and len(paths.seen) <= Paths._SIZE + 4
    documents, _ = parse_stream("a:\n  b:\n  - c: 1\n  - c: 2\nd:\n  b:\n  - c: 3\n", paths=paths)
    assert documents[0].data["a"].path is paths.shared(("a",)) and documents[0].data["a"]["b"][1].path == ("a", "b", 1)


def test_the_table_of_paths_is_bounded_at_a_documents_end():
    """A document of more distinct paths than the table's bound leaves it at the bound, not
    holding them all past its tree (sources.reread's table lives as long as the process), as
    libyaml's builder leaves it."""
    paths = Paths()
    text = "spec:\n  containers:\n" + "".join(f"  - name: c{i}\n    env:\n    - name: X\n" for i in range(3000))
    documents, _ = parse_stream(text, paths=paths)
    assert len(documents[0].data["spec"]["containers"]) == 3000 and len(paths.seen) <= Paths._SIZE


# generated block YAML: the constructs the reader reads, the ones it must leave to libyaml,
# and broken ones (both must say the same problem)
_WORDS = ["a", "name", "nvidia.com/gpu", "on", "yes", "No", "010", "0o7", "0x1F", "0x", "1_000", "1:30", "1e3",
          ".5", "+1", "-1", "-.inf", "~", "null", "", "2001-12-14", "=", "é€", "💥 ok", "x y", "it's", "a#b"]
_HOSTILE = ["a: b", "a #b", "#x", "- x", "x:", ":x", "?x", "? x", "[a]", "{a: 1}", "{}", "[]", "&a x", "*a",
            "!t x", "|", ">", "%", "@", "`", "...", "---", "a\\nb", "x\ty", "<<", "'", '"', "x ", " x"]


def _quote(word: str, style: str) -> str:
    if style == "single":
        return "'" + word.replace("'", "''") + "'"
    if style == "double":
        return json.dumps(word)
    return word


@st.composite
def _scalar(draw, indent: int, hostile: bool) -> list[str]:
    """The lines of a scalar: the first continues its key's or dash's line."""
    word = draw(st.sampled_from(_WORDS + (_HOSTILE if hostile else [])))
    style = draw(st.sampled_from(["plain", "single", "double", "over", "flow"]))
    if style == "flow":  # a flow sequence of scalars on one line (words with `:` or `#` are left to libyaml)
        items = draw(st.lists(st.sampled_from(_WORDS if hostile else [w for w in _WORDS if w and w[-1] not in ":#"
                                                                    and ":" not in w and "#" not in w]), max_size=3))
        styles = [draw(st.sampled_from(["plain", "single", "double"])) for _ in items]
        spaces = draw(st.sampled_from(["", " "]))
        trailing = draw(st.sampled_from(["", ","])) if items else ""
        lines = ["[" + spaces + ", ".join(_quote(w, y) if w else "''" for w, y in zip(items, styles)) + trailing
                 + spaces + "]"]
    elif style == "over":  # over lines, plain or quoted, blank lines between
        quote = draw(st.sampled_from(["", "'", '"']))
        more = " " * (indent + draw(st.integers(1, 3)))
        gap = "\n" * draw(st.integers(0, 2))
        lines = f"{quote}{word} {gap}{more}{draw(st.sampled_from(_WORDS))}{quote}".split("\n")
    else:
        lines = [_quote(word, style)]
    lines[-1] += draw(st.sampled_from(["", "", " # c", "  ", " #"]))
    return lines


@st.composite
def _node(draw, indent: int, depth: int, hostile: bool) -> tuple[str, list[str]]:
    """('scalar'|'map'|'seq', its lines): a collection's lines start at `indent`."""
    kind = draw(st.sampled_from(["scalar"] if depth > 3 else ["scalar", "map", "seq", "map", "seq"]))
    if kind == "scalar":
        return kind, draw(_scalar(indent, hostile))
    pad = " " * indent
    lines: list[str] = []
    for _ in range(draw(st.integers(1, 3))):
        if draw(st.integers(0, 5)) == 0:
            lines.append(" " * draw(st.integers(0, indent + 4)) + draw(st.sampled_from(["# note", "#", ""])))
        if kind == "map":
            key = _quote(draw(st.sampled_from(_WORDS[:18] + (_HOSTILE if hostile else []))),
                         draw(st.sampled_from(["plain", "plain", "single", "double"]))) or "k"
            head = f"{pad}{key}:"
        else:
            head = f"{pad}-"
        step = draw(st.integers(1, 4))
        inner, below = draw(_node(indent + step, depth + 1, hostile))
        if kind == "map" and inner == "seq" and draw(st.booleans()):  # an indentless sequence
            inner, below = draw(_node(indent, depth + 1, hostile).filter(lambda n: n[0] == "seq"))
        if inner == "scalar":
            lines.append(f"{head} {below[0]}")
            lines += below[1:]
        elif kind == "seq" and draw(st.booleans()):  # compact: `- key: v` or `- - x`
            first = below[0][indent + step:]
            lines.append(f"{head}{' ' * step}{first}" if step > 1 else f"{head} {first}")
            shift = 0 if step > 1 else 1
            lines += [(" " * shift + line) if shift else line for line in below[1:]]
        else:
            lines.append(head + draw(st.sampled_from(["", " # c", "  "])))
            lines += below
        if draw(st.integers(0, 6)) == 0:
            lines.append(f"{head} {draw(st.sampled_from(['{}', '[]']))}")
    return kind, lines


@st.composite
def _stream(draw, hostile: bool) -> str:
    documents = []
    for _ in range(draw(st.integers(1, 3))):
        if draw(st.integers(0, 6)) == 0:
            documents.append("")  # an empty document
        else:
            documents.append("\n".join(draw(_node(0, 0, hostile).filter(lambda n: n[0] != "scalar"))[1]))
    markers = ["---", "--- # c", "---  "] + (["--- x", "--- !t", "...\n---"] if hostile else [])
    text = documents[0]
    if draw(st.booleans()) or not text:
        text = draw(st.sampled_from(markers)) + "\n" + text
    for document in documents[1:]:
        text += "\n" + draw(st.sampled_from(markers)) + "\n" + document
    text += draw(st.sampled_from(["\n", "", "\n...\n", "\n# end\n", "\n\n"]))
    if hostile:
        text = draw(st.sampled_from(["", "", "", "\ufeff"])) + text
        if draw(st.integers(0, 5)) == 0:
            text = text.replace("\n", "\r\n")
    return text


@settings(max_examples=120, deadline=None)
@given(text=_stream(hostile=True))
def test_generated_yaml_parses_the_same(text):
    _same(text)


_ENTRY = st.tuples(st.sampled_from(_WORDS + _HOSTILE), st.sampled_from(_WORDS + _HOSTILE),
                   st.sampled_from(["plain", "plain", "single", "double"]), st.sampled_from(["plain", "single", "double"]))


@settings(max_examples=300, deadline=None)
@given(entries=st.lists(_ENTRY, max_size=4), space=st.sampled_from(["", " ", "  "]), trailing=st.sampled_from(["", ","]),
       comment=st.sampled_from(["", " # c", "#c"]), item=st.booleans())
def test_generated_flow_mappings_parse_the_same(entries, space, trailing, comment, item):
    inner = ", ".join(f"{_quote(key, ks)}: {_quote(value, vs)}" for key, value, ks, vs in entries)
    flow = f"{{{space}{inner}{trailing if entries else ''}{space}}}{comment}"
    _same(f"a:\n- {flow}\n- x\n" if item else f"a: {flow}\nb: 1\n")


@pytest.mark.fuzz
@settings(max_examples=1000, deadline=None)  # about a minute
@given(text=_stream(hostile=True), offset=st.integers(0, 3))
def test_generated_yaml_parses_the_same_at_length(text, offset):
    _same(text, line_offset=offset)


@settings(max_examples=100, deadline=None)
@given(text=_stream(hostile=False), offset=st.integers(0, 5))
def test_generated_block_yaml_is_read_here(text, offset):
    """Block YAML of the constructs the reader claims is read here whole, unless libyaml finds
    it broken (a quote closed early, a bad indentation): the comparison alone would pass with
    everything left to libyaml."""
    left = _same(text, line_offset=offset, root_path=("items", offset))
    if not _libyaml(text)[1]:
        assert left == []


def test_a_texts_characters_are_judged_as_str_isprintable_judges_them():
    """_line_safe's ASCII path (bytes with the printable ones deleted) says what the str
    path says, for every ASCII character and a few others, alone and in a longer text."""
    _line_safe = blockyaml._line_safe
    for code in [*range(0x80), 0x85, 0xA0, 0xAD, 0xE9, 0x2028, 0xFEFF, 0x1F600]:
        for text in (chr(code), f"kind: Pod\nmetadata:\n  name: a{chr(code)}b\n", f"{chr(code)}\n" * 3):
            assert _line_safe(text) == text.replace("\n", "").isprintable(), hex(code)
    assert _line_safe("") and _line_safe("a: b\n") and not _line_safe("a:\tb\n") and not _line_safe("a: b\r\n")


#: pieces of a one-line flow mapping, hostile ones among them: quotes with escapes, commas and
#: colons, ':' and '?' with and without a space, empty values, anchors, aliases, tags, nested
#: collections, comments, tabs, non-ASCII text
_FLOW_PIECES = ["a", "b", "key", "é", "1", "1.0", "true", "~", "null", ":80", "?a", "a:b", "-", "x y",
                ": ", ":", ", ", ",", " ", "\t", "? ", "?", "'a, b'", "'it''s'", "\"a: b\"", "\"\\t\\u00e9\\n\"",
                "\"\\\"q\"", "\"\\ud800\"", "&x ", "*x", "!!str ", "!!str a", "[1]", "{}", "{a: 1}", " #c", "#c", "\"", "'"]


#: a key's or a value's pieces: mostly what the block reader reads, else any
_FLOW_WORD = st.one_of(st.sampled_from(["a", "key", "é", "1", "true", "~", ":80", "?a", "'a, b'", "\"a: b\"", "'it''s'",
                                        "\"\\t\\u00e9\""]), st.sampled_from(_FLOW_PIECES))
_FLOW_ENTRY = st.tuples(st.lists(_FLOW_WORD, min_size=1, max_size=2), st.sampled_from([": ", ":", " : ", ":\t", ": \t", ""]),
                        st.lists(_FLOW_WORD, max_size=2)).map(lambda e: "".join(e[0]) + e[1] + "".join(e[2]))


@settings(max_examples=300, deadline=None)
@given(entries=st.lists(_FLOW_ENTRY, max_size=4), comma=st.sampled_from([", ", ",", " ,", ",\t"]),
       trailing=st.sampled_from(["", ",", ", "]), tail=st.sampled_from(["", " # c", "  ", "\t", " x"]), item=st.booleans())
def test_generated_flow_mapping_pieces_parse_as_libyaml_parses_them(entries, comma, trailing, tail, item):
    """Whatever the block reader makes of a one-line flow mapping, libyaml's path makes (values,
    types, positions, problems): read alike, or left to it."""
    flow = "{" + comma.join(entries) + trailing + "}" + tail
    _same(f"a:\n- {flow}\n- x\n" if item else f"a: {flow}\nb: 1\n")


@settings(max_examples=200, deadline=None)
@given(start=st.sampled_from([":", "?", "::", "?:", ":?"]), rest=st.sampled_from(["", "8080", "a b", " a", "\t", ":", "#c", " #c", "-"]),
       key=st.booleans())
def test_generated_scalars_starting_with_a_colon_or_question_mark_parse_as_libyaml_parses_them(start, rest, key):
    _same(f"{start}{rest}: 1\n" if key else f"a: {start}{rest}\nb:\n- {start}{rest}\n")


@settings(max_examples=300, deadline=None)
@given(items=st.lists(st.lists(_FLOW_WORD, min_size=1, max_size=2).map("".join), max_size=4),
       comma=st.sampled_from([", ", ",", " ,", ",\t", ",\n  "]), trailing=st.sampled_from(["", ",", ", "]),
       tail=st.sampled_from(["", " # c", "  ", "\t", " x"]), item=st.booleans())
def test_generated_flow_sequence_pieces_parse_as_libyaml_parses_them(items, comma, trailing, tail, item):
    """A flow sequence's items are read by the flow mapping's scalar reader (_flow_scalar)
    up to `,` or `]`: whatever the block reader makes of them, over lines too, libyaml's path makes."""
    flow = "[" + comma.join(items) + trailing + "]" + tail
    _same(f"a:\n- {flow}\n- x\n" if item else f"a: {flow}\nb: 1\n")


#: a flow collection, nested: sequences and mappings of the pieces above, with `:` `?` `-` `#`
#: `,` at odd places, empty items, trailing commas and breaks between items
_FLOW_COLLECTION = st.recursive(
    _FLOW_WORD | st.sampled_from(["-", "- ", "-x", "? a", "a #b", "'a\n  b'", "\"\\x41\\\\\"", ""]),
    lambda inner: st.one_of(
        st.tuples(st.lists(inner, max_size=3), st.sampled_from([", ", ",", " ,", ",\n  ", "\n  ,"]),
                  st.sampled_from(["", ",", ", ", ",,"])).map(lambda s: "[" + s[1].join(s[0]) + s[2] + "]"),
        st.tuples(st.lists(st.tuples(_FLOW_WORD, st.sampled_from([": ", ":", " : ", ":\n  "]), inner), max_size=3),
                  st.sampled_from([", ", ",", ",\n  "]), st.sampled_from(["", ","]))
        .map(lambda s: "{" + s[1].join(k + c + v for k, c, v in s[0]) + s[2] + "}")),
    max_leaves=6)


@settings(max_examples=300, deadline=None)
@given(flow=_FLOW_COLLECTION, tail=st.sampled_from(["", " # c", "  ", " x", ","]), where=st.sampled_from(range(3)))
def test_generated_nested_flow_collections_parse_as_libyaml_parses_them(flow, tail, where):
    """Whatever the block reader makes of a flow collection (nested ones, over lines, with
    indicators and empty items anywhere), libyaml's path makes: read alike, or left to it."""
    _same((f"a: {flow}{tail}\nb: 1\n", f"a:\n- {flow}{tail}\n- x\n", f"a:\n  b: {flow}{tail}\n  c: 2\n")[where])


#: lines the reader remembers by their text (blockyaml._LINES, _ITEMS) once read alone: scalars
#: plain, quoted, spaced, with comments, and lines it must not remember (collections, `key:`)
_MAPPING_LINES = ["a: 1", "b: x y", "c: \"q: r\"", "d: 'it''s' # c", "e: x # c", "f:   spaced", "\"g h\": 1",
                  "'i': \"j\"", "k: [1, 2]", "l: {}", "m:", "n: -1", "o: \"x\\ty\""]
_ITEM_LINES = ["- bash", "- -c", "- \"x y\"", "- 'a' # c", "-   spaced", "- 1", "-", "- [a]", "- k: v", "- - x",
               "- x # c", "- \"q\\n\""]
#: what follows a line on the next one, indented past it: a plain scalar's continuation, a
#: nested node, a comment, an error
_BELOW = ["x", "y: 1", "- z", "# c", "'q'", "p: 'r'"]


@settings(max_examples=300, deadline=None)
@given(items=st.booleans(), data=st.data(), at=st.integers(0, 5), below=st.sampled_from(_BELOW),
       step=st.integers(1, 3), offset=st.integers(0, 2))
def test_lines_met_again_in_another_place_parse_as_libyaml_parses_them(items, data, at, below, step, offset):
    """A line read before is answered from the reader's tables (its key, value and the value's
    column): met again with a line indented past it after it, and at another column, it must
    read as libyaml reads it (a continuation, a nested node, an error), and still here where
    libyaml finds nothing wrong (a plain scalar's continuation is no reason to leave it)."""
    lines = data.draw(st.lists(st.sampled_from(_ITEM_LINES if items else _MAPPING_LINES), min_size=1, max_size=6))
    at = min(at, len(lines) - 1)
    first = "\n".join("  " + line for line in lines)
    again = "\n".join(["    " + line for line in lines[:at + 1]] + [" " * (4 + step) + below]
                      + ["    " + line for line in lines[at + 1:]])
    text = f"top:\n{first}\n---\ntop:\n{again}\n---\ntop:\n{first}\n"
    left = _same(text, line_offset=offset)
    if not _libyaml(text)[1]:
        assert left == []


@pytest.mark.parametrize("opening", ['key: "a', "key: 'a", '- "a', "- 'a", '- "a\\'])
def test_a_quoted_scalar_going_on_over_a_line_starting_with_a_hash_is_not_remembered(opening):
    """A quoted scalar's line after its first may start with `#` (the scalar's, not a
    comment): that line is no content line, so the next content line is the next one, as
    after a scalar alone on its line. Remembered, the opening line was read again as the
    first text's scalar in the next (`a #x` for `a #y`), or where libyaml finds the quote
    unclosed (a `#` line that closes no quote)."""
    quote = opening[2] if opening[0] == "-" else opening[5]
    after = "- 1" if opening[0] == "-" else "z: 1"
    for rest in (f"#x{quote}", f"#y{quote}", "#c"):
        _same(f"top:\n  {opening}\n   {rest}\n  {after}\n")


#: pieces of a double-quoted scalar's escapes: the common ones replaced as text, a backslash
#: escaped (after which they may not be), ones the pattern decodes, ones libyaml refuses
_ESCAPE_PIECES = ["\\n", "\\\"", "\\ ", "\\t", "\\\\", "\\x41", "\\u00e9", "\\U0001F600", "\\x4", "\\/", "\\0", "\\e",
                  "\\N", "\\", "a", "n", " ", "\"", "t"]


def _pattern_decoded(text: str) -> str | None:
    try:
        return blockyaml._ESCAPE.sub(blockyaml._escaped, text)
    except blockyaml._Unsure:
        return None


@settings(max_examples=300, deadline=None)
@given(pieces=st.lists(st.sampled_from(_ESCAPE_PIECES), max_size=8), more=st.lists(st.sampled_from(_ESCAPE_PIECES), max_size=4))
def test_escapes_decode_as_the_pattern_decodes_them_and_as_libyaml_does(pieces, more):
    """_unescape replaces the common escapes as text where no escaped backslash is: it says
    what the pattern alone says of any line (its value, or unsure), and a double-quoted
    scalar over lines of such pieces reads as libyaml reads it."""
    text = "".join(pieces)
    try:
        decoded = blockyaml._unescape(text)
    except blockyaml._Unsure:
        decoded = None
    assert decoded == _pattern_decoded(text), text
    _same(f"a: \"x{text}\n  {''.join(more)}y\"\nb: 1\n")
