"""The finding: the one record every stage produces and every report consumes."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

#: The fixed set of categories a rule may belong to (documented in the README).
CATEGORIES = (
    "schema",
    "parse",
    "legacy-resources",
    "env-partitioning",
    "host-sharing",
    "claim-wiring",
    "request-shape",
    "cel",
    "satisfiability",
    "isolation",
    "teardown",
    "rollout",
    "memory",
    "api-currency",
)


class Severity(enum.IntEnum):
    """Ordered so that `--fail-on` is a plain comparison."""

    INFO = 1
    WARNING = 2
    ERROR = 3

    @classmethod
    def parse(cls, text: str) -> "Severity":
        try:
            return cls[text.strip().upper()]
        except KeyError:
            raise ValueError(f"unknown severity {text!r} (expected error, warning or info)") from None

    def __str__(self) -> str:
        return self.name.lower()


@dataclass(frozen=True)
class ObjectRef:
    """Which Kubernetes object a finding is about (empty strings when unknown)."""

    api_version: str = ""
    kind: str = ""
    namespace: str = ""
    name: str = ""

    def as_json(self) -> dict:
        return {
            "apiVersion": self.api_version,
            "kind": self.kind,
            "namespace": self.namespace,
            "name": self.name,
        }

    def __str__(self) -> str:
        ns = f"{self.namespace}/" if self.namespace else ""
        return f"{self.kind or '?'} {ns}{self.name or '?'}"


@dataclass
class Finding:
    """One problem at one place."""

    rule: str
    category: str
    severity: Severity
    message: str
    file: str
    line: int
    column: int
    obj: ObjectRef = field(default_factory=ObjectRef)
    fix: str | None = None
    suppressed_by: str | None = None

    def sort_key(self) -> tuple:
        return (self.file, self.line, self.column, self.rule, self.message)

    def as_json(self) -> dict:
        return {
            "rule": self.rule,
            "category": self.category,
            "severity": str(self.severity),
            "message": self.message,
            "file": self.file,
            "line": self.line,
            "column": self.column,
            "object": self.obj.as_json(),
            "fix": self.fix,
        }
