"""Shared helpers: run the CLI in-process, lint text, find the shared corpus."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

from draguard.cli import main

ROOT = Path(__file__).resolve().parents[1]


def pytest_addoption(parser):
    parser.addoption("--scenarios", type=int, default=2000,
                     help="generated scenarios compared with the upstream allocator (test_oracle)")
CORPUS = ROOT.parent / "shared" / "corpus"
EXAMPLES = ROOT / "examples"


def corpus_files() -> list[Path]:
    if not CORPUS.is_dir():
        pytest.skip(f"shared corpus not found at {CORPUS}")
    return sorted(p for p in CORPUS.rglob("*") if p.suffix in (".yaml", ".yml", ".json"))


class CliResult:
    def __init__(self, code: int, out: str, err: str):
        self.code, self.out, self.err = code, out, err

    @property
    def json(self) -> dict:
        return json.loads(self.out)


@pytest.fixture
def cli(capsys, monkeypatch):
    """cli(*args, stdin=None) -> CliResult, running `draguard` in this process."""

    def run(*args, stdin: str | bytes | None = None) -> CliResult:
        if stdin is not None:
            data = stdin.encode() if isinstance(stdin, str) else stdin
            monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
        capsys.readouterr()
        code = main([str(a) for a in args])
        captured = capsys.readouterr()
        return CliResult(code, captured.out, captured.err)

    return run


@pytest.fixture
def lint_json(cli):
    """lint_json(yaml_text, *extra_args) -> the JSON report of linting that text from stdin."""

    def run(text: str, *args) -> dict:
        result = cli("lint", "-", "--format", "json", "--no-config", *args, stdin=text)
        assert result.code in (0, 1), result.err
        return result.json

    return run


def rules_of(report: dict) -> list[str]:
    return [f["rule"] for f in report["findings"]]
