"""Every rule admission judges, through `draguard webhook` with its cluster cache, registered
with the real kube-apiserver as `draguard webhook manifests` registers it (issue: admission):
the objects of the rule's failing example that draguard flags are refused naming the rule
(errors) or answered with a warning naming it (warnings, and the errors of a rule that says
why admission only warns of them: Rule.admission_warns); every object of its passing example
is admitted without a word from it. The rest of each example (templates, classes, budgets)
is created for real first, in a namespace of its own, so the cross-object rules read it
through the cache as they would in a cluster.

Where the API server's own validation refuses a failing object before any webhook sees it,
the test says which rules those are."""

from __future__ import annotations

import base64
import json
import textwrap
import time

import pytest
import yaml
from kubernetes import dynamic
from kubernetes.dynamic.exceptions import ConflictError, ForbiddenError

from draguard.admission.forms import form_of
from draguard.admission.install import MATCH_CONDITIONS, resource_name, routes
from draguard.core.config import Config
from draguard.engine import lint_objects
from draguard.rules import REGISTRY

from support.webhook import running_webhook

pytestmark = pytest.mark.cluster
TARGET = "1.37"
LABEL = {"draguard.io/every-rule": "true"}
ROUTED = {(rule["apiGroups"][0], resource) for rule in routes() for resource in rule["resources"]}
#: the rules admission judges, over kinds the webhook registers for: drivers write ResourceSlices,
#: and a fail-closed webhook there would stop them publishing, so a rule over slices
#: (device-name-twice) is judged by its admission policy alone (test_policy_control_plane)
RULES = [r for r in REGISTRY if str(r.severity) in ("error", "warning")
         and form_of(r, TARGET).forms[0] in ("vap", "webhook-only")
         and (r.targets is None or any((group, resource_name(kind)) in ROUTED for group, kind in r.targets))]
#: failing examples the API server's own validation refuses before admission: pod specs it
#: validates itself (their policies still matter for CRDs: test_policy_control_plane), CEL it
#: compiles, admin access it allows only in labelled namespaces (DRAAdminAccess)
VALIDATED_BY_THE_API_SERVER = {"claim-name-undefined", "pod-claim-source", "cel-invalid", "admin-access-namespace"}


def configuration(url: str, ca: bytes) -> dict:
    """The installed webhook entry (its rules and match conditions), by URL, for the test's
    namespaces."""
    return {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
            "metadata": {"name": "draguard-every-rule"},
            "webhooks": [{"name": "every.draguard.io", "admissionReviewVersions": ["v1"], "sideEffects": "None",
                          "failurePolicy": "Fail", "timeoutSeconds": 10, "matchPolicy": "Equivalent",
                          "clientConfig": {"url": f"{url}/validate", "caBundle": base64.b64encode(ca).decode()},
                          "namespaceSelector": {"matchLabels": LABEL},
                          "rules": routes(),
                          "matchConditions": MATCH_CONDITIONS}]}


@pytest.fixture(scope="module")
def webhooked(bare_plane):
    with running_webhook("--kube-version", TARGET, "--profile", "strict", kubeconfig=bare_plane.kubeconfig) as (url, ca, _):
        configurations = dynamic.DynamicClient(bare_plane.api()).resources.get(
            api_version="admissionregistration.k8s.io/v1", kind="ValidatingWebhookConfiguration")
        configurations.create(body=configuration(url, ca))
        try:
            yield bare_plane
        finally:
            configurations.delete(name="draguard-every-rule")


def dry_run(plane, obj: dict) -> tuple[int, str, list[str]]:
    """(HTTP status, body, warnings) of a server-side dry-run create of `obj`."""
    return plane.dry_run_create(obj, obj["metadata"].get("namespace"))


def _placed(text: str, namespace: str, plane) -> list[dict]:
    """The example's objects, the namespaced ones in `namespace` (a Namespace object of the
    example is labelled so the webhook judges it)."""
    dyn = dynamic.DynamicClient(plane.api())
    objects = []
    for obj in (d for d in yaml.safe_load_all(textwrap.dedent(text)) if d):
        if dyn.resources.get(api_version=obj["apiVersion"], kind=obj["kind"]).namespaced:
            obj["metadata"]["namespace"] = namespace
        elif obj["kind"] == "Namespace":
            obj["metadata"].setdefault("labels", {}).update(LABEL)
        objects.append(obj)
    return objects


