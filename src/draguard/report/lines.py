"""Source lines for reports: from the loaded texts, else from disk (template files that
rendered findings map to, the config file)."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from typing import overload

from ..sources.yamlpos import has_directive


class SourceLines:
    def __init__(self, sources):
        self._by_name = {s.display: s for s in sources if not s.rendered_by}
        self._read: dict[str, list[str] | None] = {}
        self._recent: dict[str, Sequence[str]] = {}  # _split's, the least recent first
        self._nodes: dict[str, list] = {}
        self._starts: dict[str, list[tuple[int, int]]] = {}
        self._composed: tuple = (None, None)  # ((file, document), what document() gave)

    def _lines(self, file: str) -> Sequence[str] | None:
        source = self._by_name.get(file)
        if source is not None:
            return source.lines if source.has_lines else self._split(file, source)
        if file not in self._read:
            try:
                with open(file, encoding="utf-8", errors="replace") as handle:
                    self._read[file] = handle.read().splitlines()
            except OSError:
                self._read[file] = None
        return self._read[file]

    def _split(self, file: str, source) -> Sequence[str]:
        """The lines of a loaded source whose lines nothing kept (lines_of), held
        here for the last few files asked: a report asks file by file (its findings come
        sorted), and the lines of every file kept to the end were the 20k tree's 600,000
        strings (40 MiB) at the run's peak."""
        lines = self._recent.pop(file, None)
        if lines is None:
            lines = lines_of(source.whole_text())
            if len(self._recent) >= _RECENT_FILES:
                del self._recent[next(iter(self._recent))]
        self._recent[file] = lines  # the latest last
        return lines

    def get(self, file: str, line: int) -> str | None:
        lines = self._lines(file)
        if lines is None or not 0 < line <= len(lines):
            return None
        return lines[line - 1]

    def around(self, file: str, first: int, last: int) -> list[tuple[int, str]]:
        """(number, line) of the lines `first` to `last` of `file` that it has: an excerpt's
        lines found in one look, not one each."""
        lines = self._lines(file)
        if lines is None:
            return []
        first = max(first, 1)
        return list(zip(range(first, last + 1), lines[first - 1:last]))

    def text(self, file: str) -> str | None:
        """The whole text of a loaded (not rendered) source."""
        source = self._by_name.get(file)
        return source.text if source is not None else None

    def document_span(self, file: str, document: int) -> tuple[int, int, int] | None:
        """(where document `document` of a loaded source starts: the start of the line its
        content starts on, where the next one's does or the text's end, the number of the line
        it starts on), from the lines the loader recorded (Source.document_lines), else from
        the composed documents; None when the text or the document is not there."""
        source = self._by_name.get(file)
        if source is None:
            return None
        starts = self._starts.get(file)
        if starts is None:
            lines = source.document_lines if source.document_lines is not None else \
                tuple(node.start_mark.line + 1 for node in self.nodes(file) or ())
            starts = self._starts[file] = list(zip(_line_starts(source.text, lines), lines))
        if not 0 <= document < len(starts):
            return None
        start, line = starts[document]
        return start, starts[document + 1][0] if document + 1 < len(starts) else len(source.text), line

    def document(self, file: str, document: int) -> tuple[str, object, int] | None:
        """(a text holding document `document` of a loaded source, its composed node there,
        the number of lines before that text's first), the document composed alone: cut out
        of the text where it starts (document_span), not the whole text composed for it (a
        SARIF report's fixes: 1,105 of 2,125 files composed whole, for 1,768 fixes); the text
        whole where a `%` directive may change how a document reads. The last one is kept: a
        file's findings come together, in line order. None when it is not there."""
        if self._composed[0] == (file, document):
            return self._composed[1]
        text = self.text(file)
        span = self.document_span(file, document) if text is not None and not has_directive(text) else None
        if span is not None:
            from ..sources.spans import document_node

            start, end, line = span
            piece = text[start:end]  # type: ignore[index]  # text is there: span is
            node = document_node(piece, 0)
            found = (piece, node, line - 1) if node is not None else None
        else:
            nodes = self.nodes(file)
            found = (text, nodes[document], 0) if text is not None and nodes and 0 <= document < len(nodes) else None
        self._composed = ((file, document), found)
        return found

    def nodes(self, file: str) -> list | None:
        """The composed documents of a loaded source (sources.spans.document_nodes), once per
        file: every finding of the file with a fix reads them."""
        text = self.text(file)
        if text is None:
            return None
        if file not in self._nodes:
            from ..sources.spans import document_nodes

            self._nodes[file] = document_nodes(text)
        return self._nodes[file]


#: the loaded sources whose lines SourceLines holds at once (_split)
_RECENT_FILES = 8


def lines_of(text: str) -> Sequence[str]:
    """`text.splitlines()`; for a large text, the same lines cut from it a block at a time as
    they are asked for (_CutOnDemand)."""
    return text.splitlines() if len(text) <= ON_DEMAND_CHARS else _CutOnDemand(text)


#: a text longer than this has its lines cut on demand (lines_of)
ON_DEMAND_CHARS = 1 << 20
#: about the text of each block _CutOnDemand splits at once
BLOCK_CHARS = 1 << 16


class _CutOnDemand(Sequence[str]):
    """The lines of a large text as `str.splitlines` gives them, each block of about
    BLOCK_CHARS (ending after a line feed, which always ends a line) split when a line of it
    is asked for, the last block's kept: a report asks in order. The lines of a 5 MB stream
    of pods split whole were 170,000 strings, about 20 MB held to the report's end."""

    __slots__ = ("_text", "_starts", "_before", "_block", "_block_lines")

    def __init__(self, text: str) -> None:
        self._text = text
        self._starts = [0]  # where each block starts, and the text's end
        self._before = [0]  # the lines before each block, and in all
        start = 0
        while start < len(text):
            end = text.find("\n", start + BLOCK_CHARS)
            end = len(text) if end < 0 else end + 1
            self._starts.append(end)
            self._before.append(self._before[-1] + len(text[start:end].splitlines()))
            start = end
        self._block = -1
        self._block_lines: list[str] = []

    def __len__(self) -> int:
        return self._before[-1]

    @overload
    def __getitem__(self, index: int) -> str: ...

    @overload
    def __getitem__(self, index: slice) -> list[str]: ...

    def __getitem__(self, index: int | slice) -> str | list[str]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(index)
        block = bisect_right(self._before, index) - 1
        if block != self._block:
            self._block, self._block_lines = block, \
                self._text[self._starts[block]:self._starts[block + 1]].splitlines()
        return self._block_lines[index - self._before[block]]


def _line_starts(text: str, lines: tuple[int, ...]) -> list[int]:
    """The index each of `lines` (1-based, ascending) starts at in `text`, in one pass."""
    starts, index, line = [], 0, 1
    for wanted in lines:
        while line < wanted:
            index = text.index("\n", index) + 1
            line += 1
        starts.append(index)
    return starts
