"""The allocator variant and features a cluster runs, from its version and feature gates
(kube-scheduler's AllocatorFeatures and structured.NewAllocator's choice)."""

import pytest

from draguard.dra.variants import variant_for


@pytest.mark.parametrize("version, name, enabled", [
    ("1.32", "stable", set()),
    ("1.34", "stable", {"AdminAccess", "PrioritizedList"}),
    ("1.36", "incubating", {"AdminAccess", "PrioritizedList", "PartitionableDevices", "DeviceTaints",
                            "ConsumableCapacity", "DeviceBindingAndStatus"}),
])
def test_release_defaults_pick_the_variant(version, name, enabled):
    variant = variant_for(version)
    assert (variant.name, set(variant.enabled)) == (name, enabled)


def test_gates_override_the_defaults():
    assert variant_for("1.37", {"DRAConsumableCapacity": False, "DRADeviceBindingConditions": False}).name == "stable"
    assert variant_for("1.37", {"DRAListTypeAttributes": True}).name == "experimental"
    # DeviceBindingAndStatus needs both of its gates
    assert "DeviceBindingAndStatus" not in variant_for("1.37", {"DRAResourceClaimDeviceStatus": False}).enabled
    features = variant_for("1.33", {"DRADeviceTaints": True}).features()
    assert (features.admin_access, features.device_taints, features.partitionable_devices) == (False, True, False)
    assert features.variant == "stable" and variant_for("1.37").features().variant == "incubating"


def test_allocate_follows_the_clusters_gates(tmp_path, cli):
    spec = tmp_path / "spec.yaml"
    spec.write_text("nodes:\n- namePrefix: n\n  count: 1\n  gpus: {model: H100-80GB, count: 1, mig: dynamic}\n")
    inventory = tmp_path / "inventory.yaml"
    assert cli("inventory", "generate", spec, "-o", inventory).code == 0
    claims = tmp_path / "claims.yaml"
    claims.write_text("apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: c}\nspec:\n  devices:\n"
                      "    requests:\n    - name: gpu\n      exactly: {deviceClassName: mig.nvidia.com}\n")
    current = cli("allocate", claims, "--inventory", inventory)
    assert current.code == 0 and "c: allocated on n-0" in current.out
    lists = cli("allocate", claims, "--inventory", inventory, "--feature-gates", "DRAListTypeAttributes=true")
    assert lists.code == 0 and "c: allocated on n-0" in lists.out
    experimental = cli("allocate", claims, "--inventory", inventory, "--feature-gates", "DRADerivedAttributes=true")
    assert experimental.code == 0 and "c: allocated on n-0" in experimental.out  # the experimental variant, modelled
    # 1.33: DRAPartitionableDevices is off, so the API server stores the slices without their
    # counters: the partition is allocated, and overlapping ones could be, which is said
    old = cli("allocate", claims, "--inventory", inventory, "--kube-version", "1.33", "-f", "json")
    assert old.code == 0 and old.json[0]["allocation"] and old.json[0]["upstreamVariant"] == "stable"
    assert "DRAPartitionableDevices is off" in old.err and "no longer share" in old.err
    assert cli("allocate", claims, "--inventory", inventory, "--feature-gates", "DRANope=true").code == 2
