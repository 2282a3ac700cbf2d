"""A value a rule needs and cannot read (`.nan` where a count belongs, a selector that is a
number) makes the rules that need it skip that object, and the report says which rules skipped
which object, at the value's own place (issue #41, item 2). Before, each rule judged as if
the value were absent: a budget whose selector is `7` "selected no pod template", and the
rules that read a `.nan` grace period, drain flag or GPU count said nothing of it."""

from __future__ import annotations

import textwrap

import pytest

from draguard.core.config import Config
from draguard.engine import lint_paths, lint_text
from draguard.rules.examples import COMPLIANT_DEPLOYMENT, COMPLIANT_POD, replace_last

SKIPPED = "rules-skipped"


def _lint(text: str):
    return lint_text("m.yaml", textwrap.dedent(text), Config())


def _notes(result) -> list:
    return [f for f in result.findings if f.rule == SKIPPED]


def _line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(textwrap.dedent(text).splitlines(), 1) if needle in line)


def test_a_budget_whose_selector_is_a_number_is_skipped_and_said_not_judged_as_selecting_nothing():
    text = replace_last(COMPLIANT_DEPLOYMENT, "selector: {matchLabels: {app: inference}}",
                        "selector: {matchExpressions: 7}")
    result = _lint(text)
    assert not [f for f in result.findings if f.rule == "pdb-selects-nothing"]
    [note] = [n for n in _notes(result) if n.message.startswith("pdb-selects-nothing")]
    assert note.message.startswith("pdb-selects-nothing skipped PodDisruptionBudget inference: "
                                   "spec.selector.matchExpressions is 7 (a number)")
    line = _line_of(text, "matchExpressions: 7")
    assert (note.location.line, note.location.column) == (line, textwrap.dedent(text).splitlines()[line - 1]
                                                           .index("7") + 1)
    assert str(note.obj) == "PodDisruptionBudget inference"


def test_a_value_in_another_object_is_blamed_on_that_object_naming_the_object_skipped(tmp_path):
    """rollout-pdb judges the Deployment by the budgets that select it: a budget in another
    file with a malformed selector makes it skip the Deployment, and the note is in the
    budget's file, at the selector."""
    deployment, budget = textwrap.dedent(COMPLIANT_DEPLOYMENT).rsplit("---\n", 1)
    (tmp_path / "app.yaml").write_text(deployment)
    (tmp_path / "pdb.yaml").write_text(budget.replace("{matchLabels: {app: inference}}",
                                                      "{matchLabels: {app: {a: b}}}"))
    result = lint_paths([str(tmp_path)], Config())
    assert not [f for f in result.findings if f.rule == "rollout-pdb"]
    [note] = [n for n in _notes(result) if "Deployment inference" in n.message]
    assert note.message.startswith("rollout-pdb skipped Deployment inference: spec.selector.matchLabels.app of "
                                   "PodDisruptionBudget inference is {'a': 'b'} (a map)")
    assert note.location.file.endswith("pdb.yaml") and note.location.line == 6
    assert str(note.obj) == "PodDisruptionBudget inference"
    assert not [f for f in result.findings if f.rule == "internal-error"]


@pytest.mark.parametrize("old, new, value, rules", [
    ("terminationGracePeriodSeconds: 60", "terminationGracePeriodSeconds: .nan", "terminationGracePeriodSeconds",
     {"teardown-grace-period"}),
    ("terminationGracePeriodSeconds: 60", "terminationGracePeriodSeconds: 100000000000000000000000",
     "terminationGracePeriodSeconds", {"teardown-grace-period"}),
    ("[--shutdown-timeout, '30']", "[--shutdown-timeout, 'nan']", "args[1]", {"teardown-grace-period"}),
    ("exec: {command: [sh, -c, sleep 10]}", "sleep: {seconds: .inf}", "preStop.sleep.seconds",
     {"teardown-grace-period"}),
])
def test_a_teardown_value_that_is_no_number_makes_the_teardown_rules_skip_the_pod(old, new, value, rules):
    result = _lint(COMPLIANT_POD.replace(old, new))
    notes = _notes(result)
    assert notes, [f.message for f in result.findings]
    named = {rule for note in notes for rule in note.message.split(" skipped ")[0].split(", ")}
    assert rules <= named
    assert all(value in note.message and "Pod inference" in note.message for note in notes)
    assert not [f for f in result.findings if f.rule in named]  # their findings on it are left out
    assert not [f for f in result.findings if f.rule == "internal-error"]


def test_a_rule_that_does_not_need_the_value_still_judges_the_object():
    """legacy-gpu-resource says a pod asks for GPUs through the device plugin whatever the
    count; only its fix needs the count, and says why there is none: no rule skipped it."""
    text = ("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n"
            "  containers: [{name: c, image: x, resources: {limits: {nvidia.com/gpu: .nan}}}]\n")
    result = _lint(text)
    assert _notes(result) == []
    [legacy] = [f for f in result.findings if f.rule == "legacy-gpu-resource"]
    assert legacy.fix is None and "is not a whole number of devices" in legacy.no_fix


