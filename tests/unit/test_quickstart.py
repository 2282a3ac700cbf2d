"""The README's quick start, run as written on the bundled legacy Deployment: its five steps'
code blocks, taken from the README itself, each run by bash in a fresh folder where `app.yaml`
is that Deployment and `draguard` is this checkout's. Step 2 finds the legacy GPU limits, step
3's final lint is clean of errors, and step 5's rollout completes on the pool of step 4."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import textwrap

from support.paths import EXAMPLES, ROOT

SRC = ROOT / "src"


def _steps() -> list[str]:
    """The shell of each numbered step of the README's quick start, in order."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("[start:quickstart]", 1)[1].split("[end:quickstart]", 1)[0]
    steps = re.split(r"^\d\. ", section, flags=re.M)[1:]
    scripts = []
    for step in steps:
        code = [line for line in step.splitlines() if line.startswith("        ")]
        scripts.append(textwrap.dedent("\n".join(code)) + "\n")
    return scripts


def test_the_quick_start_runs_as_written(tmp_path):
    steps = _steps()
    assert len(steps) == 5 and all(s.strip() for s in steps)
    shutil.copy(EXAMPLES / "legacy-multitenant" / "shared-gpu.yaml", tmp_path / "app.yaml")
    shim = tmp_path / "bin" / "draguard"
    shim.parent.mkdir()
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m draguard "$@"\n')
    shim.chmod(0o755)
    env = {**os.environ, "PATH": f"{shim.parent}{os.pathsep}{os.environ['PATH']}",
           "PYTHONPATH": os.pathsep.join(filter(None, [str(SRC), os.environ.get("PYTHONPATH")]))}
    done = [subprocess.run(["bash", "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
            for script in steps]
    choose, lint, fix, pool, simulate = done
    assert choose.returncode == 0 and (tmp_path / ".draguard.yaml").read_text() == 'kubeVersion: "1.34"\n'
    assert lint.returncode == 1 and "[legacy-gpu-resource]" in lint.stdout
    assert fix.returncode == 0, fix.stdout + fix.stderr
    assert "+kind: ResourceClaimTemplate" in fix.stdout and " 0 errors" in fix.stdout.splitlines()[-1]
    assert "apiVersion: resource.k8s.io/v1\n" in (tmp_path / "app.yaml").read_text()
    assert pool.returncode == 0 and "kind: ResourceSlice" in (tmp_path / "inventory.yaml").read_text()
    assert simulate.returncode == 0 and "rollout complete" in simulate.stdout, simulate.stdout + simulate.stderr
