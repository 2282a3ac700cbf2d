"""The Run decides once what a finding's severity is and which suppressions hide it."""

from __future__ import annotations


from draguard.admission.judge import findings_on
from draguard.core.config import Config, RuleSettings
from draguard.core.finding import Severity
from draguard.engine import Inputs, Run, lint_objects, lint_text
from draguard.sources.loader import Loaded, Source, load_text

#: one selector draguard cannot check (an info note) and one that does not compile (an error)
TWO_LEVELS = """apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: gpu}
spec:
  spec:
    devices:
      requests:
      - name: a
        exactly:
          deviceClassName: gpu.nvidia.com
          allocationMode: ExactCount
          count: 1
          selectors:
          - cel: {expression: "[device].size() == 1"}
          - cel: {expression: "device.attributes['gpu.nvidia.com'].memory >= 10Gi"}
"""

LEGACY = """apiVersion: v1
kind: Pod
metadata:
  name: same
  namespace: team-a
%s
spec:
  containers:
  - name: c
    image: busybox:1.36
    resources: {limits: {nvidia.com/gpu: 1}}
"""
SUPPRESSED = LEGACY % '  annotations: {ignore.draguard.io/legacy-gpu-resource: "migrating next sprint"}'
PLAIN = LEGACY % ""


def _levels(config: Config) -> list[tuple[str, str]]:
    found = lint_text("t.yaml", TWO_LEVELS, config).findings
    return sorted((str(f.severity), f.message.split(":")[0]) for f in found if f.rule == "cel-invalid")


def _configured(severity: Severity) -> Config:
    return Config(rules={"cel-invalid": RuleSettings(severity=severity)})


def test_a_rules_own_levels_stand_without_configuration():
    assert _levels(Config()) == [("error", "CEL"), ("info", "CEL not checked")]


def test_a_configured_severity_replaces_the_default_and_caps_a_note():
    """Turned down to warning: the error becomes a warning, the info note stays info (never louder)."""
    assert _levels(_configured(Severity.WARNING)) == [("info", "CEL not checked"), ("warning", "CEL")]
    assert _levels(_configured(Severity.INFO)) == [("info", "CEL"), ("info", "CEL not checked")]


def test_a_rule_turned_up_does_not_make_its_notes_fail_a_build():
    rules = {"request-allocation-mode": RuleSettings(severity=Severity.ERROR)}
    config = Config(rules={**_configured(Severity.ERROR).rules, **rules})
    assert _levels(config) == [("error", "CEL"), ("info", "CEL not checked")]


def _lint_files(*files: tuple[str, str]):
    loaded = Loaded()
    for display, text in files:
        load_text(Source(display, text), loaded)
    return Run(Config(), Inputs.loaded(loaded)).findings()


def _legacy(findings) -> list[str]:
    return sorted(f.location.file for f in findings if f.rule == "legacy-gpu-resource")


def test_a_suppression_hides_only_its_own_files_object():
    """The same Pod (same namespace and name) in two files: the annotation in a.yaml hides
    a.yaml's finding, not b.yaml's."""
    result = _lint_files(("a.yaml", SUPPRESSED), ("b.yaml", PLAIN))
    assert _legacy(result.suppressed) == ["a.yaml"]
    assert _legacy(result.findings) == ["b.yaml"]


def test_a_suppression_hides_only_its_own_document():
    result = _lint_files(("a.yaml", PLAIN + "---\n" + SUPPRESSED))
    [kept] = [f for f in result.findings if f.rule == "legacy-gpu-resource"]
    [hidden] = [f for f in result.suppressed if f.rule == "legacy-gpu-resource"]
    assert (kept.location.document, hidden.location.document) == (0, 1)


def test_in_memory_objects_are_suppressed_by_their_own_position():
    import yaml

    result = lint_objects([yaml.safe_load(PLAIN), yaml.safe_load(SUPPRESSED)], Config())
    assert [f.location.document for f in result.findings if f.rule == "legacy-gpu-resource"] == [0]
    assert [f.location.document for f in result.suppressed if f.rule == "legacy-gpu-resource"] == [1]


def test_admission_never_honours_a_suppression():
    import yaml

    found = findings_on(yaml.safe_load(SUPPRESSED), Config())
    assert [f.suppressed_by for f in found if f.rule == "legacy-gpu-resource"] == [None]


def test_findings_carry_the_object_and_source_they_were_judged_on():
    result = _lint_files(("a.yaml", PLAIN), ("b.yaml", TWO_LEVELS))
    for finding in result.findings:
        if finding.obj.kind:
            assert finding.judged is not None and finding.judged.source.display == finding.location.file


def test_judged_narrows_what_is_judged_and_counted():
    loaded = Loaded()
    load_text(Source("a.yaml", PLAIN + "---\n" + TWO_LEVELS), loaded)
    inputs = Inputs.loaded(loaded, judged=lambda m: m.kind == "Pod")
    result = Run(Config(), inputs).findings()
    assert result.objects == 1 and {f.obj.kind for f in result.findings} == {"Pod"}


def test_the_lint_front_doors_build_a_run_and_take_at_most_six_parameters():
    """lint_paths' reading options are one Reading; lint --jobs builds its parts' Runs itself
    (the lint_loaded shim is gone)."""
    import inspect

    from draguard.engine import lint, parallel

    fronts = [lint.lint_objects, lint.lint_paths, lint.lint_text, lint.read_inputs, parallel.lint_paths_jobs]
    assert {f.__name__: len(inspect.signature(f).parameters) for f in fronts if
            len(inspect.signature(f).parameters) > 6} == {}
    assert not hasattr(lint, "lint_loaded") and not hasattr(parallel, "lint_loaded")


