"""The rule catalog. Importing this package registers every rule."""

from . import input, schema  # noqa: F401  (registration side effect)
from .base import REGISTRY, Context, Option, Rule, register

__all__ = ["REGISTRY", "Context", "Option", "Rule", "register"]
