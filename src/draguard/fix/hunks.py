"""A fix's unified diff written from the splice's own replacements (fix.splice records each as
(start, removed, inserted)), not found again by comparing the two texts: the lines each
replacement touched are known, so the diff needs no line matching. An HTML report shows one
such diff per fix; comparing the texts (difflib wherever what a fix takes out and what it
adds share a line, as a legacy pod's fix does: the line kept under `limits:`) cost more than
the rest of the report.

The hunks are `diff -u`'s: 3 lines of context, hunks whose changes are at most 6 unchanged
lines apart joined, difflib's ranges and header, a line without a final line break marked.
Within one replaced region the lines it keeps at its start and end are context, and a run
of lines only added or only taken out is moved down past the lines equal to it, as the
texts' comparison places it; lines replaced in one region are compared there by difflib
(the region is a few lines). What can differ from a comparison of the whole texts is only
where it would pair a line one replacement took out with a line another one added: this
diff keeps each replacement's lines where the replacement put them."""

from __future__ import annotations

import difflib
import re
from typing import NamedTuple

_CONTEXT = 3  # lines of context around a hunk, as diff -u and difflib
#: the line breaks `str.splitlines` knows besides "\n" and "\r\n": the texts are cut into lines
#: at "\n" here, so a text with one of these is left to a comparison of the texts
_LONE_CR = re.compile(r"\r(?!\n)")
_OTHER_BREAKS_NON_ASCII = re.compile("[\x85\u2028\u2029]")


class Change(NamedTuple):
    """One run of changed lines: where it starts in the old text (a 0-based line), the old
    lines it takes out, the new lines it puts there (each with its line break)."""

    line: int
    removed: list[str]
    added: list[str]


def regions(steps: list[tuple[int, int, int]], old_length: int) -> list[tuple[int, int, int, int]] | None:
    """(old start, old end, new start, new end) of each region the steps replaced, in text
    order and apart, from the steps in the order they were made, each (start, removed length,
    inserted length) in the text as the steps before it left it. None when the kept text does
    not stay in its order (no splice does that)."""
    if all(later[0] + later[1] <= earlier[0] for earlier, later in zip(steps, steps[1:])):
        return _from_the_last(steps)
    pieces: list[tuple[int, int]] = [(old_length, 0)] if old_length else []  # (length, old start or -1: inserted)
    for start, removed, inserted in steps:
        out, at = [], 0
        for length, origin in pieces:
            end = at + length
            if end <= start or at >= start + removed:
                out.append((length, origin))
            else:  # the piece meets the removed range: keep its parts outside
                if at < start:
                    out.append((start - at, origin))
                if end > start + removed:
                    cut = start + removed - at
                    out.append((end - start - removed, origin + cut if origin >= 0 else -1))
            at = end
        _insert(out, start, inserted)
        pieces = out
    found, old_at, new_at = [], 0, 0
    opened: tuple[int, int] | None = None  # (old start, new start) of the region being gathered
    for length, origin in pieces:
        if origin == old_at:  # old text where it was: a region before it ends
            if opened is not None:
                found.append((opened[0], old_at, opened[1], new_at))
                opened = None
        else:
            if 0 <= origin < old_at:
                return None
            opened = opened or (old_at, new_at)
            if origin > old_at:  # old text taken out before this piece
                found.append((opened[0], origin, opened[1], new_at))
                opened = None
        if origin >= 0:
            old_at = origin + length
        new_at += length
    if opened is not None or old_at != old_length:
        old_start, new_start = opened or (old_at, new_at)
        found.append((old_start, old_length, new_start, new_at))
    return found


def _from_the_last(steps: list[tuple[int, int, int]]) -> list[tuple[int, int, int, int]]:
    """The regions of steps made from the last place in the text to the first (as a
    document's edits are spliced together), each where the old text has it: a step at the
    point of the one made before it goes before what that one wrote."""
    out: list[tuple[int, int, int, int]] = []
    shift = 0  # what the regions before the step added
    for start, removed, inserted in reversed(steps):
        region = (start, start + removed, start + shift, start + shift + inserted)
        shift += inserted - removed
        if out and out[-1][1] == start:
            region = (out[-1][0], region[1], out[-1][2], region[3])
            out.pop()
        out.append(region)
    return out