def _flagged(rule, objects: list[dict]) -> set[tuple]:
    """(kind, name) of the objects draguard flags for `rule`, judged with the others."""
    findings = lint_objects(objects, Config(kube_version=TARGET)).findings
    return {(f.obj.kind, f.obj.name) for f in findings if f.rule == rule.id and f.severity == rule.severity}


def _create_context(plane, objects: list[dict], flagged: set) -> list[dict]:
    """Create for real what the flagged objects refer to; the cluster-scoped ones made are
    returned, to delete after the rule. An object the webhook refuses is tried again for a
    while: it may refer to one created just before, which its cache has not seen yet."""
    dyn, made = dynamic.DynamicClient(plane.api()), []
    for obj in objects:
        if (obj["kind"], obj["metadata"]["name"]) in flagged or obj["kind"] == "Pod":
            continue
        resource = dyn.resources.get(api_version=obj["apiVersion"], kind=obj["kind"])
        deadline = time.monotonic() + 15
        while True:
            try:
                resource.create(body=obj, namespace=obj["metadata"].get("namespace"))
            except ConflictError:
                break
            except ForbiddenError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.3)
                continue
            if not resource.namespaced:
                made.append(obj)
            break
    return made


def _judged(plane, obj: dict, settled, deadline: float) -> tuple[int, str, list[str]]:
    """The dry run's answer once `settled(status, body, warnings)`, retried while the cache may
    not have seen the context yet (then the last answer)."""
    while True:
        answer = dry_run(plane, obj)
        if settled(*answer) or time.monotonic() > deadline:
            return answer
        time.sleep(0.3)


def _refused(rule):
    return lambda status, body, warnings: status == 422 or (status == 403 and f"[{rule.id}]" in body)


def _warned(rule):
    """A warning names the rule (the example may also break an error rule, which denies it)."""
    return lambda status, body, warnings: any(rule.id in w for w in warnings)


def _silent(rule):
    return lambda status, body, warnings: f"[{rule.id}]" not in body and not any(rule.id in w for w in warnings)


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.id)
def test_the_webhook_refuses_the_failing_example_naming_the_rule_and_admits_the_passing_one(webhooked, rule):
    plane = webhooked
    namespaces = dynamic.DynamicClient(plane.api()).resources.get(api_version="v1", kind="Namespace")
    namespace = f"every-{rule.id}"[:63]
    namespaces.create(body={"metadata": {"name": namespace, "labels": LABEL}})
    made = []
    try:
        failing = _placed(rule.noncompliant, namespace, plane)
        flagged = _flagged(rule, failing)
        assert flagged, "draguard flags nothing in the failing example at 1.37"
        made += _create_context(plane, failing, flagged)
        refused_by_validation = False
        for obj in failing:
            if (obj["kind"], obj["metadata"]["name"]) not in flagged:
                continue
            error = str(rule.severity) == "error" and not rule.admission_warns
            status, body, warnings = _judged(plane, obj, _refused(rule) if error else _warned(rule),
                                             time.monotonic() + 15)
            if error:
                if status == 422 and "every.draguard.io" not in body:
                    refused_by_validation = True  # the API server's validation, before admission
                    print(f"{rule.id}: refused by the API server's validation: {json.loads(body)['message']}")
                    continue
                assert status == 403 and "every.draguard.io" in body and f"[{rule.id}]" in body, body
            else:
                assert any(rule.id in w for w in warnings), f"{status} {body} {warnings}"
        assert refused_by_validation == (rule.id in VALIDATED_BY_THE_API_SERVER)
        for obj in made:
            dynamic.DynamicClient(plane.api()).resources.get(
                api_version=obj["apiVersion"], kind=obj["kind"]).delete(name=obj["metadata"]["name"])
        made = []
        passing = _placed(rule.compliant, namespace, plane)
        made += _create_context(plane, passing, set())
        for obj in passing:
            status, body, warnings = _judged(plane, obj, _silent(rule), time.monotonic() + 15)
            assert f"[{rule.id}]" not in body and not any(rule.id in w for w in warnings), (status, body, warnings)
    finally:
        for obj in made:
            dynamic.DynamicClient(plane.api()).resources.get(
                api_version=obj["apiVersion"], kind=obj["kind"]).delete(name=obj["metadata"]["name"])
        namespaces.delete(name=namespace)
