"""Scenarios where draguard once disagreed with the upstream allocator, kept by name as data
(not as generator seeds, so that tuning the generator cannot lose them)."""

from support.oracle import FEATURES, GPU

_GPU_CLASS = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"},
              "spec": {"selectors": [{"cel": {"expression": f"device.driver == '{GPU}'"}}]}}


def _slice(name: str, count: int, **spec) -> dict:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": name},
            "spec": dict(driver=GPU, nodeName="node-0", pool={"name": "p", "generation": 1, "resourceSliceCount": count},
                         **spec)}


REGRESSIONS: dict[str, dict] = {
    # A pool whose slices disagree on resourceSliceCount: upstream reads the count from the
    # pool's first slice in input order (here the counters slice: 2 slices, complete);
    # draguard once read it from the first node-local slice (3: incomplete, unschedulable).
    "pool-slice-count-from-first-slice": {
        "id": "pool-slice-count-from-first-slice",
        "deviceClasses": [_GPU_CLASS],
        "resourceSlices": [
            _slice("p-counters", 2, sharedCounters=[{"name": "shared", "counters": {"units": {"value": "3"}}}]),
            _slice("p-devices", 3, devices=[{"name": "dev-0", "attributes": {"model": {"string": "a"}},
                                             "consumesCounters": [{"counterSet": "shared",
                                                                   "counters": {"units": {"value": "1"}}}]}]),
        ],
        "claims": [{"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                    "metadata": {"name": "claim-0", "namespace": "default"},
                    "spec": {"devices": {"requests": [{"name": "r0", "exactly": {
                        "deviceClassName": "gpu", "allocationMode": "ExactCount", "count": 1}}]}}}],
        "allocatedDevices": [],
        "node": {"metadata": {"name": "node-0", "labels": {}}},
        "features": FEATURES,
    },
}
