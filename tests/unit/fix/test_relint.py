"""fix lints again only what a round's changes can reach, and only the rules it may fix
between rounds; its final findings must still be those of a fresh lint of the fixed texts."""

from __future__ import annotations

from draguard.core.config import Config
from draguard.engine import Inputs, Run
from draguard.fix.run import Choice, FileText, fix_texts
from draguard.sources.loader import Loaded, Source, load_text

WORKLOAD = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: %(name)s, namespace: team-a}
spec:
  replicas: 2
  strategy: {type: RollingUpdate, rollingUpdate: {maxSurge: 0, maxUnavailable: 1}}
  selector: {matchLabels: {app: %(name)s}}
  template:
    metadata: {labels: {app: %(name)s}}
    spec:
      terminationGracePeriodSeconds: %(grace)s
      resourceClaims: [{name: gpu, resourceClaimTemplateName: gpu}]
      containers:
      - name: server
        image: vllm/vllm-openai:v0.8.0
        args: [--shutdown-timeout, "10"]
        resources: {claims: [{name: gpu}]}
        lifecycle: {preStop: {sleep: {seconds: 10}}}
"""
TEMPLATE = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: gpu, namespace: team-a}
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly: {deviceClassName: gpu.nvidia.com, allocationMode: ExactCount, count: 1}
"""
BUDGET = """\
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: a, namespace: team-a}
spec:
  maxUnavailable: 3
  selector: {matchLabels: {app: a}}
"""


def _fresh(files: list[FileText]):
    loaded = Loaded()
    for f in files:
        load_text(Source(f.display, f.text), loaded)
    return Run(Config(), Inputs.loaded(loaded)).findings()


def _keys(findings):
    return sorted((f.rule, f.location.file, f.location.line, f.location.column, f.message) for f in findings)


def test_a_finding_one_object_makes_on_another_file_survives_that_file_being_judged_again():
    """rollout-pdb, judging Deployment a (a.yaml), reports the budget of b.yaml. Deployment c
    changes, which has the budgets of its namespace judged again (b.yaml), but not a: the
    finding a made must stay."""
    files = [FileText("a.yaml", WORKLOAD % {"name": "a", "grace": 120}),
             FileText("b.yaml", BUDGET),
             FileText("c.yaml", WORKLOAD % {"name": "c", "grace": 5} + "---\n" + TEMPLATE)]
    run = fix_texts(files, Config(), Choice(unsafe=True, select=frozenset({"teardown-grace-period"})))
    assert [f.display for f in run.changed] == ["c.yaml"]
    assert any(f.rule == "rollout-pdb" and f.location.file == "b.yaml" for f in run.result.findings)
    assert _keys(run.result.findings) == _keys(_fresh(files).findings)


POD = """\
apiVersion: v1
kind: Pod
metadata: {name: %(name)s, namespace: %(namespace)s}
spec:
  resourceClaims: [{name: gpu, resourceClaimTemplateName: %(template)s}]
  containers:
  - name: server
    image: vllm/vllm-openai:v0.8.0
    resources: {claims: [{name: gpu}]}
"""


def test_a_change_is_judged_again_where_it_was_looked_up_and_nowhere_else(monkeypatch):
    """Round 1 records what each object's judging looked up (model.objectset); a change to
    claim template gpu of team-a has the pod that names it judged again, not the pod of
    team-a that names another template, nor the pod of team-b that names its own gpu."""
    from draguard.fix.relint import Relinter

    def template(name, namespace):
        return TEMPLATE.replace("name: gpu, namespace: team-a", f"name: {name}, namespace: {namespace}")
    files = [FileText("templates.yaml", template("gpu", "team-a") + "---\n" + template("other", "team-a")),
             FileText("reads.yaml", POD % {"name": "r", "namespace": "team-a", "template": "gpu"}),
             FileText("other.yaml", POD % {"name": "o", "namespace": "team-a", "template": "other"}),
             FileText("elsewhere.yaml", POD % {"name": "e", "namespace": "team-b", "template": "gpu"} + "---\n" +
                      template("gpu", "team-b"))]
    relinter = Relinter(Config(), None, lambda rule: True)
    relinter.lint(files)
    judged = []
    original = Relinter._judge

    def recorded(self, only, displays, rules, found=None, notes=False):
        judged.append(sorted(displays))
        return original(self, only, displays, rules, found, notes)
    monkeypatch.setattr(Relinter, "_judge", recorded)
    files[0].text = files[0].text.replace("count: 1", "count: 2", 1)
    relinter.lint(files)
    assert judged == [["reads.yaml", "templates.yaml"]]
    assert _keys(relinter.complete().findings) == _keys(_fresh(files).findings)


class _Counted(dict):
    """A manifest object that counts how often it is compared."""

    compared = 0

    def __eq__(self, other):
        _Counted.compared += 1
        return dict.__eq__(self, other)

    __hash__ = None  # type: ignore[assignment]


def _loaded(objects: list):
    from types import SimpleNamespace

    return SimpleNamespace(entries=[SimpleNamespace(data=data) for data in objects])


def test_a_round_that_changes_every_object_compares_each_with_its_namesakes_only():
    """Dirty.add compared every object as read with every object as fixed (`not in` a list):
    300 changed pods took 180,000 comparisons; now each is compared with its namesakes."""
    from draguard.fix.relint import Dirty

    def pod(n: int, gpus) -> _Counted:
        return _Counted(kind="Pod", metadata={"name": f"p{n}", "namespace": "a"}, spec={"gpus": gpus})
    before, after = [pod(n, 1) for n in range(300)], [pod(n, 0) for n in range(300)]
    after[7] = pod(7, 1.0)  # equal to pod 7 as read (1 == 1.0): unchanged, as `in` says
    _Counted.compared = 0
    dirty = Dirty()
    dirty.add(_loaded(before), _loaded(after))
    assert _Counted.compared <= 2 * 300
    assert ("Pod", "a", "p7") not in dirty.named and ("Pod", "a", "p8") in dirty.named


def test_objects_without_a_usable_name_are_compared_with_one_another():
    from draguard.fix.relint import Dirty

    before = [{"kind": "Pod", "metadata": {"name": 5}}, ["a list"], {"kind": "ConfigMap", "metadata": "x"}]
    after = [{"kind": "Pod", "metadata": {"name": 5.0}}, ["a list"], {"kind": "ConfigMap", "metadata": "y"}]
    dirty = Dirty()
    dirty.add(_loaded(before), _loaded(after))
    assert {key for key in dirty.named if key[0] == "Pod"} == set()  # 5 == 5.0: the pod did not change
    assert any(key[0] == "ConfigMap" for key in dirty.named)
