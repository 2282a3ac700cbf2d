"""The package as users get it and as the release workflow (.github/workflows/release.yml)
makes it: `python -m build` makes a wheel and an sdist without warnings, both pass `twine check
--strict` and carry the LICENSE, the wheel installed into a fresh virtual environment runs every
console script, `pipx install` of the wheel (the README's install) gives a working `draguard`,
and the chart packages with the real helm."""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
import venv
import zipfile

import pytest

from support.paths import EXAMPLES, ROOT
from support.renderers import renderers_dir

pytestmark = pytest.mark.packaging


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
                             text=True, timeout=600, env=_outside())
    assert install.returncode == 0, install.stderr[-2000:]
    assert subprocess.run([str(bin_dir / "draguard"), "--version"], capture_output=True, text=True).stdout.startswith(
        "draguard ")
    lint = subprocess.run([str(bin_dir / "draguard"), "lint", "--no-config", str(EXAMPLES / "dra-inference")],
                          capture_output=True, text=True)
    assert lint.returncode == 0, lint.stdout + lint.stderr
    assert "vllm" in subprocess.run([str(bin_dir / "draguard-teardown"), "servers"], capture_output=True,
                                    text=True).stdout
    assert subprocess.run([str(bin_dir / "kubectl-draguard"), "rules"], capture_output=True).returncode == 0


def test_twine_passes_both_and_both_carry_the_license(built):
    out, _ = built
    pytest.importorskip("twine")
    check = subprocess.run([sys.executable, "-m", "twine", "check", "--strict", *map(str, sorted(out.iterdir()))],
                           capture_output=True, text=True, timeout=300)
    assert check.returncode == 0 and check.stdout.count("PASSED") == 2, check.stdout + check.stderr
    [wheel], [sdist] = out.glob("*.whl"), out.glob("*.tar.gz")
    with zipfile.ZipFile(wheel) as archive:
        metadata = next(archive.read(n).decode() for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        licence = [n for n in archive.namelist() if n.endswith("licenses/LICENSE")]
        assert licence and archive.read(licence[0]) == (ROOT / "LICENSE").read_bytes()
    assert "License-Expression: Apache-2.0" in metadata and "License-File: LICENSE" in metadata
    with tarfile.open(sdist) as archive:
        assert any(name.endswith("/LICENSE") for name in archive.getnames())


def test_pipx_installs_the_wheel_as_the_readme_says(built, tmp_path):
    """The README's install line, with pipx's folders in a temporary place."""
    out, _ = built
    pytest.importorskip("pipx")
    [wheel] = out.glob("*.whl")
    env = {**_outside(), "PIPX_HOME": str(tmp_path / "pipx"), "PIPX_BIN_DIR": str(tmp_path / "bin"),
           "PIPX_MAN_DIR": str(tmp_path / "man")}
    install = subprocess.run([sys.executable, "-m", "pipx", "install", str(wheel)], capture_output=True, text=True,
                             timeout=600, env=env)
    assert install.returncode == 0, install.stdout[-2000:] + install.stderr[-2000:]
    lint = subprocess.run([str(tmp_path / "bin" / "draguard"), "lint", "--no-config", str(EXAMPLES / "legacy-multitenant")],
                          capture_output=True, text=True, timeout=120)
    assert lint.returncode == 1 and "legacy-gpu-resource" in lint.stdout, lint.stdout + lint.stderr


def test_the_chart_packages_as_the_release_does(tmp_path):
    tools = renderers_dir()
    if tools is None:
        pytest.skip("helm is built from its Go module (harness/renderers): no Go here")
    chart = ROOT / "deploy" / "helm" / "draguard"
    done = subprocess.run([os.path.join(tools, "helm"), "package", str(chart), "--destination", str(tmp_path)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert [p.name for p in tmp_path.iterdir()] == [f"draguard-{_version()}.tgz"]


def _outside() -> dict:
    """The environment of an install as a user's: without a PYTHONPATH naming this checkout's
    src (whose draguard.egg-info makes pip take draguard as installed already, and skip it)."""
    return {name: value for name, value in os.environ.items() if name != "PYTHONPATH"}


def _version() -> str:
    import tomllib

    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
