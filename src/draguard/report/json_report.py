"""`--format json`: the documented contract, version 2 (README: "JSON report")."""

from __future__ import annotations

import io

from ..core import jsonindent

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


def render(result, *, show_suppressed: bool = False, **_) -> str:
    """The report as json.dumps(..., indent=2, ensure_ascii=False) writes it, written by
    core.jsonindent: the same bytes without the json module's pure-Python indenting walk,
    one string per finding into the buffer rather than a list of every token."""
    out = io.StringIO()
    jsonindent.write(document(result, show_suppressed=show_suppressed), out.write)
    out.write("\n")
    return out.getvalue()
