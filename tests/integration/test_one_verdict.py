"""One verdict, every front (issue #39): for every rule `draguard policy export` writes a
ValidatingAdmissionPolicy for (at 1.37, the plane's release; legacy-gpu-resource, which later
releases leave to the webhook, at 1.35), `draguard lint`, the webhook's judge, the exported
policies run by the real kube-apiserver and the MCP server's `lint` tool reach the same
verdict (deny / warn / pass) on the same object, each front judging at the rule's release.
The objects: the exported rules' examples, the workload corpus the tests ship
(tests/support/data/precision, examples/), seeded mutations of both, and one object for each
value on a line a rule draws, in every workload kind (support.verdict_fuzz). Every
disagreement is collected and printed as a table before the test fails on any.

What each front says of (object, rule), for the rules whose policy matches the object's kind:

- lint (in-process, `engine.lint_objects` on the object alone, default configuration) and MCP
  `lint` (the official SDK's client over stdio, on the object's YAML text), both taking
  DaemonSets for tenants' as admission does (`daemonSets: tenants`; lint's default takes a
  repository's DaemonSets for node agents): an error finding of the rule denies, a
  warning warns (info is said nowhere at admission). A rule whose errors admission only warns
  of (Rule.admission_warns) warns; none is exported, and the test holds its bindings to that
  mapping (Warn where the webhook warns). A set-wide rule (Rule.set_wide) concludes from what
  a set of objects lacks, which no policy on one object can, and the offline webhook does not
  run it: the test holds that none is exported.
- the webhook: `admission.judge.judge` on the CREATE the API server would send (offline:
  `rules_for(config, offline=True)`), and the `draguard webhook --offline` server over HTTPS
  for a seeded sample: a denial naming the rule denies, a warning naming it warns. It judges
  the kinds of admission.kinds.JUDGED; ResourceSlices are not among them (drivers write
  them, so the webhook is not registered for them): there its column says '-', not a verdict.
- the webhook as installed: `draguard webhook --offline` registered with the API server as
  `draguard webhook manifests` registers it (install.routes, MATCH_CONDITIONS), for the
  sample, asked by a dry run (the object defaulted and converted first). It is routed every
  kind the judge models; of the others (ResourceSlices) its column says '-'.
- the API server: the exported policies, each binding narrowed to objects labelled
  `verdict.draguard.io/rule: <rule>` (it reports only the first policy that denies, so each
  dry run asks one policy; that label, which no rule reads, is all the API server sees more
  than the other fronts), a server-side dry-run create (`dryRun=All`) in one namespace:
  Forbidden/Invalid naming `ValidatingAdmissionPolicy 'draguard-<rule>'` denies, a Warning
  header naming it warns.

An object the API server's own validation refuses never reaches a policy: a pod-bearing one
is judged instead (on every front) as the pod specs of a RayCluster, whose CRD keeps what its
spec holds; any other is left out and counted. Workload kinds the plane does not serve get
such a CRD too. Those stand-in CRDs keep specs of any type, which the operators' own refuse:
pod specs with a subtree of the wrong type are measured only on demand (CONFUSED_COUNT).
DRAGUARD_VERDICT_DUMP=<file> writes every object with every front's verdicts."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import random
import sys
import textwrap
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import yaml
from kubernetes import dynamic
from kubernetes.dynamic.exceptions import ConflictError, ResourceNotFoundError

from draguard.admission.judge import judge, rules_for
from draguard.admission.kinds import JUDGED
from draguard.admission.install import MATCH_CONDITIONS, resource_name, routes
from draguard.admission.policies import export
from draguard.admission.review import Request
from draguard.core.config import Config
from draguard.core.finding import Severity
from draguard.engine import lint_objects
from draguard.model.manifest import Manifest
from draguard.model.pods import pod_sites
from draguard.model.workloads import WORKLOADS
from draguard.rules import REGISTRY

from support.paths import DATA, EXAMPLES
from support.verdict_fuzz import edges, every_rule_broken, fuzzed, in_every_workload, type_confused, wrapped
from support.webhook import post, review, running_webhook

pytestmark = pytest.mark.cluster
NS = "one-verdict"
SELECT = "verdict.draguard.io/rule"
USER = "admin"  # the plane's token user, who asks the dry runs
#: the plane's release, then the last release that exports a rule the newer ones leave to the
#: webhook (legacy-gpu-resource: through 1.35); each rule is judged at the first that exports it
TARGETS = ("1.37", "1.35")
EXPORTS = {target: export(REGISTRY, Config(kube_version=target)) for target in TARGETS}
TARGET_OF: dict[str, str] = {}
for _target in TARGETS:
    for _obj in EXPORTS[_target].objects:
        if _obj["kind"] == "ValidatingAdmissionPolicy":
            TARGET_OF.setdefault(_obj["metadata"]["labels"]["draguard.io/rule"], _target)
#: what is installed: the parameters, each rule's policy and binding from its target's export
INSTALLED = [o for o in EXPORTS[TARGETS[0]].objects if o["kind"] == "ConfigMap"] + [
    o for target in TARGETS for o in EXPORTS[target].objects if o["kind"].startswith("ValidatingAdmissionPolicy")
    and TARGET_OF[o["metadata"]["labels"]["draguard.io/rule"]] == target]
BINDINGS = {o["spec"]["policyName"]: o for o in INSTALLED if o["kind"] == "ValidatingAdmissionPolicyBinding"}
RULES = [REGISTRY.get(rule_id) for rule_id in TARGET_OF]
FUZZ_SEED, FUZZ_COUNT, HTTPS_SAMPLE = 39, 300, 60
#: type-confused pod specs (a subtree replaced by a value of another type) in a RayCluster: the
#: stand-in CRDs here keep any spec, where the operators' own CRDs carry the pod spec's schema
#: and refuse them as the API server refuses a Pod's, so they are out of the default run (as
#: schema-invalid objects are); DRAGUARD_VERDICT_CONFUSED=<count> measures them
CONFUSED_COUNT = int(os.environ.get("DRAGUARD_VERDICT_CONFUSED", "0"))
CORPUS = sorted([*(DATA / "precision" / "workloads").glob("*.yaml"), *(DATA / "precision" / "vendors").glob("*.yaml"),
                 *EXAMPLES.rglob("*.yaml")])
FRONTS = ("lint", "webhook", "webhook-https", "webhook-api", "api-server", "mcp")
ROUTE = "verdict.draguard.io/webhook"  # the label that sends an object to the registered webhook of a target


def _group(data: dict) -> str:
    return str(data.get("apiVersion", "")).rpartition("/")[0]


def _rules_over(data: dict, target: str | None = None) -> list:
    """The rules whose policy matches the object (those judged at `target`)."""
    return [r for r in RULES if (_group(data), data.get("kind")) in r.admission.kinds(r.targets)
            and target in (None, TARGET_OF[r.id])]


def _documents(text: str) -> list[dict]:
    """The objects of YAML text (none from text that does not parse: some examples are of
    parse errors, which no admission front sees)."""
    try:
        documents = list(yaml.safe_load_all(text))
    except yaml.YAMLError:
        return []
    return [d for d in documents if isinstance(d, dict) and isinstance(d.get("kind"), str)
            and isinstance(d.get("apiVersion"), str) and isinstance(d.get("metadata", {}), dict)]


def _candidates() -> list[tuple[str, dict]]:
    """(where it comes from, object) for every object some exported policy matches: the
    exported rules' examples, the corpus files, then the mutations of all of them and of every
    rule's examples."""
    found = []
    for rule in RULES:
        for which in ("noncompliant", "compliant"):
            found += [(f"example {rule.id} {which}", d) for d in _documents(textwrap.dedent(getattr(rule, which)))]
    for path in CORPUS:
        found += [(f"corpus {path.name}", d) for d in _documents(path.read_text())]
    seeds = [d for _, d in found] + [d for rule in REGISTRY for which in ("noncompliant", "compliant")
                                     for d in _documents(textwrap.dedent(getattr(rule, which)))]
    seeds = [d for d in seeds if _rules_over(d)]
    found += [(f"fuzz {what}", d) for what, d in fuzzed(seeds, FUZZ_COUNT, FUZZ_SEED)]
    edge, broken = edges(), every_rule_broken()
    found += [(f"edge {what}", d) for what, d in edge + wrapped(edge, WORKLOADS) + broken
              + in_every_workload(broken, WORKLOADS)]
    rays = [(what, d) for what, d in in_every_workload(broken, WORKLOADS) if d["kind"] == "RayCluster"]
    found += [(f"confused {what}", d) for what, d in type_confused(rays, CONFUSED_COUNT, FUZZ_SEED)]
    unique, seen = [], set()
    for origin, data in found:
        key = json.dumps(data, sort_keys=True, default=str)
        if _rules_over(data) and key not in seen:
            seen.add(key)
            unique.append((origin, data))
    return unique


