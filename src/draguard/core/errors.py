"""Errors that stop a command, and the one set of exit codes every command uses."""

from __future__ import annotations

EXIT_OK = 0  # nothing at or above --fail-on (or: the claims fit, the check passed)
EXIT_FINDINGS = 1  # findings at or above --fail-on (or: a claim does not fit)
EXIT_ERROR = 2  # usage, input or configuration error, or a failure of draguard itself


class UsageError(Exception):
    """Input, configuration or arguments the command cannot run with (exit status 2). The
    message says where (file:line:column when there is one) and what to do."""


class InputError(UsageError):
    """An input that cannot be used at all: a missing path, an unreadable inventory."""


class ConfigError(UsageError):
    """A `.draguard.yaml` the tool cannot run with."""
