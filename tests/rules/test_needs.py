"""A rule that declares it needs only the object gives every object the same findings whether
it is judged alone or among the other objects of its file (as an admission webhook judges it
alone): checked on every rule example and every corpus file."""

from __future__ import annotations

from collections import Counter

import pytest

from draguard.core.config import Config
from draguard.engine import lint_objects
from draguard.rules import REGISTRY
from draguard.rules.base import Needs
from draguard.sources.discover import expand
from draguard.sources.loader import load_units

from support.goldens import GOLDENS
from support.load import manifests
from support.paths import corpus_files

OBJECT_RULES = {rule.id for rule in REGISTRY if rule.has_check and rule.needs is Needs.OBJECT}


def _per_object(findings):
    return Counter((f.rule, f.obj, f.location.document, f.location.path, f.message) for f in findings
                   if f.rule in OBJECT_RULES)


def _files():
    examples = sorted(GOLDENS.glob("*/fail.yaml")) + sorted(GOLDENS.glob("*/pass.yaml"))
    return examples + corpus_files()


def test_object_rules_are_a_real_share_of_the_catalog():
    assert len(OBJECT_RULES) >= 15


@pytest.mark.parametrize("version", ["1.32", "1.37"])
def test_object_rules_judge_each_object_alone(version):
    config = Config(kube_version=version)
    checked = 0
    for path in _files():
        objects = manifests(load_units(expand([str(path)])))
        if len(objects) < 2:
            continue
        together = _per_object(lint_objects(objects, config).findings)
        alone = sum((_per_object(lint_objects([obj], config).findings) for obj in objects), Counter())
        assert together == alone, path
        checked += 1
    assert checked > 30
