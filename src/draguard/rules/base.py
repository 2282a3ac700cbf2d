"""What a rule is, and the registry: the one place rule metadata lives.

A rule is a small class: its id, metadata, documentation, options (thresholds with defaults)
and its check sit side by side. Input rules (`scope = "input"`) have no check: the loader
reports them, and they are here so that docs, SARIF and `draguard rules` know them."""

from __future__ import annotations

import textwrap
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, Iterable

from ..findings import CATEGORIES, Finding, Severity

if TYPE_CHECKING:
    from ..config import Config
    from ..model.manifest import Manifest, ObjectSet

DOCS_BASE_URL = "https://github.com/draguard/draguard/blob/main/docs/rules"


@dataclass(frozen=True)
class Option:
    """A rule threshold settable in `.draguard.yaml`."""

    default: object
    help: str

    def coerce(self, value):
        """Check a configured value against the default's type; raise ValueError if wrong."""
        expected = type(self.default)
        if expected is float and isinstance(value, int) and not isinstance(value, bool):
            return float(value)
        if not isinstance(value, expected) or (expected is int and isinstance(value, bool)):
            raise ValueError(f"expected {expected.__name__}, got {value!r}")
        return value


class Rule:
    """Base class. Subclasses set the metadata and override `check` (one object) or
    `check_set` (the whole object set, for cross-object rules)."""

    id: ClassVar[str]
    name: ClassVar[str]
    category: ClassVar[str]
    severity: ClassVar[Severity]
    summary: ClassVar[str]  # one line
    rationale: ClassVar[str]  # a paragraph: why it matters
    reference: ClassVar[str] = ""  # upstream documentation URL
    upstream_note: ClassVar[str] = ""  # where circulating guideline documents differ from upstream
    compliant: ClassVar[str] = ""  # YAML example that passes
    noncompliant: ClassVar[str] = ""  # YAML example that fails
    examples_target: ClassVar[str] = "1.34"  # the --kube-version both examples are written for
    options: ClassVar[dict[str, Option]] = {}
    scope: ClassVar[str] = "object"  # 'object', 'set' or 'input'
    kinds: ClassVar[frozenset | None] = None  # object kinds checked; None = every kind

    @property
    def help_uri(self) -> str:
        return f"{DOCS_BASE_URL}/{self.id}.md"

    def check(self, obj: "Manifest", ctx: "Context") -> Iterable[Finding]:
        return ()

    def check_set(self, objects: "ObjectSet", ctx: "Context") -> Iterable[Finding]:
        return ()

    @classmethod
    def describe(cls) -> dict:
        return {
            "id": cls.id,
            "name": cls.name,
            "category": cls.category,
            "severity": str(cls.severity),
            "summary": cls.summary,
            "rationale": " ".join(textwrap.dedent(cls.rationale).split()),
            "reference": cls.reference,
            "options": {k: {"default": o.default, "help": o.help} for k, o in cls.options.items()},
        }


class Registry:
    def __init__(self):
        self._rules: dict[str, Rule] = {}

    def add(self, cls: type[Rule]) -> type[Rule]:
        for attr in ("id", "name", "category", "severity", "summary", "rationale"):
            if not getattr(cls, attr, None):
                raise TypeError(f"rule {cls.__name__} lacks {attr}")
        if cls.category not in CATEGORIES:
            raise TypeError(f"rule {cls.id}: unknown category {cls.category!r}")
        if cls.id in self._rules:
            raise TypeError(f"rule id {cls.id} registered twice")
        self._rules[cls.id] = cls()
        return cls

    def get(self, rule_id: str) -> Rule | None:
        return self._rules.get(rule_id)

    def __contains__(self, rule_id: str) -> bool:
        return rule_id in self._rules

    def __iter__(self):
        return iter(sorted(self._rules.values(), key=lambda r: (r.category, r.id)))

    def __len__(self) -> int:
        return len(self._rules)


REGISTRY = Registry()
register = REGISTRY.add


class Context:
    """What a check may consult: the object set, the config and its own options."""

    def __init__(self, config: "Config", objects: "ObjectSet"):
        self.config = config
        self.objects = objects
        self.kube_version = config.kube_version
        self._memo: dict = {}

    def memo(self, key, build):
        """An index over the whole object set, built once per run on first use."""
        if key not in self._memo:
            self._memo[key] = build(self.objects)
        return self._memo[key]

    def option(self, rule: Rule, name: str):
        return self.config.rule_option(rule, name)

    def finding(self, rule: Rule, obj: "Manifest", message: str, container=None, key=None, *,
                value: bool = False, fix: str | None = None, severity: Severity | None = None,
                offset: int | None = None) -> Finding:
        """A finding of `rule` at `container[key]` inside `obj` (the object itself if None);
        `offset` points at one character of that string value."""
        file, line, column = obj.position(container, key, value=value, offset=offset)
        return Finding(rule.id, rule.category, severity or rule.severity, message, file, line, column,
                       obj.ref, fix)