def test_the_same_value_read_through_a_cached_view_is_said_for_every_rule_that_reads_it():
    """A budget's selector is computed once per object (Manifest.derive); each rule reading it
    after the first is told too, so the note names every rule that skipped."""
    text = replace_last(COMPLIANT_DEPLOYMENT, "selector: {matchLabels: {app: inference}}", "selector: 7")
    result = _lint(text)
    by_object = {n.message.split(": ", 1)[0]: n for n in _notes(result)}
    assert set(by_object) == {"pdb-selects-nothing skipped PodDisruptionBudget inference",
                              "rollout-pdb skipped Deployment inference"}


def test_a_clean_run_has_no_note():
    assert _notes(_lint(COMPLIANT_DEPLOYMENT)) == []


def test_schema_invalid_spells_an_infinity_as_written_not_as_json_null():
    result = _lint(COMPLIANT_POD.replace("exec: {command: [sh, -c, sleep 10]}", "sleep: {seconds: .inf}"))
    [schema] = [f for f in result.findings if f.rule == "schema-invalid"]
    assert schema.message == 'spec.containers[0].lifecycle.preStop.sleep.seconds: .inf is not of type "integer"'


def test_draguard_fix_places_the_note_again_on_the_text_it_writes(tmp_path):
    """The note is kept with the file judged and placed by its site: after a fix removes a
    line above it, it still points at the value."""
    from draguard.fix.run import Choice, FileText, fix_texts

    text = ("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  hostIPC: true\n"
            "  containers: [{name: c, image: x, resources: {limits: {nvidia.com/gpu: 1}}}]\n---\n"
            "apiVersion: policy/v1\nkind: PodDisruptionBudget\n"
            "metadata: {name: m}\nspec:\n  minAvailable: 1\n  selector: {matchExpressions: 7}\n")
    done = fix_texts([FileText("m.yaml", text)], Config(), Choice(unsafe=True))
    fixed = done.files[0].text
    assert "hostIPC" not in fixed
    [note] = [f for f in done.result.findings if f.rule == SKIPPED]
    assert note.message.startswith("pdb-selects-nothing skipped PodDisruptionBudget m")
    line = fixed.splitlines().index("  selector: {matchExpressions: 7}") + 1
    assert (note.location.line, note.location.column) == (line, 32)


def _at_value(text: str, note, needle: str, value: str) -> None:
    """The note is on `value`, on the line holding `needle`."""
    lines = textwrap.dedent(text).splitlines()
    line = _line_of(text, needle)
    assert (note.location.line, note.location.column) == (line, lines[line - 1].index(value, lines[line - 1]
                                                                                      .index(needle)) + 1)


@pytest.mark.parametrize("value, shown", [
    (".nan", ".nan (not a number)"), ("1.5", "1.5 (a number)"), (".inf", ".inf (an infinity)"),
    ("4294967296", "4294967296 (a number)"),  # past int32, as the API holds replicas
    ("100000000000000000000000", "a number of 77 bits (past int64)"), ("{a: b}", "{'a': 'b'} (a map)"),
])
def test_replicas_that_are_no_int32_make_the_rules_counting_pods_skip_the_workload(value, shown):
    """Before, a count that is no int made shared-claim-replicas and rollout-pdb pass the
    workload silently, and rollout-surge took a percentage of one replica; a count past int32
    was used as it is."""
    text = replace_last(COMPLIANT_DEPLOYMENT, "replicas: 2", f"replicas: {value}") \
        .replace("{maxSurge: 0, maxUnavailable: 1}", "{maxSurge: 50%, maxUnavailable: 0}")
    result = _lint(text)
    [note] = _notes(result)
    assert note.message == (f"rollout-pdb, rollout-surge, shared-claim-replicas skipped Deployment inference: "
                            f"spec.replicas is {shown}, not a number of pods")
    _at_value(text, note, "replicas:", value[0])
    assert not [f for f in result.findings if f.rule in ("rollout-surge", "internal-error")]


def test_a_percentage_of_replicas_that_are_not_needed_is_no_reason_to_skip():
    text = replace_last(COMPLIANT_DEPLOYMENT, "replicas: 2", "replicas: .nan")
    assert "rollout-surge" not in _notes(_lint(text))[0].message  # maxSurge 0, maxUnavailable 1: no percentage


HPA = ("---\napiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata: {name: h}\nspec:\n"
       "  scaleTargetRef: %s\n  minReplicas: 1\n  maxReplicas: 3\n")


