"""The hooks of .pre-commit-hooks.yaml, run by the real pre-commit (`try-repo`, which installs
draguard from this repository's HEAD into its own environment) on a throwaway git repository:
draguard-lint fails on a legacy manifest and names the rule; draguard-fix rewrites a file in
place and pre-commit reports the change."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from draguard.rules.examples import POD
from support.paths import EXAMPLES, ROOT

pytestmark = pytest.mark.packaging
PRE_COMMIT = Path(sys.executable).parent / "pre-commit"
TEMPLATE = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: one-gpu}
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly:
          deviceClassName: gpu.nvidia.com
"""


#: the rules' compliant pod, naming the template of template.yaml
WORKLOAD = textwrap.dedent(POD.removeprefix("---")).replace("mig-1g", "one-gpu")


@pytest.fixture(scope="module")
def repository(tmp_path_factory):
    if shutil.which("git") is None or not PRE_COMMIT.exists():
        pytest.skip("git or pre-commit is not installed")
    if subprocess.run(["git", "-C", str(ROOT), "cat-file", "-e", "HEAD:.pre-commit-hooks.yaml"]).returncode:
        pytest.skip("pre-commit installs hooks from a commit: .pre-commit-hooks.yaml is not committed yet")
    repo = tmp_path_factory.mktemp("hooked")
    (repo / "template.yaml").write_text(TEMPLATE)
    (repo / ".draguard.yaml").write_text("profile: strict\n")  # the template's fix (request-allocation-mode) is strict's
    shutil.copy(EXAMPLES / "legacy-multitenant" / "shared-gpu.yaml", repo / "legacy.yaml")
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}
    for command in (["git", "init", "-q"], ["git", "add", "."], ["git", "commit", "-qm", "manifests"]):
        subprocess.run(command, cwd=repo, env=env, check=True)
    return repo, {**env, "PRE_COMMIT_HOME": str(tmp_path_factory.mktemp("pre-commit-home"))}


def hook(repository, hook_id: str, *files: str):
    repo, env = repository
    return subprocess.run([str(PRE_COMMIT), "try-repo", str(ROOT), hook_id, "--files", *files], cwd=repo, env=env,
                          capture_output=True, text=True, timeout=600)


def test_draguard_lint_hook_fails_on_a_legacy_manifest(repository):
    done = hook(repository, "draguard-lint", "legacy.yaml")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "draguard lint" in done.stdout and "[legacy-gpu-resource]" in done.stdout


def test_a_changed_workload_is_judged_with_the_rest_of_the_repository_for_reference(repository):
    """Only the changed file is passed; the template it names lives in template.yaml,
    unchanged, and the legacy file's fault is not this commit's."""
    repo, _ = repository
    (repo / "workload.yaml").write_text(WORKLOAD)
    done = hook(repository, "draguard-lint", "workload.yaml")
    assert done.returncode == 0, done.stdout + done.stderr


def test_draguard_fix_hook_rewrites_in_place_and_pre_commit_shows_it(repository):
    repo, _ = repository
    done = hook(repository, "draguard-fix", "template.yaml")
    assert done.returncode == 1 and "files were modified by this hook" in done.stdout, done.stdout + done.stderr
    assert "allocationMode: ExactCount" in (repo / "template.yaml").read_text()
