"""teardown: a pod holding a device must release it on a bounded, known timeline."""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

import math
from fnmatch import fnmatchcase

from ..core.finding import Finding, Severity
from ..core.unread import Unread, listening, told
from ..core.fixes import Applicability, Fix, FixAvailability, NoFix, append, set_value
from ..dra.gpuclasses import gpu_claim_entries, holds_channel
from ..model.pods import claim_sites, pod_sites, text
from ..model.teardown import Timeline, argv, drain_of, hook_budget, hook_command, kills_pid1, loops_unbounded, \
    runs_helper
from ..model.workloads import POD_TARGETS
from ..model.manifest import edit_path
from ..model.objectset import ObjectSet
from ..core.servers import Server
from .base import Admission, Mutation, Needs, Option, Rule
from .examples import COMPLIANT_POD, replace_last
from .registry import register
from ..core.value import Value

if TYPE_CHECKING:
    from ..model.manifest import Manifest
    from ..model.pods import ContainerSite, PodSite
    from .context import Context

#: seconds of SIGTERM handling the grace-period fix leaves after the hook's own waits
MARGIN_SECONDS = 30
#: the parts of a teardown besides the hook and the server's drain, as settings of the rules
#: that read the budget (teardown-grace-period, teardown-drain-disabled)
BUDGET_OPTIONS = {
    "releaseSeconds": Option(10, "seconds from the server's exit until its CUDA contexts and memory are gone"),
    "verifySeconds": Option(5, "seconds the teardown helper's verify needs after the release (when the pod runs it)"),
    "marginSeconds": Option(10, "seconds kept free before SIGKILL"),
    "unknownDrainSeconds": Option(30, "drain assumed for a server that documents no bound (SGLang, KServe's own)"),
}


def claim_names(container: ContainerSite) -> set[str]:
    """The pod claims a container lists in resources.claims."""
    return {text(claim.get("name")) for claim in container.claims}


def gpu_sites(obj: Manifest, ctx: Context, channels: bool = False) -> list[tuple[PodSite, set[str]]]:
    """(pod site, names of its claims that hold GPUs) for pods that hold GPU claims: a claim
    of NICs or admin-access monitoring has no GPU to release. With `channels`, an IMEX
    channel claim counts too (CHANNEL_NOTE): the rules about the teardown's timeline judge it,
    the ones about GPU memory and servers do not. Found once an object for the six rules
    that ask (ObjectSet.remembered); what finding them met unreadable (core.unread) is said
    again to each."""
    found, heard = ctx.objects.remembered(_channel_sites if channels else _gpu_only_sites, obj)
    told(heard)
    return found


_Sites = tuple[list[tuple["PodSite", set[str]]], tuple[Unread, ...]]


def _gpu_only_sites(obj: Manifest, objects: ObjectSet) -> _Sites:
    return _found_sites(obj, objects, False)


def _channel_sites(obj: Manifest, objects: ObjectSet) -> _Sites:
    return _found_sites(obj, objects, True)


def _found_sites(obj: Manifest, objects: ObjectSet, channels: bool) -> _Sites:
    found = []
    with listening() as heard:
        for site in pod_sites(obj):
            if not site.claims:  # no pod claim, no device to release: 8,000 of a lint's 8,500 pods
                continue
            entries = gpu_claim_entries(site, objects)
            if channels:
                entries = entries + [e for e in site.claims if holds_channel(objects, site.owner.namespace, e)]
            names = {text(entry.get("name")) for entry in entries}
            if names:
                found.append((site, names))
    return found, tuple(heard)


#: what the timeline rules say of IMEX channel claims, in their docs
CHANNEL_NOTE = """
        An IMEX channel claim (the claim template a ComputeDomain makes, class
        `compute-domain-default-channel.nvidia.com`) counts as a device claim here: NVIDIA's
        compute-domain kubelet plugin hands each node's one channel to one claim at a time and
        refuses to prepare it for the next pod while a prepared claim still holds it
        (k8s-dra-driver-gpu, cmd/compute-domain-kubelet-plugin/device_state.go,
        assertImexChannelNotAllocated); the claim is unprepared only once the pod's
        containers are gone, so an unbounded teardown keeps the next ComputeDomain's pod on
        that node from starting. A channel holds no GPU memory: the rules about GPU memory
        and inference servers (teardown-drain-disabled, teardown-helper-claim) do not judge
        it."""


