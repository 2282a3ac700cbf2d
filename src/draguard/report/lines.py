"""Source lines for reports: from the loaded texts, else from disk (template files that
rendered findings map to, the config file)."""

from __future__ import annotations

from ..sources.yamlpos import has_directive


class SourceLines:
    def __init__(self, sources):
        self._by_name = {s.display: s for s in sources if not s.rendered_by}
        self._read: dict[str, list[str] | None] = {}
        self._recent: dict[str, list[str]] = {}  # _split's, the least recent first
        self._nodes: dict[str, list] = {}
        self._starts: dict[str, list[tuple[int, int]]] = {}
        self._composed: tuple = (None, None)  # ((file, document), what document() gave)

    def _lines(self, file: str) -> list[str] | None:
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

    def _split(self, file: str, source) -> list[str]:
        """The lines of a loaded source whose lines nothing kept (Source.split_lines), held
        here for the last few files asked: a report asks file by file (its findings come
        sorted), and the lines of every file kept to the end were the 20k tree's 600,000
        strings (40 MiB) at the run's peak."""
        lines = self._recent.pop(file, None)
        if lines is None:
            lines = source.split_lines()
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


def _line_starts(text: str, lines: tuple[int, ...]) -> list[int]:
    """The index each of `lines` (1-based, ascending) starts at in `text`, in one pass."""
    starts, index, line = [], 0, 1
    for wanted in lines:
        while line < wanted:
            index = text.index("\n", index) + 1
            line += 1
        starts.append(index)
    return starts