def _insert(pieces: list[tuple[int, int]], start: int, inserted: int) -> None:
    """Put an inserted piece of `inserted` characters at `start` of the pieces' text."""
    if not inserted:
        return
    at = 0
    for index, (length, _) in enumerate(pieces):
        if at >= start:
            pieces.insert(index, (inserted, -1))
            return
        at += length
    pieces.append((inserted, -1))


def changes(old: str, new: str, replaced: list[tuple[int, int, int, int]]) -> list[Change]:
    """The changed lines of each replaced region (`regions`) of `old`, giving `new`
    (written_changes of what `new` has in each region)."""
    return written_changes(old, [(old_start, old_end, new[new_start:new_end])
                                 for old_start, old_end, new_start, new_end in replaced])


def written_changes(old: str, replaced: list[tuple[int, int, str]]) -> list[Change]:
    """The changed lines of each region of `old` replaced, (its start, its end, what is written
    there), in text order (one may start where the one before ends: they are one): the
    region's whole lines (regions that share a line are one), less the lines it keeps at its
    start and end; a run only added or only taken out moved down past the old lines equal to
    its first, as a comparison of the texts places it."""
    joined: list[tuple[int, int, str]] = []
    for old_start, old_end, written in replaced:
        if joined and joined[-1][1] == old_start:
            joined[-1] = (joined[-1][0], old_end, joined[-1][2] + written)
        else:
            joined.append((old_start, old_end, written))
    widened: list[list] = []  # [start, end, the regions in it]: whole lines of `old`
    for region in joined:
        old_start, old_end, written = region
        end = old_end
        if not (_line_start(old, old_end) and (written[-1:] == "\n" if written else _line_start(old, old_start))):
            found = old.find("\n", old_end)
            end = len(old) if found < 0 else found + 1
        start = old.rfind("\n", 0, old_start) + 1
        if widened and start <= widened[-1][1]:  # on a line of the one before, or right after it
            widened[-1][1] = end
            widened[-1][2].append(region)
        else:
            widened.append([start, end, [region]])
    out: list[Change] = []
    line, counted = 0, 0
    for index, (old_start, old_end, regions_in) in enumerate(widened):
        pieces: list[str] = []
        at = old_start
        for start, end, written in regions_in:
            pieces += (old[at:start], written)
            at = end
        pieces.append(old[at:old_end])
        removed, added = old[old_start:old_end].splitlines(True), "".join(pieces).splitlines(True)
        head, tail = shared_ends(removed, added)
        start = old_start + sum(map(len, removed[:head]))
        removed, added = removed[head:len(removed) - tail], added[head:len(added) - tail]
        if not removed and not added:
            continue
        if not removed or not added:
            limit = widened[index + 1][0] if index + 1 < len(widened) else len(old)
            start, run = _moved_down(old, start, removed or added, bool(removed), limit)
            removed, added = (run, added) if removed else (removed, run)
        line += old.count("\n", counted, start)
        counted = start
        out.extend(_compared(line, removed, added))
    return out


def shared_ends(old: list[str], new: list[str]) -> tuple[int, int]:
    """How many lines two texts' lines share at their start, and then at their end (not
    counting those of the start again)."""
    head = 0
    while head < len(old) and head < len(new) and old[head] == new[head]:
        head += 1
    tail = 0
    while tail < len(old) - head and tail < len(new) - head and old[-1 - tail] == new[-1 - tail]:
        tail += 1
    return head, tail


def _line_start(text: str, index: int) -> bool:
    return index == 0 or text[index - 1] == "\n"


