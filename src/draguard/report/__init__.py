"""Report writers. Each takes a `LintResult` and returns the text to print; a writer's
module is imported only when it is used. A writer whose report grows with the input (json)
also gives it piece by piece (`chunks`), for a caller that writes it as it goes. Each writer
also makes its findings' texts alone (`pieces`: report.pieces), for `lint --jobs`'s parts
to make them where the findings were judged (`piece_renderer`)."""

from __future__ import annotations

from importlib import import_module

FORMAT_NAMES = ("text", "json", "sarif", "junit", "github", "html")
_MODULES = {"text": "text", "json": "json_report", "sarif": "sarif", "junit": "junit", "github": "github",
            "html": "html"}


def renderer(name: str):
    return import_module(f"{__name__}.{_MODULES[name]}").render


def chunk_renderer(name: str):
    """The writer `name` as a function giving the report's text piece by piece: its own
    `chunks` where it has one, else its whole text as one piece."""
    module = import_module(f"{__name__}.{_MODULES[name]}")
    chunks = getattr(module, "chunks", None)
    return chunks if chunks is not None else (lambda result, **options: (module.render(result, **options),))


def piece_renderer(name: str, **options):
    """The writer `name`'s `pieces` (report.pieces) with the report's `options`: a `lint
    --jobs` part calls it with its findings, its suppressed findings and its texts."""
    pieces = import_module(f"{__name__}.{_MODULES[name]}").pieces
    return lambda found, suppressed, sources: pieces(found, suppressed, sources, **options)
