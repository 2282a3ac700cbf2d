"""How a pod holding a device is torn down: the preStop hook's own waits and the kubelet's
termination timeline.

Mirrors kubelet's killContainer (pkg/kubelet/kuberuntime/kuberuntime_container.go): the
preStop hook runs first and its time is taken out of the grace period; then SIGTERM, with at
least `minimumGracePeriodInSeconds` (2 s) before SIGKILL, even when the hook used the whole
period. The devices are unprepared only after every container stopped.

With native sidecars (restartable init containers) the kubelet still runs every container's
preStop at once (killContainersWithSyncResult starts one killContainer per container); only a
sidecar's SIGTERM waits, within its grace period, until every main container and every later
sidecar has stopped (kuberuntime_termination_order.go, waitForTurn). So a sidecar's preStop
does not start after the main container stopped: a check there must itself wait for the end."""

from __future__ import annotations

from functools import lru_cache

import math
import shlex

from ..core.amounts import DEFAULT_MARGIN
from ..core.servers import Server, detect, flag_text, flag_value
from ..core.unread import shown, unreadable
from .pods import pre_stop_of
from .values import YamlMap
from ..core.value import Value
from ..core.patterns import Lazy

MINIMUM_SIGTERM_SECONDS = 2  # kuberuntime minimumGracePeriodInSeconds

_BOUNDED_WAIT = Lazy(r"(?<![-\w])(?:sleep|timeout)\s+(\d+(?:\.\d+)?)(s|m|h)?\b")
_LOOP = Lazy(r"\b(while|until)\b")
_UNITS = {"": 1, "s": 1, "m": 60, "h": 3600}  # findall yields "" for no unit


#: draguard-teardown's own bounded steps inside a hook: `drain --deadline N`, `verify --timeout N`,
#: or either with `--grace-period G [--margin M]` (the bound is G - M, M by default teardown.amounts.DEFAULT_MARGIN)
_HELPER = Lazy(r"draguard-teardown\s+(drain|verify)\b([^;&|]*)")
_HELPER_BOUND = {"drain": "--deadline", "verify": "--timeout"}
#: `kill [-SIG | -s SIG | --]... 1`: signals PID 1, the container's own main process
_KILLS_PID1 = Lazy(r"\bkill\s+(?:(?:-s\s+\w+|-\w+|--)\s+)*1(?![\w.])")


def hook_command(hook: YamlMap) -> str:
    """The exec hook's command line as one string ('' for other handlers)."""
    exec_ = hook.get("exec")
    command = exec_.get("command") if isinstance(exec_, dict) else None
    return " ".join(map(str, command)) if isinstance(command, list) else ""


def _finite(number: int | float) -> bool:
    """A number the budget can add: not NaN, not infinite, not an int past a float's range."""
    return number == number and abs(number) < 1e300


def hook_budget(hook: YamlMap) -> float:
    """Seconds the hook waits by its own bounded waits: `sleep N`, `timeout N` and the
    sleep action. `timeout N cmd` bounds cmd, so both are counted, which over-estimates
    safely."""
    sleep = hook.get("sleep")
    seconds = sleep.get("seconds") if isinstance(sleep, dict) else None
    if isinstance(seconds, (int, float)) and not isinstance(seconds, bool) and _finite(seconds):
        return float(seconds)
    if seconds is not None:
        unreadable(sleep, "seconds", f"is {shown(seconds)}, not a number of seconds")
    command = hook_command(hook)
    waits = sum(float(n) * _UNITS[unit] for n, unit in _BOUNDED_WAIT.findall(command))
    return waits + sum(helper_bound(step, args) for step, args in _HELPER.findall(command))


def helper_bound(step: str, args: str) -> float:
    """The bound draguard-teardown puts on one of its steps, from its command line (0 when
    it has none: the helper then refuses to run, which its usage error says)."""
    try:
        words = shlex.split(args)
    except ValueError:
        words = args.split()
    bound = flag_value(words, _HELPER_BOUND[step])
    if bound is not None:
        return bound
    grace = flag_value(words, "--grace-period")
    margin = flag_value(words, "--margin")
    return max(grace - (DEFAULT_MARGIN if margin is None else margin), 0.0) if grace is not None else 0.0


def runs_helper(container: YamlMap) -> bool:
    """Whether the container runs draguard-teardown: as its process or in its preStop hook."""
    pre_stop = pre_stop_of(container)
    text = " ".join(argv(container)) + " " + (hook_command(pre_stop) if pre_stop else "")
    return "draguard-teardown" in text


def kills_pid1(hook: YamlMap) -> bool:
    """The hook signals PID 1: its own container's main process (without a shared PID
    namespace). The container stops, and the rest of the hook dies with it."""
    return _KILLS_PID1.search(hook_command(hook)) is not None


def argv(container: YamlMap) -> list[str]:
    """command + args, the strings only."""
    words: list[str] = []
    for key in ("command", "args"):
        value = container.get(key)
        if isinstance(value, list):
            words.extend(str(word) for word in value if isinstance(word, (str, int, float)))
    return words


