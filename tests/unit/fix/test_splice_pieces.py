"""fix.splice splices each document on its own piece of the text (from its first line to the
next document's) and joins the text once: the same text and the same recorded steps as
splicing each document into the whole rest of the text, as it did before, without copying
that rest once per document (quadratic in a stream of many documents with a fix each)."""

from __future__ import annotations

import random

import pytest

import draguard.fix.splice as splice
from draguard.core.fixes import EditError, append, remove, set_value
from draguard.fix.splice import NotSpliceable, apply_fixes, parse, splice_fixes

from .test_hunks import _document, _edits


def _one_by_one_to_the_end(text: str, planned: list, lines: list) -> tuple[str, list]:
    """Each document spliced into the text from its first line to the text's end (its piece
    as the lines of the documents after it left out make it), the last first; located
    together, or, where one document's edits meet, all one by one (as splice_fixes does)."""
    style = splice.TextStyle.of(text)

    def spliced(together: bool) -> tuple[str, list]:
        out, steps = text, []
        for document, edits in planned:
            starts = splice._document_starts(out, lines[:document + 1], {document})
            out, made = splice._spliced(out, [(document, edits)], starts, style, together)
            steps += made
        return out, steps
    try:
        return spliced(True)
    except NotSpliceable:
        return spliced(False)


def _stream(rnd: random.Random) -> str:
    documents = [_document(rnd) for _ in range(rnd.randint(2, 6))]
    separators = ["---\n", "--- # next\n", "---\n# a comment\n\n", "...\n---\n"]
    text = documents[0]
    for document in documents[1:]:
        text += rnd.choice(separators) + document
    return text if rnd.random() < 0.8 else text.rstrip("\n")


def test_a_stream_spliced_in_pieces_is_the_stream_spliced_to_its_end_on_generated_fixes():
    rnd, compared = random.Random(41), 0
    while compared < 150:
        text = _stream(rnd)
        parsed = parse(text)
        chosen = sorted(rnd.sample(range(len(parsed.documents)), rnd.randint(1, len(parsed.documents))),
                        reverse=True)
        planned = [(d, _edits(rnd, parsed.documents[d])) for d in chosen]
        try:
            expected = _one_by_one_to_the_end(text, planned, parsed.lines)
        except (NotSpliceable, EditError):
            continue
        assert splice_fixes(text, planned, parsed.lines) == expected, (text, planned)
        compared += 1


def test_each_document_is_composed_on_its_own_piece(monkeypatch):
    """200 pods with a fix each: the pieces composed add up to the text once (before, each
    document's piece ran to the text's end: 100 times the text)."""
    pod = "kind: Pod\nmetadata:\n  name: p{n}\nspec:\n  containers:\n  - name: main\n    resources:\n" \
          "      limits:\n        nvidia.com/gpu: 1\n        memory: 8Gi\n"
    text = "---\n".join(pod.format(n=n) for n in range(200))
    composed: list[int] = []
    document = splice._Document

    def counted(segment, index, style, tree=None):
        composed.append(len(segment))
        return document(segment, index, style, tree)
    monkeypatch.setattr(splice, "_Document", counted)
    planned = [(n, (remove(("spec", "containers", 0, "resources", "limits", "nvidia.com/gpu")),
                    append(("spec", "containers", 0, "resources", "claims"), {"name": "gpu"})))
               for n in reversed(range(200))]
    fixed, _ = apply_fixes(text, planned)
    assert len(composed) == 200 and sum(composed) <= len(text)
    assert fixed.count("claims:\n      - name: gpu\n") == 200 and "nvidia.com/gpu" not in fixed


@pytest.mark.parametrize("text", ["--- {kind: a, n: 1}\n--- {kind: b, n: 2}\n",
                                  "%YAML 1.1\n---\nkind: a\nn: 1\n...\n%YAML 1.1\n---\nkind: b\nn: 2\n"])
def test_documents_on_their_separators_line_and_after_a_directive(text):
    """A document whose content starts on its `---` line; with a `%` directive, each document
    is composed from the text's start."""
    planned = [(1, (set_value(("n",), 3),)), (0, (set_value(("n",), 4),))]
    fixed, _ = apply_fixes(text, planned)
    assert [d["n"] for d in parse(fixed).documents] == [4, 3]


def test_documents_planned_first_to_last_are_spliced_in_the_whole_text():
    """A plan that is not last first (no caller makes one): each document after the first is
    spliced in the text as the ones before left it, as before."""
    text = "kind: a\nn: 1\n---\nkind: b\nn: 2\n---\nkind: c\nn: 3\n"
    planned = [(0, (set_value(("n",), 4),)), (2, (set_value(("n",), 5),))]
    fixed, _ = apply_fixes(text, planned)
    assert fixed == text.replace("n: 1", "n: 4").replace("n: 3", "n: 5")