@register
class TeardownPreStop(Rule):
    id = "teardown-prestop"
    name = "Claim consumer without a preStop hook"
    category = "teardown"
    severity = Severity.WARNING
    targets = POD_TARGETS
    fixable = FixAvailability.ALWAYS
    needs = Needs.OBJECT_SET  # whether its claims hold GPUs
    options = {"preStopSeconds": Option(10, "the longest sleep the fix adds (less where the grace period leaves "
                                           "less after the server's drain, the release and the margin)"),
               "helperImages": Option(["*draguard-teardown*", "*draguard/teardown*"],
                                      "images (fnmatch patterns) that carry draguard-teardown: there the fix runs "
                                      "its drain in the hook instead of a sleep"),
               **BUDGET_OPTIONS}
    summary = "A container that uses a GPU claim has no preStop hook."
    rationale = """
        When a pod is deleted the kubelet sends SIGTERM at once; an inference server that
        dies mid-request or mid-CUDA-context can leave the device busy until the driver
        notices, and the next tenant's pod waits. A preStop hook drains requests and exits
        the GPU work deterministically before the claim is released. Where the container's
        image carries draguard-teardown (`helperImages`), the fix runs its `drain` in the hook
        (not ready, wait for the endpoints, drain the detected server, bounded by the grace
        period); elsewhere it adds a `sleep` hook (the lifecycle sleep action, on by default
        since 1.30) of what the grace period leaves after the server's drain, the release and
        the margin, which gives the endpoints time to drop the pod before SIGTERM. The fix's
        title says which.""" + CHANNEL_NOTE
    reference = "https://kubernetes.io/docs/concepts/containers/container-lifecycle-hooks/"
    noncompliant = COMPLIANT_POD.replace("preStop:", "postStart:")
    compliant = COMPLIANT_POD

    def check(self, obj: Manifest, ctx: Context) -> Iterator[Finding]:
        for site, gpu_claims in gpu_sites(obj, ctx, channels=True):
            for c in site.containers:
                uses = claim_names(c) & gpu_claims
                if uses and c.pre_stop is None and not c.init:
                    yield ctx.finding(self, obj, f"{c.label} holds a device claim but has no preStop hook to "
                                      "release it deterministically", c.container, "name",
                                      help="add lifecycle.preStop that drains work, bounded by `timeout N`",
                                      fix=self._fix(site, c, ctx))

    def _fix(self, site: PodSite, c: ContainerSite, ctx: Context) -> Fix:
        """draguard-teardown's drain where the image carries it, else the budgeted sleep."""
        grace, _ = site.grace_period
        server = c.server
        left = grace - ctx.option(self, "releaseSeconds") - ctx.option(self, "marginSeconds")
        if server is not None:  # what the grace period leaves before the server's drain
            left = grace - container_budget(site, c, server, ctx, self).total
        seconds = max(1, min(ctx.option(self, "preStopSeconds"), math.floor(left)))
        hook = c.path + ("lifecycle", "preStop")
        image = c.container.get("image")
        if isinstance(image, str) and any(fnmatchcase(image, p) for p in ctx.option(self, "helperImages")):
            command = ["draguard-teardown", "drain", *(["--server", server.name] if server else []),
                       "--endpoint-wait", str(seconds), "--grace-period", str(grace),
                       "--margin", f"{ctx.option(self, 'marginSeconds'):g}", "--report", "/proc/1/fd/1"]
            return Fix(f"add a preStop hook running draguard-teardown drain (the image {image} carries the helper)",
                       Applicability.UNSAFE, (set_value(hook, {"exec": {"command": command}}),))
        return Fix(f"add a {seconds} s preStop sleep, what the grace period leaves (the image carries no "
                   "draguard-teardown: list it in helperImages if it does)", Applicability.UNSAFE,
                   (set_value(hook, {"sleep": {"seconds": seconds}}),))


class Budget(Value):
    """One server's teardown, part by part: (what, seconds)."""

    __slots__ = ("container", "server", "parts", "drain")

    def __init__(self, container: ContainerSite, server: Server, parts: tuple[tuple[str, float], ...], drain: float):
        self.container = container  # the one that runs the server
        self.server = server
        self.parts = parts
        self.drain = drain  # the server's part

    @property
    def total(self) -> float:
        return sum(n for _, n in self.parts)

    @property
    def besides_drain(self) -> float:
        """What the rest of the teardown takes: the grace period minus this is the drain's."""
        return self.total - self.drain

    def __str__(self) -> str:
        return " + ".join(f"{n:g} s {what}" for what, n in self.parts) + f" = {self.total:g} s"


