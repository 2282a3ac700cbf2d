"""Source lines for reports: from the loaded texts, else from disk (template files that
rendered findings map to, the config file)."""

from __future__ import annotations


class SourceLines:
    def __init__(self, sources):
        self._by_name = {s.display: s for s in sources if not s.rendered_by}
        self._read: dict[str, list[str] | None] = {}
        self._nodes: dict[str, list] = {}
        self._starts: dict[str, list[tuple[int, int]]] = {}

    def _lines(self, file: str) -> list[str] | None:
        if file in self._by_name:
            return self._by_name[file].lines
        if file not in self._read:
            try:
                with open(file, encoding="utf-8", errors="replace") as handle:
                    self._read[file] = handle.read().splitlines()
            except OSError:
                self._read[file] = None
        return self._read[file]

    def get(self, file: str, line: int) -> str | None:
        lines = self._lines(file)
        if lines is None or not 0 < line <= len(lines):
            return None
        return lines[line - 1]

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


def _line_starts(text: str, lines: tuple[int, ...]) -> list[int]:
    """The index each of `lines` (1-based, ascending) starts at in `text`, in one pass."""
    starts, index, line = [], 0, 1
    for wanted in lines:
        while line < wanted:
            index = text.index("\n", index) + 1
            line += 1
        starts.append(index)
    return starts