def _moved_down(old: str, start: int, run: list[str], taken_out: bool, limit: int) -> tuple[int, list[str]]:
    """A run of lines only added at `start` of `old`, or only taken out from there, moved
    down while the old line after it is its first line (not into the next region, which
    starts at `limit`): (where it starts then, its lines in that order)."""
    end = start + sum(map(len, run)) if taken_out else start
    while end < limit:
        found = old.find("\n", end)
        following = old[end:len(old) if found < 0 else found + 1]
        if following != run[0] or end + len(following) > limit:
            break
        run = run[1:] + run[:1]
        start, end = start + len(following), end + len(following)
    return start, run


def _compared(line: int, removed: list[str], added: list[str]) -> list[Change]:
    """Lines replaced at old line `line`: one change, or where they share a line, the
    changes difflib finds between them (the lines they share are context)."""
    if not removed or not added or set(removed).isdisjoint(added):
        return [Change(line, removed, added)]
    return [Change(line + i1, removed[i1:i2], added[j1:j2])
            for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, removed, added, autojunk=False).get_opcodes()
            if tag != "equal"]


def unified(display: str, old: str, found: list[Change], first_line: int = 1, checked: bool = False) -> str:
    """The changes to `old` as `diff -u` writes them (difflib's header and ranges), its lines
    numbered from `first_line`; `checked`: the caller found no line break other than "\n" and
    "\r\n" in `old` and the new text (`other_breaks`), not to be looked for again. Each run
    of context, removed or added lines is one string, its mark joined in front of every line
    (a report's 4,403 diffs: 113 ms against 127 ms at the least of 20 rounds, in turn in one
    process), not written line by line; a line without a final "\n" is marked in its run.
    The runs are joined inline and each change read once for its hunk, its end and what it
    adds: a key add's diff, one change, was 5.1-5.7 us with a call for each run, the sum of
    the growth and the last check as generators, 3.7-4.2 us now (least of 7, in turn)."""
    if not found:
        return ""
    lines = old.splitlines(True)
    name = display.lstrip("/")
    out = [f"--- a/{name}\n+++ b/{name}\n"]
    ended = not old or old[-1] == "\n"  # every line written so far ends with "\n"
    shift, count, index = 0, len(found), 0  # shift: lines the hunks before add
    while index < count:
        low = max(found[index].line - _CONTEXT, 0)
        runs, at, grown = [], low, 0
        while True:  # the changes of one hunk: each within twice the context of the one before
            line, removed, added = found[index]
            if at < line:
                runs.append(" " + " ".join(lines[at:line]))
            if removed:
                runs.append("-" + "-".join(removed))
            if added:
                runs.append("+" + "+".join(added))
                ended = ended and added[-1][-1:] == "\n"
            at = line + len(removed)
            grown += len(added) - len(removed)
            index += 1
            if index == count or found[index].line - at > 2 * _CONTEXT:
                break
        high = min(at + _CONTEXT, len(lines))
        out.append(f"@@ -{_range(low, high - low, first_line)} +{_range(low + shift, high - low + grown, first_line)} @@\n")
        out += runs
        if at < high:
            out.append(" " + " ".join(lines[at:high]))
        shift += grown
    if ended and (checked or not other_breaks(old) and not other_breaks("".join(line for c in found for line in c.added))):
        return "".join(out)  # every line ends with "\n" (without other breaks only a text's last may not)
    return out[0] + "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"
                            for run in out[1:] for line in run.splitlines(True))


def _end(change: Change) -> int:
    return change.line + len(change.removed)


def _range(start: int, length: int, first_line: int) -> str:
    """A hunk's range as difflib writes it (difflib._format_range_unified), its 0-based
    `start` numbered from `first_line`."""
    beginning = start + first_line
    if length == 1:
        return f"{beginning}"
    return f"{beginning - (not length)},{length}"


