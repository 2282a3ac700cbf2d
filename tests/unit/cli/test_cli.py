import gc
import io
import json
import os
import shutil
import subprocess
import sys

import pytest
from support.paths import EXAMPLES, ROOT

from draguard.cli import ended, main

BAD = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: a}\nspec: {template: {}}\n"


def test_python_dash_m_runs_the_same_cli():
    done = subprocess.run([sys.executable, "-m", "draguard", "rules", "-f", "json"], capture_output=True,
                          text=True, cwd=ROOT)
    assert done.returncode == 0
    assert "schema-invalid" in {r["id"] for r in json.loads(done.stdout)}


def test_exit_codes(cli, tmp_path):
    good = tmp_path / "good.yaml"
    good.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n")
    assert cli("lint", good, "--no-config").code == 0
    assert cli("lint", "-", "--no-config", stdin=BAD).code == 1
    assert cli("lint", tmp_path / "missing.yaml").code == 2
    assert cli("lint", good, "--kube-version", "1.20").code == 2
    assert cli("lint", good, "--format", "xml").code == 2
    assert cli("explain", "no-such-rule").code == 2


def test_bare_paths_mean_lint(cli):
    result = cli(EXAMPLES / "dra-inference", "--color", "never")
    assert result.code == 0 and "objects in" in result.out


def test_text_report_shows_source_line_and_caret(cli):
    result = cli("lint", "-", "--no-config", "--color", "never", stdin=BAD)
    lines = result.out.splitlines()
    index = next(i for i, line in enumerate(lines) if line.startswith("-:4:1: error [schema-invalid]"))
    assert lines[index + 1] == "      4 | spec: {template: {}}"
    assert lines[index + 2] == "        | ^"


def test_colour_only_when_asked_or_on_a_tty(cli):
    assert "\x1b[" not in cli("lint", "-", "--no-config", stdin=BAD).out
    assert "\x1b[" in cli("lint", "-", "--no-config", "--color", "always", stdin=BAD).out


def test_output_file_is_written(cli, tmp_path):
    target = tmp_path / "report.json"
    result = cli("lint", "-", "--no-config", "-f", "json", "-o", target, stdin=BAD)
    assert result.code == 1 and result.out == ""
    assert json.loads(target.read_text())["summary"]["errors"] == 1


def test_rules_and_explain(cli):
    listing = cli("rules")
    assert listing.code == 0 and "schema-invalid" in listing.out
    doc = cli("explain", "schema-invalid")
    assert doc.code == 0 and doc.out.startswith("# `schema-invalid`") and "## Why" in doc.out


def test_examples_main_job(cli):
    """The README's first command: the compliant example passes on its own."""
    assert cli("lint", EXAMPLES / "dra-inference", "-f", "json").json["summary"]["total"] == 0


def test_a_tree_whose_manifests_are_all_in_hidden_folders_says_where_they_are(cli, tmp_path):
    """A walk skips hidden folders (the README says so); a repository whose only objects sit
    in `.tekton` read as empty without a word about them."""
    (tmp_path / ".tekton").mkdir()
    (tmp_path / ".tekton" / "task.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")
    (tmp_path / ".git").mkdir()
    result = cli("lint", tmp_path, "--no-config")
    assert result.code == 2 and f"a walk skips hidden folders ({tmp_path}/.tekton): name one to check it" in result.err
    assert cli("lint", tmp_path / ".tekton", "--no-config").code == 0


def test_a_run_that_checks_no_object_exits_2_unless_allowed(cli, tmp_path):
    (tmp_path / "values.yaml").write_text("replicas: 3\n")
    (tmp_path / "blob.yaml").write_bytes(b"\x00\x01binary")
    result = cli("lint", tmp_path, "--no-config")
    assert result.code == 2 and "no Kubernetes object was checked in 2 file(s) (1 refused" in result.err
    assert "0 objects in 2 files (1 refused)" in result.out  # the report still says why
    assert cli("lint", tmp_path, "--no-config", "--allow-empty").code == 1  # the refused file is an error
    assert cli("lint", tmp_path / "values.yaml", "--no-config", "--allow-empty").code == 0
    empty = tmp_path / "empty"
    empty.mkdir()
    assert cli("lint", empty, "--no-config").code == 2
    summary = cli("lint", tmp_path, "--no-config", "--allow-empty", "-f", "json").json["summary"]
    assert (summary["files"], summary["refused"], summary["objects"]) == (2, 1, 0)


def test_options_and_operands_mix_in_any_order(cli, tmp_path):
    """argparse binds operands at their first run: `simulate rollout --inventory INV
    deploy.yaml` was refused ("unrecognized arguments: deploy.yaml")."""
    rules = ROOT / "tests" / "rules" / "rollout-deadlock"
    inventory, deployment = rules / "inventory.yaml", rules / "fail.yaml"
    first = cli("simulate", "rollout", deployment, "--inventory", inventory, "-f", "json")
    mixed = cli("simulate", "rollout", "--inventory", inventory, deployment, "-f", "json")
    assert mixed.code == first.code and json.loads(mixed.out) == json.loads(first.out)
    both = cli("lint", EXAMPLES / "dra-inference", "-f", "json", EXAMPLES / "legacy-multitenant", "--no-config")
    assert {f["file"].split("/")[-2] for f in json.loads(both.out)["findings"]} >= {"legacy-multitenant"}
    assert cli("inventory", "generate", "--help").code == 0  # a command with subcommands parses as before