def test_a_finding_sent_to_another_process_leaves_its_object_behind():
    import pickle

    [finding] = [f for f in _lint_files(("a.yaml", PLAIN)).findings if f.rule == "legacy-gpu-resource"]
    assert finding.judged is not None
    copy = pickle.loads(pickle.dumps(finding))
    assert copy.judged is None and copy == finding
    kept = [name for name in finding.__slots__ if name != "judged"]
    assert finding.site is not None and finding.fix is not None and finding.help
    assert [getattr(copy, name) for name in kept] == [getattr(finding, name) for name in kept]
    assert copy.location.__class__ is finding.location.__class__ and copy.location.path == finding.location.path


def test_a_judged_object_keeps_no_views_and_another_rule_derives_them_again(monkeypatch):
    """The views derived while an object is judged (its pod sites) are dropped once its own
    rules are done: a stream of pods kept them all to the end of the run. A budget judged
    after the pods reads their templates again, and finds what it found when they were kept."""
    from draguard.model.manifest import Manifest

    pods = Inputs.loaded(_loaded(PLAIN + "---\n" + PLAIN.replace("name: same", "name: other")))
    assert len(Run(Config(), pods).findings().findings) >= 2
    assert [m.derived for m in pods.manifests] == [{}, {}]
    budget = ("apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: b, namespace: team-a}\n"
              "spec: {maxUnavailable: 0, selector: {matchLabels: {app: x}}}\n---\n"
              "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: c, namespace: team-a}\n"
              "spec: {maxUnavailable: 0, selector: {matchLabels: {app: y}}}\n")
    labelled = PLAIN.replace("name: same", "name: same\n  labels: {app: x}")
    forgetting = Run(Config(), Inputs.loaded(_loaded(labelled + "---\n" + budget))).findings()
    monkeypatch.setattr(Manifest, "forget_views", lambda self: None)
    keeping = Run(Config(), Inputs.loaded(_loaded(labelled + "---\n" + budget))).findings()
    assert [f.as_json() for f in forgetting.findings] == [f.as_json() for f in keeping.findings]
    assert [f.obj.name for f in forgetting.findings if f.rule == "pdb-selects-nothing"] == ["c"]


def test_no_object_holds_views_once_the_run_is_judged(monkeypatch):
    """A ResourceClaimTemplate keeps its views through the judging, for the pods that read
    its requests; once the judging is over nothing reads them, and the report is written
    while they would be held (the run's memory peaks then). The findings are the same."""
    from draguard.model.objectset import ObjectSet

    pod = ("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  resourceClaims: [{name: g, "
           "resourceClaimTemplateName: gpu}]\n  containers: [{name: c, image: x, resources: {claims: [{name: g}]}}]\n")
    given = Inputs.loaded(_loaded(TWO_LEVELS + "---\n" + pod))
    judged = Run(Config(), given).findings()
    assert [m.kind for m in given.manifests] == ["ResourceClaimTemplate", "Pod"]
    assert [m.derived for m in given.manifests] == [{}, {}]
    monkeypatch.setattr(ObjectSet, "finished", lambda self: None)
    kept = Inputs.loaded(_loaded(TWO_LEVELS + "---\n" + pod))
    assert [f.as_json() for f in Run(Config(), kept).findings().findings] == [f.as_json() for f in judged.findings]
    assert [bool(m.derived) for m in kept.manifests] == [True, False]  # what the end of the run drops


def _loaded(text: str) -> Loaded:
    loaded = Loaded()
    load_text(Source("a.yaml", text), loaded)
    return loaded


CLASS = """apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu.example.com}
spec:
  selectors: [{cel: {expression: "device.driver == 'gpu.nvidia.com'"}}]
"""
CLAIM_AND_POD = """---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {{name: c{0}, namespace: ns}}
spec:
  devices:
    requests:
    - name: gpu
      exactly: {{deviceClassName: gpu.example.com, selectors: [{{cel: {{expression: "device.attributes['gpu.nvidia.com'].profile == '1g.10gb'"}}}}]}}
---
apiVersion: v1
kind: Pod
metadata: {{name: p{0}, namespace: ns}}
spec:
  resourceClaims: [{{name: gpu, resourceClaimName: c{0}}}]
  containers: [{{name: c, image: x, resources: {{claims: [{{name: gpu}}], limits: {{example.com/fpga: 1}}}}}}]
"""


def test_the_rules_import_nothing_once_an_object(monkeypatch):
    """The claim and pod rules' modules are imported before the judging or on its first
    object, not once an object (a relative import costs about 2 us: 58,000 a lint of 20,000)."""
    import builtins

    loaded = Loaded()
    load_text(Source("many.yaml", CLASS + "".join(CLAIM_AND_POD.format(n) for n in range(40))), loaded)
    run = Run(Config(), Inputs.loaded(loaded))
    run.findings()  # the rules' modules and what they load on first use
    counted: dict[str, int] = {}
    real = builtins.__import__

    def counting(name, globals=None, locals=None, fromlist=(), level=0):
        where = (globals or {}).get("__name__", "")
        counted[where] = counted.get(where, 0) + 1
        return real(name, globals, locals, fromlist, level)

    monkeypatch.setattr(builtins, "__import__", counting)
    again = Loaded()
    load_text(Source("many.yaml", CLASS + "".join(CLAIM_AND_POD.format(n) for n in range(40))), again)
    Run(Config(), Inputs.loaded(again)).findings()
    monkeypatch.undo()
    hot = {module: count for module, count in counted.items()
           if module in ("draguard.rules.cel", "draguard.rules.requests", "draguard.rules.satisfiability",
                         "draguard.rules.context")}
    assert hot == {}
