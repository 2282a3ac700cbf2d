import json

import pytest
import yaml

from draguard.dra.generate import _gpu_uuid, generate, generate_json, generate_yaml, place_layout
from draguard.dra.inventory import InventoryError



def test_static_layouts_follow_the_placement_rules():
    assert place_layout("A100-40GB", ["3g.20gb", "2g.10gb", "1g.5gb", "1g.5gb"]) == \
        [("3g.20gb", 4), ("2g.10gb", 0), ("1g.5gb", 2), ("1g.5gb", 3)]
    assert len(place_layout("H200-141GB", ["1g.18gb"] * 7)) == 7


@pytest.mark.parametrize("model, layout, message", [
    ("H100-80GB", ["4g.40gb", "4g.40gb"], "at most 1 instances"),
    ("H100-80GB", ["4g.40gb", "3g.40gb", "1g.10gb"], "compute slices"),
    ("A30-24GB", ["2g.12gb", "2g.12gb", "1g.6gb"], "compute slices"),
    ("H100-80GB", ["3g.40gb", "3g.40gb", "1g.10gb"], "does not fit"),
    ("H100-80GB", ["1g.20gb", "1g.20gb", "1g.20gb", "1g.20gb", "1g.10gb"], "does not fit"),
    ("H100-80GB", ["9g.90gb"], "no MIG profile"),
    ("T4", [], "unknown GPU model"),
])
def test_invalid_layouts_are_refused(model, layout, message):
    with pytest.raises(InventoryError, match=message):
        place_layout(model, layout)


def test_generate_static_mig_nodes():
    objects = generate({"nodes": [{"namePrefix": "h", "count": 2, "labels": {"zone": "a"},
                                   "gpus": {"model": "H100-80GB", "count": 8, "mig": "static",
                                            "layout": ["3g.40gb", "2g.20gb", "1g.10gb", "1g.10gb"]}}]})
    nodes = [o for o in objects if o["kind"] == "Node"]
    slices = [o for o in objects if o["kind"] == "ResourceSlice"]
    assert [n["metadata"]["name"] for n in nodes] == ["h-0", "h-1"] and nodes[0]["metadata"]["labels"]["zone"] == "a"
    devices = slices[0]["spec"]["devices"]
    assert len(devices) == 32
    mig = devices[0]
    assert mig["attributes"]["profile"] == {"string": "3g.40gb"} and mig["attributes"]["type"] == {"string": "mig"}
    assert "index" not in mig["attributes"] and "pcieBusID" not in mig["attributes"]  # driver 25.12
    assert mig["capacity"]["memory"] == {"value": "40Gi"} and "memorySlice4" in mig["capacity"]


def test_driver_version_decides_the_attributes():
    spec = {"driverVersion": "25.3", "nodes": [{"gpus": {"model": "A100-80GB", "count": 1}}]}
    [_, s] = generate(spec)
    gpu = s["spec"]["devices"][0]
    assert {"index", "minor"} <= set(gpu["attributes"]) and list(gpu["capacity"]) == ["memory"]
    with pytest.raises(InventoryError, match="unknown NVIDIA driver version"):
        generate({"driverVersion": "1.0", "nodes": []})


def test_dynamic_mig_publishes_counters_in_their_own_slice():
    objects = generate({"nodes": [{"gpus": {"model": "A30-24GB", "count": 1, "mig": "dynamic"}}]})
    devices, counters = [o for o in objects if o["kind"] == "ResourceSlice"]
    assert devices["spec"]["pool"] == counters["spec"]["pool"] == {"name": "node-0", "generation": 1, "resourceSliceCount": 2}
    assert counters["spec"]["sharedCounters"][0]["counters"]["computeSlices"] == {"value": "4"}
    assert len(devices["spec"]["devices"]) == 1 + 4 + 4 + 2 + 2 + 1  # whole GPU + each profile at each placement