@dataclass
class Judged:
    origin: str
    data: dict
    namespaced: bool
    verdicts: dict = field(default_factory=dict)  # (front, rule id) -> 'deny' | 'warn' | 'pass' | '-' | other

    @property
    def ref(self) -> str:
        return f"{self.data['kind']}/{self.data['metadata'].get('name', '?')}"


# -- the fronts ---------------------------------------------------------------------------------

def _from_findings(found: list[tuple[str, str]], rule) -> str:
    """deny / warn / pass from (rule id, severity) pairs, as admission says them."""
    severities = {s for r, s in found if r == rule.id}
    if "error" in severities:
        return "warn" if rule.admission_warns else "deny"
    return "warn" if "warning" in severities else "pass"


def lint_verdicts(judged: Judged) -> None:
    for target in TARGETS:
        if rules := _rules_over(judged.data, target):
            findings = lint_objects([judged.data], Config(kube_version=target, daemonsets_are_node_agents=False)).findings
            pairs = [(f.rule, str(f.severity)) for f in findings]
            for rule in rules:
                judged.verdicts["lint", rule.id] = _from_findings(pairs, rule)


def _request(judged: Judged) -> Request:
    group, _, version = judged.data["apiVersion"].rpartition("/")
    return Request("verdict", {"group": group, "version": version, "kind": judged.data["kind"]}, "CREATE",
                   NS if judged.namespaced else "", judged.data["metadata"]["name"], judged.data, None, True, USER)


