"""The rule catalog. Importing this package registers every rule."""

from . import (  # noqa: F401  (registration side effect)
    cel, currency, env, host, input, isolation, legacy, memory, requests, rollout, satisfiability, schema, teardown,
    wiring,
)
from .registry import REGISTRY

__all__ = ["REGISTRY"]
