"""Type confusion: every subtree of every rule example replaced by a value of another type
(null, int, string, list, map), and every scalar by a hostile value of its own type or another
(NaN, infinities, a number past a float's range, a negative, a huge string, a nested map).
Each rule call is isolated, so a crash would show as an `internal-error` finding; the bar is
zero of them. Mutations are applied to plain data and judged in memory (`lint_objects`), so
one run covers every rule on every mutation."""

from __future__ import annotations

import random
import textwrap

import pytest
import yaml

from draguard.core.config import Config
from draguard.engine import lint_objects
from draguard.rules import REGISTRY
from support.paths import ROOT

pytestmark = pytest.mark.fuzz  # about 3 min: run by CI with -m fuzz, outside the default run

REPLACEMENTS = (None, 7, "x", [1], {"a": 1})
#: values a YAML or JSON input can carry where a scalar belongs (`.nan`, `.inf`, `1e400` load
#: as floats; a JSON integer has no bound)
HOSTILE_VALUES = (float("nan"), float("inf"), float("-inf"), 10**400, -1, -(10**30), 0.5, "x" * 100_000,
                  "", {"a": {"b": 1}}, [{"a": 1}])


def _paths(node, here=()):
    yield here
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _paths(value, here + (key,))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _paths(value, here + (index,))


def _replaced(node, path, value):
    if not path:
        return value
    head, rest = path[0], path[1:]
    if isinstance(node, dict):
        return {k: (_replaced(v, rest, value) if k == head else v) for k, v in node.items()}
    return [(_replaced(v, rest, value) if i == head else v) for i, v in enumerate(node)]


def _examples():
    for rule in REGISTRY:
        for which in ("noncompliant", "compliant"):
            text = getattr(rule, which)
            if not text:
                continue
            try:
                documents = [d for d in yaml.safe_load_all(textwrap.dedent(text)) if isinstance(d, dict)]
            except yaml.YAMLError:
                continue  # the yaml-syntax rule's own example
            if documents:
                yield pytest.param(rule, documents, id=f"{rule.id}-{which}")


def _leaves(node, here=()):
    """The paths of the scalars of `node`."""
    return [path for path in _paths(node) if path and not isinstance(_at(node, path), (dict, list))]


def _at(node, path):
    for part in path:
        node = node[part]
    return node


def mutations(documents, replacements=REPLACEMENTS, paths=_paths):
    for index, document in enumerate(documents):
        for path in paths(document):
            if not path:
                continue
            for value in replacements:
                mutated = list(documents)
                mutated[index] = _replaced(document, path, value)
                yield path, value, [d for d in mutated if isinstance(d, dict)]


@pytest.mark.slow
@pytest.mark.parametrize("rule, documents", list(_examples()))
def test_no_rule_crashes_on_confused_types(rule, documents):
    config = Config(kube_version=rule.examples_target)
    crashes = []
    for path, value, mutated in mutations(documents):
        result = lint_objects(mutated, config)
        crashes.extend((path, value, f.message) for f in result.findings if f.rule == "internal-error")
    assert not crashes, crashes[:5]


@pytest.mark.slow
@pytest.mark.parametrize("rule, documents", list(_examples()))
def test_no_rule_crashes_on_hostile_values(rule, documents):
    """Every scalar of every example replaced by each hostile value: `.nan` in a GPU limit, an
    infinite drain timeout, a huge string, a map where a name belongs."""
    config = Config(kube_version=rule.examples_target)
    crashes = []
    for path, value, mutated in mutations(documents, HOSTILE_VALUES, _leaves):
        result = lint_objects(mutated, config)
        crashes.extend((path, repr(value)[:20], f.message[:300]) for f in result.findings if f.rule == "internal-error")
    assert not crashes, crashes[:5]


MALFORMED_NEIGHBOURS = (
    {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "m", "uid": {"a": "b"}}},
    {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "m", "uid": "u1", "labels": {"a": "b"},
                                                     "ownerReferences": [{"controller": True, "uid": {"a": 1},
                                                                          "kind": "ReplicaSet", "name": "r"}]},
     "spec": {"containers": [{"name": "c", "image": "x"}]}},
    {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "m"},
     "spec": {"minAvailable": 1, "selector": {"matchExpressions": 7}}},
    {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "n"},
     "spec": {"minAvailable": 1, "selector": {"matchExpressions": [{"key": {"a": 1}, "operator": "In",
                                                                    "values": 7}]}}},
    {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": {"name": "h"},
     "spec": {"scaleTargetRef": {"kind": {"a": 1}, "name": ["x"]}}},
)


