"""Golden folders, one per rule: tests/rules/<rule-id>/ holds the rule's documented failing
and passing examples (fail.yaml, pass.yaml), the snapshot of its findings on the failing one
(findings.json), and, for a rule that fixed something there, fixed.yaml: the failing example
after applying the rule's fixes one at a time (re-linting after each) until none is left; for a
rule judged against an inventory (Rule.example_inventory), inventory.yaml.

`pytest tests/rules --update-goldens` rewrites them; review the diff like any change."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import yaml

from draguard.core.config import Config
from draguard.core.fixes import Applicability, apply_edits
from draguard.engine import lint_objects, lint_paths
from draguard.dra.inventory_reader import load_inventory
from draguard.rules.base import Needs

GOLDENS = Path(__file__).resolve().parents[1] / "rules"
MAX_FIX_ROUNDS = 25


def example_text(text: str) -> str:
    return textwrap.dedent(text).strip("\n") + "\n"


def config_for(rule) -> Config:
    """The examples' release, and the example inventory (kept in the golden folder) for rules
    judged with one."""
    inventory = GOLDENS / rule.id / "inventory.yaml"
    return Config(kube_version=rule.examples_target, inventory=[str(inventory)] if rule.example_inventory else [])


def _inventory_text(rule) -> str:
    from draguard.dra.generate import generate

    return yaml.safe_dump_all(generate(rule.example_inventory), sort_keys=False)


def judged(rule, path: Path):
    """The findings on the example file: linted, or audited as a dump for a cluster rule."""
    if rule.needs is Needs.CLUSTER:
        from draguard.cluster.audit import audit
        from draguard.cluster.dump import read_dump

        snapshot, loaded = read_dump(str(path))
        return audit(snapshot, config_for(rule), loaded).findings
    return lint_paths([str(path)], config_for(rule)).findings


def findings_snapshot(rule, path: Path) -> list[dict]:
    """The rule's findings on the file, as the JSON report has them (minus the file name)."""
    out = []
    for finding in judged(rule, path):
        if finding.rule == rule.id:
            entry = finding.as_json()
            del entry["file"], entry["category"], entry["rule"]
            out.append(entry)
    return out


def fix_until_clean(rule, documents: list) -> list | None:
    """Apply the rule's first fix (safe or unsafe, not display-only), lint again, repeat.
    None when nothing was fixed; raises when the fixes do not converge."""
    fixed_any = False
    config = config_for(rule)
    inventory = load_inventory(config.inventory, config.kube_version) if config.inventory else None
    for _ in range(MAX_FIX_ROUNDS):
        result = lint_objects(documents, config, inventory=inventory)
        fixable = [f for f in result.findings if f.rule == rule.id and f.fix is not None
                   and f.fix.applicability is not Applicability.DISPLAY_ONLY]
        if not fixable:
            return documents if fixed_any else None
        finding = fixable[0]
        index = finding.location.document
        new = apply_edits(documents[index], finding.fix.edits)
        documents = documents[:index] + new + documents[index + 1:]
        fixed_any = True
    raise AssertionError(f"{rule.id}: fixes still apply after {MAX_FIX_ROUNDS} rounds")


def dump(documents: list) -> str:
    return yaml.safe_dump_all(documents, sort_keys=False, explicit_start=True, width=120)


def expected_files(rule) -> dict[str, str]:
    """File name -> content of the rule's golden folder."""
    folder = GOLDENS / rule.id
    files = {}
    if rule.noncompliant:
        files["fail.yaml"] = example_text(rule.noncompliant)
    if rule.compliant:
        files["pass.yaml"] = example_text(rule.compliant)
    if rule.example_inventory:
        files["inventory.yaml"] = _inventory_text(rule)
        if not (folder / "inventory.yaml").is_file() or (folder / "inventory.yaml").read_text() != files["inventory.yaml"]:
            folder.mkdir(parents=True, exist_ok=True)
            (folder / "inventory.yaml").write_text(files["inventory.yaml"])  # the snapshot is judged against it
    if not rule.noncompliant:
        return files
    if not (folder / "fail.yaml").is_file() or (folder / "fail.yaml").read_text() != files["fail.yaml"]:
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "fail.yaml").write_text(files["fail.yaml"])  # the snapshot is of this text
    files["findings.json"] = json.dumps(findings_snapshot(rule, folder / "fail.yaml"), indent=2,
                                        ensure_ascii=False) + "\n"
    if rule.needs is Needs.CLUSTER:
        return files  # a snapshot's faults are fixed in the cluster, not in the dump
    try:
        documents = [d for d in yaml.safe_load_all(files["fail.yaml"]) if d is not None]
    except yaml.YAMLError:
        return files  # the parse rules' examples are not YAML
    fixed = fix_until_clean(rule, documents)
    if fixed is not None:
        files["fixed.yaml"] = dump(fixed)
    return files
