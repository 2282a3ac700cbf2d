"""teardown: a pod holding a device must release it on a bounded, known timeline."""

from __future__ import annotations

import re

from ..findings import Severity
from ..model.workloads import POD_KINDS, pod_sites
from .base import Option, Rule, register
from .examples import COMPLIANT_POD
from .wiring import container_claims, pod_claims

DEFAULT_GRACE_SECONDS = 30  # the API default for terminationGracePeriodSeconds
_BOUNDED_WAIT = re.compile(r"\b(?:sleep|timeout)\s+(\d+(?:\.\d+)?)(s|m|h)?\b")
_LOOP = re.compile(r"\b(while|until)\b")
_UNITS = {"": 1, "s": 1, "m": 60, "h": 3600}  # findall yields "" for no unit


def pre_stop(container: dict):
    lifecycle = container.get("lifecycle")
    hook = lifecycle.get("preStop") if isinstance(lifecycle, dict) else None
    return hook if isinstance(hook, dict) else None


def hook_command(hook: dict) -> str:
    exec_ = hook.get("exec")
    command = exec_.get("command") if isinstance(exec_, dict) else None
    return " ".join(map(str, command)) if isinstance(command, list) else ""


def hook_budget(hook: dict) -> float:
    """Seconds the hook waits by its own bounded waits: `sleep N`, `timeout N` and the
    sleep action. `timeout N cmd` bounds cmd, so both are counted, which over-estimates
    safely."""
    sleep = hook.get("sleep")
    if isinstance(sleep, dict) and isinstance(sleep.get("seconds"), (int, float)):
        return float(sleep["seconds"])
    return sum(float(n) * _UNITS[unit] for n, unit in _BOUNDED_WAIT.findall(hook_command(hook)))


def claim_sites(obj):
    """Pod sites that consume DRA claims."""
    return [site for site in pod_sites(obj) if pod_claims(site)]


@register
class TeardownPreStop(Rule):
    id = "teardown-prestop"
    name = "Claim consumer without a preStop hook"
    category = "teardown"
    severity = Severity.WARNING
    kinds = POD_KINDS
    summary = "A container that uses a claim has no preStop hook."
    rationale = """
        When a pod is deleted the kubelet sends SIGTERM at once; an inference server that
        dies mid-request or mid-CUDA-context can leave the device busy until the driver
        notices, and the next tenant's pod waits. A preStop hook drains requests and exits
        the GPU work deterministically before the claim is released."""
    reference = "https://kubernetes.io/docs/concepts/containers/container-lifecycle-hooks/"
    noncompliant = COMPLIANT_POD.replace("preStop:", "postStart:")
    compliant = COMPLIANT_POD

    def check(self, obj, ctx):
        for site in claim_sites(obj):
            for c in site.containers:
                if container_claims(c) and pre_stop(c.container) is None and not c.init:
                    yield ctx.finding(self, obj, f"container '{c.name}' holds a device claim but has no preStop hook "
                                      "to release it deterministically", c.container, "name",
                                      fix="add lifecycle.preStop that drains work, bounded by `timeout N`")


@register
class TeardownGracePeriod(Rule):
    id = "teardown-grace-period"
    name = "Grace period too short for teardown"
    category = "teardown"
    severity = Severity.WARNING
    kinds = POD_KINDS
    summary = "terminationGracePeriodSeconds is below the floor, or not longer than the preStop hook's own waits."
    rationale = """
        The grace period bounds preStop plus SIGTERM handling; when it runs out the kubelet
        sends SIGKILL and the hook's work is cut short. The default (30 s) is rarely enough to
        drain GPU work. draguard requires at least `minGraceSeconds` (default 60) and more
        than the hook's own bounded waits (`sleep N`, `timeout N` and the sleep action are
        added up)."""
    reference = "https://kubernetes.io/docs/concepts/workloads/pods/pod-lifecycle/#pod-termination"
    options = {"minGraceSeconds": Option(60, "smallest acceptable terminationGracePeriodSeconds")}
    noncompliant = COMPLIANT_POD.replace("terminationGracePeriodSeconds: 60", "terminationGracePeriodSeconds: 10")
    compliant = COMPLIANT_POD

    def check(self, obj, ctx):
        floor = ctx.option(self, "minGraceSeconds")
        for site in claim_sites(obj):
            grace = site.spec.get("terminationGracePeriodSeconds")
            stated = isinstance(grace, int)
            seconds = grace if stated else DEFAULT_GRACE_SECONDS
            where = (site.spec, "terminationGracePeriodSeconds") if stated else (site.spec, None)
            if seconds < floor:
                origin = "" if stated else " (the default; not set)"
                yield ctx.finding(self, obj, f"terminationGracePeriodSeconds is {seconds}{origin}, below the "
                                  f"{floor} s floor for pods that hold devices", *where, value=stated,
                                  fix=f"set terminationGracePeriodSeconds to at least {floor}")
                continue
            hooks = [(c, pre_stop(c.container)) for c in site.containers if pre_stop(c.container)]
            longest = max(((hook_budget(h), c) for c, h in hooks), default=(0.0, None), key=lambda p: p[0])
            if longest[1] is not None and longest[0] >= seconds:
                yield ctx.finding(self, obj, f"the preStop hook of container '{longest[1].name}' waits up to "
                                  f"{longest[0]:g} s but the grace period is {seconds} s: SIGKILL cuts it short",
                                  *where, value=stated, fix=f"set terminationGracePeriodSeconds above {longest[0]:g}")


@register
class TeardownUnboundedHook(Rule):
    id = "teardown-unbounded-hook"
    name = "preStop hook with an unbounded wait"
    category = "teardown"
    severity = Severity.WARNING
    kinds = POD_KINDS
    summary = "A preStop hook loops (while/until) without a timeout: it runs until SIGKILL."
    rationale = """
        `while pgrep server; do sleep 1; done` waits for a condition that may never come;
        the hook then runs until the grace period expires and SIGKILL arrives, so every
        teardown takes the full grace period and the device is released at an arbitrary
        point. Wrap the wait in `timeout N` so the hook ends on its own."""
    reference = "https://kubernetes.io/docs/concepts/containers/container-lifecycle-hooks/#hook-handler-execution"
    noncompliant = COMPLIANT_POD.replace("[sh, -c, sleep 10]", "[sh, -c, 'while pgrep vllm; do sleep 1; done']")
    compliant = COMPLIANT_POD.replace("[sh, -c, sleep 10]", "[sh, -c, 'timeout 30 sh -c \"while pgrep vllm; do sleep 1; done\"']")

    def check(self, obj, ctx):
        for site in claim_sites(obj):
            for c in site.containers:
                hook = pre_stop(c.container)
                command = hook_command(hook) if hook else ""
                if _LOOP.search(command) and "timeout" not in command:
                    yield ctx.finding(self, obj, f"the preStop hook of container '{c.name}' loops without a timeout: "
                                      "it will run until SIGKILL", hook.get("exec"), "command",
                                      fix="wrap the loop in `timeout N`")
