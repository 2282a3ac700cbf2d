"""The real kube-apiserver as the judge of draguard's validity rules, by server-side dry-run.

- Selectors: generated selectors (every library, valid, invalid and over the cost limit) and
  the CEL regressions go in DeviceClasses and ResourceClaimTemplates; the server's
  accept/reject, and the column of its first CEL error, must match compile_selector (its
  compile error, or its cost estimate over the limit). `--selectors N` sets how many
  generated selectors are sent (default 2000, each in both kinds).
- Objects: every DRA object of the corpus (tests/support/data/corpus) and of the rules' examples, in the API
  version it is written in, with its namespace created unlabelled: the server accepts it
  exactly when draguard's validity rules (schema, API validation, CEL, removed versions,
  gated fields, the admin-access namespace label) find no error in it and that namespace;
  then each written again in every other version the server serves (support.served)."""

from __future__ import annotations

import json
import re
import ssl
import urllib.error
import urllib.request

import pytest
import yaml

from draguard.core.config import Config
from draguard.core.finding import Severity
from draguard.cel.env import compile_selector
from draguard.engine.lint import lint_objects
from draguard.model.claims import parse_request
from draguard.rules.registry import REGISTRY
from support import celgen, served
from support.cel_regressions import REGRESSIONS
from support.cluster import FEATURE_GATES, ControlPlane
from support.paths import corpus_files
from support.validation_objects import OBJECTS, POD_OBJECTS

pytestmark = pytest.mark.cluster
NS = "default"
_POSITION = re.compile(r"<input>:(\d+):(\d+):")
OVER_COST = "too complex, exceeds cost limit"  # the server's words for a selector over its cost limit


def _objects(expression: str) -> list[tuple[str, dict]]:
    selectors = [{"cel": {"expression": expression}}]
    return [
        ("/apis/resource.k8s.io/v1/deviceclasses",
         {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "judged"},
          "spec": {"selectors": selectors}}),
        (f"/apis/resource.k8s.io/v1/namespaces/{NS}/resourceclaimtemplates",
         {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
          "metadata": {"name": "judged", "namespace": NS},
          "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
              "deviceClassName": "gpu.example.com", "selectors": selectors}}]}}}}),
    ]


