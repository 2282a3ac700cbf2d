"""The ratchet's two halves agree: on every update of the rules' example objects that a seeded
mutation makes (and its reverse), the webhook's measures (admission.ratchet.growth) say the
update grows something exactly when the exported policies' CEL (grew_cel, evaluated with the
policy variables bound as the API server binds them) does; and a policy denies a grown update
that keeps its error, naming what grew."""

from __future__ import annotations

import copy
import random
import textwrap

import pytest
import yaml

from draguard.admission.celcheck import _bound, evaluate
from draguard.cel.objects import evaluate as _evaluate
from draguard.admission.policies import export
from draguard.admission.ratchet import grew_cel, grown_names_cel, growth
from draguard.admission.variables import variables_for
from draguard.core.config import Config
from draguard.model.claims import CLAIM_TARGETS
from draguard.model.workloads import POD_TARGETS
from draguard.rules import REGISTRY

from support.webhook import LEGACY_DEPLOYMENT

GREW = grew_cel(None)
NAMES = grown_names_cel(None)
POLICY = {"spec": {"variables": variables_for([GREW, NAMES], None)}}


def _examples() -> list[dict]:
    found = []
    for rule in REGISTRY:
        for text in (rule.noncompliant, rule.compliant):
            try:
                docs = list(yaml.safe_load_all(textwrap.dedent(text or "")))
            except yaml.YAMLError:  # the examples of the rules about broken YAML
                continue
            for doc in docs:
                if isinstance(doc, dict) and isinstance(doc.get("metadata"), dict) and "apiVersion" in doc and \
                        (doc.get("apiVersion", "").rpartition("/")[0], doc.get("kind")) in POD_TARGETS | CLAIM_TARGETS:
                    found.append(doc)
    return found


def _walk(node, found):
    if isinstance(node, dict):
        found.append(node)
        for value in node.values():
            _walk(value, found)
    elif isinstance(node, list):
        for value in node:
            _walk(value, found)
    return found


def _mutate(obj: dict, rng: random.Random) -> dict:
    """One change an update could make: counts, GPU amounts, shared claims, requests'
    devices, selectors and classes, device variables, host paths, or an unrelated label."""
    new = copy.deepcopy(obj)
    nodes = _walk(new, [])
    choice = rng.randrange(11)
    if choice == 0:
        for node in nodes:
            for key in ("replicas", "parallelism", "size"):
                if key in node or rng.random() < 0.1 and node is new.get("spec"):
                    node[key] = rng.choice([0, 1, 3, 50, "7"])
    elif choice == 1:
        for node in nodes:
            for section in ("limits", "requests"):
                if isinstance(node.get(section), dict):
                    node[section][rng.choice(["nvidia.com/gpu", "amd.com/gpu", "nvidia.com/mig-1g.10gb"])] = \
                        rng.choice([1, 2, "4", "8", "500m", "x"])
    elif choice == 2:
        for node in nodes:
            if isinstance(node.get("resourceClaims"), list):
                node["resourceClaims"].append({"name": "shared", "resourceClaimName": "one-gpu"})
            if isinstance(node.get("containers"), list):
                for c in node["containers"]:
                    if isinstance(c, dict) and rng.random() < 0.7:
                        c.setdefault("resources", {}).setdefault("claims", []).append({"name": "shared"})
    elif choice == 3:
        for node in nodes:
            if "deviceClassName" in node:
                if rng.random() < 0.5:
                    node["count"] = rng.choice([1, 2, 4, 0])
                else:
                    node["allocationMode"] = rng.choice(["All", "ExactCount"])
    elif choice == 4:
        for node in nodes:
            if isinstance(node.get("selectors"), list) and node["selectors"]:
                node["selectors"].pop(rng.randrange(len(node["selectors"])))
            elif "deviceClassName" in node and rng.random() < 0.5:
                node["selectors"] = [{"cel": {"expression": "device.attributes['gpu.nvidia.com'].type == 'gpu'"}}]
    elif choice == 5:
        for node in nodes:
            if "deviceClassName" in node and rng.random() < 0.5:
                node["deviceClassName"] = rng.choice(["gpu.nvidia.com", "mig.nvidia.com", "other.example.com"])
    elif choice == 6:
        for node in nodes:
            if isinstance(node.get("containers"), list) and node["containers"]:
                extra = copy.deepcopy(node["containers"][0])
                if isinstance(extra, dict):
                    extra["name"] = f"extra-{rng.randrange(100)}"
                    node["containers"].append(extra)
    elif choice == 7:
        for node in nodes:
            if isinstance(node.get("containers"), list):
                for c in node["containers"]:
                    if isinstance(c, dict) and rng.random() < 0.7:
                        c.setdefault("env", []).append({"name": rng.choice(["CUDA_VISIBLE_DEVICES", "LOG_LEVEL"]),
                                                        "value": rng.choice(["0", "all", "none", "0,1"])})
            for entry in node.get("env") or [] if isinstance(node.get("env"), list) else []:
                if isinstance(entry, dict) and "value" in entry:
                    entry["value"] = rng.choice(["0", "all", " None "])
                elif isinstance(entry, dict) and rng.random() < 0.5:
                    entry.pop("value", None)
                    entry["valueFrom"] = rng.choice([{"secretKeyRef": {"name": "s", "key": "all"}},
                                                     {"configMapKeyRef": {"name": "c", "key": "one"}}, {}])
    elif choice == 8:
        for node in nodes:
            if isinstance(node.get("containers"), list) and rng.random() < 0.8:
                volumes = node.setdefault("volumes", [])
                if isinstance(volumes, list):
                    volumes.append({"name": f"host-{rng.randrange(100)}", "hostPath": {
                        "path": rng.choice(["/dev", "/dev/nvidia0", "//dev/", "/data", "/run/nvidia"])}})
    elif choice == 9:
        for node in nodes:
            if isinstance(node.get("containers"), list):
                if rng.random() < 0.3:
                    term = {"key": "n", "operator": rng.choice(["In", "NotIn"]), "values": ["n1"]}
                    required = {"nodeSelectorTerms": [{"matchExpressions": [term]}]}
                    node["affinity"] = rng.choice([{}, {"nodeAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": required}}])
                elif rng.random() < 0.5:
                    node["nodeSelector"] = rng.choice([{}, {"gpu": "a100"}, {"gpu": "h100", "zone": "a"}])
                else:
                    node.setdefault("tolerations", []).append(
                        rng.choice([{"operator": "Exists"}, {"key": "nvidia.com/gpu", "effect": "NoSchedule"}]))
    else:
        new["metadata"].setdefault("labels", {})["bumped"] = str(rng.randrange(100))
    return new


