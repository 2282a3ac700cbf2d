"""Checks users write in `.draguard.yaml` (rules.custom, engine.user_checks): judged by lint,
exported to admission by the code that exports the built-in rules, and the two agree."""

from __future__ import annotations

import pytest
import yaml

from draguard.admission.celcheck import evaluate
from draguard.admission.judge import findings_on
from draguard.admission.policies import export
from draguard.engine import lint_objects
from draguard.engine.config_file import load_config

CHECK = """\
checks:
- id: gpu-pods-name-a-team
  kinds: [Pod, apps/Deployment]
  expression: "has(object.metadata.labels) && 'team' in object.metadata.labels"
  message: every GPU workload names its team
  severity: error
"""
#: reads a field without has(): a runtime error on an object without it
UNGUARDED = """\
checks:
- id: team-label
  kinds: [Pod]
  expression: "object.metadata.labels.team != ''"
  message: pods name their team
"""


def _pod(name: str, labels: dict | None = None, annotations: dict | None = None) -> dict:
    meta = {"name": name, **({"labels": labels} if labels is not None else {}),
            **({"annotations": annotations} if annotations else {})}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta,
            "spec": {"containers": [{"name": "c", "image": "busybox:1.36"}]}}


def _config(tmp_path, text: str):
    path = tmp_path / ".draguard.yaml"
    path.write_text(text)
    return load_config(str(path))


def _found(objects, config, rule="gpu-pods-name-a-team"):
    result = lint_objects(objects, config)
    return [f for f in result.findings if f.rule == rule], [f for f in result.suppressed if f.rule == rule]


def test_lint_judges_a_declared_check(tmp_path):
    config = _config(tmp_path, CHECK)
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}, "spec": {}}
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "n"}}  # not a kind it names
    found, _ = _found([_pod("a", {"team": "x"}), _pod("b", {"app": "y"}), _pod("c"), deployment, namespace], config)
    assert sorted((f.obj.kind, f.obj.name) for f in found) == [("Deployment", "d"), ("Pod", "b"), ("Pod", "c")]
    assert {str(f.severity) for f in found} == {"error"}
    assert all(f.message == "every GPU workload names its team" and ".draguard.yaml:2:3" in f.help for f in found)


def test_a_declared_check_is_suppressed_and_configured_like_a_built_in_rule(tmp_path):
    annotated = _pod("b", annotations={"ignore.draguard.io/gpu-pods-name-a-team": "migrating"})
    found, hidden = _found([annotated], _config(tmp_path, CHECK))
    assert not found and [f.suppressed_by for f in hidden] == ["migrating"]
    found, _ = _found([_pod("b")], _config(tmp_path, CHECK + "rules: {gpu-pods-name-a-team: warning}\n"))
    assert [str(f.severity) for f in found] == ["warning"]
    found, _ = _found([_pod("b")], _config(tmp_path, CHECK + "rules: {gpu-pods-name-a-team: off}\n"))
    assert not found


def test_a_runtime_error_fails_the_check_in_lint_as_in_admission(tmp_path):
    config = _config(tmp_path, UNGUARDED)
    found, _ = _found([_pod("a")], config, "team-label")
    assert len(found) == 1 and "failed on this object" in found[0].message


POLICY_CASES = [_pod("a", {"team": "x"}), _pod("b", {"app": "y"}), _pod("c"), _pod("d", {"team": ""}),
                _pod("e", {"team": "x", "app": "y"})]


@pytest.mark.parametrize("text, rule", [(CHECK, "gpu-pods-name-a-team"), (UNGUARDED, "team-label")])
def test_the_exported_policy_agrees_with_lint(tmp_path, text, rule):
    config = _config(tmp_path, text)
    exported = export(config.checks, config)
    [policy] = [o for o in exported.objects if o["kind"] == "ValidatingAdmissionPolicy"]
    assert policy["metadata"]["name"] == f"draguard-{rule}" and not exported.left_out
    for pod in POLICY_CASES:
        found, _ = _found([pod], config, rule)
        verdict = evaluate(policy, pod)
        assert verdict.passed is (not found), (pod["metadata"], verdict)
        assert bool([f for f in findings_on(pod, config) if f.rule == rule]) is bool(found)  # the webhook


def test_policy_export_writes_a_declared_check(tmp_path, cli):
    (tmp_path / ".draguard.yaml").write_text(CHECK)
    result = cli("policy", "export", "--config", tmp_path / ".draguard.yaml", "--rule", "gpu-pods-name-a-team")
    policies = [d for d in yaml.safe_load_all(result.out) if d and d["kind"] == "ValidatingAdmissionPolicy"]
    assert result.code == 0 and [p["metadata"]["name"] for p in policies] == ["draguard-gpu-pods-name-a-team"]
    rules = policies[0]["spec"]["matchConstraints"]["resourceRules"]
    assert {r["apiGroups"][0]: r["resources"][0] for r in rules} == {"": "pods", "apps": "deployments"}


@pytest.mark.parametrize("change, at, said", [
    (("id: gpu-pods-name-a-team", "id: Team"), "2:7", "lower-case words"),
    (("id: gpu-pods-name-a-team", "id: legacy-gpu-resource"), "2:7", "taken by a built-in rule"),
    (("kinds: [Pod, apps/Deployment]", "kinds: [pod]"), "3:11", "expected Kind"),
    (("kinds: [Pod, apps/Deployment]", "kinds: []"), "3:10", "non-empty list"),
    (("labels\"", "labels &&\""), "4:15", "does not compile"),
    (("severity: error", "severity: loud"), "6:13", "unknown severity"),
    (("severity: error", "level: error"), "6:3", "no setting 'level'"),
])
def test_a_mistaken_check_stops_the_run_at_its_place(tmp_path, cli, change, at, said):
    (tmp_path / ".draguard.yaml").write_text(CHECK.replace(*change))
    (tmp_path / "p.yaml").write_text(yaml.safe_dump(_pod("a")))
    result = cli("lint", tmp_path / "p.yaml")
    assert result.code == 2 and f".draguard.yaml:{at}:" in result.err and said in result.err, result.err
    assert "Traceback" not in result.err