def container_budget(site: PodSite, c: ContainerSite, server: Server, ctx: Context, rule: Rule) -> Budget:
    """What tearing down the server of container `c` takes: its preStop waits, then the
    server's drain after SIGTERM, the release, the helper's verify (when the pod runs it) and
    a margin (the options of BUDGET_OPTIONS, read from `rule`)."""
    def option(name: str) -> float:
        return float(ctx.option(rule, name))  # every budget option is a number of seconds

    verify = option("verifySeconds") if any(runs_helper(x.container) for x in site.containers) else 0
    drain, source = drain_of(server, c.container)
    if drain is None:
        drain, source = option("unknownDrainSeconds"), "assumed: no documented bound"
    parts = (("preStop", hook_budget(c.pre_stop) if c.pre_stop else 0.0),
             (f"{server.title} drain ({source})", drain), ("release", option("releaseSeconds")),
             ("verify", verify), ("margin", option("marginSeconds")))
    return Budget(c, server, tuple((what, float(n)) for what, n in parts if n), float(drain))


def teardown_budget(site: PodSite, gpu_claims: set[str], ctx: Context, rule: Rule) -> Budget | None:
    """The largest teardown budget over the pod's GPU containers that run a known inference
    server; None without one."""
    budgets = [container_budget(site, c, server, ctx, rule) for c in site.containers
               if not c.init and (server := c.server) is not None and claim_names(c) & gpu_claims]
    return max(budgets, key=lambda b: b.total, default=None)


