"""Live-cluster input (issue: precision): `kubectl get ... -o yaml|json | draguard lint -`.
A List is split into items before the per-document limits apply; live objects resolve their
generated claims, drop managedFields, and skip rules about how a manifest is written."""

import json
import subprocess
import sys

import pytest
import yaml

from draguard.sources.loader import Loaded, Source, load_text
from draguard.sources.yamlpos import Limits
from support.live import live_claim, live_list, live_pod
from support.paths import ROOT


def _findings(report, rule=None):
    return [f for f in report["findings"] if rule is None or f["rule"] == rule]


@pytest.mark.parametrize("fmt", ["yaml", "json"])
def test_a_list_is_judged_item_by_item_at_exact_positions(cli, fmt):
    text = live_list(3, fmt)
    result = cli("lint", "-", "--no-config", "-f", "json", stdin=text)
    report = result.json
    assert report["summary"]["objects"] == 6
    prestop = _findings(report, "teardown-prestop")
    assert [f["path"] for f in prestop] == [f"items[{i}].spec.containers[0].name" for i in (0, 2, 4)]
    lines = text.splitlines()
    for f in prestop:  # the caret is on the container's name key
        assert lines[f["line"] - 1][f["column"] - 1:].lstrip('"').startswith("name")


def test_live_pods_resolve_their_generated_claims(lint_json):
    report = lint_json(live_list(2))
    assert _findings(report, "claim-reference-missing") == []
    pod = live_pod(0)
    del pod["status"]["resourceClaimStatuses"]
    report = lint_json(yaml.safe_dump(pod))  # no status: the template is really missing from the set
    [finding] = _findings(report, "claim-reference-missing")
    assert "ResourceClaimTemplate 'mig-1g'" in finding["message"]


def test_generated_claim_stands_in_for_its_template(lint_json):
    pod = live_pod(0)
    pod["spec"]["containers"][0]["resources"]["claims"] = [{"name": "gpu", "request": "other"}]
    text = yaml.safe_dump(pod) + "---\n" + yaml.safe_dump(live_claim(0))
    [finding] = _findings(lint_json(text), "claim-request-undefined")
    assert "ResourceClaim 'infer-0-abcde-gpu-xyz', which has gpu" in finding["message"]


def test_live_objects_skip_authored_only_rules_and_say_so(lint_json):
    claim = live_claim(0)
    claim["apiVersion"] = "resource.k8s.io/v1beta2"  # what an old kubectl might ask for
    del claim["spec"]["devices"]["requests"][0]["exactly"]["allocationMode"]
    report = lint_json(yaml.safe_dump(claim), "--kube-version", "1.37", "--profile", "strict")
    rules = {f["rule"] for f in report["findings"]}
    assert not rules & {"api-version-deprecated", "api-version-not-default", "request-allocation-mode"}
    [note] = _findings(report, "live-objects")
    assert note["severity"] == "info" and note["message"].startswith("1 object(s) are live cluster state")
    authored = yaml.safe_dump(claim).replace("  uid: 00000000-0000-0000-0000-00003b9aca00\n", "")
    rules = {f["rule"] for f in lint_json(authored, "--kube-version", "1.37", "--profile", "strict")["findings"]}
    assert {"api-version-deprecated", "request-allocation-mode"} <= rules and "live-objects" not in rules


def test_managed_fields_are_not_kept():
    loaded = Loaded()
    load_text(Source("live.yaml", live_list(1)), loaded)
    assert [e.data["kind"] for e in loaded.entries] == ["Pod", "ResourceClaim"]
    assert "managedFields" not in loaded.entries[0].data["metadata"]


def test_each_item_meets_the_document_limit_on_its_own():
    text = live_list(4)
    limits = Limits(max_document_bytes=4096)  # the List is ~20 KB, each item ~2-3 KB
    loaded = Loaded()
    load_text(Source("live.yaml", text), loaded, limits)
    assert len(loaded.entries) == 8 and not loaded.problems
    small = Limits(max_document_bytes=2200)  # now pods (bigger) are refused, claims kept
    loaded = Loaded()
    load_text(Source("live.yaml", text), loaded, small)
    assert [e.data["kind"] for e in loaded.entries] == ["ResourceClaim"] * 4
    assert len(loaded.problems) == 4 and all("larger than 2200 bytes" in p.message for p in loaded.problems)


def test_list_items_that_are_not_objects_are_said(cli):
    text = "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Namespace\n  metadata: {name: a}\n- 42\n"
    report = cli("lint", "-", "--no-config", "-f", "json", stdin=text).json
    [note] = _findings(report, "not-an-object")
    assert (note["line"], note["column"]) == (7, 3) and "item 1 of the List" in note["message"]


