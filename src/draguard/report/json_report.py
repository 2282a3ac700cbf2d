"""`--format json`: the documented contract, version 2 (README: "JSON report")."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from ..core import jsonindent
from .pieces import each, made_in_part

VERSION = 2


def document(result, *, show_suppressed: bool = False) -> dict:
    """The report as data (what the MCP server returns; render prints it)."""
    out = {
        "version": VERSION,
        "findings": [f.as_json() for f in result.findings],
        "summary": result.summary(),
    }
    if show_suppressed:
        out["suppressed"] = [dict(f.as_json(), reason=f.suppressed_by) for f in result.suppressed]
    return out


def _item(finding, suppressed: bool) -> str:
    """A finding as it reads in the report's list (report.pieces)."""
    return _nested(dict(finding.as_json(), reason=finding.suppressed_by) if suppressed else finding.as_json(), 2)


def pieces(findings, suppressed, sources, *, show_suppressed: bool = False, **_):
    """What a `lint --jobs` part renders of its findings (report.pieces)."""
    return made_in_part(findings, suppressed, sources, _item, show_suppressed)


def chunks(result, *, show_suppressed: bool = False, **_) -> Iterator[str]:
    """The text of `render`, piece by piece: each finding made into data and encoded as it is
    written, so that neither the report's data nor its text is ever held whole (for 3 MB of
    pods they were 8 times the input, the largest part of a run's peak)."""
    yield f'{{\n  "version": {VERSION},\n  "findings": '
    yield from _items(each(result, ((f, False) for f in result.findings), _item))
    yield ',\n  "summary": ' + _nested(result.summary(), 1)
    if show_suppressed:
        yield ',\n  "suppressed": '
        yield from _items(each(result, ((f, True) for f in result.suppressed), _item))
    yield "\n}\n"


def render(result, *, show_suppressed: bool = False, **_) -> str:
    return "".join(chunks(result, show_suppressed=show_suppressed))


def _items(items: Iterable[str]) -> Iterator[str]:
    """A list at the document's second level, as json.dumps with indent=2 writes it (each
    item encoded at that level: _item)."""
    before = "[\n    "
    for item in items:
        yield before + item
        before = ",\n    "
    yield "[]" if before == "[\n    " else "\n  ]"


def _nested(value: object, depth: int) -> str:
    """`value` encoded as it reads `depth` levels down (core.jsonindent: json.dumps' bytes with
    the C encoder)."""
    return jsonindent.dumps(value, level=depth)