class Judge:
    """Server-side dry-run creates over one keep-alive-free HTTPS opener."""

    def __init__(self, plane: ControlPlane):
        self.url, self.token = plane.url, plane.token
        self.context = ssl.create_default_context(cafile=str(plane.ca_file))

    def post(self, path: str, body: dict, dry_run: bool = True) -> tuple[int, str]:
        """(HTTP status, the server's message)."""
        status, answer = self.send(path, body, dry_run)
        return status, "" if status == 201 else answer.get("message", "")

    def send(self, path: str, body: dict, dry_run: bool = True) -> tuple[int, dict]:
        """(HTTP status, the server's answer: the object as it would be stored, or a Status)."""
        request = urllib.request.Request(f"{self.url}{path}{'?dryRun=All' if dry_run else ''}",
                                         data=json.dumps(body).encode(), method="POST",
                                         headers={"Authorization": f"Bearer {self.token}",
                                                  "Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, context=self.context, timeout=30) as response:
                return response.status, json.loads(response.read() or b"{}")
        except urllib.error.HTTPError as exc:
            return exc.code, json.loads(exc.read() or b"{}")

    def namespace(self, name: str = NS) -> None:
        """Create the namespace, unlabelled, for real (a 409 once it exists)."""
        self.post("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}},
                  dry_run=False)

    def verdict(self, path: str, body: dict) -> tuple[bool, tuple | None, str]:
        """(accepted, (line, column) of the first CEL error or None, the server's message)."""
        status, message = self.post(path, body)
        if status not in (201, 422):
            raise AssertionError(f"{status}: {message}")
        where = _POSITION.search(message)
        return status == 201, (int(where.group(1)), int(where.group(2))) if where else None, message


def as_created(expression: str):
    """The selector compiled as the API server compiles a new object's under the plane's
    gates (support.cluster.FEATURE_GATES: DRAConsumableCapacity on, DRAListTypeAttributes off)."""
    return compile_selector(expression, "DRAConsumableCapacity=true" in FEATURE_GATES,
                            "DRAListTypeAttributes=true" in FEATURE_GATES)


def disagreements(judge: Judge, expressions: list[str]) -> list:
    """What the server and draguard judge differently: accepted or not, the column of the
    first CEL error, an estimate over the cost limit. A selector draguard's engine cannot
    judge (error.unsupported: cel-cpp nests 32 deep, cel-go 250) counts as accepted."""
    found = []
    for expression in expressions:
        compiled = as_created(expression)
        refused = compiled.error is not None and not compiled.error.unsupported
        ours = (not refused and not compiled.too_complex,
                celgen.position(expression, compiled.error.offset) if refused else None)
        for path, body in _objects(expression):
            accepted, where, message = judge.verdict(path, body)
            if accepted != ours[0] or (where is not None and ours[1] != where) \
                    or compiled.too_complex != (OVER_COST in message):
                found.append((body["kind"], expression, ours, (accepted, where), message[:300]))
    return found


@pytest.mark.fidelity  # a minute of generated selectors: CI's second run, beside the simulator's table
def test_generated_selectors_are_judged_alike(bare_plane, request):
    count = request.config.getoption("--selectors")
    expressions = celgen.expressions(0, count)
    found = disagreements(Judge(bare_plane), expressions)
    rejected = sum(1 for e in expressions if as_created(e).error)
    too_complex = sum(1 for e in expressions if as_created(e).too_complex)
    print(f"\n{count} generated selectors x 2 kinds ({rejected} rejected by draguard as invalid, {too_complex} "
          f"as too complex); {len(found)} disagreements")
    assert too_complex > 0
    assert not found, found[:5]


@pytest.mark.fidelity  # a minute of generated selectors: CI's second run, beside the simulator's table
def test_selectors_near_the_limits_are_judged_alike(bare_plane):
    """Nesting (cel-go's parser: 250), length (10 KiB, in bytes) and estimated cost (1,000,000)
    on each side of each limit, in a DeviceClass and a ResourceClaimTemplate each: the real
    kube-apiserver's verdict is draguard's, with its words for nesting and length."""
    judge = Judge(bare_plane)
    cases = celgen.near_limits()
    assert not disagreements(judge, list(cases.values()))
    for name, expression in cases.items():
        compiled = as_created(expression)
        if compiled.error is None or compiled.error.unsupported:
            continue
        path, body = _objects(expression)[0]
        _, _, message = judge.verdict(path, body)
        words = "Too long" if name.startswith("length") else compiled.error.message
        assert words in message, (name, compiled.error.message, message[:300])


def test_regressions_are_judged_alike(bare_plane):
    assert not disagreements(Judge(bare_plane), list(REGRESSIONS.values()))


_RESOURCES = {"ResourceClaim": "resourceclaims", "ResourceClaimTemplate": "resourceclaimtemplates",
              "DeviceClass": "deviceclasses", "ResourceSlice": "resourceslices"}
_VALIDITY = {"schema-invalid", "api-validation", "cel-invalid", "api-removed", "api-field-gated",
             "admin-access-namespace"}


def _dra_objects() -> list[tuple[str, dict]]:
    """(where it comes from, object) for every DRA object of the corpus and rule examples."""
    sources = [(str(path), path.read_text()) for path in corpus_files() if "helm-templates" not in path.parts]
    sources += [(f"rule {rule.id} {which}", getattr(rule, which) or "") for rule in REGISTRY
                for which in ("compliant", "noncompliant")]
    objects = []
    for where, text in sources:
        try:
            documents = list(yaml.safe_load_all(text))
        except yaml.YAMLError:
            continue  # a file the loader refuses; its own tests cover that
        objects += [(where, json.loads(json.dumps(d, default=str))) for d in documents
                    if isinstance(d, dict) and d.get("kind") in _RESOURCES
                    and str(d.get("apiVersion", "")).startswith("resource.k8s.io/")]
    return objects


def _path(obj: dict) -> str:
    version = obj["apiVersion"].split("/")[1]
    namespace = "" if obj["kind"] in ("DeviceClass", "ResourceSlice") else f"namespaces/{obj['metadata']['namespace']}/"
    return f"/apis/resource.k8s.io/{version}/{namespace}{_RESOURCES[obj['kind']]}"


def _disagreement(judge: Judge, config: Config, where: str, obj: dict):
    """None when the server accepts `obj` exactly when draguard's validity rules find no
    error in it (and in its namespace, created unlabelled); else what each side said."""
    metadata = obj.setdefault("metadata", {})
    metadata.setdefault("name", "judged")
    namespace = None
    if obj["kind"] not in ("DeviceClass", "ResourceSlice"):
        metadata.setdefault("namespace", "default")
        namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": metadata["namespace"]}}
        judge.post("/api/v1/namespaces", namespace, dry_run=False)  # 409 once it exists
    status, message = judge.post(_path(obj), obj)
    # 404: the version is not served, or the namespace cannot exist (an invalid name)
    accepted = status == 201
    assert status in (201, 400, 404, 422), (where, status, message)
    findings = lint_objects([namespace, obj] if namespace else [obj], config).findings
    errors = [(f.rule, f.message) for f in findings if f.rule in _VALIDITY and f.severity is Severity.ERROR]
    if accepted == bool(errors):
        return where, obj["apiVersion"], obj["kind"], status, message[:300], errors[:3]
    return None


def test_corpus_and_example_objects_are_judged_alike(bare_plane):
    judge, config = Judge(bare_plane), Config()
    objects = _dra_objects()
    found = [d for where, obj in objects if (d := _disagreement(judge, config, where, obj))]
    print(f"\n{len(objects)} DRA objects; {len(found)} disagreements")
    assert not found, found[:5]


def test_corpus_and_example_objects_in_every_served_version_are_judged_alike(bare_plane):
    """Each object written again in the other versions the server serves (support.served:
    upstream's field moves between v1beta1 and v1beta2/v1)."""
    judge, config = Judge(bare_plane), Config()
    converted = [(f"{where} as {version}", again) for where, obj in _dra_objects() for version in served.SERVED
                 if (again := served.in_version(obj, version)) is not None]
    found = [d for where, obj in converted if (d := _disagreement(judge, config, where, obj))]
    accepted = sum(1 for _, obj in converted if judge.post(_path(obj), obj)[0] == 201)
    print(f"\n{len(converted)} DRA objects in other served versions ({accepted} accepted); "
          f"{len(found)} disagreements")
    assert len(converted) > 100 and accepted > len(converted) // 2
    assert not found, found[:5]


@pytest.mark.parametrize("what, accepted, obj", OBJECTS, ids=[what for what, _, _ in OBJECTS])
def test_hand_written_objects_near_the_limits_are_judged_alike(bare_plane, what, accepted, obj):
    """support.validation_objects: the verdict stored beside each object is still the server's,
    and draguard's validity rules find an error exactly where the server refuses."""
    judge = Judge(bare_plane)
    obj = json.loads(json.dumps(obj))
    if obj["kind"] not in ("DeviceClass", "ResourceSlice"):
        judge.namespace()
    status, message = judge.post(_path(obj), obj)
    assert (status == 201) == accepted, (status, message)
    assert _disagreement(judge, Config(), what, obj) is None


def test_hand_written_objects_in_every_served_version_are_judged_alike(bare_plane):
    """The same objects written again in the other served versions (v1beta1 nests a device's
    fields under `basic` and a request's on the request), except a request naming no class,
    which v1beta1 reads as a request of neither shape (request-device-class reports it)."""
    judge, config = Judge(bare_plane), Config()
    converted = [(f"{what} as {version}", again) for what, _, obj in OBJECTS if what != "class name missing"
                 for version in served.SERVED if (again := served.in_version(obj, version)) is not None
                 and again["apiVersion"] != obj["apiVersion"]]
    found = [d for where, obj in converted if (d := _disagreement(judge, config, where, obj))]
    print(f"\n{len(converted)} hand-written objects in other served versions; {len(found)} disagreements")
    assert len(converted) > 150 and not found, found[:5]


@pytest.mark.parametrize("what, accepted, pod", POD_OBJECTS, ids=[what for what, _, _ in POD_OBJECTS])
def test_hand_written_pod_claims_are_judged_as_stored(bare_plane, what, accepted, pod):
    """support.validation_objects.POD_OBJECTS: the verdict stored beside each pod (which
    test_upstream_validation holds draguard's pod rules to) is still the server's."""
    status, message = Judge(bare_plane).post(f"/api/v1/namespaces/{NS}/pods", json.loads(json.dumps(pod)))
    assert (status == 201) == accepted, (status, message)


def _claim(version: str, request: dict) -> dict:
    return {"apiVersion": f"resource.k8s.io/{version}", "kind": "ResourceClaim",
            "metadata": {"name": "defaults", "namespace": NS}, "spec": {"devices": {"requests": [request]}}}


_CLASS = {"deviceClassName": "gpu.example.com"}
#: requests that leave allocationMode or count to the API server's defaults, or spell out Go's zero values
REQUEST_DEFAULTS = [
    ("neither", "v1", {"name": "gpu", "exactly": dict(_CLASS)}),
    ("count 0", "v1", {"name": "gpu", "exactly": dict(_CLASS, allocationMode="ExactCount", count=0)}),
    ("mode empty", "v1", {"name": "gpu", "exactly": dict(_CLASS, allocationMode="", count=2)}),
    ("mode empty, count 0", "v1", {"name": "gpu", "exactly": dict(_CLASS, allocationMode="", count=0)}),
    ("count only", "v1", {"name": "gpu", "exactly": dict(_CLASS, count=3)}),
    ("All with count 0", "v1", {"name": "gpu", "exactly": dict(_CLASS, allocationMode="All", count=0)}),
    ("subrequest count 0", "v1", {"name": "gpu", "firstAvailable": [dict(_CLASS, name="a", count=0),
                                                                      dict(_CLASS, name="b")]}),
    ("flat count 0", "v1beta1", dict(_CLASS, name="gpu", allocationMode="ExactCount", count=0)),
    ("flat neither", "v1beta1", dict(_CLASS, name="gpu")),
]


def _read(request) -> tuple:
    """(allocationMode, count) of each request or subrequest, as draguard's one parser reads it
    (the count only where ExactCount reads one)."""
    return tuple((leaf.mode, leaf.count if leaf.mode == "ExactCount" else None) for leaf in request.leaves())


@pytest.mark.parametrize("what, version, request_", REQUEST_DEFAULTS, ids=[w for w, _, _ in REQUEST_DEFAULTS])
def test_request_defaults_are_read_as_the_server_stores_them(bare_plane, what, version, request_):
    """A request is read as the API server stores it (SetDefaults_ExactDeviceRequest and
    SetDefaults_DeviceSubRequest): allocationMode ExactCount when empty, and a count of 0 (Go's
    zero value: not set) is 1. draguard once allocated no device for `count: 0`."""
    judge = Judge(bare_plane)
    judge.namespace()
    written = _claim(version, request_)
    status, stored = judge.send(_path(written), json.loads(json.dumps(written)))
    assert status == 201, stored
    [as_stored] = stored["spec"]["devices"]["requests"]
    assert _read(parse_request(request_, written["apiVersion"])) == \
        _read(parse_request(as_stored, written["apiVersion"])), as_stored
    found = [f for f in lint_objects([written], Config()).findings if f.rule == "api-validation"]
    assert not found, found


def _budget(**spec) -> dict:
    return {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "judged", "namespace": NS},
            "spec": {"selector": {"matchLabels": {"app": "x"}}, **spec}}


def _deployment(**rolling) -> dict:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "judged", "namespace": NS},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "x"}},
                     "strategy": {"type": "RollingUpdate", "rollingUpdate": rolling},
                     "template": {"metadata": {"labels": {"app": "x"}},
                                  "spec": {"containers": [{"name": "c", "image": "x"}]}}}}


