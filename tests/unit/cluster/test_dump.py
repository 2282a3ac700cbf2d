"""Dumps: kubectl output with or without a snapshot header, bundles written by --save-dump, and
what is refused (corrupt or truncated files, bundles without their header) with a position
and exit status 2, never a traceback."""

import json
import textwrap

import pytest

from draguard.rules import REGISTRY
from draguard.rules.cluster_examples import HEALTHY

from support.audit_dump import write
from support.live import live_list


def test_a_plain_kubectl_list_is_audited_as_of_now_and_says_what_it_lacks(cli, tmp_path):
    dump = tmp_path / "pods.yaml"
    dump.write_text(live_list(3))  # `kubectl get pods,resourceclaims -A -o yaml`: no nodes, no slices
    done = cli("audit", "--from", dump, "--no-config")
    assert done.code == 0, done.err
    assert "(no capture time in the dump: judged as of now; pass --at)" in done.out
    assert "not read: nodes: not in the dump" in done.out
    assert "skipped: slice-node-missing (needs nodes" in done.out


def test_the_header_sets_the_clock_and_at_overrides_it(cli, tmp_path):
    rule = REGISTRY.get("claim-stuck-deleting")
    dump = tmp_path / "dump.yaml"
    dump.write_text(textwrap.dedent(rule.noncompliant))
    assert "claim-stuck-deleting" in {f["rule"] for f in cli("audit", "--from", dump, "--no-config", "-f",
                                                              "json").json["findings"]}
    early = cli("audit", "--from", dump, "--no-config", "-f", "json", "--at", "2026-12-01T11:31:00Z").json
    assert "claim-stuck-deleting" not in {f["rule"] for f in early["findings"]}  # deleted only a minute before
    assert cli("audit", "--from", dump, "--at", "yesterday").err.startswith("draguard: --at: 'yesterday' is not")


def test_findings_in_a_dump_file_point_at_their_line(cli, tmp_path):
    dump = tmp_path / "dump.yaml"
    dump.write_text(textwrap.dedent(REGISTRY.get("device-double-allocated").noncompliant))
    finding = next(f for f in cli("audit", "--from", dump, "--no-config", "-f", "json").json["findings"]
                   if f["rule"] == "device-double-allocated")
    line = dump.read_text().splitlines()[finding["line"] - 1]
    assert line.strip().startswith("results:") or "device: gpu-0" in line


def test_stdin_is_read_as_a_dump(cli):
    done = cli("audit", "--from", "-", "--no-config", stdin=textwrap.dedent(HEALTHY))
    assert done.code == 0 and "score 100.0 (A)" in done.out


