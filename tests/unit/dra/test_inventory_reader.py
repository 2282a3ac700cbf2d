"""An inventory the run judges against is read in full or not at all: a broken one stops the
run with file:line:column and exit status 2 (never a silent fallback, never a false
`request-unsatisfiable`)."""

import pytest

CLAIM = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: c}
spec:
  devices:
    requests:
    - name: gpu
      exactly: {deviceClassName: gpu.nvidia.com, allocationMode: ExactCount, count: 1}
"""
SLICE = """\
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: s}
spec:
  driver: gpu.nvidia.com
  nodeName: n
  pool: {name: n, generation: 1, resourceSliceCount: 1}
  devices:
  - name: gpu-0
    attributes: {type: {string: gpu}}
    capacity: {memory: {value: %s}}
"""


@pytest.mark.parametrize("inventory, where, message", [
    ("a: [\n", "inventory.yaml:2:1", "YAML syntax error"),
    (SLICE % "lots", "inventory.yaml:11:24", "quantities must match"),
    (SLICE.replace("generation: 1", "generation: one") % "80Gi", "inventory.yaml:7:31",
     "ResourceSlice 's' is not valid on Kubernetes 1.37 (the API server refuses it): spec.pool.generation: \"one\" "
     "is not of type \"integer\""),
    (SLICE % "[1]", "inventory.yaml:11:32", "spec.devices[0].capacity.memory.value: must be string or number"),
    ("apiVersion: v1\nkind: Node\nmetadata: {name: n, labels: {zone: [a]}}\n---\n" + SLICE % "80Gi",
     "inventory.yaml:3:36", "Node 'n' is not valid"),
    ("apiVersion: v1\nkind: Node\nmetadata: {name: n}\n", "inventory.yaml", "no ResourceSlice found"),
])
def test_a_broken_inventory_stops_the_run(tmp_path, cli, inventory, where, message):
    (tmp_path / "claim.yaml").write_text(CLAIM)
    (tmp_path / "inventory.yaml").write_text(inventory)
    result = cli("lint", tmp_path / "claim.yaml", "--no-config", "--inventory", tmp_path / "inventory.yaml")
    assert result.code == 2 and result.out == ""
    assert f"{tmp_path}/{where}" in result.err and message in result.err


def test_an_object_defined_twice_differently_stops_the_run_and_one_read_twice_counts_once(tmp_path, cli):
    """A cluster holds one object of a name: the same inventory passed twice is one inventory
    (a pool of two copies of its one slice was incomplete, so nothing fit); two different
    slices of one name are a mistake the run names."""
    (tmp_path / "claim.yaml").write_text(CLAIM)
    (tmp_path / "a.yaml").write_text(SLICE % "80Gi")
    (tmp_path / "b.yaml").write_text(SLICE % "80Gi")
    result = cli("allocate", "--inventory", tmp_path / "a.yaml", "--inventory", tmp_path / "b.yaml",
                 tmp_path / "claim.yaml")
    assert result.code == 0 and "allocated on n" in result.out, result.out
    (tmp_path / "b.yaml").write_text(SLICE % "40Gi")
    result = cli("allocate", "--inventory", tmp_path / "a.yaml", "--inventory", tmp_path / "b.yaml",
                 tmp_path / "claim.yaml")
    assert result.code == 2 and f"inventory {tmp_path}/b.yaml:1:1: ResourceSlice 's' is defined again, differently " \
        f"({tmp_path}/a.yaml:1:1)" in result.err, result.err


def test_a_pool_the_allocator_does_not_read_is_named_in_the_explanation(tmp_path, cli):
    (tmp_path / "claim.yaml").write_text(CLAIM)
    (tmp_path / "inventory.yaml").write_text((SLICE % "80Gi").replace("resourceSliceCount: 1", "resourceSliceCount: 2"))
    result = cli("allocate", "--inventory", tmp_path / "inventory.yaml", tmp_path / "claim.yaml")
    assert result.code == 1 and "in slices: 0" in result.out
    assert "pool gpu.nvidia.com/n not read: incomplete (fewer slices of its newest generation than its " \
        "resourceSliceCount" in result.out, result.out


def test_a_missing_inventory_is_a_usage_error(tmp_path, cli):
    (tmp_path / "claim.yaml").write_text(CLAIM)
    result = cli("lint", tmp_path / "claim.yaml", "--no-config", "--inventory", tmp_path / "nope.yaml")
    assert result.code == 2 and "no such file" in result.err


def test_a_good_inventory_is_used(tmp_path, cli):
    (tmp_path / "claim.yaml").write_text(CLAIM)
    (tmp_path / "inventory.yaml").write_text(SLICE % "80Gi")
    result = cli("lint", tmp_path / "claim.yaml", "--no-config", "--kube-version", "1.34",
                 "--inventory", tmp_path / "inventory.yaml", "-f", "json")
    assert result.code == 0 and "request-unsatisfiable" not in {f["rule"] for f in result.json["findings"]}
    (tmp_path / "inventory.yaml").write_text((SLICE % "80Gi").replace("gpu.nvidia.com", "gpu.other.com"))
    result = cli("lint", tmp_path / "claim.yaml", "--no-config", "--kube-version", "1.34",
                 "--inventory", tmp_path / "inventory.yaml", "-f", "json")
    assert result.code == 1 and "request-unsatisfiable" in {f["rule"] for f in result.json["findings"]}


def test_a_patch_given_as_facts_says_to_give_its_kustomization(tmp_path, cli):
    """A kustomize patch is no object alone: as claims (or an inventory) it stops the run,
    naming the folder whose build to give instead."""
    (tmp_path / "kustomization.yaml").write_text("resources: [claim.yaml]\npatches: [{path: patch.yaml}]\n")
    (tmp_path / "claim.yaml").write_text("apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: c}\n"
                                         "spec: {devices: {requests: [{name: gpu, exactly: "
                                         "{deviceClassName: gpu.nvidia.com}}]}}\n")
    (tmp_path / "patch.yaml").write_text("apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: c}\n")
    done = cli("allocate", tmp_path / "patch.yaml", "--inventory", tmp_path / "patch.yaml", "--no-config")
    assert done.code == 2
    assert f"patch.yaml: part of the kustomization in {tmp_path}, no object alone: give that folder instead" \
        in done.err, done.err


def _as_json_list(tmp_path, yaml_text: str):
    import json

    import yaml

    path = tmp_path / "inventory.json"
    items = list(yaml.safe_load_all(yaml_text))
    path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}, indent=1))
    return path


def test_a_json_list_is_read_without_the_positioned_parser(tmp_path, monkeypatch):
    """A large inventory is a JSON List read with the C parser (`inventory generate -o
    x.json`); it gives the inventory the YAML gives."""
    from draguard.dra import inventory_reader

    (tmp_path / "inventory.yaml").write_text(SLICE % "80Gi")
    from_yaml = inventory_reader.load_inventory([str(tmp_path / "inventory.yaml")], "1.34")
    path = _as_json_list(tmp_path, SLICE % "80Gi")
    monkeypatch.setattr(inventory_reader, "load_units", lambda *a, **k: pytest.fail("parsed with positions"))
    from_json = inventory_reader.load_inventory([str(path)], "1.34")
    def devices(inventory):
        return [(s.name, s.pool, d.name, d.attributes, d.capacity) for s in inventory.slices for d in s.devices]

    assert devices(from_json) == devices(from_yaml) and len(devices(from_json)) == 1


@pytest.mark.parametrize("inventory, message", [
    (SLICE % "lots", "quantities must match"),
    (SLICE.replace("generation: 1", "generation: one") % "80Gi", "spec.pool.generation: \"one\" is not of type"),
    ("apiVersion: v1\nkind: Node\nmetadata: {name: n}\n", "no ResourceSlice found"),
])
def test_a_broken_json_inventory_still_says_where(tmp_path, cli, inventory, message):
    import re

    (tmp_path / "claim.yaml").write_text(CLAIM)
    path = _as_json_list(tmp_path, inventory)
    result = cli("lint", tmp_path / "claim.yaml", "--no-config", "--inventory", path)
    assert result.code == 2 and result.out == "" and message in result.err, result.err
    if "ResourceSlice found" not in message:
        assert re.search(rf"{re.escape(str(path))}:\d+:\d+: ", result.err), result.err