def test_allocate_and_simulate_judge_for_the_cluster_the_project_config_names(cli, tmp_path):
    """As lint, fix and audit: the nearest .draguard.yaml gives the release, the gates and
    the inventory; the command line wins, and --no-config ignores the file."""
    rules = ROOT / "tests" / "rules" / "rollout-deadlock"
    shutil.copy(rules / "inventory.yaml", tmp_path / "pool.yaml")
    shutil.copy(rules / "fail.yaml", tmp_path / "deploy.yaml")
    (tmp_path / ".draguard.yaml").write_text('kubeVersion: "1.33"\ninventory: [pool.yaml]\n')
    claims = tmp_path / "claims.yaml"
    claims.write_text("apiVersion: resource.k8s.io/v1beta1\nkind: ResourceClaim\nmetadata: {name: c}\nspec:\n"
                      "  devices:\n    requests:\n    - {name: gpu, deviceClassName: gpu.nvidia.com}\n")
    configured = cli("allocate", claims, "-f", "json")
    assert configured.code in (0, 1) and configured.json[0]["upstreamVariant"] == "stable"  # 1.33's allocator
    assert cli("allocate", claims, "-f", "json", "--kube-version", "1.37").json[0]["upstreamVariant"] == "incubating"
    refused = cli("allocate", claims, "--no-config")
    assert refused.code == 2 and "needs an inventory" in refused.err
    rollout = cli("simulate", "rollout", tmp_path / "deploy.yaml", "-f", "json")
    given = cli("simulate", "rollout", tmp_path / "deploy.yaml", "--inventory", tmp_path / "pool.yaml",
                "--kube-version", "1.33", "--no-config", "-f", "json")
    assert rollout.code == given.code == 1 and json.loads(rollout.out) == json.loads(given.out)
    assert cli("simulate", "rollout", tmp_path / "deploy.yaml", "--no-config").code == 2


class _Ended(Exception):
    """os._exit, raised instead of ending the test's process."""


def _ending(monkeypatch):
    """What main(whole_process=True) ends the process with, os._exit replaced: the statuses
    passed to it, each with whether stdout was flushed first."""
    statuses = []
    out = io.StringIO()
    flushed = []
    monkeypatch.setattr(out, "flush", lambda: flushed.append(True))
    monkeypatch.setattr(sys, "stdout", out)

    def exit_now(status):
        statuses.append((status, bool(flushed)))
        raise _Ended

    monkeypatch.setattr(os, "_exit", exit_now)
    return statuses


def test_a_whole_process_lint_ends_the_process_itself_once_its_output_is_flushed(monkeypatch, tmp_path):
    statuses = _ending(monkeypatch)
    bad = _lint_ended(tmp_path)
    assert statuses == [(1, True)]
    assert main(["rules", "-f", "json"], whole_process=True) == 0  # not a lint or a fix: it returns
    assert main(["lint", str(bad), "--no-config"]) == 1  # main() in a process that goes on returns too
    assert statuses == [(1, True)]


def test_a_whole_process_lint_leaves_its_result_to_go_with_the_process(monkeypatch, tmp_path):
    """Its findings and the trees they point into are not freed one by one as the command
    returns (cli.left_to_the_end); a lint in a process that goes on keeps nothing."""
    from draguard import cli
    from draguard.engine.result import LintResult

    _ending(monkeypatch)
    monkeypatch.setattr(cli, "_LEFT", [])
    bad = _lint_ended(tmp_path)
    (left,) = cli._LEFT
    assert isinstance(left, LintResult) and left.findings
    assert main(["lint", str(bad), "--no-config"]) == 1
    assert len(cli._LEFT) == 1


def test_a_whole_process_simulation_runs_with_the_collector_paused_and_ends_the_process(monkeypatch):
    """Its inventory and world live to the end: enabled again after their paused sections,
    the collector's full passes walked them while the report was written."""
    from draguard.cli import simulate as command

    statuses = _ending(monkeypatch)
    rules = ROOT / "tests" / "rules" / "rollout-deadlock"
    collecting = []
    report = command._report
    monkeypatch.setattr(command, "_report", lambda *args: collecting.append(gc.isenabled()) or report(*args))
    was = gc.isenabled()
    try:
        with pytest.raises(_Ended):
            main(["simulate", "rollout", str(rules / "fail.yaml"), "--inventory", str(rules / "inventory.yaml"),
                  "--no-config"], whole_process=True)
    finally:
        if was:
            gc.enable()
    assert collecting == [False] and statuses == [(1, True)]


def _lint_ended(tmp_path):
    """A whole-process lint of a file with a finding, run to its end (_ending's os._exit);
    the collector it turns off turned on again. The file linted."""
    bad = tmp_path / "bad.yaml"
    bad.write_text(BAD)
    was = gc.isenabled()
    try:
        with pytest.raises(_Ended):
            main(["lint", str(bad), "--no-config"], whole_process=True)
    finally:
        if was:
            gc.enable()
    return bad


def test_a_lint_whose_output_cannot_be_flushed_returns_its_status(monkeypatch, tmp_path):
    statuses = _ending(monkeypatch)

    def broken():
        raise BrokenPipeError

    monkeypatch.setattr(sys.stdout, "flush", broken)
    assert ended(1) is None
    assert statuses == []


def test_the_process_ends_with_the_lints_status_and_all_of_its_report(tmp_path):
    stream = tmp_path / "pods.yaml"
    stream.write_text("---\n".join(BAD.replace("name: a", f"name: a{n}") for n in range(300)))
    done = subprocess.run([sys.executable, "-m", "draguard", "lint", str(stream), "--no-config", "-f", "json"],
                          capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 1
    assert json.loads(done.stdout)["summary"]["objects"] == 300