@register
class TeardownGracePeriod(Rule):
    id = "teardown-grace-period"
    name = "Grace period too short for teardown"
    category = "teardown"
    severity = Severity.WARNING
    targets = POD_TARGETS
    fixable = FixAvailability.ALWAYS
    needs = Needs.OBJECT_SET  # whether its claims hold GPUs
    summary = ("terminationGracePeriodSeconds is shorter than the teardown budget of the detected inference server, "
               "below the floor, or not longer than the preStop hook's own waits.")
    rationale = """
        The grace period bounds preStop plus SIGTERM handling; when it runs out the kubelet
        sends SIGKILL and the drain, the release and any check of it are cut short. When a
        GPU container runs a known inference server (`draguard-teardown servers`), draguard
        adds up what its teardown takes: the preStop hook's own waits (endpoint removal),
        the server's drain after SIGTERM (vLLM `--shutdown-timeout`, Triton
        `--exit-timeout-secs`, TGI's fixed 90 s), the release of its CUDA contexts, the
        helper's verify when the pod runs it, and a margin; the grace period must cover the
        sum. Without a known server it requires at least `minGraceSeconds` (the default 30 s
        is rarely enough to drain GPU work). Either way it must exceed the hook's own bounded
        waits (`sleep N`, `timeout N`, the sleep action and draguard-teardown's own bounds
        are added up).""" + CHANNEL_NOTE
    reference = "https://kubernetes.io/docs/concepts/workloads/pods/pod-lifecycle/#pod-termination"
    options = {"minGraceSeconds": Option(60, "smallest acceptable terminationGracePeriodSeconds without a known server"),
               **BUDGET_OPTIONS}
    noncompliant = COMPLIANT_POD.replace("terminationGracePeriodSeconds: 60", "terminationGracePeriodSeconds: 45")
    compliant = COMPLIANT_POD

    def check(self, obj: Manifest, ctx: Context) -> Iterator[Finding]:
        floor = ctx.option(self, "minGraceSeconds")
        for site, gpu_claims in gpu_sites(obj, ctx, channels=True):
            seconds, stated = site.grace_period
            if stated and seconds == 0:
                continue  # teardown-grace-zero
            where = (site.spec, "terminationGracePeriodSeconds") if stated else (site.spec, None)
            hooks = [(hook_budget(c.pre_stop), c) for c in site.containers if c.pre_stop]
            longest, container = max(hooks, default=(0.0, None), key=lambda pair: pair[0])
            budget = teardown_budget(site, gpu_claims, ctx, self)
            wanted = math.ceil(budget.total) if budget else max(floor, math.ceil(longest) + MARGIN_SECONDS)
            wanted = max(wanted, math.ceil(longest) + 1)
            fix = Fix(f"set terminationGracePeriodSeconds: {wanted}", Applicability.UNSAFE,
                      (set_value(edit_path(site.spec, "terminationGracePeriodSeconds"), wanted),))
            origin = "" if stated else " (the default; not set)"
            if budget is not None and seconds < budget.total:
                yield ctx.finding(self, obj, f"terminationGracePeriodSeconds is {seconds}{origin}, but tearing down "
                                  f"{budget.server.title} in {budget.container.label} takes {budget}", *where,
                                  value=stated, help=f"set terminationGracePeriodSeconds to at least {wanted}", fix=fix)
            elif budget is None and seconds < floor:
                yield ctx.finding(self, obj, f"terminationGracePeriodSeconds is {seconds}{origin}, below the "
                                  f"{floor} s floor for pods that hold devices", *where, value=stated,
                                  help=f"set terminationGracePeriodSeconds to at least {floor}", fix=fix)
            elif container is not None and Timeline(seconds, longest).hook_cut_short:
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
        point. Wrap the wait in `timeout N` so the hook ends on its own.""" + CHANNEL_NOTE
    reference = "https://kubernetes.io/docs/concepts/containers/container-lifecycle-hooks/#hook-handler-execution"
    noncompliant = COMPLIANT_POD.replace("[sh, -c, sleep 10]", "[sh, -c, 'while pgrep vllm; do sleep 1; done']")
    compliant = COMPLIANT_POD.replace("[sh, -c, sleep 10]", "[sh, -c, 'timeout 9 sh -c \"while pgrep vllm; do sleep 1; done\"']")

    def check(self, obj: Manifest, ctx: Context) -> Iterator[Finding]:
        for site, _ in gpu_sites(obj, ctx, channels=True):
            for c in site.containers:
                hook = c.pre_stop
                if hook and loops_unbounded(hook):
                    yield ctx.finding(self, obj, f"the preStop hook of {c.label} loops without a timeout: it will "
                                      "run until SIGKILL", hook.get("exec"), "command", help="wrap the loop in `timeout N`")


@register
class TeardownDrainDisabled(Rule):
    id = "teardown-drain-disabled"
    name = "Inference server aborts in-flight work on SIGTERM"
    category = "teardown"
    severity = Severity.WARNING
    targets = POD_TARGETS
    fixable = FixAvailability.SOMETIMES
    needs = Needs.OBJECT_SET  # whether its claims hold GPUs
    options = BUDGET_OPTIONS
    summary = "A GPU container runs vLLM without --shutdown-timeout (or with 0): SIGTERM aborts every in-flight request."
    rationale = """
        vLLM drains on SIGTERM only when `--shutdown-timeout N` is given: it then rejects new
        requests and waits up to N s for the running ones. Without it (the default, 0) every
        in-flight request is aborted the moment the kubelet sends SIGTERM, however long the
        grace period is. The fix adds the flag with what the grace period leaves after the
        preStop waits, the release, the helper's verify and the margin (the servers whose
        flag is optional are in `draguard-teardown servers`). An IMEX channel claim holds no GPU
        memory and is not judged here (the timeline rules judge it)."""
    reference = "https://github.com/vllm-project/vllm/pull/36666"
    noncompliant = COMPLIANT_POD.replace("[--shutdown-timeout, '30']", "[--model, /models/llama-3.1-8b]")
    compliant = COMPLIANT_POD

    def check(self, obj: Manifest, ctx: Context) -> Iterator[Finding]:
        for site, gpu_claims in gpu_sites(obj, ctx):
            for c in site.containers:
                server = c.server
                if c.init or server is None or not server.flag_required or \
                        not claim_names(c) & gpu_claims:
                    continue
                drain, _ = drain_of(server, c.container)
                if drain:
                    continue
                yield ctx.finding(self, obj, f"{c.label} runs {server.title} without {server.drain_flag}: SIGTERM aborts "
                                  "every in-flight request instead of draining them", c.container, "name",
                                  help=f"add {server.drain_flag} N, N being what the grace period leaves after the "
                                  "preStop waits and the release", fix=self._fix(site, c, server, ctx))

    def _fix(self, site: PodSite, c: ContainerSite, server: Server, ctx: Context) -> Fix | NoFix:
        """The flag set where it is written, else added to args (created after an exec-form
        command: the same argv). Never into a shell line, nor after the image's own command,
        which the manifest does not show."""
        args, command = c.container.get("args"), c.container.get("command")
        flag = server.drain_flag
        if flag is None:  # the check asks only of servers that require one, which all name it
            return NoFix(f"{server.title} has no flag that bounds its drain")
        if any(" " in w for w in argv(c.container)):
            return NoFix(f"{server.title} starts from a shell line: add {flag} N to it by hand")
        if not isinstance(args, list) and not isinstance(command, list):
            return NoFix(f"the container runs its image's own command: write it out, then add {flag} N")
        grace, _ = site.grace_period
        seconds = max(1, math.floor(grace - container_budget(site, c, server, ctx, self).besides_drain))
        edit = None
        for words in (command, args):
            if not isinstance(words, list):
                continue
            for i, word in enumerate(words):
                if word == flag and i + 1 < len(words):
                    edit = set_value(edit_path(words) + (i + 1,), str(seconds))
                elif isinstance(word, str) and word.startswith(flag + "="):
                    edit = set_value(edit_path(words) + (i,), f"{flag}={seconds}")
        if edit is None:
            edit = append(edit_path(args), f"{flag}={seconds}") if isinstance(args, list) else \
                set_value(edit_path(c.container) + ("args",), [f"{flag}={seconds}"])
        return Fix(f"drain for {seconds} s on SIGTERM ({flag}={seconds})", Applicability.UNSAFE, (edit,))


@register
class TeardownKillsPid1(Rule):
    id = "teardown-prestop-kills-pid1"
    name = "preStop hook kills its own container's main process"
    category = "teardown"
    severity = Severity.WARNING
    targets = POD_TARGETS
    needs = Needs.OBJECT_SET  # whether its claims hold GPUs
    summary = "A preStop hook signals PID 1 (`kill -SIGTERM 1 && while pgrep ...`): the container stops and the hook dies with it."
    rationale = """
        Without a shared PID namespace, PID 1 of a container is its main process. A hook that
        signals it ends the container, and the kubelet's exec session ends with it: whatever
        the hook does next (wait for the process, flush, verify the release) never runs, and
        the SIGTERM the kubelet sends after the hook anyway comes early. Let the hook wait for
        endpoint removal and leave SIGTERM to the kubelet; to check the GPU was released, run
        `draguard-teardown verify` from a native sidecar that lists the same claim.""" + CHANNEL_NOTE
    upstream_note = """
        The GPU guideline documents recommend `kill -SIGTERM 1 && while pgrep python; do sleep
        1; done` as a preStop hook: the loop never runs, because the container is gone once
        PID 1 exits."""
    reference = "https://kubernetes.io/docs/concepts/containers/container-lifecycle-hooks/#hook-handler-execution"
    noncompliant = COMPLIANT_POD.replace("[sh, -c, sleep 10]", "[sh, -c, 'kill -SIGTERM 1 && sleep 10']")
    compliant = COMPLIANT_POD

    def check(self, obj: Manifest, ctx: Context) -> Iterator[Finding]:
        for site, _ in gpu_sites(obj, ctx, channels=True):
            for c in site.containers:
                if c.pre_stop and kills_pid1(c.pre_stop):
                    yield ctx.finding(self, obj, f"the preStop hook of {c.label} signals PID 1, its own main process: "
                                      "the container stops and the rest of the hook never runs "
                                      f"({hook_command(c.pre_stop)!r})", c.pre_stop.get("exec"), "command",
                                      help="wait for endpoint removal in the hook and let the kubelet send SIGTERM")


@register
class TeardownGraceZero(Rule):
    id = "teardown-grace-zero"
    name = "Claim holder with a zero grace period"
    category = "teardown"
    severity = Severity.ERROR
    targets = POD_TARGETS
    fixable = FixAvailability.ALWAYS
    options = {"graceSeconds": Option(60, "the grace period the fix sets")}
    admission = Admission(
        "!has(s.resourceClaims) || size(s.resourceClaims) == 0 || "
        "!has(s.terminationGracePeriodSeconds) || s.terminationGracePeriodSeconds != 0",
        "a pod that holds a ResourceClaim sets terminationGracePeriodSeconds: 0", over="podSpecs")
    mutation = Mutation(
        "JSONPatch{op: 'replace', path: site.pointer + '/terminationGracePeriodSeconds', "
        "value: int(params.data['teardown-grace-zero.graceSeconds'])}", Applicability.UNSAFE)
    summary = "A pod that holds a ResourceClaim sets terminationGracePeriodSeconds: 0."
    rationale = """
        With a grace period of 0 the API server removes the Pod object at once when it is
        deleted (pod strategy CheckGracefulDelete), while its containers still run on the
        node until the kubelet notices. The resourceclaim controller then sees no pod
        reserving the claim, deallocates it, and the scheduler can hand the same device to
        another pod while the old processes still hold it: a double allocation, and a
        tenant's memory visible to the next. Give the pod a grace period that covers its
        teardown."""
    reference = "https://kubernetes.io/docs/tasks/run-application/force-delete-stateful-set-pod/"
    noncompliant = COMPLIANT_POD.replace("terminationGracePeriodSeconds: 60", "terminationGracePeriodSeconds: 0")
    compliant = COMPLIANT_POD

    def check(self, obj: Manifest, ctx: Context) -> Iterator[Finding]:
        seconds = ctx.option(self, "graceSeconds")
        for site in claim_sites(obj):
            grace, stated = site.grace_period
            if stated and grace == 0:
                yield ctx.finding(self, obj, "terminationGracePeriodSeconds is 0 on a pod that holds a ResourceClaim: "
                                  "deleting it frees the claim while its containers still run, and the device can "
                                  "be allocated twice", site.spec, "terminationGracePeriodSeconds", value=True,
                                  help=f"set terminationGracePeriodSeconds to cover the teardown (e.g. {seconds})",
                                  fix=Fix(f"set terminationGracePeriodSeconds: {seconds}", Applicability.UNSAFE,
                                          (set_value(edit_path(site.spec, "terminationGracePeriodSeconds"), seconds),)))


@register
class TeardownHelperClaim(Rule):
    id = "teardown-helper-claim"
    name = "Teardown helper without the claim it checks"
    category = "teardown"
    severity = Severity.WARNING
    targets = POD_TARGETS
    fixable = FixAvailability.ALWAYS
    needs = Needs.OBJECT_SET  # whether its claims hold GPUs
    summary = "A container that runs draguard-teardown does not list the pod's GPU claims in resources.claims."
    rationale = """
        The driver injects a claim's devices only into the containers that list the claim in
        `resources.claims`. A helper container that does not list it sees no GPU through
        NVML: its baseline fails and its verify can prove nothing. Several containers of one
        pod may list the same claim; the helper only reads NVML. An IMEX channel claim holds no
        GPU memory and is not judged here (the timeline rules judge it)."""
    reference = "https://kubernetes.io/docs/concepts/scheduling-eviction/dynamic-resource-allocation/"
    compliant = replace_last(COMPLIANT_POD.replace("GracePeriodSeconds: 60", "GracePeriodSeconds: 70"),
                             "containers:\n", "initContainers:\n"
                             "      - name: release-check\n"
                             "        image: draguard/teardown\n"
                             "        restartPolicy: Always\n"
                             "        command: [draguard-teardown, sidecar]\n"
                             "        resources:\n"
                             "          claims: [{name: gpu}]\n"
                             "        lifecycle:\n"
                             "          preStop:\n"
                             "            exec: {command: [draguard-teardown, verify, --timeout, '20']}\n"
                             "      containers:\n")
    noncompliant = compliant.replace("        resources:\n          claims: [{name: gpu}]\n        lifecycle:",
                                     "        lifecycle:", 1)  # the sidecar's, the first one

    def check(self, obj: Manifest, ctx: Context) -> Iterator[Finding]:
        for site, gpu_claims in gpu_sites(obj, ctx):
            used = {text(claim.get("name")) for c in site.containers if not runs_helper(c.container)
                    for claim in c.claims} & gpu_claims
            for c in site.containers:
                if not runs_helper(c.container):
                    continue
                missing = sorted(used - claim_names(c))
                if not missing:
                    continue
                claims_path = c.path + (c.resources_key, "claims")
                edits = tuple(append(claims_path, {"name": name}) for name in missing) \
                    if isinstance(c.resources.get("claims"), list) else \
                    (set_value(claims_path, [{"name": name} for name in missing]),)
                yield ctx.finding(self, obj, f"{c.label} runs draguard-teardown but does not list "
                                  f"{', '.join(repr(m) for m in missing)} in resources.claims: NVML shows it no GPU",
                                  c.container, "name", help="list the claims it checks in its resources.claims",
                                  fix=Fix(f"list {', '.join(missing)} in {c.label}'s resources.claims",
                                          Applicability.SAFE, edits))
