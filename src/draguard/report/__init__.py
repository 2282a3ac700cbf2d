"""Report writers. Each takes a `LintResult` and returns the text to print."""

from __future__ import annotations

from . import github, json_report, junit, sarif, text

FORMATS = {
    "text": text.render,
    "json": json_report.render,
    "sarif": sarif.render,
    "junit": junit.render,
    "github": github.render,
}
