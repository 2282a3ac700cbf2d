"""The registry: every rule by id, checked for complete metadata when it registers.

A rule registers when its module is imported. The registry imports them on demand: looking
a rule up imports only the module that defines it (rules.index says which), and going
through the whole catalog (`draguard rules`, the docs, SARIF, the policies) imports them all."""

from __future__ import annotations

from importlib import import_module
from typing import Iterator, TypeVar

from ..core.finding import CATEGORIES
from .base import Lifecycle, Profile, Rule

_REQUIRED = ("id", "name", "category", "severity", "summary", "rationale")
#: the modules whose rules make the catalog (importing one registers its rules)
CATALOG_MODULES = ("cel", "cluster_claims", "cluster_devices", "cluster_pods", "currency", "env", "gated", "host",
                   "input", "isolation", "legacy", "memory", "requests", "rollout", "satisfiability", "schema",
                   "teardown", "validation", "wiring")

_RuleClass = TypeVar("_RuleClass", bound=type[Rule])


class Registry:
    def __init__(self) -> None:
        self._rules: dict[str, Rule] = {}
        self._complete = False

    def add(self, cls: _RuleClass) -> _RuleClass:
        for attr in _REQUIRED:
            if not getattr(cls, attr, None):
                raise TypeError(f"rule {cls.__name__} lacks {attr}")
        if cls.category not in CATEGORIES:
            raise TypeError(f"rule {cls.id}: unknown category {cls.category!r}")
        if cls.profile is Profile.STRICT and not cls.profile_reason:
            raise TypeError(f"rule {cls.id}: a strict-only rule says why it is not recommended (profile_reason)")
        if cls.lifecycle is not Lifecycle.STABLE and not cls.lifecycle_note:
            raise TypeError(f"rule {cls.id}: a {cls.lifecycle} rule says why (lifecycle_note)")
        if cls.id in self._rules:
            raise TypeError(f"rule id {cls.id} registered twice")
        self._rules[cls.id] = cls()
        return cls

    def load_all(self) -> None:
        """Import every rule module (once)."""
        if not self._complete:
            for name in CATALOG_MODULES:
                import_module(f"{__package__}.{name}")
            self._complete = True

    def get(self, rule_id: str) -> Rule | None:
        """The rule `rule_id`, its module imported if it was not; None for no rule."""
        rule = self._rules.get(rule_id)
        if rule is None and not self._complete:
            from .index import entries

            entry = entries().get(rule_id)
            if entry is None:
                return None
            import_module(entry.module)
            rule = self._rules.get(rule_id)
            if rule is None:  # the index said another module: believe the modules
                self.load_all()
                rule = self._rules.get(rule_id)
        return rule

    def loaded(self) -> list[Rule]:
        """The rules registered so far (those of the modules imported)."""
        return list(self._rules.values())

    def __contains__(self, rule_id: str) -> bool:
        if rule_id in self._rules or self._complete:
            return rule_id in self._rules
        from .index import entries

        return rule_id in entries()

    def __iter__(self) -> Iterator[Rule]:
        self.load_all()
        return iter(sorted(self._rules.values(), key=lambda r: (r.category, r.id)))

    def __len__(self) -> int:
        self.load_all()
        return len(self._rules)


REGISTRY = Registry()
register = REGISTRY.add
load_catalog = REGISTRY.load_all