def steps_diff(display: str, old: str, new: str, steps: list[tuple[int, int, int]]) -> str:
    """The diff of a file its fixes took from `old` to `new` by the replacements `steps` (fix.run.FileText.changes:
    every round's, in order), written from them; compared by files.unified_diff where the
    steps do not say (none recorded, or a text with line breaks other than "\n")."""
    found = regions(steps, len(old)) if steps else None
    if found is None or other_breaks(old) or other_breaks(new):
        from .files import unified_diff

        return unified_diff(display, old, new)
    return unified(display, old, changes(old, new, found), checked=True)


def splice_diff(display: str, text: str, start: int, end: int, fixed: str, steps: list, line: int) -> str:
    """The diff of replacing `text[start:end]` (which starts on line `line`) by `fixed`, the
    splice that made it recording `steps` (fix.splice.splice_fixes) in that piece: written from
    the steps (written_diff); compared by files.unified_diff where the steps do not say (a
    text with line breaks other than "\n")."""
    found = regions(steps, end - start)
    if found is None or other_breaks(fixed):
        before, after = _context_start(text, start), _context_end(text, end)
        return _compared_texts(display, text, start, end, fixed, line, before, after)
    diff = written_diff(display, text, start, end, [(a, b, fixed[c:d]) for a, b, c, d in found], line, fixed)
    assert diff is not None  # `fixed` given: compared where the lines around have other breaks
    return diff


def written_diff(display: str, text: str, start: int, end: int, replaced: list[tuple[int, int, str]], line: int,
                 fixed: str | None = None) -> str | None:
    """The diff of the regions of the piece `text[start:end]` (which starts on line `line`)
    replaced, each (its start, its end, what is written there) in the piece, in text order,
    none with a line break other than "\n" in what it writes: written from them on
    the piece and the lines around it (3, more where a run moved down past the piece's end
    needs them). Where those lines have another line break: compared by files.unified_diff
    when the caller gives the fixed piece, `fixed`, else None."""
    before, after = _context_start(text, start), _context_end(text, end)
    first = line - text.count("\n", before, start)
    offset = start - before
    while True:
        old = text[before:after]
        if other_breaks(old):
            return None if fixed is None else _compared_texts(display, text, start, end, fixed, line, before, after)
        made = written_changes(old, [(a + offset, b + offset, written) for a, b, written in replaced])
        if after == len(text) or not made or _end(made[-1]) + _CONTEXT <= old.count("\n"):
            return unified(display, old, made, first, checked=True)
        after = _context_end(text, after)  # the last run moved down to the lines around: 3 more


def _compared_texts(display: str, text: str, start: int, end: int, fixed: str, line: int, before: int,
                    after: int) -> str:
    """The diff of `text[before:after]` with its piece `text[start:end]` (on line `line`)
    replaced by `fixed`, by comparing the two texts."""
    from .files import unified_diff  # imported where it is used (fix.files imports this module)

    return unified_diff(display, text[before:after], text[before:start] + fixed + text[end:after],
                        line - text.count("\n", before, start))


def other_breaks(text: str) -> bool:
    """Whether `text` has a line break other than "\n" and "\r\n" (a lone CR, VT, FF, FS, GS,
    RS; NEL, LS, PS): each character tested by `in`, written out (a regular expression scanned
    the text 20 times slower, and a generator over the five cost more than the five scans)."""
    return ("\r" in text and _LONE_CR.search(text) is not None
            or "\x0b" in text or "\x0c" in text or "\x1c" in text or "\x1d" in text or "\x1e" in text
            or not text.isascii() and _OTHER_BREAKS_NON_ASCII.search(text) is not None)


def _context_start(text: str, index: int) -> int:
    """Where the line `_CONTEXT` lines above the one `index` starts on starts."""
    for _ in range(_CONTEXT):
        if index == 0:
            break
        index = text.rfind("\n", 0, index - 1) + 1
    return index


def _context_end(text: str, index: int) -> int:
    """Where the line `_CONTEXT` lines below the one `index` starts on starts (or the text's end)."""
    for _ in range(_CONTEXT):
        found = text.find("\n", index)
        if found < 0:
            return len(text)
        index = found + 1
    return index