def drain_of(server: Server, container: YamlMap) -> tuple[float | None, str]:
    """(seconds `server` in `container` keeps draining after SIGTERM, where that comes from:
    Server.drain_budget). A drain flag given a value that is no finite number (`nan`, `inf`)
    is said unreadable to the rule asking (core.unread): the server's default would be a guess."""
    words = argv(container)
    if server.drain_flag and flag_value(words, server.drain_flag) is None:
        for key in ("command", "args"):
            given_in = container.get(key)
            if not isinstance(given_in, list):
                continue
            for index in range(len(given_in)):
                given = flag_text(given_in, index, server.drain_flag)
                if given is not None:  # pointed at the value: after the flag, or the flag=value word
                    unreadable(given_in, index + (given_in[index] == server.drain_flag),
                               f"gives {server.drain_flag} {shown(given)}, not a number of seconds")
    return server.drain_budget(words)


def server_of(container: YamlMap) -> Server | None:
    """The inference server the container runs, from its image, command and args."""
    image = container.get("image")
    return _detect(" ".join([image if isinstance(image, str) else "", *argv(container)]))


#: core.servers.detect once a text: each of a pod's containers is asked by several rules, and
#: the same images and commands recur across a repository (five patterns searched each time)
_detect = lru_cache(maxsize=1024)(detect)


def loops_unbounded(hook: YamlMap) -> bool:
    """A `while`/`until` loop with no `timeout` anywhere in the hook: it waits until SIGKILL."""
    command = hook_command(hook)
    return bool(_LOOP.search(command)) and "timeout" not in command


class Timeline(Value):
    """Seconds after the deletion request: when SIGTERM and SIGKILL can come at the latest."""

    __slots__ = ("grace", "pre_stop")

    def __init__(self, grace: float, pre_stop: float):
        self.grace = grace
        self.pre_stop = pre_stop  # the hook's own waits (0 without a hook)

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


class Stopping(Value):
    """One container of a pod being deleted: its name, its preStop hook's own waits (0 without
    a hook), and whether it is a native sidecar."""

    __slots__ = ("name", "pre_stop", "sidecar", "ends_with_mains")

    def __init__(self, name: str, pre_stop: float, sidecar: bool = False, ends_with_mains: bool = False):
        self.name = name
        self.pre_stop = pre_stop
        self.sidecar = sidecar
        #: the hook returns once the main containers have stopped, within its bound (a sidecar
        #: running `draguard-teardown verify`, when the release is clean)
        self.ends_with_mains = ends_with_mains


class Stopped(Value):
    """When the kubelet signals one container of a terminating pod."""

    __slots__ = ("name", "sigterm_at", "kill_at")

    def __init__(self, name: str, sigterm_at: float, kill_at: float):
        self.name = name
        self.sigterm_at = sigterm_at  # when the kubelet sends SIGTERM (the container is gone then if it exits on it)
        self.kill_at = kill_at  # when SIGKILL comes at the latest


def schedule(grace: float, containers: list[Stopping]) -> list[Stopped]:
    """When each container gets SIGTERM and SIGKILL after the deletion request, for processes
    that exit on SIGTERM. Mirrors killContainer: the hook runs first, bounded by the grace
    period, and its whole seconds are taken out of it; a sidecar then waits for its turn
    within what is left (waitForTurn, truncated to whole seconds); at least 2 s of SIGTERM
    always follow. Sidecars stop in reverse spec order, after every main container."""
    def hook_end(c: Stopping, mains_stop: float = math.inf) -> float:
        bound = min(c.pre_stop, mains_stop) if c.ends_with_mains else c.pre_stop
        return min(bound, grace) if c.pre_stop and grace > 0 else 0.0

    stopped = {}
    for c in containers:
        if not c.sidecar:
            end = hook_end(c)
            stopped[c.name] = Stopped(c.name, end, end + max(grace - int(end), MINIMUM_SIGTERM_SECONDS))
    turn = mains_stop = max((s.sigterm_at for s in stopped.values()), default=0.0)
    for c in reversed([c for c in containers if c.sidecar]):
        end = hook_end(c, mains_stop)
        left = grace - int(end)
        waited = min(max(turn - end, 0.0), left) if left > 0 else 0.0
        sigterm = end + waited
        stopped[c.name] = Stopped(c.name, sigterm, sigterm + max(left - int(waited), MINIMUM_SIGTERM_SECONDS))
        turn = sigterm
    return [stopped[c.name] for c in containers]


def stopping_of(spec: YamlMap) -> list[Stopping]:
    """The containers of a pod spec as `schedule` takes them: native sidecars (init containers
    with restartPolicy Always, which keep running) and the main containers, in spec order."""
    containers = []
    for key, sidecars in (("initContainers", True), ("containers", False)):
        for c in spec.get(key) or ():
            if not isinstance(c, dict) or (sidecars and c.get("restartPolicy") != "Always"):
                continue
            hook = pre_stop_of(c)
            containers.append(Stopping(str(c.get("name")), hook_budget(hook) if hook else 0.0, sidecars,
                                       sidecars and hook is not None and "draguard-teardown verify" in hook_command(hook)))
    return containers


def pod_gone_after(grace: float, spec: YamlMap) -> float:
    """Seconds from the deletion request until the last container stopped, for processes
    that exit on SIGTERM: when the kubelet removes the pod and the claim can be released."""
    return max((s.sigterm_at for s in schedule(grace, stopping_of(spec))), default=0.0)
