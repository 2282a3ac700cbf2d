"""Human output: grouped by file, each finding with its source line and a caret, like a compiler."""

from __future__ import annotations

from collections.abc import Iterator
from itertools import groupby

from ..core.finding import Finding, Severity
from .lines import SourceLines
from .pieces import each, in_runs, made_in_part, shown
from .prose import printable, sentence

_COLOURS = {Severity.ERROR: "31", Severity.WARNING: "33", Severity.INFO: "36"}


class _Paint:
    def __init__(self, enabled: bool):
        self.enabled = enabled

    def __call__(self, text: str, code: str) -> str:
        return f"\x1b[{code}m{text}\x1b[0m" if self.enabled else text


#: characters of a source line shown around the caret: a minified file is one line of megabytes
WINDOW = 120


def _window(line: str, caret: int) -> tuple[str, int]:
    """The part of `line` around `caret` (at most WINDOW characters, cuts marked with an
    ellipsis) and the caret's place in it."""
    if len(line) <= WINDOW:
        return line, caret
    start = min(max(0, caret - WINDOW // 2), len(line) - WINDOW)
    head, tail = ("…" if start else ""), ("…" if start + WINDOW < len(line) else "")
    return head + line[start:start + WINDOW] + tail, caret - start + len(head)


class _Style:
    """What every finding's lines share, painted once a report: the severities, the caret,
    and the help texts as sentences (a rule's help is mostly the same text each time)."""

    def __init__(self, paint: _Paint):
        self.paint = paint
        self.severity = {s: paint(str(s), "1;" + _COLOURS[s]) for s in Severity}
        self.caret = paint("^", "1;32")
        self._helps: dict[str, str] = {}

    def help(self, text: str) -> str:
        shown = self._helps.get(text)
        if shown is None:
            shown = self._helps[text] = sentence(text)
        return shown


def _finding(f: Finding, lines: SourceLines, style: _Style, suppressed: bool) -> list[str]:
    location = f.location
    tag = " (suppressed: " + (f.suppressed_by or "no reason given") + ")" if suppressed else ""
    column = f.column  # 1 where the place has a line and no column
    where = f"{location.file}:{location.line}:{column}" if location.line else \
        f"{location.file}: {location.dotted}" if location.dotted else location.file
    out = [f"{style.paint(printable(where), '1')}: {style.severity[f.severity]} [{f.rule}] {sentence(f.message)}{tag}"]
    source = lines.get(location.file, location.line) if location.line else None
    if source is not None:
        shown, caret = _window(source, max(0, column - 1))  # the excerpt first: a one-line JSON List's line is megabytes
        shown = shown.expandtabs(1)  # a tab to one space, columns unchanged
        out.append(f"  {location.line:>5} | {printable(shown)}")
        out.append(f"        | {' ' * len(printable(shown[:caret]))}{style.caret}")
    if f.obj.kind:
        out.append(f"        = in {printable(str(f.obj))}")
    if f.help:
        out.append(f"        = help: {style.help(f.help)}")
    if f.fix:
        out.append(f"        = fix ({f.fix.applicability}): {printable(f.fix.title)}")
    return out


class _Piece:
    """A finding's lines as one text (report.pieces), with what every finding's share."""

    def __init__(self, sources, colour: bool):
        self.lines = SourceLines(sources)
        self.style = _Style(_Paint(colour))

    def __call__(self, f: Finding, suppressed: bool) -> str:
        return "\n".join(_finding(f, self.lines, self.style, suppressed))


def pieces(findings, suppressed, sources, *, colour: bool = False, show_suppressed: bool = False, **_):
    """What a `lint --jobs` part renders of its findings (report.pieces)."""
    return made_in_part(findings, suppressed, sources, _Piece(sources, colour), show_suppressed)


def chunks(result, *, colour: bool = False, show_suppressed: bool = False, **_) -> Iterator[str]:
    """The text of `render` in runs of lines (report.pieces.in_runs), for the caller to write as
    they come: joined whole, the report was held three times over at the end of a run (its
    lines, their join, the join with its last line break): a 5 MB one-line List's 17,963
    findings took the process's peak from 80 to 167 MB, twice the JSON report's."""
    paint = _Paint(colour)
    findings = shown(result, show_suppressed)
    if show_suppressed:
        findings.sort(key=lambda pair: pair[0].sort_key())
    for run in in_runs(_lines(result, findings, paint, _Piece(result.sources, colour))):
        yield "\n".join(run) + "\n"


def render(result, *, colour: bool = False, show_suppressed: bool = False, **_) -> str:
    return "".join(chunks(result, colour=colour, show_suppressed=show_suppressed))


def _lines(result, findings: list, paint: _Paint, piece: _Piece) -> Iterator[str]:
    """The report's lines: each file's name, its findings' texts and a blank line, then the
    summary."""
    texts = each(result, findings, piece)
    for file, group in groupby(findings, key=lambda pair: pair[0].file):
        yield paint(printable(file), "1;4")
        for _ in group:
            yield next(texts)
        yield ""
    s = result.summary()
    fixable = f", {s['fixable']} fixable" if s["fixable"] else ""
    refused = f" ({s['refused']} refused)" if s["refused"] else ""
    yield (f"{s['objects']} objects in {s['files']} files{refused}: {s['errors']} errors, {s['warnings']} warnings, "
           f"{s['info']} info, {s['suppressed']} suppressed{fixable}")