def test_corrupt_and_truncated_dumps_are_refused_with_their_position(cli, tmp_path):
    broken = tmp_path / "broken.yaml"
    broken.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: [\n")
    done = cli("audit", "--from", broken)
    assert done.code == 2 and done.err.startswith(f"draguard: {broken}:") and "corrupt or truncated" in done.err
    assert len(done.err.splitlines()) == 1
    bundle = write(tmp_path / "bundle", 1, 1, 1)
    pods = bundle / "pods.json"
    pods.write_text(pods.read_text()[:-40])  # cut short, as a full disk would leave it
    done = cli("audit", "--from", bundle)
    assert done.code == 2 and done.err.startswith(f"draguard: {pods}:1:") and "truncated" in done.err
    (bundle / "snapshot.yaml").unlink()
    done = cli("audit", "--from", bundle)
    assert done.code == 2 and "not a dump bundle (no snapshot.yaml)" in done.err
    done = cli("audit", "--from", tmp_path / "missing.yaml")
    assert done.code == 2 and "cannot read the dump" in done.err


def test_a_dump_that_holds_no_object_is_refused_not_graded(cli, tmp_path):
    """An empty mapping, an empty List, a List whose items are no objects: without a header
    nothing says what was read, and an A for it would be a guess."""
    for name, text in [("empty.json", "{}\n"), ("list.yaml", "apiVersion: v1\nkind: List\nitems: []\n"),
                       ("items.yaml", "apiVersion: v1\nkind: List\nitems: [{name: x}]\n")]:
        dump = tmp_path / name
        dump.write_text(text)
        done = cli("audit", "--from", dump)
        assert done.code == 2 and "score" not in done.out, (name, done.out)
        assert done.err.startswith(f"draguard: {dump}") and ("holds no Kubernetes object" in done.err or
                                                             "not a Kubernetes object" in done.err), done.err


def test_a_bundle_lists_what_it_lacks_and_a_bad_header_is_refused(cli, tmp_path):
    bundle = write(tmp_path / "bundle", 2, 1, 1)
    (bundle / "jobs.batch.json").unlink()
    done = cli("audit", "--from", bundle, "--no-config")
    assert done.code == 0 and "not read: jobs.batch: not in the dump" in done.out
    (bundle / "snapshot.yaml").write_text("apiVersion: draguard.dev/v1alpha1\nkind: Snapshot\ncapturedAt: soon\n")
    done = cli("audit", "--from", bundle)
    assert done.code == 2 and "capturedAt 'soon' is not an RFC 3339 time" in done.err


def test_a_bundle_keeps_the_gates_the_server_reported(tmp_path):
    """--save-dump writes the API server's feature gates in the header; reading it back gives
    them to the audit, so that a replay judges as the cluster did. A header written before
    the field existed has none; one with a gate of another type is refused."""
    from draguard.cluster.dump import read_dump, write_bundle
    from draguard.cluster.snapshot import Snapshot, utc_now
    from draguard.core.errors import InputError

    snapshot = Snapshot([], utc_now(), "v1.35.1", "test", feature_gates={"DRAConsumableCapacity": True})
    write_bundle(str(tmp_path / "b"), snapshot, {"pods": [], "resourceclaims.resource.k8s.io": [],
                                                 "resourceslices.resource.k8s.io": []})
    assert read_dump(str(tmp_path / "b"))[0].feature_gates == {"DRAConsumableCapacity": True}
    header = (tmp_path / "b" / "snapshot.yaml").read_text()
    (tmp_path / "b" / "snapshot.yaml").write_text(header.replace("DRAConsumableCapacity: true", "X: maybe"))
    with pytest.raises(InputError, match="featureGates must map gate names to true or false"):
        read_dump(str(tmp_path / "b"))


def test_from_refuses_the_cluster_options(cli, tmp_path):
    done = cli("audit", "--from", tmp_path, "--watch")
    assert done.code == 2 and "--from audits a dump" in done.err


def test_the_json_report_is_the_documented_shape(cli, tmp_path):
    bundle = write(tmp_path / "bundle", 2, 2, 3)
    report = cli("audit", "--from", bundle, "--no-config", "-f", "json").json
    assert set(report) == {"version", "snapshot", "summary", "skipped", "pools", "findings"}
    assert report["snapshot"]["capturedAt"] == "2026-12-01T12:00:00Z"
    assert report["summary"]["grade"] == "A" and report["summary"]["score"] == 100.0
    cluster = report["pools"]["cluster"]
    assert cluster["devices"] == {"total": 16, "allocated": 3, "free": 13, "tainted": 0}
    assert report["pools"]["nodePools"]["h100"]["nodes"] == 2
    assert json.dumps(report["pools"]["nodes"][0]).startswith('{"name": "gpu-node-0", "nodePool": "h100"')


def test_thresholds_come_from_the_config_file(cli, tmp_path):
    dump = tmp_path / "dump.yaml"
    dump.write_text(textwrap.dedent(REGISTRY.get("claim-stuck-deleting").noncompliant))
    config = tmp_path / ".draguard.yaml"
    config.write_text("rules:\n  claim-stuck-deleting: {after: 7200}\n  pod-stuck-terminating: {margin: 7200}\n")
    report = cli("audit", "--from", dump, "--config", config, "-f", "json").json
    assert report["findings"] == []  # deleted 30 minutes before capture: under the configured two hours


def test_live_claims_with_admin_access_need_the_namespace_label(cli, tmp_path):
    """The manifest catalog runs on a snapshot's user-made objects with their live namespaces:
    an admin-access claim in a namespace without the label is found, as when linting files."""
    from draguard.rules.cluster_examples import BASE, claim, snapshot

    admin = claim(name="monitor", uid="9d1e4c02-0000-4000-8000-0000000000f1", status="\n    status: {}").replace(
        "      annotations: {resource.kubernetes.io/pod-claim-name: gpu}\n", "").replace(
        "count: 1}", "count: 1, adminAccess: true}")
    admin = "\n".join(line for line in admin.splitlines() if "ownerReferences" not in line
                      and "apiVersion: v1, kind: Pod" not in line)
    namespace = """
    ---
    apiVersion: v1
    kind: Namespace
    metadata: {name: team-a, uid: 9d1e4c02-0000-4000-8000-0000000000f2}
"""
    dump = tmp_path / "dump.yaml"
    dump.write_text(textwrap.dedent(snapshot(*BASE, namespace, admin + "\n")))
    rules = {f["rule"] for f in cli("audit", "--from", dump, "--no-config", "-f", "json").json["findings"]}
    assert "admin-access-namespace" in rules


def test_dra_backed_extended_resources_are_not_the_device_plugin(cli, tmp_path):
    """KEP-5004: a `nvidia.com/gpu` request the scheduler served through a DeviceClass with
    extendedResourceName is counted apart, not reported as a device-plugin GPU."""
    rule = REGISTRY.get("node-legacy-gpu-in-use")
    served = textwrap.dedent(rule.noncompliant).replace(
        "status: {phase: Running}",
        "status:\n  phase: Running\n  extendedResourceClaimStatus:\n    resourceClaimName: legacy-0-extended-resources-x\n"
        "    requestMappings: [{containerName: server, resourceName: nvidia.com/gpu, requestName: container-0-request-0}]")
    mapped_class = ("---\napiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: dra-gpus, uid: c-1}\n"
                    "spec:\n  extendedResourceName: nvidia.com/gpu\n  selectors:\n"
                    "  - cel: {expression: device.driver == 'gpu.nvidia.com'}\n")
    dump = tmp_path / "dump.yaml"
    dump.write_text(served + mapped_class)
    rules = {f["rule"] for f in cli("audit", "--from", dump, "--no-config", "-f", "json").json["findings"]}
    assert "node-legacy-gpu-in-use" not in rules
    dump.write_text(textwrap.dedent(rule.noncompliant) + mapped_class)  # not served through DRA: still legacy
    rules = {f["rule"] for f in cli("audit", "--from", dump, "--no-config", "-f", "json").json["findings"]}
    assert "node-legacy-gpu-in-use" in rules


def test_the_report_names_the_gates_the_cluster_sets_apart_from_its_release(cli, tmp_path):
    from draguard.cluster.dump import read_dump, write_bundle

    bundle = write(tmp_path / "bundle", 1, 1, 1)
    snapshot, _ = read_dump(str(bundle))
    snapshot.feature_gates = {"DRAConsumableCapacity": True, "DRAListTypeAttributes": False}
    raw = {name: json.loads((bundle / f"{name}.json").read_text())["items"] for name in
           ("pods", "resourceclaims.resource.k8s.io", "resourceslices.resource.k8s.io")}
    write_bundle(str(tmp_path / "gated"), snapshot, raw)
    out = cli("audit", "--from", tmp_path / "gated", "--no-config").out
    assert "feature gates apart from 1.34's defaults: DRAConsumableCapacity on" in out
    assert "DRAListTypeAttributes" not in out  # off, as 1.34 has it


def test_a_bundle_nested_past_the_stack_is_refused(cli, tmp_path):
    bundle = write(tmp_path / "bundle", 1, 1, 1)
    (bundle / "pods.json").write_text("[" * 100_000 + "]" * 100_000)
    done = cli("audit", "--from", bundle, "--no-config")
    assert done.code == 2 and "the dump nests too deeply" in done.err


def test_a_dump_object_the_api_server_would_refuse_stops_the_audit_at_its_position(cli, tmp_path):
    """A dump is a file anyone may edit: a claim's allocated device given as a number raised
    an internal error in claim-allocated-unreserved, a slice's capacity as a list one in
    the device model. The API server stores neither; the audit says where it is."""
    text = textwrap.dedent(REGISTRY.get("claim-allocated-unreserved").noncompliant)
    broken = text.replace("pool: gpu-node-0, device: gpu-0}]", "pool: gpu-node-0, device: 7}]")
    assert broken != text
    dump = tmp_path / "dump.yaml"
    dump.write_text(broken)
    done = cli("audit", "--from", dump, "--no-config")
    line = 1 + next(i for i, x in enumerate(broken.splitlines()) if "device: 7}]" in x)
    assert done.code == 2 and f"dump {dump}:{line}:" in done.err and "ResourceClaim" in done.err, done.err
    assert 'is not of type "string"' in done.err and "internal" not in done.err


@pytest.mark.parametrize("status, node, metadata, said", [
    ("phase: Succeeded\n      containerStatuses: [{name: server, ready: false, restartCount: 0, image: i, imageID: '', "
     "state: {terminated: {exitCode: 0, finishedAt: '2026-12-01T11:50:00Z'}}}]", "\n      nodeName: gpu-node-0", "", "phase Succeeded, 600s ago"),
    ("phase: Failed", "\n      nodeName: gpu-node-0", "", "phase Failed"),
    ("phase: Pending", "", "\n      deletionTimestamp: '2026-12-01T11:58:00Z'", "deleted before it was scheduled, 120s ago"),
    ("phase: Succeeded\n      containerStatuses: [{name: server, ready: false, restartCount: 0, image: i, imageID: '', "
     "state: {terminated: {exitCode: 0, finishedAt: '2026-12-01T11:59:30Z'}}}]", "\n      nodeName: gpu-node-0", "", None),  # 30 s: not yet
    ("phase: Running", "\n      nodeName: gpu-node-0", "\n      deletionTimestamp: '2026-12-01T11:58:00Z'", None),
])
def test_a_claim_reserved_for_a_pod_that_will_not_run_again_is_reported(cli, tmp_path, status, node, metadata, said):
    """Upstream's resourceclaim controller drops the reservation of a pod that is done
    (isPodDone: a terminal phase, or deleted before scheduling) as of a missing one; a
    finished Job's pod object may stay for days, its claim's devices with it."""
    from draguard.rules.cluster_examples import BASE, claim, pod, snapshot

    dump = tmp_path / "dump.yaml"
    dump.write_text(textwrap.dedent(snapshot(*BASE, pod(status=f"\n    status:\n      {status}", node=node,
                                                         metadata=metadata), claim())))
    found = [f["message"] for f in cli("audit", "--from", dump, "--no-config", "-f", "json").json["findings"]
             if f["rule"] == "claim-reserved-for-gone-pod"]
    assert found == ([] if said is None else
                     [f"reserved for pod infer-0, which will not run again ({said}); its devices stay allocated"])


def test_a_saved_dump_is_readable_by_its_owner_alone(tmp_path):
    """--save-dump writes pod specs, their environment values (tokens, passwords) included:
    0600 files in a 0700 folder, even over a file that was world-readable."""
    import os
    import stat

    from draguard.cluster.dump import write_bundle
    from draguard.cluster.snapshot import Snapshot, utc_now

    folder = tmp_path / "dump"
    folder.mkdir(mode=0o755)
    (folder / "pods.json").write_text("{}")
    os.chmod(folder / "pods.json", 0o644)
    raw = {"pods": [{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
                     "spec": {"containers": [{"name": "c", "env": [{"name": "TOKEN", "value": "secret"}]}]}}]}
    write_bundle(str(folder), Snapshot([], utc_now(), "v1.35.1", "test"), raw)
    written = sorted(os.listdir(folder))
    assert written == ["pods.json", "snapshot.yaml"]
    assert all(stat.S_IMODE(os.stat(folder / name).st_mode) == 0o600 for name in written)
    write_bundle(str(tmp_path / "new"), Snapshot([], utc_now(), "v1.35.1", "test"), raw)
    assert stat.S_IMODE(os.stat(tmp_path / "new").st_mode) == 0o700