def _daemonset(**rolling) -> dict:
    deployment = _deployment()
    spec = {k: v for k, v in deployment["spec"].items() if k not in ("replicas", "strategy")}
    return dict(deployment, kind="DaemonSet",
                spec=dict(spec, updateStrategy={"type": "RollingUpdate", "rollingUpdate": rolling}))


def _statefulset(strategy: dict) -> dict:
    deployment = _deployment()
    spec = {k: v for k, v in deployment["spec"].items() if k != "strategy"}
    return dict(deployment, kind="StatefulSet", spec=dict(spec, serviceName="judged", updateStrategy=strategy))


def _recreate(**rolling) -> dict:
    deployment = _deployment()
    return dict(deployment, spec=dict(deployment["spec"], strategy={"type": "Recreate", "rollingUpdate": rolling}))


ROLLOUT_OBJECTS = [_statefulset({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 2, "partition": 1}}),
                   _statefulset({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 0}}),
                   _statefulset({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "0%"}}),
                   _statefulset({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "120%"}}),
                   _statefulset({"type": "RollingUpdate", "rollingUpdate": {"partition": -1}}),
                   _statefulset({"type": "OnDelete", "rollingUpdate": {"partition": 1}}),
                   _statefulset({"type": "OnDelete"}), _recreate(maxSurge=1), _recreate(),
                   _daemonset(maxSurge=1, maxUnavailable=0), _daemonset(maxSurge=1), _daemonset(maxUnavailable="10%"),
                   _daemonset(maxSurge=0, maxUnavailable=0), _daemonset(maxSurge="150%", maxUnavailable=0),
                   _daemonset(maxSurge="10%", maxUnavailable="0%"), _daemonset(maxSurge=2, maxUnavailable=1),
                   _budget(maxUnavailable=1), _budget(maxUnavailable="100%"), _budget(minAvailable=0),
                   _budget(maxUnavailable=-1), _budget(maxUnavailable="150%"), _budget(minAvailable="abc%"),
                   _budget(maxUnavailable="1.5%"), _budget(minAvailable=1, maxUnavailable="50%"),
                   _deployment(maxSurge=0, maxUnavailable=1), _deployment(maxSurge="25%", maxUnavailable=0),
                   _deployment(maxSurge=0, maxUnavailable=0), _deployment(maxSurge="0%", maxUnavailable="0%"),
                   _deployment(maxSurge=-1, maxUnavailable=1), _deployment(maxSurge=1, maxUnavailable="120%"),
                   _deployment(maxSurge="150%", maxUnavailable=1)]


def _rollout_id(obj: dict) -> str:
    spec = obj["spec"]
    return f"{obj['kind']}-{json.dumps(spec.get('strategy', spec.get('updateStrategy', spec)))}"


@pytest.mark.parametrize("obj", ROLLOUT_OBJECTS, ids=_rollout_id)
def test_budgets_and_rolling_updates_are_judged_alike(bare_plane, obj):
    """rollout-fields-invalid reports an error exactly where the server refuses the budget or
    the rolling update (ValidatePodDisruptionBudgetSpec, ValidateRollingUpdateDeployment,
    ValidateRollingUpdateDaemonSet, ValidateStatefulSetSpec; the plane is 1.37, where
    MaxUnavailableStatefulSet is on)."""
    judge = Judge(bare_plane)
    judge.namespace()
    group = "apis/policy/v1" if obj["kind"] == "PodDisruptionBudget" else "apis/apps/v1"
    resource = obj["kind"].lower() + "s"
    status, message = judge.post(f"/{group}/namespaces/{NS}/{resource}", json.loads(json.dumps(obj)))
    found = [f for f in lint_objects([obj], Config()).findings if f.rule == "rollout-fields-invalid"]
    assert (status == 201) == (not found), (status, message, [f.message for f in found])