@pytest.mark.parametrize("rule, documents", list(_examples()))
def test_a_malformed_neighbour_breaks_no_rule_on_another_object(rule, documents):
    """Objects read across the set (a uid, an owner's uid, a selector, a scale target) of
    another type, beside each example: whatever the rules say about the malformed objects, no
    rule fails on any object (a ConfigMap's `uid: {a: b}` broke pdb-selects-nothing for the
    whole run, blamed on an innocent PodDisruptionBudget)."""
    result = lint_objects([*documents, *MALFORMED_NEIGHBOURS], Config(kube_version=rule.examples_target))
    assert [(f.obj, f.message) for f in result.findings if f.rule == "internal-error"] == []


SAMPLE = 20  # mutations per example for the whole-command runs below: every rule meets confused types, in seconds


def sampled(documents, seed, count: int = SAMPLE) -> list:
    """A seeded sample of `mutations(documents)` (all of them where there are fewer)."""
    every = list(mutations(documents))
    return random.Random(seed).sample(every, min(count, len(every)))


@pytest.mark.slow
@pytest.mark.parametrize("rule, documents", list(_examples()))
def test_no_fix_crashes_on_confused_types(rule, documents):
    """`fix --unsafe-fixes` on a seeded sample of the same mutations, written as YAML: it
    never raises, its output parses, and a second run changes nothing."""
    from draguard.fix.run import Choice, FileText, fix_texts

    config, choice = Config(kube_version=rule.examples_target), Choice(unsafe=True)
    failures = []
    for path, value, mutated in sampled(documents, rule.id):
        once = fix_texts([FileText("m.yaml", yaml.safe_dump_all(mutated, sort_keys=False))], config, choice)
        text = once.files[0].text
        list(yaml.safe_load_all(text))
        twice = fix_texts([FileText("m.yaml", text)], config, choice)
        if twice.files[0].applied:
            failures.append((path, value, twice.files[0].applied))
    assert not failures, failures[:5]


def _cluster_examples():
    from draguard.rules.base import Needs

    for param in _examples():
        rule, documents = param.values
        if rule.needs is Needs.CLUSTER:
            yield param


@pytest.mark.slow
@pytest.mark.parametrize("rule, documents", list(_cluster_examples()))
def test_no_audit_crashes_on_a_confused_dump(cli, tmp_path, rule, documents):
    """The cluster rules and the device model on a seeded sample of the mutations, as a dump
    file: a finding, or the dump refused at a position (an object the API server would not
    store), never an internal error."""
    dump = tmp_path / "dump.yaml"
    crashes = []
    for path, value, mutated in sampled(documents, rule.id):
        dump.write_text(yaml.safe_dump_all(mutated, sort_keys=False))
        done = cli("audit", "--from", dump, "--no-config", "-f", "json")
        if "internal" in done.err:  # an internal error, or internal-error findings, are said there
            crashes.append((path, value, done.err.strip()))
    assert not crashes, crashes[:5]


@pytest.mark.slow
def test_no_simulation_or_allocation_crashes_on_confused_manifests_or_inventories(cli, tmp_path):
    """rollout, drain, scale, allocate and lint --inventory on the rollout-deadlock example
    with its manifests, then its inventory, mutated: an answer or a refusal, never an
    internal error."""
    example = ROOT / "tests" / "rules" / "rollout-deadlock"
    manifests = [d for d in yaml.safe_load_all((example / "fail.yaml").read_text())]
    inventory = [d for d in yaml.safe_load_all((example / "inventory.yaml").read_text())][:4]
    m, i = tmp_path / "m.yaml", tmp_path / "i.yaml"
    crashes = []
    for which, documents in (("manifests", manifests), ("inventory", inventory)):
        for path, value, mutated in sampled(documents, which, 40):
            m.write_text(yaml.safe_dump_all(mutated if which == "manifests" else manifests))
            i.write_text(yaml.safe_dump_all(mutated if which == "inventory" else inventory))
            for argv in (("simulate", "rollout", m), ("simulate", "drain", "gpu-0", m), ("simulate", "scale", "3", m),
                         ("allocate", m), ("lint", "--no-config", m)):
                done = cli(*argv, "--inventory", i)
                if "internal" in done.err:
                    crashes.append((which, path, value, argv[:2], done.err.strip()[-200:]))
    assert not crashes, crashes[:5]
