"""A self-contained HTML report: no script and no external resource, one file to attach to a
ticket or publish from CI. It has the summary by severity, tables by category, rule and file,
and each finding with its source excerpt and its fix as a diff (the real `draguard fix`
splice on the finding's own document, or the edits when they do not splice alone). Its
styles (report.page_style) are the simulate and audit reports' too."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from functools import cache
from html import escape
from typing import TYPE_CHECKING, Any

from ..core.finding import Finding
from ..core.fixes import EditError
# imported with the report, so by a `lint --jobs` run before its parts fork: imported on the
# first fix, each part imported them again (20-30 ms of CPU a process)
from ..fix import added_keys, hunks, located_diff, splice
from ..fix.located import block_root
from .lines import SourceLines
from .page_style import STYLE
from .pieces import each, in_runs, made_in_part, shown
from .prose import sentence

if TYPE_CHECKING:
    from ..sources.yamlpos import BlockMap


def pieces(findings, suppressed, sources, *, show_suppressed: bool = False, **_):
    """What a `lint --jobs` part renders of its findings (report.pieces): their sections, the
    fixes' diffs spliced on the documents of the texts the part holds."""
    return made_in_part(findings, suppressed, sources, _Piece(sources), show_suppressed)


class _Piece:
    """A finding's section (the same whether it is suppressed or not), with the parts many
    findings share made once each: a rule's heading at a severity, a message or help text as
    an escaped sentence, a fix's title (the 2,125-file tree's 7,736 findings have 27 rules,
    208 messages, 22 help texts and 56 fix titles)."""

    def __init__(self, sources):
        self.lines = SourceLines(sources)
        self.heading = cache(_heading)
        self.said = cache(_said)
        self.fix_title = cache(_fix_title)

    def __call__(self, f: Finding, suppressed: bool) -> str:
        return _finding(f, self)


def chunks(result, *, show_suppressed: bool = False, **_) -> Iterator[str]:
    """The text of `render` in runs of sections (report.pieces.in_runs), for the caller to write as
    they come: the 2,125-file tree's 9.4 MB page joined whole, then copied again for its last
    line break, cost the process writing it 13-24 ms of CPU and 4,000-7,000 page faults, in
    runs 6 ms and none (measured in one process)."""
    findings = shown(result, show_suppressed)
    summary = result.summary()
    by_severity = Counter(str(f.severity) for f in result.findings)
    yield "\n".join([
        "<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
        "<title>draguard report</title>", f"<style>{STYLE}</style></head><body>",
        "<h1>draguard report</h1>",
        f'<p class="muted">{summary["objects"]} objects in {summary["files"]} files, Kubernetes '
        f"{escape(result.config.kube_version)}; {summary['fixable']} findings have a fix</p>",
        '<p class="counts">' + "".join(f'<span class="{s}">{by_severity.get(s, 0)} {s}</span>'
                                       for s in ("error", "warning", "info")) + "</p>",
        _table("By category", Counter(f.category for f in result.findings)),
        _table("By rule", Counter(f.rule for f in result.findings)),
        _table("By file", Counter(f.file for f in result.findings)),
        "<h2>Findings</h2>",
    ]) + "\n"
    empty = True
    for run in in_runs(each(result, findings, _Piece(result.sources))):
        empty = False
        yield "\n".join(run) + "\n"
    if empty:
        yield '<p class="muted">No findings.</p>\n'
    yield "</body></html>\n"


def render(result, *, show_suppressed: bool = False, **_) -> str:
    return "".join(chunks(result, show_suppressed=show_suppressed))


def _table(title: str, counts: Counter) -> str:
    if not counts:
        return ""
    rows = "".join(f"<tr><td>{escape(str(name))}</td><td>{n}</td></tr>" for name, n in counts.most_common())
    return f"<h2>{escape(title)}</h2><table><tr><th></th><th>findings</th></tr>{rows}</table>"