OFFLINE = {target: rules_for(Config(kube_version=target), offline=True) for target in TARGETS}


def webhook_verdicts(judged: Judged) -> None:
    request = _request(judged)
    for target in TARGETS:
        if rules := _rules_over(judged.data, target):
            _say(judged, "webhook", rules, request, judge(request, OFFLINE[target]))


def _say(judged: Judged, front: str, rules: list, request: Request, verdict) -> None:
    for rule in rules:
        if request.group_kind not in JUDGED:
            judged.verdicts[front, rule.id] = "-"
        elif any(f.rule == rule.id for f in verdict.denials):
            judged.verdicts[front, rule.id] = "deny"
        elif any(f.rule == rule.id for f in verdict.warnings):
            judged.verdicts[front, rule.id] = "warn"
        else:
            judged.verdicts[front, rule.id] = "pass"


def https_verdicts(url: str, ca: bytes, judged: Judged, target: str) -> None:
    status, answer = post(url, ca, review(judged.data, namespace=NS if judged.namespaced else "",
                                          userInfo={"username": USER}))
    assert status == 200, answer
    response = answer["response"]
    message = response.get("status", {}).get("message", "") if not response["allowed"] else ""
    warnings = response.get("warnings", [])
    for rule in _rules_over(judged.data, target):
        if (_group(judged.data), judged.data["kind"]) not in JUDGED:
            verdict = "-"
        elif f"[{rule.id}]" in message:
            verdict = "deny"
        elif any(w.startswith(f"[{rule.id}]") for w in warnings):
            verdict = "warn"
        else:
            verdict = "pass"
        judged.verdicts["webhook-https", rule.id] = verdict


def registration(url: str, ca: bytes, target: str) -> dict:
    """The webhook entry `draguard webhook manifests` installs (its resources and match
    conditions), by URL, for the objects labelled for `target`."""
    return {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
            "metadata": {"name": f"verdict-{target}"},
            "webhooks": [{"name": "verdict.draguard.io", "admissionReviewVersions": ["v1"], "sideEffects": "None",
                          "failurePolicy": "Fail", "timeoutSeconds": 10, "matchPolicy": "Equivalent",
                          "clientConfig": {"url": f"{url}/validate", "caBundle": base64.b64encode(ca).decode()},
                          "objectSelector": {"matchLabels": {ROUTE: target}},
                          "rules": routes(),
                          "matchConditions": MATCH_CONDITIONS}]}