def test_cli_generate_and_allocate(tmp_path, cli):
    spec = tmp_path / "spec.yaml"
    spec.write_text("nodes:\n- namePrefix: n\n  count: 1\n  gpus: {model: H100-80GB, count: 1, mig: static, "
                    "layout: [4g.40gb, 3g.40gb]}\n")
    inventory = tmp_path / "inventory.yaml"
    assert cli("inventory", "generate", spec, "-o", inventory).code == 0
    assert [d["kind"] for d in yaml.safe_load_all(inventory.read_text())] == ["Node", "ResourceSlice"]
    claims = tmp_path / "claims.yaml"
    claims.write_text("\n---\n".join(
        "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: c%d}\nspec:\n  devices:\n    requests:\n"
        "    - name: gpu\n      exactly:\n        deviceClassName: mig.nvidia.com\n        selectors:\n"
        "        - cel: {expression: \"device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('40Gi')) >= 0\"}\n" % i
        for i in range(3)))
    result = cli("allocate", claims, "--inventory", inventory)
    assert result.code == 1
    lines = result.out.splitlines()
    assert lines[0].startswith("default/c0: allocated on n-0") or lines[0].startswith("c0: allocated on n-0")
    assert "c2: cannot be allocated" in result.out and "free (unallocated, untainted): 0" in result.out
    as_json = cli("allocate", claims, "--inventory", inventory, "-f", "json").json
    assert as_json[0]["allocation"]["devices"]["results"][0]["driver"] == "gpu.nvidia.com"


def test_cli_generates_json_for_a_json_file_and_it_reads_the_same(tmp_path, cli):
    spec = tmp_path / "spec.yaml"
    spec.write_text("nodes:\n- namePrefix: n\n  count: 2\n  gpus: {model: H100-80GB, count: 1, mig: static, "
                    "layout: [4g.40gb, 3g.40gb]}\n")
    assert cli("inventory", "generate", spec, "-o", tmp_path / "inventory.yaml").code == 0
    assert cli("inventory", "generate", spec, "-o", tmp_path / "inventory.json").code == 0
    listed = json.loads((tmp_path / "inventory.json").read_text())
    assert listed["kind"] == "List" and listed["items"] == list(yaml.safe_load_all((tmp_path / "inventory.yaml").read_text()))
    assert json.loads(cli("inventory", "generate", spec, "--format", "json").out) == listed
    claims = tmp_path / "claims.yaml"
    claims.write_text("apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: c}\nspec:\n  devices:\n"
                      "    requests:\n    - {name: gpu, exactly: {deviceClassName: mig.nvidia.com}}\n")
    answers = [cli("allocate", claims, "--inventory", tmp_path / name, "-f", "json").json
               for name in ("inventory.yaml", "inventory.json")]
    assert answers[0] == answers[1] and answers[0][0]["allocation"] is not None


def test_bad_spec_is_an_input_error(tmp_path, cli):
    spec = tmp_path / "spec.yaml"
    spec.write_text("nodes:\n- gpus: {model: H100-80GB, mig: static, layout: [7g.80gb, 1g.10gb]}\n")
    result = cli("inventory", "generate", spec)
    assert result.code == 2
    assert "spec.yaml:2:49: layout ['7g.80gb', '1g.10gb'] needs more than the 7 compute slices of H100-80GB" \
        in result.err


def test_device_taint_rules_taint_the_devices_they_select(tmp_path, cli):
    spec = tmp_path / "spec.yaml"
    spec.write_text("nodes:\n- namePrefix: n\n  count: 1\n  gpus: {model: H100-80GB, count: 2}\n")
    inventory = tmp_path / "inventory.yaml"
    cli("inventory", "generate", spec, "-o", inventory)
    rule = tmp_path / "rule.yaml"
    rule.write_text("apiVersion: resource.k8s.io/v1beta2\nkind: DeviceTaintRule\nmetadata: {name: broken}\n"
                    "spec:\n  deviceSelector: {driver: gpu.nvidia.com, pool: n-0, device: gpu-0}\n"
                    "  taint: {key: health, value: bad, effect: NoSchedule}\n")
    claims = tmp_path / "claims.yaml"
    claims.write_text("\n---\n".join(
        "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: c%d}\nspec:\n  devices:\n"
        "    requests:\n    - {name: gpu, exactly: {deviceClassName: gpu.nvidia.com}}\n" % i for i in range(2)))
    without = cli("allocate", claims, "--inventory", inventory, "-f", "json").json
    assert [r["allocation"] is not None for r in without] == [True, True]
    tainted = cli("allocate", claims, "--inventory", inventory, "--inventory", rule, "-f", "json").json
    assert tainted[0]["allocation"]["devices"]["results"][0]["device"] == "gpu-1"
    assert tainted[1]["allocation"] is None and "untainted): 0" in tainted[1]["explanation"][0]


