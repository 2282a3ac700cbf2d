"""How a pod holding a device is torn down: the preStop hook's own waits and the kubelet's
termination timeline.

Mirrors kubelet's killContainer (pkg/kubelet/kuberuntime/kuberuntime_container.go): the
preStop hook runs first and its time is taken out of the grace period; then SIGTERM, with at
least `minimumGracePeriodInSeconds` (2 s) before SIGKILL, even when the hook used the whole
period. The devices are unprepared only after every container stopped."""

from __future__ import annotations

import re
from dataclasses import dataclass

MINIMUM_SIGTERM_SECONDS = 2  # kuberuntime minimumGracePeriodInSeconds

_BOUNDED_WAIT = re.compile(r"\b(?:sleep|timeout)\s+(\d+(?:\.\d+)?)(s|m|h)?\b")
_LOOP = re.compile(r"\b(while|until)\b")
_UNITS = {"": 1, "s": 1, "m": 60, "h": 3600}  # findall yields "" for no unit


def hook_command(hook: dict) -> str:
    """The exec hook's command line as one string ('' for other handlers)."""
    exec_ = hook.get("exec")
    command = exec_.get("command") if isinstance(exec_, dict) else None
    return " ".join(map(str, command)) if isinstance(command, list) else ""


def hook_budget(hook: dict) -> float:
    """Seconds the hook waits by its own bounded waits: `sleep N`, `timeout N` and the
    sleep action. `timeout N cmd` bounds cmd, so both are counted, which over-estimates
    safely."""
    sleep = hook.get("sleep")
    if isinstance(sleep, dict) and isinstance(sleep.get("seconds"), (int, float)) \
            and not isinstance(sleep.get("seconds"), bool):
        return float(sleep["seconds"])
    return sum(float(n) * _UNITS[unit] for n, unit in _BOUNDED_WAIT.findall(hook_command(hook)))


def loops_unbounded(hook: dict) -> bool:
    """A `while`/`until` loop with no `timeout` anywhere in the hook: it waits until SIGKILL."""
    command = hook_command(hook)
    return bool(_LOOP.search(command)) and "timeout" not in command


@dataclass(frozen=True)
class Timeline:
    """Seconds after the deletion request: when SIGTERM and SIGKILL can come at the latest."""

    grace: float
    pre_stop: float  # the hook's own waits (0 without a hook)

    @property
    def sigterm_at(self) -> float:
        return min(self.pre_stop, self.grace)

    @property
    def kill_at(self) -> float:
        return self.sigterm_at + max(self.grace - self.sigterm_at, MINIMUM_SIGTERM_SECONDS)

    @property
    def hook_cut_short(self) -> bool:
        """The hook's waits do not end before the grace period does."""
        return self.pre_stop >= self.grace > 0