def test_two_checks_may_not_share_an_id(tmp_path, cli):
    second = CHECK.split("\n", 1)[1]
    (tmp_path / ".draguard.yaml").write_text(CHECK + second)
    (tmp_path / "p.yaml").write_text(yaml.safe_dump(_pod("a")))
    result = cli("lint", tmp_path / "p.yaml")
    assert result.code == 2 and ".draguard.yaml:7:7:" in result.err and "taken by another check" in result.err


def test_sarif_describes_a_declared_check(tmp_path, cli):
    import json

    import jsonschema

    from support.paths import DATA

    (tmp_path / ".draguard.yaml").write_text(CHECK)
    (tmp_path / "p.yaml").write_text(yaml.safe_dump(_pod("a")))
    result = cli("lint", tmp_path / "p.yaml", "-f", "sarif")
    report = json.loads(result.out)
    jsonschema.validate(report, json.loads((DATA / "sarif-schema-2.1.0.json").read_text()))
    run = report["runs"][0]
    [found] = run["results"]
    assert found["ruleId"] == "gpu-pods-name-a-team" and found["level"] == "error"
    assert run["tool"]["driver"]["rules"][found["ruleIndex"]]["id"] == "gpu-pods-name-a-team"


#: a Pod without a team label that also trips a built-in rule (legacy-gpu-resource)
GPU_POD = yaml.safe_dump({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a"}, "spec": {"containers": [
    {"name": "c", "image": "busybox:1.36", "resources": {"limits": {"nvidia.com/gpu": 1}}}]}})


def _rules(cli, tmp_path, *args, config: str = CHECK) -> set:
    (tmp_path / ".draguard.yaml").write_text(config)
    (tmp_path / "p.yaml").write_text(GPU_POD)
    result = cli("lint", tmp_path / "p.yaml", "-f", "json", *args)
    assert result.code in (0, 1), result.err
    return {f["rule"] for f in result.json["findings"]}


@pytest.mark.parametrize("args, config, expected", [
    ((), CHECK, {"gpu-pods-name-a-team", "legacy-gpu-resource"}),
    (("--profile", "strict"), CHECK, {"gpu-pods-name-a-team", "legacy-gpu-resource"}),  # both profiles hold it
    (("--select", "gpu-pods-name-a-team"), CHECK, {"gpu-pods-name-a-team"}),
    (("--select", "custom"), CHECK, {"gpu-pods-name-a-team"}),  # its category
    (("--ignore", "gpu-pods-name-a-team"), CHECK, {"legacy-gpu-resource"}),
    (("--select", "all", "--ignore", "custom"), CHECK, {"legacy-gpu-resource"}),
    (("--select", "legacy-gpu-resource"), CHECK, {"legacy-gpu-resource"}),  # select replaces: left out
    (("--select", "legacy-gpu-resource", "--extend-select", "gpu-pods-name-a-team"), CHECK,
     {"gpu-pods-name-a-team", "legacy-gpu-resource"}),
    ((), CHECK + "ignore: [gpu-pods-name-a-team]\n", {"legacy-gpu-resource"}),
    ((), CHECK + "select: [gpu-pods-name-a-team]\n", {"gpu-pods-name-a-team"}),
])
def test_a_declared_check_is_selected_and_ignored_like_a_built_in_rule(cli, tmp_path, args, config, expected):
    """ruff selects a plugin's rules by code, prefix or ALL as it selects its own: a check's id,
    the category `custom` and `all` select it, on the command line and in the file."""
    assert _rules(cli, tmp_path, *args, config=config) == expected


def test_a_config_s_ignored_check_is_left_out_of_the_policy_export(tmp_path):
    config = _config(tmp_path, CHECK + "ignore: [gpu-pods-name-a-team]\n")
    exported = export(config.checks, config)
    assert "gpu-pods-name-a-team" in exported.left_out
    assert not [o for o in exported.objects if o["kind"] == "ValidatingAdmissionPolicy"]


def test_selecting_a_check_no_config_declares_names_nothing(cli, tmp_path):
    (tmp_path / "p.yaml").write_text(GPU_POD)
    result = cli("lint", tmp_path / "p.yaml", "--no-config", "--ignore", "gpu-pods-name-a-team")
    assert result.code == 2 and "'gpu-pods-name-a-team' is neither a rule id nor a category" in result.err


def test_fix_takes_a_declared_check_s_id_in_its_selection(cli, tmp_path):
    """fix --select / --ignore name rules by id as lint does: a declared check is one (it has
    no fix, so selecting it alone fixes nothing)."""
    (tmp_path / ".draguard.yaml").write_text(CHECK)
    (tmp_path / "p.yaml").write_text(GPU_POD)
    ignored = cli("fix", "--check", "--ignore", "gpu-pods-name-a-team", tmp_path / "p.yaml")
    assert ignored.code == 1 and "no such rule" not in ignored.err  # legacy-gpu-resource's fix pends
    selected = cli("fix", "--check", "--select", "gpu-pods-name-a-team", tmp_path / "p.yaml")
    assert selected.code == 0 and "would fix 0" in selected.out, (selected.out, selected.err)
