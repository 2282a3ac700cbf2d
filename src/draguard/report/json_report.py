"""`--format json`: the documented contract, version 2 (README: "JSON report")."""

from __future__ import annotations

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


def render(result, *, show_suppressed: bool = False, **_) -> str:
    return json.dumps(document(result, show_suppressed=show_suppressed), indent=2, ensure_ascii=False) + "\n"
