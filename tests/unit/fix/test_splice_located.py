"""fix.splice locates a plain block document's edits on its text (sources.spans.located_root)
instead of composing it again with libyaml: on many generated documents, written in many
ways (indentation steps, sequences indented or not, comments, blank lines, quoted and null
scalars, items that are mappings or lists) and with many fixes (sets, appends, removals,
added documents), the located splice makes the same replacements as the composed one, or
says it cannot (and the composed one is used); and each spliced text that verifies is what
the edits make of the data."""

from __future__ import annotations

import random

import pytest
import yaml

import draguard.fix.splice as splice
import draguard.sources.spans as spans
from draguard.core.fixes import EditError, append, remove, set_value
from draguard.fix.splice import NotSpliceable, TextStyle, apply_fixes, fixed_documents, parse, verified
from draguard.sources.spans import Unproven, located_root

from .test_hunks import _edits

NAMES = ["name", "image", "limits", "claims", "gpu", "memory", "a", "b", "nvidia.com/gpu", "x-y"]
STRINGS = ["gpu", "1", "8Gi", "memory: 8Gi", "x y", "a#b", "c # d", "-x", "--epochs", "a:b", "", "null", "it's",
           'say "hi"', "yes", "[x]", "*star", "tab\there", "x  y"]


def _value(rnd: random.Random, depth: int = 0):
    roll = rnd.random()
    if depth < 4 and roll < 0.3:
        return {rnd.choice(NAMES): _value(rnd, depth + 1) for _ in range(rnd.randint(1, 4))}
    if depth < 4 and roll < 0.45:
        return [_value(rnd, depth + 1) for _ in range(rnd.randint(1, 3))]
    return rnd.choice(STRINGS + [1, 0, -3, 2.5, True, False, None, None])


class _Style:
    """How a generated document is written."""

    def __init__(self, rnd: random.Random):
        self.rnd = rnd
        self.step = rnd.choice([2, 2, 4, 3])
        self.indented = rnd.random() < 0.4  # sequences indented under their key
        self.comments = rnd.random() < 0.4
        self.blanks = rnd.random() < 0.3
        self.quotes = rnd.random() < 0.3

    def scalar(self, value) -> str:
        rnd = self.rnd
        if value is None:
            return rnd.choice(["", "~", "null"])
        token = yaml.safe_dump(value, width=1 << 30).removesuffix("...\n").rstrip("\n")
        if isinstance(value, str) and self.quotes and "\t" not in value:
            if rnd.random() < 0.5:
                return "'" + value.replace("'", "''") + "'"
            return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
        return token

    def after(self) -> str:
        return " # note" if self.comments and self.rnd.random() < 0.2 else ""

    def between(self, column: int) -> list[str]:
        out = []
        if self.blanks and self.rnd.random() < 0.15:
            out.append("")
        if self.comments and self.rnd.random() < 0.15:
            out.append(" " * self.rnd.randint(0, column + 2) + "# between")
        return out

    def mapping(self, data: dict, column: int) -> list[str]:
        lines: list[str] = []
        for key, value in data.items():
            lines += self.between(column)
            head = " " * column + f"{key}:"
            if isinstance(value, dict) and value:
                lines += [head + self.after()] + self.between(column) + self.mapping(value, column + self.step)
            elif isinstance(value, list) and value:
                lines += [head + self.after()] + self.sequence(value, column + (self.step if self.indented else 0))
            else:
                token = self.collection(value) if isinstance(value, (dict, list)) else self.scalar(value)
                lines.append((head + " " + token).rstrip(" ") + self.after())
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
                token = self.collection(item) if isinstance(item, (dict, list)) else self.scalar(item)
                lines.append((" " * column + "- " + token).rstrip(" ") + self.after())
        return lines

    @staticmethod
    def collection(value) -> str:
        return "{}" if isinstance(value, dict) else "[]"


def _document(rnd: random.Random) -> str:
    data = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"p{rnd.randint(0, 9)}"},
            "spec": {key: _value(rnd, 1) for key in rnd.sample(NAMES, rnd.randint(1, 4))}}
    style = _Style(rnd)
    text = "\n".join(style.mapping(data, 0)) + "\n"
    roll = rnd.random()
    if roll < 0.05:  # what only the composer knows: each is composed
        text = text.replace("kind: Pod", rnd.choice(["kind: &k Pod", "kind: !!str Pod", "kind: |\n  Pod",
                                                     "kind: {a: b}", "kind:\tPod", "kind: Pöd"]))
    elif roll < 0.08:
        text = text.replace("\n", "\r\n")
    return text


def _stream(rnd: random.Random) -> str:
    documents = [_document(rnd) for _ in range(rnd.randint(1, 3))]
    separators = ["---\n", "--- # next\n", "---\n# a comment\n\n", "...\n---\n"]
    text = documents[0]
    for document in documents[1:]:
        text += rnd.choice(separators) + document
    return text if rnd.random() < 0.85 else text.rstrip("\n")