def routed(data: dict) -> bool:
    """The installed webhook is asked about the object's kind (install.routes: the judge's kinds)."""
    return (_group(data), data["kind"]) in JUDGED


def registered_verdicts(plane, judged: Judged, target: str) -> str:
    """The webhook as the API server asks it (the object defaulted and converted first): a
    denial naming the rule denies, a warning naming it warns; '-' where it is not asked."""
    status, body, warnings = dry_run(plane, judged, {ROUTE: target})
    for rule in _rules_over(judged.data, target):
        if not routed(judged.data):
            verdict = "-"
        elif status == 403 and "verdict.draguard.io" in body:
            verdict = "deny" if f"[{rule.id}]" in body else "warn" if any(f"[{rule.id}]" in w for w in warnings) \
                else "pass"
        elif status in (200, 201):
            verdict = "warn" if any(f"[{rule.id}]" in w for w in warnings) else "pass"
        else:
            verdict = f"HTTP {status}: {body[:200]}"
        judged.verdicts["webhook-api", rule.id] = verdict
    return body


def dry_run(plane, judged: Judged, labels: dict) -> tuple[int, str, list[str]]:
    """(HTTP status, body, warnings) of a server-side dry-run create of the object with `labels` added."""
    obj = dict(judged.data, metadata=dict(judged.data["metadata"],
                                          labels={**(judged.data["metadata"].get("labels") or {}), **labels}))
    return plane.dry_run_create(obj, NS if judged.namespaced else None)


def api_verdict(plane, judged: Judged, rule) -> str:
    """deny / warn / pass; 'error' where the policy's CEL failed to evaluate (it refuses or
    warns then, failurePolicy Fail, but says nothing of the rule)."""
    name = f"ValidatingAdmissionPolicy 'draguard-{rule.id}'"
    status, body, warnings = dry_run(plane, judged, {SELECT: rule.id})
    if status in (403, 422) and name in body:
        return "error" if f"denied request: {rule.id}: " not in body else "deny"
    if status in (200, 201):
        said = [w for w in warnings if name in w]
        return ("pass" if not said else "warn" if any(f"': {rule.id}: " in w for w in said) else "error")
    return f"HTTP {status}: {body[:200]}"


def _refused_by_validation(status: int, body: str) -> bool:
    return status == 422 and "ValidatingAdmissionPolicy" not in body


def mcp_verdicts(objects: list[Judged], cwd: Path) -> None:
    """Each object's YAML through the `lint` tool of one `draguard mcp` session (in a folder
    whose .draguard.yaml says `daemonSets: tenants`, as admission takes them, and the strict
    profile: every rule, as the other fronts judge with a configuration built in code)."""
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    (cwd / ".draguard.yaml").write_text("daemonSets: tenants\nprofile: strict\n")

    async def main():
        params = StdioServerParameters(command=sys.executable, args=["-m", "draguard", "mcp"], cwd=str(cwd),
                                       env=dict(os.environ))
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                for judged in objects:
                    for target in TARGETS:
                        if not (rules := _rules_over(judged.data, target)):
                            continue
                        result = await session.call_tool("lint", {"manifest": yaml.safe_dump(judged.data),
                                                                  "kube_version": target})
                        assert not result.is_error, result.content
                        report = result.structured_content or json.loads(result.content[0].text)
                        pairs = [(f["rule"], f["severity"]) for f in report["findings"]]
                        for rule in rules:
                            judged.verdicts["mcp", rule.id] = _from_findings(pairs, rule)
    asyncio.run(main())


# -- the plane ----------------------------------------------------------------------------------

