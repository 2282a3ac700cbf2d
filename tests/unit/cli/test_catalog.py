"""`draguard rules` and `draguard explain` show the checks the project's `.draguard.yaml`
declares beside the built-in rules, each said to be one, from `--config` or the config found
above the working folder; `--no-config` shows the built-in rules only."""

from __future__ import annotations

import json

CHECK = """\
checks:
- id: gpu-pods-name-a-team
  kinds: [Pod, apps/Deployment]
  expression: "has(object.metadata.labels) && 'team' in object.metadata.labels"
  message: every GPU workload names its team
  severity: error
"""


def _listed(cli, *args) -> dict:
    result = cli("rules", "-f", "json", *args)
    assert result.code == 0, result.err
    return {rule["id"]: rule for rule in json.loads(result.out)}


def test_rules_lists_a_given_config_s_checks_with_their_origin(cli, tmp_path):
    config = tmp_path / "team.yaml"
    config.write_text(CHECK)
    listed = _listed(cli, "--config", config)
    check = listed["gpu-pods-name-a-team"]
    assert check["origin"] == f"user check from {config}:2:3"
    assert (check["category"], check["severity"], check["admissionForm"]["form"]) == ("custom", "error", "vap")
    assert listed["schema-invalid"]["origin"] == "built-in"
    text = cli("rules", "--config", config).out
    [row] = [line for line in text.splitlines() if line.startswith("gpu-pods-name-a-team ")]
    assert f"user check from {config}:2:3: every GPU workload names its team" in row


def test_rules_and_explain_find_the_config_above_the_working_folder(cli, tmp_path, monkeypatch):
    (tmp_path / ".draguard.yaml").write_text(CHECK)
    (tmp_path / "deploy").mkdir()
    monkeypatch.chdir(tmp_path / "deploy")
    assert _listed(cli)["gpu-pods-name-a-team"]["origin"].startswith("user check from ")
    doc = cli("explain", "gpu-pods-name-a-team")
    assert doc.code == 0 and doc.out.startswith("# `gpu-pods-name-a-team` — every GPU workload names its team")
    assert "- Category: `custom`" in doc.out and "declared in" in doc.out
    assert "gpu-pods-name-a-team" not in _listed(cli, "--no-config")
    refused = cli("explain", "gpu-pods-name-a-team", "--no-config")
    assert refused.code == 2 and "unknown rule 'gpu-pods-name-a-team'" in refused.err


def test_a_broken_config_stops_rules_saying_where(cli, tmp_path):
    config = tmp_path / ".draguard.yaml"
    config.write_text(CHECK.replace("kinds: [Pod, apps/Deployment]", "kinds: [pod]"))
    result = cli("rules", "--config", config)
    assert result.code == 2 and f"{config}:3:11" in result.err and "Traceback" not in result.err
