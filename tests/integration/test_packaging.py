"""The package as users get it: `python -m build` makes a wheel and an sdist without warnings,
and the wheel installed into a fresh virtual environment runs every console script."""

from __future__ import annotations

import subprocess
import sys
import venv

import pytest

from support.paths import EXAMPLES, ROOT

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    pytest.importorskip("build")
    out = tmp_path_factory.mktemp("dist")
    done = subprocess.run([sys.executable, "-m", "build", "--outdir", str(out), str(ROOT)], capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return out, done.stdout + done.stderr


def test_wheel_and_sdist_build_cleanly(built):
    out, log = built
    assert sorted(p.suffix for p in out.iterdir()) == [".gz", ".whl"]
    assert "deprecated" not in log.lower()


def test_the_wheel_installs_into_a_fresh_environment_and_runs(built, tmp_path):
    out, _ = built
    env_dir = tmp_path / "env"
    venv.create(env_dir, with_pip=True)
    bin_dir = env_dir / "bin"
    [wheel] = out.glob("*.whl")
    install = subprocess.run([str(bin_dir / "pip"), "install", "--quiet", f"{wheel}[teardown]"], capture_output=True,
                             text=True, timeout=600)
    assert install.returncode == 0, install.stderr[-2000:]
    assert subprocess.run([str(bin_dir / "draguard"), "--version"], capture_output=True, text=True).stdout.startswith(
        "draguard ")
    lint = subprocess.run([str(bin_dir / "draguard"), "lint", "--no-config", str(EXAMPLES / "dra-inference")],
                          capture_output=True, text=True)
    assert lint.returncode == 0, lint.stdout + lint.stderr
    assert "vllm" in subprocess.run([str(bin_dir / "draguard-teardown"), "servers"], capture_output=True,
                                    text=True).stdout
    assert subprocess.run([str(bin_dir / "kubectl-draguard"), "rules"], capture_output=True).returncode == 0
