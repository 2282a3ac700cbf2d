"""Vendors beyond NVIDIA (issue: precision): public examples of HAMi and KAI sharing, the AMD
and Intel DRA drivers; each driver's own slice attributes count as a pin, accelerators
without partitions (Gaudi) are not asked for one, and fractional sharing outside DRA is an
error at its exact key. Sources: tests/support/data/precision/vendors/SOURCES.tsv."""

import pytest

from support.paths import DATA

FIXTURES = DATA / "precision" / "vendors"
RULES = ("legacy-gpu-resource", "legacy-gpu-sharing", "request-unpinned")


@pytest.fixture
def vendor_findings(cli):
    def run(name: str) -> list[tuple]:
        report = cli("lint", FIXTURES / name, "--no-config", "--profile", "strict", "-f", "json").json
        return [(f["rule"], f["line"], f["column"]) for f in report["findings"] if f["rule"] in RULES]
    return run


@pytest.mark.parametrize("name, expected", [
    ("hami-default-use.yaml", [("legacy-gpu-resource", 12, 11), ("legacy-gpu-sharing", 13, 11),
                               ("legacy-gpu-sharing", 14, 11)]),
    ("hami-use-memory-fraction.yaml", [("legacy-gpu-resource", 12, 11), ("legacy-gpu-sharing", 13, 11),
                                       ("legacy-gpu-sharing", 14, 11)]),
    ("kai-gpu-sharing.yaml", [("legacy-gpu-sharing", 11, 5)]),
    ("kai-gpu-memory.yaml", [("legacy-gpu-sharing", 11, 5)]),
    # a partition of any profile: the AMD example pins the type but not the partitionProfile
    ("amd-partitions-same-parent.yaml", [("request-unpinned", 20, 11), ("request-unpinned", 28, 11)]),
    ("intel-gpu-pod-inline.yaml", [("request-unpinned", 10, 9)]),
    ("intel-gaudi-pod-inline.yaml", []),  # a Gaudi card has no partitions to pin
])
def test_vendor_examples(vendor_findings, name, expected):
    assert vendor_findings(name) == expected


def _claim(driver_class: str, expression: str) -> str:
    return ("apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: c}\nspec:\n  devices:\n"
            f"    requests:\n    - name: r\n      exactly:\n        deviceClassName: {driver_class}\n"
            f"        selectors: [{{cel: {{expression: \"{expression}\"}}}}]\n")


@pytest.mark.parametrize("driver_class, expression, pinned", [
    ("gpu.amd.com", "device.attributes['gpu.amd.com'].partitionProfile == 'cpx_nps4'", True),
    ("gpu.amd.com", "device.capacity['gpu.amd.com'].computeUnits.compareTo(quantity('38')) >= 0", True),
    ("gpu.amd.com", "device.attributes['gpu.amd.com'].profile == 'cpx'", False),  # NVIDIA's name, not AMD's
    ("gpu.intel.com", "device.capacity['gpu.intel.com'].millicores.compareTo(quantity('500')) >= 0", True),
    ("gpu.intel.com", "device.attributes['gpu.intel.com'].family == 'Flex'", False),
    ("gpu.intel.com", "device.attributes['gpu.intel.com'].family == 'x.memory'", False),  # a string, not a read
    ("mig.nvidia.com", "device.attributes['gpu.nvidia.com'].profile == '1g.10gb'", True),
    ("mig.nvidia.com", "device.attributes['gpu.nvidia.com'].partitionProfile == '1g.10gb'", False),
])
def test_each_driver_pins_with_its_own_attributes(lint_json, driver_class, expression, pinned):
    findings = [f for f in lint_json(_claim(driver_class, expression), "--profile", "strict")["findings"]
                if f["rule"] == "request-unpinned"]
    assert (not findings) == pinned, findings


@pytest.mark.parametrize("resources, annotations, expected", [
    ("{volcano.sh/vgpu-number: 1, volcano.sh/vgpu-memory: 3000}", "{}", 2),
    ("{koordinator.sh/gpu-core: 50, koordinator.sh/gpu-memory-ratio: 50}", "{}", 2),
    ("{aliyun.com/gpu-mem: 4}", "{}", 1),
    ("{example.com/gpumem: 4}", "{}", 0),  # an unknown vendor's name is not guessed at
    ("{}", "{gpu-fraction: '0.25', example.com/gpu-fraction: '1'}", 1),
])
def test_sharing_knobs_from_each_project(lint_json, resources, annotations, expected):
    text = (f"apiVersion: v1\nkind: Pod\nmetadata: {{name: p, annotations: {annotations}}}\n"
            f"spec: {{containers: [{{name: c, image: x, resources: {{limits: {resources}}}}}]}}\n")
    findings = [f for f in lint_json(text)["findings"] if f["rule"] == "legacy-gpu-sharing"]
    assert len(findings) == expected, findings
