"""A progress bar on stderr for long runs, through tqdm: only on a terminal and only beside
the text report (never with JSON, SARIF or any machine format, never when stderr is piped),
and only once a stage has run for half a second, so short runs show nothing."""

from __future__ import annotations

import sys


_UNITS = {"reading": " files", "rolling out": " pods"}


class TerminalProgress:
    """progress(stage, total) -> advance(): one bar per stage, closed when the next begins."""

    def __init__(self, stream):
        self.stream, self.bar = stream, None

    def __call__(self, stage: str, total: int):
        from tqdm import tqdm

        self.close()
        self.bar = tqdm(total=total, desc=stage, unit=_UNITS.get(stage, " objects"),
                        file=self.stream, delay=0.5, leave=False, dynamic_ncols=True)
        return self.bar.update

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None


def for_run(report_format: str, stream=None) -> TerminalProgress | None:
    stream = stream or sys.stderr
    if report_format != "text" or not stream.isatty():
        return None
    return TerminalProgress(stream)
