"""env-partitioning: devices 'partitioned' by environment variables."""

from __future__ import annotations

from ..findings import Severity
from ..model.gpu import DEVICE_ENV_VARS, device_env
from ..model.workloads import POD_KINDS, pod_sites
from .base import Rule, register
from .examples import COMPLIANT_POD

_HIDING_VALUES = frozenset({"void", "none"})


def _config_maps(objects) -> dict[tuple[str, str], object]:
    return {(m.namespace, m.name): m for m in objects if m.kind == "ConfigMap" and m.group == ""}


@register
class DeviceVisibilityEnv(Rule):
    id = "env-device-visibility"
    name = "Devices selected by environment variable"
    category = "env-partitioning"
    severity = Severity.ERROR
    kinds = POD_KINDS
    summary = ("NVIDIA_VISIBLE_DEVICES, CUDA_VISIBLE_DEVICES, NVIDIA_MIG_CONFIG_DEVICES, ROCR_VISIBLE_DEVICES, "
               "HIP_VISIBLE_DEVICES or ZE_AFFINITY_MASK set by value, valueFrom or envFrom.")
    rationale = """
        These variables only change what a process inside the container sees; they do not
        give the pod a device. Two tenants with `CUDA_VISIBLE_DEVICES=0` and `=1` on a node
        whose GPUs are all mounted (or shared by the runtime) can still reach each other's
        device, and the scheduler knows nothing about the split. With DRA the driver injects
        exactly the allocated devices (through CDI), so the variables are neither needed nor
        safe to set by hand. Values `void` and `none`, used to hide every device from a
        container, are reported as `info`. Variables taken from a ConfigMap of the linted set
        through `envFrom` are found too."""
    reference = "https://kubernetes.io/docs/concepts/scheduling-eviction/dynamic-resource-allocation/"
    upstream_note = """
        Guideline documents that "partition" a shared GPU by giving each container a different
        `CUDA_VISIBLE_DEVICES` describe isolation the platform does not enforce; upstream
        isolation is one claim per tenant, allocated by the scheduler."""
    noncompliant = """
        apiVersion: v1
        kind: Pod
        metadata: {name: tenant-a}
        spec:
          containers:
          - name: server
            image: nvcr.io/nvidia/tritonserver:24.08-py3
            env:
            - {name: CUDA_VISIBLE_DEVICES, value: "0"}
        """
    compliant = COMPLIANT_POD

    def check(self, obj, ctx):
        config_maps = ctx.memo("config-maps", _config_maps)
        for site in pod_sites(obj):
            for c in site.containers:
                where = f"container '{c.name}'" if c.name else c.path
                for entry, variable in device_env(c.container):
                    value = entry.get("value")
                    if isinstance(value, str) and value.strip().lower() in _HIDING_VALUES:
                        yield ctx.finding(self, obj, f"{where} sets {variable}={value} to hide devices",
                                          entry, "name", severity=Severity.INFO)
                    elif "valueFrom" in entry:
                        yield ctx.finding(self, obj, f"{where} takes {variable} from valueFrom to select devices; "
                                          "the scheduler does not see this split", entry, "name",
                                          fix="remove it and give the pod a ResourceClaim")
                    else:
                        yield ctx.finding(self, obj, f"{where} sets {variable}={value!s} to select devices; "
                                          "the scheduler does not see this split", entry, "name",
                                          fix="remove it and give the pod a ResourceClaim")
                yield from self._env_from(obj, ctx, c, where, config_maps)

    def _env_from(self, obj, ctx, c, where, config_maps):
        sources = c.container.get("envFrom")
        for source in sources if isinstance(sources, list) else []:
            ref = source.get("configMapRef") if isinstance(source, dict) else None
            if not isinstance(ref, dict):
                continue
            config_map = config_maps.get((obj.namespace, ref.get("name")))
            data = config_map.data.get("data") if config_map else None
            if not isinstance(data, dict):
                continue
            prefix = source.get("prefix") or ""
            for key in data:
                if f"{prefix}{key}" in DEVICE_ENV_VARS:
                    yield ctx.finding(self, obj, f"{where} gets {prefix}{key} from ConfigMap '{ref.get('name')}' "
                                      "through envFrom to select devices", ref, "name",
                                      fix="remove the key from the ConfigMap and give the pod a ResourceClaim")
