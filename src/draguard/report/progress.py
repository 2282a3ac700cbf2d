"""A progress bar on stderr for long runs, through tqdm: only on a terminal and only beside
the text report (never with JSON, SARIF or any machine format, never when stderr is piped),
and only once a stage has run for half a second (DRAGUARD_PROGRESS_DELAY seconds), so short
runs show nothing."""

from __future__ import annotations

import os
import sys

DEFAULT_DELAY = 0.5


_UNITS = {"reading": " files", "rolling out": " pods"}


class TerminalProgress:
    """progress(stage, total) -> advance(): one bar per stage, closed when the next begins."""

    def __init__(self, stream):
        self.stream, self.bar = stream, None

    def __call__(self, stage: str, total: int):
        from tqdm import tqdm

        self.close()
        self.bar = tqdm(total=total, desc=stage, unit=_UNITS.get(stage, " objects"),
                        file=self.stream, delay=_delay(), leave=False, dynamic_ncols=True)
        return self.bar.update

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None


def _delay() -> float:
    """Seconds a stage runs before its bar shows: DRAGUARD_PROGRESS_DELAY (0: at once), else
    half a second; a value that is not a number of seconds is ignored."""
    try:
        delay = float(os.environ.get("DRAGUARD_PROGRESS_DELAY", DEFAULT_DELAY))
    except ValueError:
        return DEFAULT_DELAY
    return delay if delay >= 0 else DEFAULT_DELAY


def for_run(report_format: str, stream=None) -> TerminalProgress | None:
    stream = stream or sys.stderr
    if report_format != "text" or not stream.isatty():
        return None
    return TerminalProgress(stream)
