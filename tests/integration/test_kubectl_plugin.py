"""`kubectl draguard ...`: the package installs a `kubectl-draguard` executable, and kubectl's
own plugin discovery (a `kubectl-<name>` file on PATH) finds it and passes the arguments on."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from support.paths import EXAMPLES

BIN = Path(sys.executable).parent


@pytest.fixture
def kubectl():
    found = shutil.which("kubectl")
    if found is None:
        pytest.skip("kubectl is not installed")
    return found


def run(kubectl, *args):
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}
    return subprocess.run([kubectl, *args], capture_output=True, text=True, env=env, timeout=120)


def test_the_plugin_is_installed_with_the_package():
    assert (BIN / "kubectl-draguard").exists()


def test_kubectl_discovers_the_plugin(kubectl):
    listed = run(kubectl, "plugin", "list")
    assert str(BIN / "kubectl-draguard") in listed.stdout, listed.stdout + listed.stderr


def test_kubectl_draguard_runs_the_cli(kubectl):
    assert run(kubectl, "draguard", "--version").stdout.startswith("draguard ")
    done = run(kubectl, "draguard", "lint", "--no-config", str(EXAMPLES / "legacy-multitenant"))
    assert done.returncode == 1 and "[legacy-gpu-resource]" in done.stdout
