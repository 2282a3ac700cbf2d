"""GitHub Actions workflow commands: findings appear as annotations on the pull request."""

from __future__ import annotations

from ..core.finding import Severity
from .pieces import each, made_in_part
from .prose import with_help

_COMMANDS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def _line(f, suppressed: bool = False) -> str:
    """A finding's annotation command (report.pieces: a suppressed one is never shown)."""
    return (f"::{_COMMANDS[f.severity]} file={_escape_property(f.file)},line={f.line},col={f.column},"
            f"title={_escape_property(f.rule)}::{_escape_data(with_help(f.message, f.help))}")


def pieces(findings, suppressed, sources, **_):
    """What a `lint --jobs` part renders of its findings (report.pieces)."""
    return made_in_part(findings, suppressed, sources, _line, False)


def render(result, **_) -> str:
    lines = list(each(result, ((f, False) for f in result.findings), _line))
    return "\n".join(lines) + ("\n" if lines else "")
