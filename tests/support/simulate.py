"""What the simulation tests and benchmark share: the claim template of one MIG slice."""

from __future__ import annotations


def claim_template(profile: str, namespace: str, name: str = "slice") -> dict:
    """A ResourceClaimTemplate asking for one MIG device of `profile`."""
    selector = f"device.attributes['gpu.nvidia.com'].profile == '{profile}'"
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"spec": {"devices": {"requests": [{"name": "mig", "exactly": {
                "deviceClassName": "mig.nvidia.com", "selectors": [{"cel": {"expression": selector}}]}}]}}}}
