"""Fixtures shared by every test: run the CLI in-process, lint text from stdin."""

from __future__ import annotations

import io
import os
import sys

import pytest

from draguard.cli import main
from support import harness
from support.reports import CliResult


def pytest_configure(config):
    """The harness builds show their progress past the output capture (support.harness)."""
    harness.CONFIG = config


def pytest_addoption(parser):
    parser.addoption("--scenarios", type=int, default=2000,
                     help="generated scenarios compared with the upstream allocator (test_oracle)")
    parser.addoption("--selectors", type=int, default=2000,
                     help="generated CEL selectors compared with upstream's compiler (test_cel_oracle)")
    parser.addoption("--update-goldens", action="store_true",
                     help="rewrite tests/rules/<rule-id>/ from the rules' examples and current behaviour")


@pytest.fixture(scope="session", autouse=True)
def user_cache(tmp_path_factory):
    """draguard's per-user cache (core.usercache) in a folder of the run's, not the home of
    whoever runs the tests; processes the tests start inherit it."""
    before = os.environ.get("DRAGUARD_CACHE_DIR")
    os.environ["DRAGUARD_CACHE_DIR"] = str(tmp_path_factory.mktemp("draguard-cache"))
    yield
    if before is None:
        del os.environ["DRAGUARD_CACHE_DIR"]
    else:
        os.environ["DRAGUARD_CACHE_DIR"] = before


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
