"""Each rule's admission expression agrees with its check, evaluated in-process with
draguard's CEL engine: on the rule's examples and on every corpus object the rule applies
to, the expression passes exactly when the check reports nothing at the rule's severity.
A wrong expression fails here before any apiserver sees it."""

from __future__ import annotations

import textwrap

import pytest

from draguard.core.config import Config
from draguard.engine import lint_objects
from draguard.model.manifest import Manifest
from draguard.rules import REGISTRY
from draguard.rules.admission import passes
from draguard.sources.discover import expand
from draguard.sources.loader import load_units

from support.load import manifests
from support.paths import CORPUS, corpus_files

WITH_ADMISSION = [rule for rule in REGISTRY if rule.admission]


def _verdicts(rule, objects: list[Manifest], kube_version: str):
    """(object, the check's verdict, the expression's verdict) for objects the rule applies to;
    the check sees the object alone, as an admission policy does. Objects that do not match
    the schema are left out: the apiserver rejects them while decoding, before admission."""
    config = Config(kube_version=kube_version)
    for obj in objects:
        kinds = rule.admission.kinds(rule.targets)
        if kinds is not None and (obj.group, obj.kind) not in kinds:
            continue
        found = lint_objects([obj], config).findings
        if any(f.rule == "schema-invalid" for f in found):
            continue
        check_passes = not any(f.rule == rule.id and f.severity == rule.severity for f in found)
        yield obj, check_passes, passes(rule.admission.expression, obj)


def _objects(text: str) -> list[Manifest]:
    return manifests(load_units(expand(["-"]), stdin=__import__("io").BytesIO(textwrap.dedent(text).encode())))


def test_some_rules_have_admission_expressions():
    assert len(WITH_ADMISSION) >= 8


@pytest.mark.parametrize("rule", WITH_ADMISSION, ids=lambda r: r.id)
def test_expression_agrees_with_the_check_on_the_examples(rule):
    failing = list(_verdicts(rule, _objects(rule.noncompliant), rule.examples_target))
    assert any(not expression for _, _, expression in failing), "the failing example must fail the expression"
    for obj, check, expression in failing + list(_verdicts(rule, _objects(rule.compliant), rule.examples_target)):
        assert check == expression, (obj.ref, check, expression)


@pytest.mark.parametrize("rule", WITH_ADMISSION, ids=lambda r: r.id)
def test_expression_agrees_with_the_check_on_the_corpus(rule):
    corpus_files()
    objects = manifests(load_units(expand([str(CORPUS / "legacy"), str(CORPUS / "dra")])))
    verdicts = list(_verdicts(rule, objects, "1.34"))
    disagreements = [(o.source.display, o.ref, check, expression) for o, check, expression in verdicts
                     if check != expression]
    assert not disagreements, disagreements[:5]
    assert len(verdicts) >= 5  # the corpus exercises every rule here
    print(f"{rule.id}: {len(verdicts)} objects, {sum(not c for _, c, _ in verdicts)} failing")
