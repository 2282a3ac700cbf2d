"""`draguard exporter`'s state (issue #45): the same answers as `draguard audit` on the same
objects, kept by judging again only what each change touches, with bounded labels."""

from __future__ import annotations

import copy
import random
import urllib.error
import urllib.request
from datetime import datetime, timezone

import pytest
from prometheus_client.parser import text_string_to_metric_families

from draguard.cli.exporter import address, serve
from draguard.cluster.audit import audit
from draguard.cluster.exporter import CLAIMS, LEAK_RULES, NODES, PODS, SLICES, ExporterState
from draguard.cluster.live import snapshot_of
from draguard.core.config import Config
from draguard.core.errors import UsageError
from draguard.dra.generate import generate
from draguard.model.manifest import Manifest

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=timezone.utc).timestamp()
LEAKS = {r.id for r in LEAK_RULES}
KINDS = {"Node": NODES, "ResourceSlice": SLICES, "Pod": PODS, "ResourceClaim": CLAIMS}


def inventory() -> list[dict]:
    objects = generate({"nodes": [{"namePrefix": "gpu", "count": 3, "labels": {"karpenter.sh/nodepool": "h100"},
                                   "gpus": {"model": "H100-80GB", "count": 2, "mig": "none"}}]})
    for o in objects:
        o["metadata"]["uid"] = f"uid-{o['kind']}-{o['metadata']['name']}"
    return objects


def pod(name: str, node: str = "gpu-0", namespace: str = "team-a", **status) -> dict:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": namespace, "uid": f"pod-{namespace}-{name}",
                         "creationTimestamp": "2026-12-01T11:00:00Z"},
            "spec": {"nodeName": node, "containers": [{"name": "c", "image": "x"}]},
            "status": {"phase": "Running", **status}}


