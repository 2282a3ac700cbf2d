"""The rule catalog. Importing this package registers every rule."""

from . import (  # noqa: F401  (registration side effect)
    cel, cluster_claims, cluster_devices, cluster_pods, currency, env, gated, host, input, isolation, legacy, memory, requests, rollout, satisfiability, schema,
    teardown, validation, wiring,
)
from .registry import REGISTRY

__all__ = ["REGISTRY"]
