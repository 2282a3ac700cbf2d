"""`--format json`: the documented contract, version 2 (README: "JSON report")."""

from __future__ import annotations

import json

VERSION = 2


def render(result, *, show_suppressed: bool = False, **_) -> str:
    document = {
        "version": VERSION,
        "findings": [f.as_json() for f in result.findings],
        "summary": result.summary(),
    }
    if show_suppressed:
        document["suppressed"] = [dict(f.as_json(), reason=f.suppressed_by) for f in result.suppressed]
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"