def _cel_grew(old: dict, new: dict) -> tuple[bool, str]:
    data, errors = _bound(POLICY, new, None, old)
    assert not errors, errors
    grew, error = _evaluate(GREW, data)
    assert error is None, error
    names, error = _evaluate(NAMES, data)
    assert error is None, error
    return grew, names


def _pairs():
    rng = random.Random(20261206)
    for obj in _examples():
        for _ in range(6):
            new = _mutate(obj, rng)
            yield obj, new
            yield new, obj  # the same change undone: a shrink where the other grew
            yield new, _mutate(new, rng)


def test_the_webhook_and_the_policies_measure_growth_alike():
    pairs = list(_pairs())
    disagreements, grown, measures = [], 0, set()
    for old, new in pairs:
        said = growth(old, new)
        grew, names = _cel_grew(old, new)
        grown += bool(said)
        measures.update(names.split(", ") if names else ())
        if bool(said) is not grew:
            disagreements.append((old["kind"], said, names))
    assert not disagreements, disagreements[:5]
    assert len(pairs) > 500 and 0.05 < grown / len(pairs) < 0.95  # both answers were put to the test
    assert measures == {"pods", "device-plugin GPUs", "containers on shared claims", "request devices",
                        "request selectors", "device variable values", "host GPU paths", "DaemonSet nodes"}  # every measure grew


def test_an_unchanged_object_grows_nothing():
    for obj in _examples():
        assert growth(obj, obj) == [] and _cel_grew(obj, obj)[0] is False


@pytest.mark.parametrize("kube_version", ["1.32", "1.35"])
def test_a_policy_denies_an_update_that_keeps_its_error_and_grows_it(kube_version):
    [pol] = [o for o in export(REGISTRY, Config(kube_version=kube_version)).objects
             if o["kind"] == "ValidatingAdmissionPolicy" and o["metadata"]["name"] == "draguard-legacy-gpu-resource"]
    params = {"data": {"adminNamespaces": ""}}
    grown = copy.deepcopy(LEGACY_DEPLOYMENT)
    grown["spec"]["replicas"] = 50
    grown["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] = 8
    verdict = evaluate(pol, grown, params, old=LEGACY_DEPLOYMENT)
    assert not verdict.passed and verdict.error is None
    assert verdict.message == ("legacy-gpu-resource: the update keeps this error and grows what it concerns "
                               "(pods, device-plugin GPUs)")
    bumped = copy.deepcopy(LEGACY_DEPLOYMENT)
    bumped["spec"]["template"]["spec"]["containers"][0]["image"] = "vllm/vllm-openai:v0.7"
    assert evaluate(pol, bumped, params, old=LEGACY_DEPLOYMENT).passed
    assert evaluate(pol, LEGACY_DEPLOYMENT, params, old=grown).passed  # shrinking is fine