def test_anchors_across_items_fall_back_to_the_whole_document(lint_json):
    text = ("apiVersion: v1\nkind: List\nitems:\n- &ns {apiVersion: v1, kind: Namespace, metadata: {name: a}}\n"
            "- *ns\n")
    assert lint_json(text)["summary"]["objects"] == 2


@pytest.mark.memory
def test_twenty_mebibytes_of_live_objects_lint_in_bounded_memory(tmp_path):
    """~20 MiB of kubectl YAML (4,800 pods and their claims) in a fresh process: under
    500 MiB peak RSS (1.6 GB and a refused List before)."""
    path = tmp_path / "live.yaml"
    path.write_text(live_list(4800))
    assert path.stat().st_size > 20 * 2**20 * 0.95
    # VmHWM is the peak of this process image only (ru_maxrss would include the forking parent's)
    code = ("import sys; from draguard.cli import main; rc = main(sys.argv[1:]); "
            "print(next(l.split()[1] for l in open('/proc/self/status') if l.startswith('VmHWM')))")
    done = subprocess.run([sys.executable, "-c", code, "lint", str(path), "--no-config", "-f", "json", "-o",
                           str(tmp_path / "out.json")], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr  # teardown warnings only
    report = json.loads((tmp_path / "out.json").read_text())
    assert report["summary"]["objects"] == 9600 and report["summary"]["refused"] == 0
    peak_mib = int(done.stdout.split()[-1]) / 1024
    assert peak_mib < 500, peak_mib


def _peak_mib(tmp_path, path, objects: int = 1600) -> float:
    """Peak RSS (VmHWM) of `draguard lint path` in a fresh process, refused past 3 GiB of
    address space (the quadratic case grew to 23 GB)."""
    import resource

    def capped():
        resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))

    code = ("import sys; from draguard.cli import main; rc = main(sys.argv[1:]); "
            "print(next(l.split()[1] for l in open('/proc/self/status') if l.startswith('VmHWM')))")
    done = subprocess.run([sys.executable, "-c", code, "lint", str(path), "--no-config", "-f", "json", "-o",
                           str(tmp_path / "out.json")], capture_output=True, text=True, check=False,
                          preexec_fn=capped, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads((tmp_path / "out.json").read_text())["summary"]["objects"] == objects
    return int(done.stdout.split()[-1]) / 1024


@pytest.mark.memory
def test_a_one_line_json_list_costs_the_memory_of_the_same_list_pretty_printed(tmp_path):
    """`kubectl get -o json | jq -c`: 800 pods and claims with a 2 KB annotation each (~3 MB)
    on one line. Each item was parsed from its text padded with spaces to its column, so the
    padding grew with the square of the file (23 GB for 9 MB); now it costs what the same
    List pretty-printed does."""
    document = json.loads(live_list(800, "json"))
    for item in document["items"]:
        item["metadata"].setdefault("annotations", {})["example.com/blob"] = "x" * 2048
    minified, pretty = tmp_path / "min.json", tmp_path / "pretty.json"
    minified.write_text(json.dumps(document, separators=(",", ":")))
    pretty.write_text(json.dumps(document, indent=4))
    assert minified.read_text().count("\n") == 0 and minified.stat().st_size > 2.5e6
    assert _peak_mib(tmp_path, minified) < 1.3 * _peak_mib(tmp_path, pretty)


@pytest.mark.memory
@pytest.mark.parametrize("shape", ["json-minified", "yaml-stream"])
def test_a_large_input_of_small_pods_costs_a_bounded_multiple_of_its_size(tmp_path, shape):
    """benchmarks/input_scaling.py's shapes of many small objects: 5 MB of legacy GPU pods
    (about 17,000, each with a finding and its fix) on one line, and as a stream of documents.
    The peak RSS of the whole process over the input's size, as the benchmark reports it (the
    interpreter's own ~31 MiB, 6x of 5 MB, included): about 60x before the positions, fixes
    and views were made compact, 34x after; 15x and 17x since a text past 4 MiB holds no trees
    (sources.reread) and a List item no copy of its text (under 15x from 10 MB); 14x (YAML) and
    16x (JSON) with the objects' fields in slots (model.manifest), where a report written in
    runs of 256 findings had taken the JSON List to 20.3x on CI."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from input_scaling import generate

    path = tmp_path / ("pods.json" if shape.startswith("json") else "pods.yaml")
    path.write_text(generate(shape, 5))
    pods = len(json.loads(path.read_text())["items"]) if shape.startswith("json") else \
        path.read_text().count("kind: Pod")
    peak = _peak_mib(tmp_path, path, pods) * 2**20
    assert peak < 20 * path.stat().st_size, peak / path.stat().st_size
