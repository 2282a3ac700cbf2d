"""The rule catalog. A rule's module is imported when the rule is looked up, or when the
whole catalog is gone through (rules.registry); rules.index says which rules a run needs
without importing them."""

from .registry import REGISTRY

__all__ = ["REGISTRY"]