@pytest.mark.parametrize("target, where, value, shown", [
    ("7", "spec.scaleTargetRef", "7", "7 (a number)"),
    ("{apiVersion: apps/v1, kind: Deployment, name: {a: b}}", "spec.scaleTargetRef.name", "{a: b}",
     "{'a': 'b'} (a map)"),
])
def test_an_autoscaler_whose_target_cannot_be_read_makes_rollout_pdb_skip_an_unscaled_count(target, where, value,
                                                                                           shown):
    """rollout-pdb judges a workload without replicas by whether an autoscaler scales it:
    one whose scaleTargetRef is no reference may. Before, it was taken to scale nothing."""
    text = textwrap.dedent(COMPLIANT_DEPLOYMENT).replace("  replicas: 2\n", "") \
        .replace("  maxUnavailable: 1\n  selector: {matchLabels", "  minAvailable: 1\n  selector: {matchLabels")
    scaled = _lint(text + HPA % "{apiVersion: apps/v1, kind: Deployment, name: inference}")
    assert [f.rule for f in scaled.findings if f.rule == "rollout-pdb"] == ["rollout-pdb"]  # what is judged
    text += HPA % target
    result = _lint(text)
    [note] = _notes(result)
    assert note.message == (f"rollout-pdb skipped Deployment inference: {where} of HorizontalPodAutoscaler h "
                            f"is {shown}, not what a scale target takes there")
    _at_value(text, note, "scaleTargetRef:", value)
    assert str(note.obj) == "HorizontalPodAutoscaler h"
    assert not [f for f in result.findings if f.rule == "rollout-pdb"]


POD = ("apiVersion: v1\nkind: Pod\nmetadata:\n  name: web-1\n  labels: {app: other}\n  ownerReferences:\n"
       "  - {apiVersion: apps/v1, kind: ReplicaSet, name: web, uid: u1, controller: true}\n"
       "spec:\n  containers: [{name: c, image: x}]\n")
REPLICA_SET = ("---\napiVersion: apps/v1\nkind: ReplicaSet\nmetadata: {name: web, uid: %s}\nspec:\n"
               "  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n"
               "    spec:\n      containers: [{name: c, image: x}]\n")
BUDGET = ("---\napiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: p}\nspec:\n  maxUnavailable: 1\n"
          "  selector: {matchLabels: {app: other}}\n")


def test_a_uid_that_is_a_map_on_a_pods_controller_makes_pdb_selects_nothing_skip_not_guess():
    """A pod stands for its controller's template when the controller is in the set, by uid:
    with the controller's uid a map, whether the budget selects a pod is not known. Before,
    the uid was taken as none and the pod as a template of its own, silently."""
    assert [f.rule for f in _lint(POD + REPLICA_SET % "u1" + BUDGET).findings
            if f.rule == "pdb-selects-nothing"] == ["pdb-selects-nothing"]  # the pod is its controller's
    text = POD + REPLICA_SET % "{a: b}" + BUDGET
    result = _lint(text)
    [note] = _notes(result)
    assert note.message == ("pdb-selects-nothing skipped PodDisruptionBudget p: metadata.uid of ReplicaSet web is "
                            "{'a': 'b'} (a map), not a uid: whether it controls Pod web-1 is not known")
    _at_value(text, note, "uid: {a: b}", "{a: b}")
    assert str(note.obj) == "ReplicaSet web"
    assert not [f for f in result.findings if f.rule in ("pdb-selects-nothing", "internal-error")]


def test_a_uid_that_is_a_map_where_no_pod_names_its_owner_changes_nothing():
    text = REPLICA_SET.removeprefix("---\n") % "{a: b}" + BUDGET
    assert _notes(_lint(text)) == []


@pytest.mark.parametrize("value, shown", [
    (".nan", ".nan (not a number)"), (".inf", ".inf (an infinity)"), ("{a: b}", "{'a': 'b'} (a map)"),
    ("100000000000000000000000", "a number of 77 bits (past int64)"),
])
def test_a_request_count_that_is_no_int64_makes_the_rules_that_count_devices_skip_the_claim(value, shown):
    """Before, the count was taken as 1 and the claim judged satisfiable by one device."""
    text = COMPLIANT_DEPLOYMENT.replace("count: 1", f"count: {value}")
    result = _lint(text)
    [note] = _notes(result)
    assert note.message == (f"request-unsatisfiable skipped ResourceClaimTemplate mig-1g: "
                            f"spec.spec.devices.requests[0].exactly.count is {shown}, not a number of devices")
    _at_value(text, note, "count:", value[0])
    assert not [f for f in result.findings if f.rule in ("request-unsatisfiable", "internal-error")]


@pytest.mark.parametrize("value, shown", [
    (".nan", ".nan (not a number)"), ("-.inf", "-.inf (an infinity)"), ("1.0e+400", ".inf (an infinity)"),
    ("{a: b}", "{'a': 'b'} (a map)"), ("[1]", "[1] (a list)"),
])
def test_a_capacity_request_that_is_no_quantity_makes_the_rules_reading_it_skip_not_crash(value, shown):
    """Before, a map crashed request-unsatisfiable (an internal error: unhashable type) and
    `.nan` or an infinity made it say the claim could not be satisfied."""
    text = textwrap.dedent(COMPLIANT_DEPLOYMENT).replace("count: 1", f"count: 1\n          capacity: {{requests: {{memory: {value}}}}}")
    result = _lint(text)
    [note] = _notes(result)
    assert note.message == (f"request-unpinned, request-unsatisfiable skipped ResourceClaimTemplate mig-1g: "
                            f"spec.spec.devices.requests[0].exactly.capacity.requests.memory is {shown}, "
                            f"not a quantity")
    _at_value(text, note, "capacity:", value)
    assert not [f for f in result.findings if f.rule in ("request-unsatisfiable", "internal-error")]
