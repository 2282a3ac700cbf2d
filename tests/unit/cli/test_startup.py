"""Commands import only what they use: listing or explaining rules loads neither the CEL
engine, protobuf, the schema validator nor semver (a fresh interpreter each time)."""

import subprocess
import sys

import pytest

HEAVY = ("cel_expr_python", "google.protobuf", "jsonschema_rs", "semver")
PROBE = ("import io, contextlib, sys\nfrom draguard.cli import main\n"
         "with contextlib.redirect_stdout(io.StringIO()):\n    code = main(sys.argv[1:])\n"
         f"print(code, sorted(m for m in {HEAVY!r} if m in sys.modules))")


def loaded_by(*argv) -> str:
    return subprocess.run([sys.executable, "-c", PROBE, *argv], capture_output=True, text=True, check=True).stdout


@pytest.mark.parametrize("argv", [("rules",), ("rules", "-f", "json"), ("explain", "cel-invalid"), ("--version",)])
def test_catalog_commands_stay_light(argv):
    assert loaded_by(*argv).split(" ", 1)[1].strip() == "[]"


def test_lint_loads_what_it_needs():
    assert "cel_expr_python" in loaded_by("lint", "--no-config", "examples/dra-inference")