def _outcome(text: str, planned: list, lines: list, together: bool, locate: bool):
    starts = splice._document_starts(text, lines, {document for document, _ in planned})
    try:
        return splice._spliced(text, planned, starts, TextStyle.of(text), together, locate)
    except (NotSpliceable, EditError) as exc:
        return type(exc).__name__, str(exc)


def _cases(seed: int, count: int):
    rnd = random.Random(seed)
    made = 0
    while made < count:
        text = _stream(rnd)
        try:
            parsed = parse(text)
        except Exception:  # noqa: BLE001 - a generated text libyaml refuses is no case
            continue
        if parsed.problems or None in parsed.documents or not parsed.documents:
            continue
        chosen = sorted(rnd.sample(range(len(parsed.documents)), rnd.randint(1, len(parsed.documents))), reverse=True)
        planned = [(d, _edits(rnd, parsed.documents[d])) for d in chosen]
        made += 1
        yield text, parsed, planned


def test_located_and_composed_splices_make_the_same_replacements_on_generated_documents(monkeypatch):
    located_documents: list[bool] = []

    def counted(text):
        root = spans.located_root(text)
        located_documents.append(root is not None)
        return root
    monkeypatch.setattr(splice, "located_root", counted)
    compared = located = verified_texts = 0
    for text, parsed, planned in _cases(41, 1000):
        for together in (True, False):
            composed = _outcome(text, planned, parsed.lines, together, False)
            located_documents.clear()
            try:
                found = _outcome(text, planned, parsed.lines, together, True)
            except Unproven:
                continue
            assert found == composed, (text, planned, together)
            if not located_documents or not all(located_documents) or not isinstance(found[1], list):
                continue
            compared += 1
            try:
                expected = fixed_documents(parsed.documents, planned)
            except (NotSpliceable, EditError):
                continue
            located += 1
            verified_texts += verified(found[0], parsed.problems, expected) is not None
    # not vacuous: hundreds of splices made on located documents alone, most of them verified
    assert compared >= 450 and located >= 400 and verified_texts >= 0.9 * located, (compared, located, verified_texts)


def test_every_located_splice_that_verifies_is_the_composed_one_through_apply_fixes(monkeypatch):
    """apply_fixes (what `draguard fix` writes) gives the same text located as composed."""
    cases = list(_cases(7, 300))
    results = []
    for text, parsed, planned in cases:
        try:
            results.append(apply_fixes(text, planned, parsed=parsed)[0])
        except (NotSpliceable, EditError) as exc:
            results.append(type(exc).__name__)
    monkeypatch.setattr(splice, "located_root", lambda text: None)
    for (text, parsed, planned), result in zip(cases, results):
        try:
            assert apply_fixes(text, planned, parsed=parsed)[0] == result, (text, planned)
        except (NotSpliceable, EditError) as exc:
            assert result == type(exc).__name__, (text, planned)


@pytest.mark.parametrize("text", [
    "a: &x 1\nb: 2\n", "a: *x\n", "a: !!str 1\n", "a: |\n  x\n", "a: >\n  x\n", "a: {b: 1}\n", "a: [1]\n",
    "a:\tb\n", "a: 1\r\nb: 2\r\n", "a: é\n", "? a\n: 1\n", "a: 'x\n  y'\n", "a:\n  b\n  c\n", "%YAML 1.2\n---\na: 1\n",
    "<<: {a: 1}\nb: 2\n", "- - a\n", "plain\n",
])
def test_what_only_the_composer_knows_is_composed(text):
    assert located_root(text) is None


POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: trainer-{n}  # a comment
spec:
  containers:
  - name: main
    image: registry.example.com/train:1.0
    args:
    - --epochs
    - '10'
    resources:
      limits:
        nvidia.com/gpu: 1
        memory: 8Gi
"""


def test_a_stream_of_plain_pods_is_spliced_without_composing(monkeypatch):
    composed = []
    monkeypatch.setattr(splice, "document_node", lambda *a: composed.append(a) or spans.document_node(*a))
    monkeypatch.setattr(splice, "_composed", lambda *a: composed.append(a) or spans.document_node(*a))
    text = "---\n".join(POD.format(n=n) for n in range(50))
    planned = [(n, (remove(("spec", "containers", 0, "resources", "limits", "nvidia.com/gpu")),
                    append(("spec", "containers", 0, "resources", "claims"), {"name": "gpu"}),
                    set_value(("spec", "resourceClaims"), [{"name": "gpu", "resourceClaimTemplateName": f"t{n}"}])))
               for n in reversed(range(50))]
    fixed, _ = apply_fixes(text, planned)
    assert composed == []
    assert fixed.count("      claims:\n      - name: gpu\n") == 50 and "nvidia.com/gpu" not in fixed