def _crd(group: str, kind: str, versions: list[str]) -> dict:
    """A namespaced CRD that keeps whatever its spec holds (as operators' own do for pod templates)."""
    plural = resource_name(kind)
    schema = {"openAPIV3Schema": {"type": "object", "properties": {
        "spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}}}
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": f"{plural}.{group}"},
            "spec": {"group": group, "scope": "Namespaced",
                     "names": {"plural": plural, "singular": kind.lower(), "kind": kind},
                     "versions": [{"name": v, "served": True, "storage": i == 0, "schema": schema}
                                  for i, v in enumerate(sorted(versions))]}}


def in_a_raycluster(judged: Judged) -> dict | None:
    """The object's pod specs as a RayCluster's head and worker groups (None: it has none)."""
    specs = [site.spec for site in pod_sites(Manifest.from_data(judged.data, positions=False)) if site.spec]
    if not specs:
        return None
    groups = [{"template": {"metadata": {"labels": {"app": "ray"}}, "spec": spec}} for spec in specs]
    return {"apiVersion": "ray.io/v1", "kind": "RayCluster", "metadata": {"name": judged.data["metadata"]["name"]},
            "spec": {"headGroupSpec": groups[0], **({"workerGroupSpecs": groups[1:]} if groups[1:] else {})}}


def _placed(origin: str, data: dict, dyn, crds: dict) -> Judged:
    data = json.loads(json.dumps(data))
    metadata = data.setdefault("metadata", {})
    metadata.setdefault("name", metadata.pop("generateName", "object").rstrip("-") or "object")
    try:
        namespaced = dyn.resources.get(api_version=data["apiVersion"], kind=data["kind"]).namespaced
    except ResourceNotFoundError:  # a CRD kind gets one; a built-in version no longer served is left out
        group = _group(data)
        if "." in group and not (group.endswith((".k8s.io", ".kubernetes.io")) or group == "k8s.io"):
            crds.setdefault((group, data["kind"]), set()).add(data["apiVersion"].rpartition("/")[2])
        namespaced = True
    if namespaced:
        metadata["namespace"] = NS
    else:
        metadata.pop("namespace", None)
    return Judged(origin, data, namespaced)


def _delete(dyn, obj: dict) -> None:
    """Delete `obj`; a CRD is waited for until it is gone (the modules share the plane, and the
    next one may make the same CRD again: 'object is being deleted: already exists')."""
    resource = dyn.resources.get(api_version=obj["apiVersion"], kind=obj["kind"])
    name, namespace = obj["metadata"]["name"], obj["metadata"].get("namespace")
    try:
        resource.delete(name=name, namespace=namespace)
    except Exception:  # noqa: BLE001 - already gone
        return
    deadline = time.monotonic() + 60
    while obj["kind"] == "CustomResourceDefinition" and time.monotonic() < deadline:
        try:
            resource.get(name=name)
        except ResourceNotFoundError:
            return
        except Exception as exc:  # noqa: BLE001 - NotFoundError and its kin: gone
            if getattr(exc, "status", None) == 404:
                return
            raise
        time.sleep(0.2)


@dataclass
class Run:
    objects: list[Judged]
    left_out: list[tuple[str, str, str]]  # (origin, object, why)
    seconds: dict
    unturned: list = field(default_factory=list)  # readiness probes a policy never failed


@pytest.fixture(scope="module")
def run(bare_plane, tmp_path_factory):
    started = time.monotonic()
    plane = bare_plane
    dyn = dynamic.DynamicClient(plane.api())
    namespaces = dyn.resources.get(api_version="v1", kind="Namespace")
    made: list[dict] = []
    for name in (NS, "draguard"):
        try:  # the test's namespace admits admin access (DRAAdminAccess), so claims that ask for it are judged
            labels = {"resource.kubernetes.io/admin-access": "true"} if name == NS else {}
            namespaces.create(body={"metadata": {"name": name, "labels": labels}})
            if name == NS:  # "draguard" stays: the modules share this plane, and it has no namespace controller
                made.append({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
        except ConflictError:  # "draguard": another module made it
            pass
    try:
        crds: dict = {("ray.io", "RayCluster"): {"v1"}}
        placed = [_placed(origin, data, dyn, crds) for origin, data in _candidates()]
        for (group, kind), versions in sorted(crds.items()):
            crd = _crd(group, kind, sorted(versions))
            try:
                dyn.resources.get(api_version="apiextensions.k8s.io/v1", kind="CustomResourceDefinition").create(
                    body=crd)
                made.append(crd)
            except ConflictError:
                pass
        dyn = dynamic.DynamicClient(plane.api())
        deadline = time.monotonic() + 60
        for (group, kind), versions in crds.items():  # served once discovery has them
            while True:
                try:
                    for version in versions:
                        dyn.resources.get(api_version=f"{group}/{version}", kind=kind)
                    break
                except ResourceNotFoundError:
                    assert time.monotonic() < deadline, f"the CRD of {kind} never served"
                    time.sleep(0.5)
                    dyn = dynamic.DynamicClient(plane.api())
        # the API server's own validation first, without any policy
        objects, left_out = [], []
        for judged in placed:
            status, body, _ = dry_run(plane, judged, {})
            if status in (200, 201):
                objects.append(judged)
                continue
            wrapped = in_a_raycluster(judged) if _refused_by_validation(status, body) else None
            if wrapped is not None:
                ray = _placed(f"{judged.origin} (its pod specs in a RayCluster)", wrapped, dyn, {})
                if _rules_over(ray.data) and dry_run(plane, ray, {})[0] in (200, 201):
                    objects.append(ray)
                    continue
            reason = json.loads(body).get("message", body) if body.startswith("{") else body
            left_out.append((judged.origin, judged.ref, f"HTTP {status}: {reason[:160]}"))
        seconds = {"setup": time.monotonic() - started}

        mark = time.monotonic()
        for judged in objects:
            lint_verdicts(judged)
            webhook_verdicts(judged)
        seconds["lint+webhook"] = time.monotonic() - mark

        mark = time.monotonic()
        sample = random.Random(FUZZ_SEED).sample(objects, min(HTTPS_SAMPLE, len(objects)))
        configurations = dyn.resources.get(api_version="admissionregistration.k8s.io/v1",
                                           kind="ValidatingWebhookConfiguration")
        probe = next(j for j in objects if j.origin == "edge every rule broken")  # a Pod it denies
        for target in TARGETS:
            with running_webhook("--kube-version", target, "--profile", "strict") as (url, ca, _):
                for judged in sample:
                    https_verdicts(url, ca, judged, target)
                configurations.create(body=registration(url, ca, target))
                try:
                    deadline = time.monotonic() + 30
                    while dry_run(plane, probe, {ROUTE: target})[0] != 403:  # the API server learns of it
                        assert time.monotonic() < deadline, "the registered webhook was never asked"
                        time.sleep(0.3)
                    for judged in sample:
                        registered_verdicts(plane, judged, target)
                finally:
                    configurations.delete(name=f"verdict-{target}")
        seconds["webhook-https"] = time.monotonic() - mark

        mark = time.monotonic()
        mcp_verdicts(objects, tmp_path_factory.mktemp("mcp"))
        seconds["mcp"] = time.monotonic() - mark

        mark = time.monotonic()
        policies = [o for o in INSTALLED if o["kind"] != "ValidatingAdmissionPolicyBinding"]
        bindings = json.loads(json.dumps(list(BINDINGS.values())))
        for binding in bindings:
            rule = binding["metadata"]["labels"]["draguard.io/rule"]
            binding["spec"]["matchResources"]["objectSelector"] = {"matchLabels": {SELECT: rule}}
        plane.apply(policies + bindings)
        made += policies + bindings
        unturned = _until_in_effect(plane, objects)
        seconds["policies in effect"] = time.monotonic() - mark

        mark = time.monotonic()
        pairs = [(judged, rule) for judged in objects for rule in _rules_over(judged.data)]
        with ThreadPoolExecutor(4) as pool:
            answers = list(pool.map(lambda pair: api_verdict(plane, *pair), pairs))
        for (judged, rule), verdict in zip(pairs, answers):
            judged.verdicts["api-server", rule.id] = verdict
        seconds["api-server"] = time.monotonic() - mark
        yield Run(objects, left_out, seconds, unturned)
    finally:
        dyn = dynamic.DynamicClient(plane.api())
        for obj in reversed(made):
            _delete(dyn, obj)


def _until_in_effect(plane, objects: list[Judged]) -> None:
    """Each policy refuses or warns about one failing example of its rule that lint flags, and
    about the pod that breaks every rule in each workload kind (the policies are loaded
    through an informer, a CRD's resource after discovery): a policy not yet in effect would
    read as a disagreement. Bounded: a probe the policy never fails (a real disagreement on
    it) is waited for no longer than the others, and the comparison shows it; returns those."""
    deadline = time.monotonic() + 60
    unturned = []
    probes = []
    for rule in RULES:
        failing = [j for j in objects if j.origin == f"example {rule.id} noncompliant"
                   and j.verdicts["lint", rule.id] != "pass"]
        probes += [(failing[0], rule)] if failing else []
    for judged in objects:
        if judged.origin.startswith("edge every rule broken in a "):
            flagged = [r for r in _rules_over(judged.data) if judged.verdicts["lint", r.id] != "pass"]
            probes += [(judged, flagged[0])] if flagged else []
    for judged, rule in probes:
        while api_verdict(plane, judged, rule) == "pass":
            if time.monotonic() > deadline:
                unturned.append(f"{rule.id} on {judged.origin}")
                break
            time.sleep(0.5)
    return unturned


def _table(rows: list[list[str]]) -> str:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(cell.ljust(w) for cell, w in zip(row, widths)) for row in rows)


def _disagreements(run: Run) -> list[list[str]]:
    rows = []
    for judged in run.objects:
        for rule in _rules_over(judged.data):
            said = {front: judged.verdicts.get((front, rule.id)) for front in FRONTS}
            verdicts = {v for v in said.values() if v not in (None, "-")}
            if len(verdicts) != 1:
                rows.append([rule.id, judged.origin, judged.ref, *(said[f] or "" for f in FRONTS)])
    return rows


def test_every_front_reaches_the_same_verdict(run):
    comparisons = sum(len(_rules_over(j.data)) for j in run.objects)
    rows = _disagreements(run)
    by_origin = Counter(j.origin.split()[0] for j in run.objects)
    print(f"\n{len(run.objects)} objects ({dict(by_origin)}), {len(RULES)} rules, {comparisons} comparisons "
          f"(object x rule whose policy matches it), {len(rows)} disagreements; "
          f"{len(run.left_out)} objects left out (the API server's validation refuses them); "
          f"seconds: { {k: round(v, 1) for k, v in run.seconds.items()} }")
    for origin, ref, why in run.left_out:
        print(f"  left out: {origin} {ref}: {why}")
    for probe in run.unturned:
        print(f"  a policy never failed its readiness probe in 60 s (in effect? or a disagreement): {probe}")
    if os.environ.get("DRAGUARD_VERDICT_DUMP"):  # every object with every front's verdicts, to look into
        Path(os.environ["DRAGUARD_VERDICT_DUMP"]).write_text(json.dumps(
            [{"origin": j.origin, "object": j.data, "verdicts": {f"{f} {r}": v for (f, r), v in j.verdicts.items()}}
             for j in run.objects], indent=1))
    if rows:
        print(_table([["rule", "object", "kind/name", *FRONTS], *rows]))
    assert not rows, f"{len(rows)} disagreements (the table above)"


def test_the_objects_cross_every_rule_s_line(run):
    """A comparison that never sees a rule fail proves nothing: each exported rule is failed
    and passed by objects of the run, on every front."""
    for rule in RULES:
        seen = Counter(j.verdicts.get(("api-server", rule.id)) for j in run.objects)
        assert seen["pass"] and (seen["deny"] or seen["warn"]), (rule.id, dict(seen))


def test_the_fronts_cover_what_they_should(run):
    """The webhook over HTTPS, and as registered, answered their sample; every object went
    through every other front; few objects are left out."""
    for sampled in ("webhook-https", "webhook-api"):
        asked = sum(1 for j in run.objects if any(f == sampled for f, _ in j.verdicts))
        assert asked == min(HTTPS_SAMPLE, len(run.objects)), sampled
    for judged in run.objects:
        for rule in _rules_over(judged.data):
            assert all((front, rule.id) in judged.verdicts for front in FRONTS if not front.startswith("webhook-"))
    assert len(run.left_out) <= len(run.objects) // 10, run.left_out


def test_the_bindings_act_as_the_webhook_says():
    """The mapping the comparison rests on: a binding denies exactly where the webhook denies
    (errors, unless Rule.admission_warns), and no set-wide rule is exported."""
    for rule in RULES:
        actions = BINDINGS[f"draguard-{rule.id}"]["spec"]["validationActions"]
        webhook_denies = rule.severity is Severity.ERROR and not rule.admission_warns
        assert actions == (["Deny"] if webhook_denies else ["Warn"]), rule.id
        assert not rule.set_wide, rule.id
