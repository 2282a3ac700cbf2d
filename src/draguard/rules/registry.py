"""The registry: every rule by id, checked for complete metadata when it registers."""

from __future__ import annotations

from typing import Iterator, TypeVar

from ..core.finding import CATEGORIES
from .base import Lifecycle, Profile, Rule

_REQUIRED = ("id", "name", "category", "severity", "summary", "rationale")

_RuleClass = TypeVar("_RuleClass", bound=type[Rule])


class Registry:
    def __init__(self) -> None:
        self._rules: dict[str, Rule] = {}

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

    def get(self, rule_id: str) -> Rule | None:
        return self._rules.get(rule_id)

    def __contains__(self, rule_id: str) -> bool:
        return rule_id in self._rules

    def __iter__(self) -> Iterator[Rule]:
        return iter(sorted(self._rules.values(), key=lambda r: (r.category, r.id)))

    def __len__(self) -> int:
        return len(self._rules)


REGISTRY = Registry()
register = REGISTRY.add
