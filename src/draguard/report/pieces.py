"""A report written from pieces: each finding's text in the report's format, made by the
`lint --jobs` part that judged it, beside its files' texts, or by the report itself.

Why: a part holds its files while it judges them, and a report's work for one finding (its
source lines, a fix's diff spliced on its document, a SARIF result) needs only that finding
and its file. Made in the parts, that work runs on every core; made after them, in this
process alone, it was wall time nobody shared (1.1-1.4 s of a 20,000-object run's tail; the
HTML report's fixes most of all). The report orders and joins the pieces, and makes those
no part made: a finding on a file another part read, the run's own notes, the findings this
process judged again (engine.parallel). A piece is the same text whoever makes it, so the
report is byte for byte that of one process (tests/unit/engine/test_parallel.py)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

#: piece(finding, suppressed) -> its text in the report (a format's own shape of it)
Piece = Callable[[Any, bool], Any]


def made_in_part(findings: list, suppressed: list, sources: list, piece: Piece,
                 show_suppressed: bool) -> tuple[list, list]:
    """The pieces a part makes: `piece(finding, suppressed)` for each finding on one of the
    texts it read itself (not rendered: a chart's template is read from disk), None for the
    others (the report makes those); the suppressed findings' only when the report shows them."""
    own = {source.display for source in sources if not source.rendered_by}
    return ([piece(f, False) if f.file in own else None for f in findings],
            [piece(f, True) if show_suppressed and f.file in own else None for f in suppressed])


def shown(result, show_suppressed: bool) -> list[tuple[Any, bool]]:
    """(finding, suppressed) for each finding a report shows: those reported, then the
    suppressed ones where it shows them."""
    return [(f, False) for f in result.findings] + ([(f, True) for f in result.suppressed] if show_suppressed else [])


def each(result, shown: Iterable[tuple[Any, bool]], piece: Piece) -> Iterator[Any]:
    """The piece of each (finding, suppressed) of `shown`: the one a part made, else `piece`'s."""
    held = result.pieces
    for finding, suppressed in shown:
        made = held.of(finding, suppressed) if held is not None else None
        yield piece(finding, suppressed) if made is None else made


#: the text a report joins into one before writing it (in_runs), in characters: a finding's
#: JSON item is 0.8-2.5 KB, an HTML section about as much
RUN_CHARS = 64 * 1024


def in_runs(pieces: Iterable[str]) -> Iterator[list[str]]:
    """`pieces` in lists of about RUN_CHARS of text (a run ends with the piece that reaches
    it; the last shorter; none for none), for a report to join a run by one call and write it
    as it comes: a text per piece cost a copy and a write call each, and the page joined whole
    a copy of the whole report (the JSON report's 6,371 items: 21 ms against 12; the HTML page
    of /tmp/t2125: 13-24 ms against 6). Bounded by size, not count: 256 items of a one-line
    List's 2.5 KB findings, held with their joined copy, raised the peak of a 5 MB input by
    3.6 MB, past tests/integration/test_live_input.py's bound."""
    run: list[str] = []
    size = 0
    for piece in pieces:
        run.append(piece)
        size += len(piece)
        if size >= RUN_CHARS:
            yield run
            run, size = [], 0
    if run:
        yield run
