"""`--format json`: the documented contract, version 2 (README: "JSON report")."""

from __future__ import annotations

import io
import json

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


#: json.dumps with an indent joins a list of every chunk it encodes (millions in a large run:
#: 120 MiB over the findings themselves for 3 MB of pods); the same chunks written one by one
#: into a buffer cost the text alone
_ENCODER = json.JSONEncoder(indent=2, ensure_ascii=False)


def render(result, *, show_suppressed: bool = False, **_) -> str:
    out = io.StringIO()
    for chunk in _ENCODER.iterencode(document(result, show_suppressed=show_suppressed)):
        out.write(chunk)
    out.write("\n")
    return out.getvalue()