def _finding(f: Finding, piece: _Piece) -> str:
    where = f"{f.file}:{f.line}:{f.column}" if f.location.line else f.file
    out = [f'{piece.heading(f.severity, f.rule)}<span class="where">{escape(where)}</span></div>',
           f"<p>{piece.said(f.message)}</p>"]
    if f.obj.kind:
        out.append(f'<p class="muted">in {escape(str(f.obj))}</p>')
    excerpt = _excerpt(f, piece.lines)
    if excerpt:
        out.append(f"<pre>{excerpt}</pre>")
    if f.help:
        out.append(f"<p>Help: {piece.said(f.help)}</p>")
    if f.fix:
        out.append(piece.fix_title(f.fix.applicability, f.fix.title))
        diff = _fix_diff(f, piece.lines)
        if diff:
            out.append(f"<pre>{_marked(escape(diff))}</pre>")
    out.append("</div>")
    return "\n".join(out)


def _heading(severity, rule: str) -> str:
    return f'<div class="finding"><div><span class="sev {severity}">{severity}</span> <b>{escape(rule)}</b> '


def _said(text: str) -> str:
    """A message or help text as the page shows it: a sentence, escaped."""
    return escape(sentence(text))


def _fix_title(applicability, title: str) -> str:
    return f"<p>Fix ({applicability}): {escape(title)}</p>"


def _excerpt(f: Finding, lines: SourceLines) -> str:
    if not f.location.line:
        return ""
    line = f.line
    shown = [f"{'>' if number == line else ' '}{number:>5} | {text}"
             for number, text in lines.around(f.file, line - 2, line + 2)]
    return escape("\n".join(shown))  # once for the excerpt: escape per line was a fifth of the report


def _fix_diff(f: Finding, lines: SourceLines) -> str:
    """The fix applied to the finding's document of the loaded text, as a unified diff. The
    document is cut out of the text (from the line it starts on to the next one's) and
    spliced alone, as `draguard fix` splices it (fix.splice), and the diff written from the
    splice's own replacements at the document's lines (fix.hunks): splicing the whole text
    and parsing it twice for each finding cost the file's size per finding, quadratic in a
    large file, and comparing the texts again cost more than the rest of the report. It is
    shown, not written: `draguard fix` verifies what it writes. A fix that only adds a key
    (most of them) has its diff written straight from the edit and the tree instead
    (fix.added_keys), and most others from the splice's replacements on the tree
    (fix.located_diff): the same bytes."""
    text, document, fix = lines.text(f.file), f.location.document, f.fix
    span = lines.document_span(f.file, document) if text is not None and document is not None else None
    if span is None or text is None or fix is None:
        return ""
    start, end, line = span
    tree = _block_read(f, line)
    edits = fix.edits  # unpacked each time it is read (core.fixes.Fix)
    diff = added_keys.added_key_diff(f.file, text, start, end, line, edits, tree)
    if diff is None:
        diff = located_diff.located_diff(f.file, text, start, end, line, edits, tree)
    if diff is not None:
        return diff
    try:
        fixed, steps = splice.splice_document(text[start:end], edits, tree)
    except (splice.NotSpliceable, EditError):
        return "".join(f"{edit.op} {'.'.join(map(str, edit.path))}\n" for edit in edits)
    return hunks.splice_diff(f.file, text, start, end, fixed, steps, line)


def _block_read(f: Finding, line: int) -> BlockMap | None:
    """The block-read root of the finding's document where the object judged is that
    document, its tree held and read by sources.blockyaml from the file's own lines (no
    chart's or List's positions, no tree let go and parsed again), starting on `line`: the
    splice locates the fix on it (fix.located) instead of composing the document again."""
    judged: Any = f.judged  # a model.manifest.Manifest
    if judged is None or judged.reread is not None or judged.locate is not None \
            or judged.item is not None or judged.document != f.location.document \
            or judged.source.display != f.file:
        return None
    return block_root(judged.data, line)


_ADD, _DEL, _END = '<span class="add">', '<span class="del">', "</span>"


def _marked(diff: str) -> str:
    """An escaped diff with its added and removed lines in spans; its header (the first two
    lines, `---` and `+++`) as it is: a line taken out that starts with `-- ` is marked too.
    One pass over its lines in a list (two regular-expression substitutions that called a
    function per line took 2.4 times as long)."""
    first = diff.find("\n", diff.find("\n") + 1) + 1 if diff.startswith("--- ") else 0
    return diff[:first] + "\n".join([_ADD + line + _END if line[:1] == "+" else _DEL + line + _END
                                     if line[:1] == "-" else line for line in diff[first:].split("\n")])
