"""Report writers. Each takes a `LintResult` and returns the text to print; a writer's
module is imported only when it is used."""

from __future__ import annotations

from importlib import import_module

FORMAT_NAMES = ("text", "json", "sarif", "junit", "github", "html")
_MODULES = {"text": "text", "json": "json_report", "sarif": "sarif", "junit": "junit", "github": "github",
            "html": "html"}


def renderer(name: str):
    return import_module(f"{__name__}.{_MODULES[name]}").render
