"""GitHub Actions workflow commands: findings appear as annotations on the pull request."""

from __future__ import annotations

from ..core.finding import Severity
from .prose import with_help

_COMMANDS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def render(result, **_) -> str:
    lines = []
    for f in result.findings:
        message = with_help(f.message, f.help)
        lines.append(
            f"::{_COMMANDS[f.severity]} file={_escape_property(f.file)},line={f.line},col={f.column},"
            f"title={_escape_property(f.rule)}::{_escape_data(message)}"
        )
    return "\n".join(lines) + ("\n" if lines else "")
