"""Reading draguard's reports in tests."""

from __future__ import annotations

import json


class CliResult:
    def __init__(self, code: int, out: str, err: str):
        self.code, self.out, self.err = code, out, err

    @property
    def json(self) -> dict:
        return json.loads(self.out)


def rules_of(report: dict) -> list[str]:
    return [f["rule"] for f in report["findings"]]
