"""Rule selection (issue: a quiet default): profiles, select / extendSelect / ignore on the
command line and in .draguard.yaml, and the rule lifecycle (preview, removed)."""

from __future__ import annotations

import pytest

from draguard.rules import REGISTRY
from draguard.rules.base import Lifecycle, Profile

#: a Deployment whose shared memory has no sizeLimit (strict: shm-size-limit) on a device-plugin
#: GPU with the default surge (recommended: rollout-surge, legacy-gpu-resource)
WORKLOAD = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: w}
spec:
  selector: {matchLabels: {a: b}}
  template:
    metadata: {labels: {a: b}}
    spec:
      containers:
      - name: c
        image: x
        resources: {limits: {nvidia.com/gpu: 1}}
        volumeMounts: [{name: shm, mountPath: /dev/shm}]
      volumes: [{name: shm, emptyDir: {medium: Memory}}]
"""


def rules(cli, *args, text=WORKLOAD) -> set:
    result = cli("lint", "-", "--no-config", "-f", "json", *args, stdin=text)
    assert result.code in (0, 1), result.err
    return {f["rule"] for f in result.json["findings"]}


def test_the_default_is_the_recommended_profile_and_strict_adds_the_rest(cli):
    assert rules(cli) == {"rollout-surge", "legacy-gpu-resource"}
    assert rules(cli, "--profile", "strict") == {"rollout-surge", "legacy-gpu-resource", "shm-size-limit"}
    strict_only = {r.id for r in REGISTRY if r.profile is Profile.STRICT}
    assert {"request-allocation-mode", "request-unpinned", "shm-size-limit", "rollout-pdb"} <= strict_only


def test_select_replaces_extend_select_adds_and_ignore_takes_away(cli):
    assert rules(cli, "--select", "rollout") == {"rollout-surge"}  # a category
    assert rules(cli, "--extend-select", "shm-size-limit") == {"rollout-surge", "legacy-gpu-resource",
                                                                "shm-size-limit"}
    assert rules(cli, "--profile", "strict", "--ignore", "legacy-resources,rollout-surge") == {"shm-size-limit"}
    assert rules(cli, "--select", "all", "--ignore", "legacy-gpu-resource") == {"rollout-surge", "shm-size-limit"}


def test_a_selector_that_names_nothing_is_a_usage_error(cli):
    result = cli("lint", "-", "--no-config", "--select", "rollout-surge,nope", stdin=WORKLOAD)
    assert result.code == 2 and "'nope' is neither a rule id nor a category" in result.err
    assert "Traceback" not in result.err


def test_the_config_file_selects_and_a_rule_named_under_rules_runs(cli, tmp_path):
    config = tmp_path / ".draguard.yaml"
    target = tmp_path / "w.yaml"
    target.write_text(WORKLOAD)
    config.write_text("profile: strict\nignore: [legacy-gpu-resource]\n")
    found = {f["rule"] for f in cli("lint", target, "-f", "json").json["findings"]}
    assert found == {"rollout-surge", "shm-size-limit"}
    config.write_text("rules:\n  shm-size-limit: {severity: error}\n")  # recommended, but named: it runs
    found = {(f["rule"], f["severity"]) for f in cli("lint", target, "-f", "json").json["findings"]}
    assert ("shm-size-limit", "error") in found
    config.write_text("select:\n- rollout-surge\n- nothing-here\n")
    bad = cli("lint", target)
    assert bad.code == 2 and f"{config}:3:3: 'nothing-here' is neither a rule id nor a category" in bad.err


@pytest.fixture
def lifecycle(monkeypatch):
    """lifecycle(rule id, Lifecycle): the rule is put there for the test."""
    def put(rule_id: str, where: Lifecycle):
        rule = type(REGISTRY.get(rule_id))
        monkeypatch.setattr(rule, "lifecycle", where)
        monkeypatch.setattr(rule, "lifecycle_note", "for the test: use rollout-deadlock")
    return put


def test_a_preview_rule_runs_only_with_preview(cli, lifecycle):
    lifecycle("rollout-surge", Lifecycle.PREVIEW)
    assert "rollout-surge" not in rules(cli)
    assert "rollout-surge" in rules(cli, "--preview")
    asked = cli("lint", "-", "--no-config", "--select", "rollout-surge", stdin=WORKLOAD)
    assert asked.code == 2 and "rule rollout-surge is in preview: add --preview" in asked.err


def test_a_removed_rule_never_runs_and_selecting_it_says_why(cli, lifecycle):
    lifecycle("rollout-surge", Lifecycle.REMOVED)
    assert "rollout-surge" not in rules(cli, "--profile", "strict", "--preview")
    asked = cli("lint", "-", "--no-config", "--extend-select", "rollout-surge", stdin=WORKLOAD)
    assert asked.code == 2 and "rule rollout-surge was removed: for the test: use rollout-deadlock" in asked.err


def test_the_catalog_and_the_docs_show_profile_and_lifecycle(cli):
    listing = cli("rules").out
    [row] = [line for line in listing.splitlines() if line.startswith("shm-size-limit ")]
    assert " strict " in row and " stable " in row
    described = {r["id"]: r for r in cli("rules", "-f", "json").json}
    assert described["rollout-pdb"]["profile"] == "strict" and described["rollout-pdb"]["profileReason"]
    assert described["host-ipc"]["profile"] == "recommended" and described["host-ipc"]["lifecycle"] == "stable"
    explained = cli("explain", "api-removed").out
    assert "- Lifecycle: stable; follows Kubernetes releases" in explained
