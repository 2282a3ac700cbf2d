"""A Deployment's rollout arithmetic, as the Deployment controller computes it.

Mirrors pkg/controller/deployment/util/deployment_util.go ResolveFenceposts: maxSurge is
scaled from a percentage rounding up, maxUnavailable rounding down (intstr
GetScaledValueFromIntOrPercent), and when both resolve to 0, maxUnavailable becomes 1. The API
defaults are RollingUpdate with 25%/25% (pkg/apis/apps/v1/defaults.go) and one replica."""

from __future__ import annotations

from ..core.intstr import is_zero, problem as intstr_problem, scaled_value
from ..core.unread import shown, unreadable
from ..core.value import Value
from .manifest import Manifest
from .pods import mapping
from .values import YamlMap
from .workloads import is_int32

DEFAULT_MAX_SURGE = "25%"
DEFAULT_MAX_UNAVAILABLE = "25%"
#: a DaemonSet's rollingUpdate defaults (pkg/apis/apps/v1/defaults.go SetDefaults_DaemonSet)
DAEMONSET_DEFAULT_MAX_SURGE = 0
DAEMONSET_DEFAULT_MAX_UNAVAILABLE = 1


class Strategy(Value):
    """spec.strategy of a Deployment with the API defaults applied."""

    __slots__ = ("type", "max_surge", "max_unavailable", "replicas", "rolling", "spec")

    def __init__(self, type: str, max_surge: object, max_unavailable: object, replicas: int | None, rolling: YamlMap,
                 spec: YamlMap):
        self.type = type
        self.max_surge = max_surge  # as written (int or "N%"), the default when unset
        self.max_unavailable = max_unavailable
        self.replicas = replicas  # None: not an int32 (a percentage of it cannot be taken)
        self.rolling = rolling  # the rollingUpdate mapping ({} when absent), for positions
        self.spec = spec

    @classmethod
    def of(cls, deployment: Manifest) -> "Strategy":
        spec = deployment.spec
        strategy = mapping(spec.get("strategy"))
        rolling = mapping(strategy.get("rollingUpdate"))
        replicas = spec.get("replicas", 1)
        if not is_int32(replicas):
            replicas = None
        kind = strategy.get("type")
        if not isinstance(kind, str):
            kind = "RollingUpdate"
        return cls(kind, rolling.get("maxSurge", DEFAULT_MAX_SURGE),
                   rolling.get("maxUnavailable", DEFAULT_MAX_UNAVAILABLE), replicas, rolling, spec)

    def fenceposts(self) -> tuple[int, int]:
        """(surge, unavailable) in pods; ValueError when a value is not an int or a
        percentage (the API server rejects those)."""
        surge = scaled_value(self.max_surge, self._total(self.max_surge), round_up=True)
        unavailable = scaled_value(self.max_unavailable, self._total(self.max_unavailable), round_up=False)
        if surge == 0 and unavailable == 0:
            unavailable = 1
        return surge, unavailable

    def _total(self, value: object) -> int:
        """What a percentage `value` is taken of: the replicas; where they are not an int32
        (`.nan`, 1e400, a map) the rule asking is told it cannot read them (core.unread)."""
        if self.replicas is not None:
            return self.replicas
        if isinstance(value, str):
            unreadable(self.spec, "replicas", f"is {shown(self.spec.get('replicas'))}, not a number of pods")
        return 1

    @property
    def both_zero(self) -> bool:
        """Both written as zero: the API server rejects it ("may not be 0 when maxSurge is 0")."""
        return is_zero(self.max_surge) and is_zero(self.max_unavailable)

    def surges(self) -> bool:
        """Whether a rollout may create pods before old ones are gone."""
        if self.type == "Recreate":
            return False
        return self.fenceposts()[0] > 0


def statefulset_update_problems(rolling: YamlMap, max_unavailable_kept: bool) -> list[tuple[str, str]]:
    """(field, what the API server says) for each field of a StatefulSet's rollingUpdate it
    refuses (validateRollingUpdateStatefulSet): a negative partition, and a maxUnavailable of
    0, 0% or over 100% where the server keeps the field (`max_unavailable_kept`:
    MaxUnavailableStatefulSet on; else it drops the field unread)."""
    found = []
    partition = rolling.get("partition")
    if isinstance(partition, int) and not isinstance(partition, bool) and partition < 0:
        found.append(("partition", "must be greater than or equal to 0"))
    value = rolling.get("maxUnavailable")
    if value is not None and max_unavailable_kept and (said := intstr_problem(value, nonzero=True)):
        found.append(("maxUnavailable", said))
    return found
