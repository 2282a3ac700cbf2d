"""The GitHub Action: action.yml's lint step is action/run.sh, run here as the runner would,
with the inputs as DRAGUARD_* variables: SARIF written for code scanning, annotations on
stdout, the exit status by fail-on; and every input action.yml declares reaches the script."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import yaml

from support.paths import EXAMPLES, ROOT

SCRIPT = ROOT / "action" / "run.sh"


def step(tmp_path, **inputs):
    env = {**os.environ, "DRAGUARD_COMMAND": f"{sys.executable} -m draguard",
           "DRAGUARD_SARIF": str(tmp_path / "out.sarif"), **inputs}
    return subprocess.run(["bash", str(SCRIPT)], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)


def test_a_legacy_manifest_fails_with_annotations_and_a_sarif_report(tmp_path):
    done = step(tmp_path, DRAGUARD_PATHS=str(EXAMPLES / "legacy-multitenant"), DRAGUARD_KUBE_VERSION="1.34")
    assert done.returncode == 1, done.stderr
    assert "::error file=" in done.stdout and "legacy-gpu-resource" in done.stdout
    sarif = json.loads((tmp_path / "out.sarif").read_text())
    assert sarif["version"] == "2.1.0" and sarif["runs"][0]["results"]


def test_the_compliant_example_passes_and_fail_on_decides(tmp_path):
    assert step(tmp_path, DRAGUARD_PATHS=str(EXAMPLES / "dra-inference")).returncode == 0
    legacy = str(EXAMPLES / "legacy-multitenant" / "shared-gpu.yaml")
    # only errors there: with fail-on info they fail too, and an unknown level is a usage error
    assert step(tmp_path, DRAGUARD_PATHS=legacy, DRAGUARD_FAIL_ON="info").returncode == 1
    assert step(tmp_path, DRAGUARD_PATHS=legacy, DRAGUARD_FAIL_ON="never").returncode == 2


def test_every_input_of_action_yml_reaches_the_script():
    action = yaml.safe_load((ROOT / "action.yml").read_text())
    lint = next(s for s in action["runs"]["steps"] if s.get("name") == "lint")
    wired = {value.split("inputs.")[1].rstrip(" }") for value in lint["env"].values()}
    assert wired | {"upload-sarif"} == set(action["inputs"])
    script = SCRIPT.read_text()
    assert all(name in script for name in lint["env"])


def test_globs_in_paths_are_expanded_and_one_that_matches_nothing_is_said(tmp_path):
    """`paths: examples/*/shared-gpu.yaml` as a workflow writes it: expanded by the script (it
    was passed on as a file name that does not exist); a glob that matches nothing is an error."""
    glob = str(EXAMPLES / "*" / "shared-gpu.yaml")
    done = step(tmp_path, DRAGUARD_PATHS=glob)
    assert done.returncode == 1 and "legacy-gpu-resource" in done.stdout, done.stdout + done.stderr
    missing = step(tmp_path, DRAGUARD_PATHS=str(EXAMPLES / "*" / "nothing-*.yaml"))
    assert missing.returncode == 2 and "no such file" in missing.stderr