def claim(name: str, namespace: str = "team-a", device: str | None = None, node: str = "gpu-0",
          reserved: list[dict] | None = None, **metadata) -> dict:
    body = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": name, "namespace": namespace, "uid": f"claim-{namespace}-{name}",
                         "creationTimestamp": "2026-12-01T11:00:00Z", **metadata},
            "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com"}}]}}}
    if device is not None:
        body["status"] = {"allocation": {
            "devices": {"results": [{"request": "gpu", "driver": "gpu.nvidia.com", "pool": node, "device": device}]},
            "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                {"key": "metadata.name", "operator": "In", "values": [node]}]}]}}}
        if reserved:
            body["status"]["reservedFor"] = [{"resource": "pods", "name": p["metadata"]["name"],
                                              "uid": p["metadata"]["uid"]} for p in reserved]
    return body


def cluster() -> list[dict]:
    """Three nodes of two GPUs: two running pods each with a claim, one pending claim, one
    claim allocated for nobody, one reserved for a pod that is gone."""
    runner, other = pod("runner"), pod("other", node="gpu-1", namespace="team-b")
    gone = pod("gone")
    return [*inventory(), runner, other,
            claim("held", device="gpu-0", reserved=[runner]),
            claim("other", namespace="team-b", device="gpu-0", node="gpu-1", reserved=[other]),
            claim("waiting"),
            claim("leaked", device="gpu-1", node="gpu-1"),
            claim("stale", device="gpu-1", reserved=[gone])]


def loaded(objects: list[dict], **options) -> ExporterState:
    state = ExporterState(Config(), clock=lambda: NOW, **options)
    state.load([Manifest.from_data(copy.deepcopy(o), positions=False) for o in objects], lambda m: KINDS[m.kind])
    return state


def served(state: ExporterState) -> dict:
    """Every sample the exporter serves: (name, sorted labels) -> value."""
    from prometheus_client import generate_latest

    text = generate_latest(state.registry).decode()
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(text) for s in family.samples}


def judged(state: ExporterState) -> dict:
    return dict(state.health.judged)


def answers(state: ExporterState) -> dict:
    """What the exporter serves about the cluster (its own health left out)."""
    return {k: v for k, v in served(state).items()
            if not k[0].startswith("draguard_exporter_") and not k[0].endswith("_created")}


def test_the_exporter_answers_as_the_audit_does():
    objects = cluster()
    state = loaded(objects)
    result = audit(snapshot_of({"objects": copy.deepcopy(objects)}, datetime.fromtimestamp(NOW, timezone.utc), "",
                               "test", {}), Config())
    leaks: dict = {}
    for f in result.findings:
        if f.rule in LEAKS:
            leaks[(f.rule, str(f.severity))] = leaks.get((f.rule, str(f.severity)), 0) + 1
    assert leaks == {("claim-allocated-unreserved", "warning"): 1, ("claim-reserved-for-gone-pod", "error"): 1}
    metrics = served(state)
    found = {(dict(k[1])["rule"], dict(k[1])["severity"]): v for k, v in metrics.items()
             if k[0] == "draguard_findings" and v}
    assert found == leaks
    for node in result.pools.nodes:
        for state_ in ("allocated", "free", "tainted"):
            assert metrics[("draguard_node_devices", (("node", node.name), ("node_pool", "h100"),
                                                      ("state", state_)))] == getattr(node, state_)
    cluster_ = result.pools.summary()
    for profile, n in cluster_["allocatable"].items():
        assert metrics[("draguard_allocatable_devices", (("node_pool", "h100"), ("profile", profile)))] == n
    for profile, ratio in cluster_["stranded"].items():
        assert metrics[("draguard_stranded_ratio", (("node_pool", "h100"), ("profile", profile)))] == ratio
    assert metrics[("draguard_claims", (("namespace", "team-a"), ("phase", "pending")))] == 1
    assert metrics[("draguard_claims", (("namespace", "team-a"), ("phase", "reserved")))] == 2
    assert metrics[("draguard_claims", (("namespace", "team-a"), ("phase", "allocated-unreserved")))] == 1
    assert metrics[("draguard_allocated_devices", (("device_class", "gpu.nvidia.com"), ("namespace", "team-a")))] == 3
    assert metrics[("draguard_exporter_ready", ())] == 1


def test_a_change_judges_again_only_what_it_touches():
    objects = cluster()
    state = loaded(objects)
    before = judged(state)
    assert before == {"claim": 5, "node": 3}
    waiting = next(o for o in objects if o["metadata"]["name"] == "waiting")
    allocated = claim("waiting", device="gpu-1", node="gpu-2")
    state.apply([(CLAIMS, "MODIFIED", allocated)])
    assert judged(state) == {"claim": 6, "node": 4}  # the claim, and the node its device is on
    state.apply([(PODS, "DELETED", next(o for o in objects if o["metadata"]["name"] == "runner"))])
    assert judged(state) == {"claim": 7, "node": 4}  # the claim reserved for it; no node
    assert served(state)[("draguard_findings", (("rule", "claim-reserved-for-gone-pod"), ("severity", "error")))] == 2
    assert waiting["metadata"]["uid"] in state.claim_rows


def test_incremental_state_equals_a_fresh_load_after_random_churn():
    """The property that makes incremental judging safe: after any sequence of changes, the
    tallies are those of loading the objects of that moment at once."""
    rng = random.Random(45)
    objects = {o["metadata"]["uid"]: o for o in cluster()}
    state = loaded(list(objects.values()))
    nodes = ["gpu-0", "gpu-1", "gpu-2"]
    for step in range(150):
        n = rng.randrange(6)
        name = f"c{rng.randrange(8)}"
        if n < 3:
            p = pod(f"p{rng.randrange(6)}", node=rng.choice(nodes), namespace=rng.choice(["team-a", "team-b"]))
            uid = p["metadata"]["uid"]
            kind = "DELETED" if uid in objects and n == 0 else "MODIFIED" if uid in objects else "ADDED"
            if n == 1:
                p["status"]["phase"] = "Succeeded"
            change = p
        else:
            node = rng.choice(nodes)
            pods = [o for o in objects.values() if o["kind"] == "Pod" and o["metadata"]["namespace"] == "team-a"]
            c = claim(name, device=rng.choice([None, "gpu-0", "gpu-1"]), node=node,
                      reserved=rng.sample(pods, min(len(pods), rng.randrange(2))) or None)
            if n == 5:
                c["metadata"]["deletionTimestamp"] = "2026-12-01T11:30:00Z"
            uid = c["metadata"]["uid"]
            kind = "DELETED" if uid in objects and n == 3 else "MODIFIED" if uid in objects else "ADDED"
            change = c
        if kind == "DELETED":
            objects.pop(change["metadata"]["uid"])
        else:
            objects[change["metadata"]["uid"]] = change
        state.apply([({"Pod": PODS, "ResourceClaim": CLAIMS}[change["kind"]], kind, copy.deepcopy(change))])
        if step % 10 == 9:
            assert answers(state) == answers(loaded(list(objects.values()))), f"after step {step}"
    assert judged(state)["node"] < 150 * 3  # never every node at every step


def test_a_slice_withdrawn_and_republished_moves_its_node_and_claims():
    objects = cluster()
    state = loaded(objects)
    slice_ = next(o for o in objects if o["kind"] == "ResourceSlice" and o["spec"]["nodeName"] == "gpu-1")
    state.apply([(SLICES, "DELETED", slice_)])
    metrics = served(state)
    assert not any(k[0] == "draguard_node_devices" and ("node", "gpu-1") in k[1] for k in metrics)
    assert metrics[("draguard_findings", (("rule", "node-driver-slices-missing"), ("severity", "error")))] == 2
    state.apply([(SLICES, "ADDED", slice_)])
    assert answers(state) == answers(loaded(objects))


def test_namespaces_past_the_bound_are_summed_as_other():
    objects = [*inventory(), *(claim(f"c{i}", namespace=ns) for i, ns in enumerate(["a", "a", "a", "b", "b", "c"]))]
    metrics = served(loaded(objects, max_namespaces=2))
    pending = {dict(k[1])["namespace"]: v for k, v in metrics.items()
               if k[0] == "draguard_claims" and dict(k[1])["phase"] == "pending"}
    assert pending == {"a": 3, "b": 2, "other": 1}


def test_ages_and_stuck_deletion_follow_the_clock():
    """A claim deleted at 11:50 is 600 s old at noon: in the 900 s bucket, and reported stuck
    (after 300 s) once a tick judges it again when the clock has moved on."""
    now = [datetime(2026, 12, 1, 11, 52, tzinfo=timezone.utc).timestamp()]
    state = ExporterState(Config(), clock=lambda: now[0])
    objects = [*inventory(), claim("doomed", deletionTimestamp="2026-12-01T11:50:00Z",
                                   finalizers=["example.com/hold"])]
    state.load([Manifest.from_data(o, positions=False) for o in objects], lambda m: KINDS[m.kind])
    stuck = ("draguard_findings", (("rule", "claim-stuck-deleting"), ("severity", "error")))
    assert served(state)[stuck] == 0
    now[0] = NOW
    state.tick()
    metrics = served(state)
    assert metrics[stuck] == 1
    bucket = {dict(k[1])["le"]: v for k, v in metrics.items()
              if k[0] == "draguard_claim_age_seconds_bucket" and ("phase", "deleting") in k[1]}
    assert bucket["300"] == 0 and bucket["900"] == 1 and bucket["+Inf"] == 1


def test_health_and_readiness_are_served():
    state = ExporterState(Config(), clock=lambda: NOW)
    server = serve(("127.0.0.1", 0), state, lambda: True)
    base = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        assert urllib.request.urlopen(f"{base}/healthz").status == 200
        with pytest.raises(urllib.error.HTTPError) as raised:
            urllib.request.urlopen(f"{base}/readyz")
        assert raised.value.code == 503
        state.load([Manifest.from_data(o, positions=False) for o in inventory()], lambda m: KINDS[m.kind])
        assert urllib.request.urlopen(f"{base}/readyz").status == 200
        body = urllib.request.urlopen(f"{base}/metrics").read().decode()
        assert "draguard_exporter_ready 1.0" in body
    finally:
        server.shutdown()


def test_listen_addresses():
    assert address("127.0.0.1:9464") == ("127.0.0.1", 9464)
    assert address("[::1]:9464") == ("::1", 9464)
    assert address(":9464") == ("0.0.0.0", 9464)
    with pytest.raises(UsageError):
        address("localhost")


def test_compacting_keeps_what_is_read_and_shares_what_repeats():
    from draguard.cluster.exporter import compact

    first, second = claim("one", device="gpu-0"), claim("two", device="gpu-1")
    slices = [o for o in inventory() if o["kind"] == "ResourceSlice"]
    expected = copy.deepcopy([first, second, *slices])
    first["metadata"]["managedFields"] = [{"manager": "kube-scheduler"}]
    compacted = [compact(CLAIMS, first), compact(CLAIMS, second), *(compact(SLICES, s) for s in slices)]
    assert compacted == expected
    assert first["spec"] is second["spec"]
    assert first["status"]["allocation"]["nodeSelector"] is second["status"]["allocation"]["nodeSelector"]
    devices = [d for s in slices for d in s["spec"]["devices"]]
    assert devices[0]["attributes"]["productName"] is devices[-1]["attributes"]["productName"]
    running = compact(PODS, pod("runner"))
    assert "containers" not in running["spec"] and running["spec"]["nodeName"] == "gpu-0"


def test_the_namespace_bound_is_a_positive_number(cli):
    done = cli("exporter", "--max-namespaces", "0")
    assert done.code == 2 and "--max-namespaces: '0' is not a positive whole number" in done.err
