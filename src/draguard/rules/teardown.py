"""teardown: a pod holding a device must release it on a bounded, known timeline."""

from __future__ import annotations

import math

from ..core.finding import Severity
from ..core.fixes import Applicability, Fix, FixAvailability, set_value
from ..model.gpu import gpu_claim_entries
from ..model.pods import pod_sites, text
from ..model.teardown import Timeline, hook_budget, loops_unbounded
from ..model.workloads import POD_TARGETS
from ..sources.yamlpos import path_of
from .base import Needs, Option, Rule
from .examples import COMPLIANT_POD
from .registry import register

#: seconds of SIGTERM handling the grace-period fix leaves after the hook's own waits
MARGIN_SECONDS = 30


def gpu_sites(obj, ctx):
    """(pod site, names of its claims that hold GPUs) for pods that hold GPU claims: a claim
    of IMEX channels, NICs or admin-access monitoring has no GPU to release."""
    for site in pod_sites(obj):
        names = {text(entry.get("name")) for entry in gpu_claim_entries(site, ctx.objects)}
        if names:
            yield site, names


@register
class TeardownPreStop(Rule):
    id = "teardown-prestop"
    name = "Claim consumer without a preStop hook"
    category = "teardown"
    severity = Severity.WARNING
    targets = POD_TARGETS
    fixable = FixAvailability.ALWAYS
    needs = Needs.OBJECT_SET  # whether its claims hold GPUs
    options = {"preStopSeconds": Option(10, "seconds of the sleep hook the fix adds")}
    summary = "A container that uses a GPU claim has no preStop hook."
    rationale = """
        When a pod is deleted the kubelet sends SIGTERM at once; an inference server that
        dies mid-request or mid-CUDA-context can leave the device busy until the driver
        notices, and the next tenant's pod waits. A preStop hook drains requests and exits
        the GPU work deterministically before the claim is released. The fix adds a bounded
        `sleep` hook (the lifecycle sleep action, on by default since 1.30), which gives the
        endpoints time to drop the pod before SIGTERM; replace it with the server's drain."""
    reference = "https://kubernetes.io/docs/concepts/containers/container-lifecycle-hooks/"
    noncompliant = COMPLIANT_POD.replace("preStop:", "postStart:")
    compliant = COMPLIANT_POD

    def check(self, obj, ctx):
        seconds = ctx.option(self, "preStopSeconds")
        for site, gpu_claims in gpu_sites(obj, ctx):
            for c in site.containers:
                uses = {text(claim.get("name")) for claim in c.claims} & gpu_claims
                if uses and c.pre_stop is None and not c.init:
                    yield ctx.finding(self, obj, f"{c.label} holds a device claim but has no preStop hook to "
                                      "release it deterministically", c.container, "name",
                                      help="add lifecycle.preStop that drains work, bounded by `timeout N`",
                                      fix=Fix(f"add a {seconds} s preStop sleep", Applicability.UNSAFE,
                                              (set_value(c.path + ("lifecycle", "preStop"),
                                                         {"sleep": {"seconds": seconds}}),)))


@register
class TeardownGracePeriod(Rule):
    id = "teardown-grace-period"
    name = "Grace period too short for teardown"
    category = "teardown"
    severity = Severity.WARNING
    targets = POD_TARGETS
    fixable = FixAvailability.ALWAYS
    needs = Needs.OBJECT_SET  # whether its claims hold GPUs
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
        for site, _ in gpu_sites(obj, ctx):
            seconds, stated = site.grace_period
            where = (site.spec, "terminationGracePeriodSeconds") if stated else (site.spec, None)
            hooks = [(hook_budget(c.pre_stop), c) for c in site.containers if c.pre_stop]
            longest, container = max(hooks, default=(0.0, None), key=lambda pair: pair[0])
            timeline = Timeline(seconds, longest)
            wanted = max(floor, math.ceil(longest) + MARGIN_SECONDS)
            fix = Fix(f"set terminationGracePeriodSeconds: {wanted}", Applicability.UNSAFE,
                      (set_value(path_of(site.spec, "terminationGracePeriodSeconds"), wanted),))
            if seconds < floor:
                origin = "" if stated else " (the default; not set)"
                yield ctx.finding(self, obj, f"terminationGracePeriodSeconds is {seconds}{origin}, below the "
                                  f"{floor} s floor for pods that hold devices", *where, value=stated,
                                  help=f"set terminationGracePeriodSeconds to at least {floor}", fix=fix)
            elif container is not None and timeline.hook_cut_short:
                yield ctx.finding(self, obj, f"the preStop hook of {container.label} waits up to {longest:g} s but "
                                  f"the grace period is {seconds} s: SIGKILL cuts it short", *where, value=stated,
                                  help=f"set terminationGracePeriodSeconds above {longest:g}", fix=fix)


@register
class TeardownUnboundedHook(Rule):
    id = "teardown-unbounded-hook"
    name = "preStop hook with an unbounded wait"
    category = "teardown"
    severity = Severity.WARNING
    targets = POD_TARGETS
    needs = Needs.OBJECT_SET  # whether its claims hold GPUs
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
        for site, _ in gpu_sites(obj, ctx):
            for c in site.containers:
                hook = c.pre_stop
                if hook and loops_unbounded(hook):
                    yield ctx.finding(self, obj, f"the preStop hook of {c.label} loops without a timeout: it will "
                                      "run until SIGKILL", hook.get("exec"), "command", help="wrap the loop in `timeout N`")
