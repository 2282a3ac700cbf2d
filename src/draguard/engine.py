"""One lint run: inputs -> load -> rules -> suppressions and config -> result."""

from __future__ import annotations

from dataclasses import dataclass

from .config import Config
from .findings import Finding, ObjectRef, Severity
from .load.loader import InputProblem, Loaded, load_units
from .load.sources import DEFAULT_INCLUDE, expand
from .load.yamlpos import DEFAULT_LIMITS, Limits
from .model.manifest import Manifest, ObjectSet
from .rules import REGISTRY
from .rules.base import Context

SUPPRESS_PREFIX = "ignore.draguard.io/"


@dataclass
class LintResult:
    findings: list[Finding]
    suppressed: list[Finding]
    loaded: Loaded
    config: Config

    @property
    def objects(self) -> int:
        return len(self.loaded.manifests)

    def failed(self, fail_on: Severity) -> bool:
        return any(f.severity >= fail_on for f in self.findings)

    def summary(self) -> dict:
        by_severity = {str(s): 0 for s in (Severity.ERROR, Severity.WARNING, Severity.INFO)}
        by_rule: dict[str, int] = {}
        for f in self.findings:
            by_severity[str(f.severity)] += 1
            by_rule[f.rule] = by_rule.get(f.rule, 0) + 1
        return {
            "total": len(self.findings),
            "errors": by_severity["error"],
            "warnings": by_severity["warning"],
            "info": by_severity["info"],
            "suppressed": len(self.suppressed),
            "files": len({s.display for s in self.loaded.sources}),
            "objects": self.objects,
            "byRule": dict(sorted(by_rule.items())),
        }


@dataclass
class LintRequest:
    inputs: list[str]
    config: Config
    include: tuple = DEFAULT_INCLUDE
    exclude: tuple = ()
    limits: Limits = DEFAULT_LIMITS
    stdin: object = None


def _as_finding(problem: InputProblem, obj: ObjectRef = ObjectRef()) -> Finding:
    rule = REGISTRY.get(problem.rule)
    return Finding(rule.id, rule.category, rule.severity, problem.message, problem.file,
                   problem.line, problem.column, obj)


def _suppressions(manifest: Manifest, raw: list[Finding]) -> dict[str, str]:
    """Rule id -> reason from `ignore.draguard.io/<rule-id>` annotations; unknown ids are findings."""
    found = {}
    annotations = manifest.annotations
    for key, reason in annotations.items():
        if not isinstance(key, str) or not key.startswith(SUPPRESS_PREFIX):
            continue
        rule_id = key[len(SUPPRESS_PREFIX):]
        if rule_id in REGISTRY:
            found[rule_id] = str(reason) if reason is not None else ""
        else:
            file, line, column = manifest.position(annotations, key)
            raw.append(_as_finding(InputProblem(
                "unknown-rule", f"suppression names unknown rule '{rule_id}' (see `draguard rules`)",
                file, line, column), manifest.ref))
    return found


def run(request: LintRequest) -> LintResult:
    config = request.config
    units = expand(request.inputs, request.include, request.exclude)
    loaded = load_units(units, request.limits, request.stdin)
    objects = ObjectSet(loaded.manifests)
    ctx = Context(config, objects)
    raw: list[Finding] = [_as_finding(p) for p in loaded.problems + config.problems]
    enabled = [r for r in REGISTRY if r.scope != "input" and config.settings(r.id).enabled]
    object_rules = [r for r in enabled if r.scope == "object"]
    by_kind: dict[str, list] = {}
    suppressions: dict[ObjectRef, dict[str, str]] = {}
    for manifest in objects:
        kind = manifest.kind
        rules = by_kind.get(kind)
        if rules is None:
            rules = by_kind[kind] = [r for r in object_rules if r.kinds is None or kind in r.kinds]
        for rule in rules:
            raw.extend(rule.check(manifest, ctx))
        if manifest.annotations:
            found = _suppressions(manifest, raw)
            if found:
                suppressions.setdefault(manifest.ref, {}).update(found)
    for rule in enabled:
        if rule.scope == "set":
            raw.extend(rule.check_set(objects, ctx))
    findings, suppressed = [], []
    for finding in raw:
        settings = config.settings(finding.rule)
        if not settings.enabled:
            continue
        if settings.severity is not None:
            finding.severity = settings.severity
        reason = suppressions.get(finding.obj, {}).get(finding.rule)
        if reason is not None:
            finding.suppressed_by = reason
            suppressed.append(finding)
        else:
            findings.append(finding)
    findings.sort(key=Finding.sort_key)
    suppressed.sort(key=Finding.sort_key)
    return LintResult(findings, suppressed, loaded, config)