def test_streamed_yaml_is_the_generated_objects():
    """generate_yaml copies a group's template per node: the result must be exactly what
    generate builds node by node (names and GPU UUIDs included)."""
    spec = {"nodes": [{"namePrefix": "dyn", "count": 3, "labels": {"zone": "a"},
                       "gpus": {"model": "A30-24GB", "count": 2, "mig": "dynamic"}},
                      {"namePrefix": "static", "count": 2, "gpus": {"model": "H100-80GB", "count": 1, "mig": "static",
                                                                     "layout": ["4g.40gb", "3g.40gb"]}},
                      {"namePrefix": "none", "count": 0, "gpus": {"model": "H200-141GB"}}]}
    streamed = [doc for text in generate_yaml(spec) for doc in yaml.safe_load_all(text)]
    assert streamed == generate(spec)
    assert json.loads("".join(generate_json(spec))) == {"apiVersion": "v1", "kind": "List", "items": streamed}
    uuids = {d["attributes"].get("parentUUID", d["attributes"]["uuid"])["string"] for o in streamed
             if o["kind"] == "ResourceSlice" for d in o["spec"].get("devices", [])}  # each physical GPU's
    assert len(uuids) == 3 * 2 + 2 and not any(_gpu_uuid("NODE-PLACEHOLDER", 0) in u for u in uuids)


@pytest.mark.parametrize("spec, where, message", [
    ("nodes:\n- count: -1\n  gpus: {model: A30-24GB}\n", "2:10", "count must be a non-negative integer, not -1"),
    ("nodes:\n- gpus: {model: A30-24GB, count: -8}\n", "2:34", "count must be a non-negative integer, not -8"),
    ("nodes:\n- count: two\n  gpus: {model: A30-24GB}\n", "2:10", "not 'two'"),
    ("nodes:\n- namePrefix: GPU_Nodes\n  gpus: {model: A30-24GB}\n", "2:15", "namePrefix must be lower-case"),
    ("nodes:\n- gpus: {model: A30-24GB, mig: sometimes}\n", "2:32", "mig must be none, static or dynamic"),
    ("nodes:\n- gpus: {model: T4}\n", "2:9", "unknown GPU model 'T4'"),
    ("nodes:\n- gpus: {model: [H100-80GB]}\n", "2:9", "unknown GPU model ['H100-80GB']"),
    ("driverVersion: '1.0'\nnodes: []\n", "1:16", "unknown NVIDIA driver version"),
    ("nodes:\n- gpus: {model: H100-80GB, mig: static, layout: 5}\n", "2:49", "layout must be a list of MIG profile"),
    ("nodes:\n- gpus: {model: H100-80GB, mig: static, layout: [7g.80gb, 1g.10gb]}\n", "2:49",
     "needs more than the 7 compute slices"),
    # a second group of the same (or the default) prefix would repeat node and slice names
    ("nodes:\n- gpus: {model: A30-24GB}\n- gpus: {model: A100-40GB}\n", "3:3", "namePrefix 'node' is an earlier group's"),
])
def test_a_bad_spec_is_refused_at_its_position(tmp_path, cli, spec, where, message):
    path = tmp_path / "spec.yaml"
    path.write_text(spec)
    out = tmp_path / "inventory.yaml"
    result = cli("inventory", "generate", path, "-o", out)
    assert result.code == 2 and f"{path}:{where}: " in result.err and message in result.err, result.err
    assert not out.exists() and list(tmp_path.iterdir()) == [path]  # nothing half-written


def test_every_field_of_a_spec_of_another_type_is_an_inventory_error_never_a_crash():
    """Each field of a full spec replaced by a value of another type (a number, a bool, null,
    a string, a list, a mapping): generate() refuses it with an InventoryError (which the
    command turns into file:line:column) or accepts it; it never raises anything else."""
    import copy

    base = {"apiVersion": "resource.k8s.io/v1", "nodes": [{"namePrefix": "x", "count": 2, "labels": {"a": "b"},
            "gpus": {"model": "H100-80GB", "count": 2, "mig": "static", "layout": ["3g.40gb", "1g.10gb"]}}]}
    paths = []

    def walk(node, path):
        for key, value in (node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list)
                           else ()):
            paths.append(path + (key,))
            walk(value, path + (key,))
    walk(base, ())
    for path in paths:
        for value in (5, -1, 2.5, True, None, "s", [], [1], {}, {"k": 1}):
            spec = copy.deepcopy(base)
            node = spec
            for part in path[:-1]:
                node = node[part]
            node[path[-1]] = value
            try:
                generate(spec)
            except InventoryError:
                pass
