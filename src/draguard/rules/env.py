"""env-partitioning: devices 'partitioned' by environment variables."""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from ..core.finding import Finding, Severity
from ..core.fixes import Applicability, Fix, FixAvailability, remove_items
from ..model.gpu import DEVICE_ENV_VARS, device_env, hides_devices, hides_devices_cel
from ..model.pods import mapping, named, pod_sites, text
from ..model.values import YamlList, YamlMap
from ..model.workloads import POD_TARGETS, node_agent
from ..sources.yamlpos import path_of
from .base import Admission, Needs, Rule
from .examples import COMPLIANT_POD
from .registry import register

if TYPE_CHECKING:
    from ..model.manifest import Manifest
    from ..model.pods import ContainerSite
    from .context import Context

_CONFIG_MAP = ("", "ConfigMap")
_HELP = "remove it and give the pod a ResourceClaim: the DRA driver exposes exactly the allocated devices"


def _removal(variable: str, env: YamlList, entry: YamlMap) -> Fix | None:
    """Drop the variable (unsafe: what the process sees changes)."""
    path = path_of(env)
    if path is None:
        return None
    return Fix(f"remove {variable}", Applicability.UNSAFE, remove_items(path, [env.index(entry)], len(env)))


@register
class DeviceVisibilityEnv(Rule):
    id = "env-device-visibility"
    name = "Devices selected by environment variable"
    category = "env-partitioning"
    severity = Severity.ERROR
    targets = POD_TARGETS | {_CONFIG_MAP}
    needs = Needs.OBJECT_SET  # variables taken from ConfigMaps of the set
    fixable = FixAvailability.SOMETIMES  # inline variables; not those from a ConfigMap
    admission = Admission(
        f"(!has(c.env) || c.env.all(e, !(e.name in {sorted(DEVICE_ENV_VARS)}) || {hides_devices_cel('e')})) && "
        f"(!has(c.envFrom) || c.envFrom.all(f, !has(f.prefix) || type(f.prefix) != string || f.prefix == '' || "
        f"!{sorted(DEVICE_ENV_VARS)}.exists(v, v.startsWith(f.prefix) && v != f.prefix)))",
        "a container selects devices with an environment variable; give the pod a ResourceClaim", over="containers",
        targets=POD_TARGETS)
    summary = f"{', '.join(sorted(DEVICE_ENV_VARS))} set by value, valueFrom or envFrom."
    rationale = """
        These variables only change what a process inside the container sees; they do not
        give the pod a device. Two tenants with `CUDA_VISIBLE_DEVICES=0` and `=1` on a node
        whose GPUs are all mounted (or shared by the runtime) can still reach each other's
        device, and the scheduler knows nothing about the split. With DRA the driver injects
        exactly the allocated devices (through CDI), so the variables are neither needed nor
        safe to set by hand. Values `void` and `none`, used to hide every device from a
        container, are reported as `info`, as are the variables of DaemonSets: node agents
        (a DRA driver's kubelet plugin, a device plugin) manage the devices and must see
        them. In admission a DaemonSet is judged as any workload: the platform's node agents
        run in the namespaces the install exempts, so one in a judged namespace is a tenant's.
        Variables taken from a ConfigMap through `envFrom` are found too: in the linted set,
        and at admission in the webhook's cache (the policies cannot read ConfigMaps)."""
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

    def check(self, obj: Manifest, ctx: Context) -> Iterator[Finding]:
        if (obj.group, obj.kind) == _CONFIG_MAP:
            yield from self._config_map(obj, ctx)
            return
        for site in pod_sites(obj):
            for c in site.containers:
                for entry, variable in device_env(c):
                    value = entry.get("value")
                    if hides_devices(value):
                        yield ctx.finding(self, obj, f"{c.label} sets {variable}={value} to hide devices",
                                          entry, "name", severity=Severity.INFO)
                        continue
                    how = f"takes {variable} from valueFrom" if "valueFrom" in entry else \
                        f"sets {variable}={value}" if value is not None else f"sets {variable}"
                    if node_agent(obj, ctx.config):  # a node agent (a DRA driver, a device plugin) manages devices
                        yield ctx.finding(self, obj, f"{c.label} of node agent {obj.name} {how}: expected for GPU "
                                          "drivers and device plugins, never for a tenant workload", entry, "name",
                                          severity=Severity.INFO)
                        continue
                    yield ctx.finding(self, obj, f"{c.label} {how} to select devices; the scheduler does not see "
                                      "this split", entry, "name", help=_HELP,
                                      fix=_removal(variable, c.container["env"], entry))
                yield from self._env_from(obj, ctx, c)

    def _config_map(self, obj: Manifest, ctx: Context) -> Iterator[Finding]:
        data = mapping(obj.data.get("data"))
        for key in data:
            if key in DEVICE_ENV_VARS:
                yield ctx.finding(self, obj, f"ConfigMap {obj.name} holds {key}: a container that imports it whole "
                                  "(envFrom) selects devices with it", data, key,
                                  help="remove the key and give the pods a ResourceClaim")

    def _env_from(self, obj: Manifest, ctx: Context, c: ContainerSite) -> Iterator[Finding]:
        for source in c.env_from:
            prefix = text(source.get("prefix"))
            formed = sorted(v for v in DEVICE_ENV_VARS if prefix and v.startswith(prefix) and v != prefix)
            if formed:
                yield ctx.finding(self, obj, f"{c.label} imports variables with the prefix {prefix!r}, which makes "
                                  f"{formed[0]} of a key {formed[0].removeprefix(prefix)!r}: its source may select "
                                  "devices unseen", source, "prefix",
                                  severity=Severity.INFO if node_agent(obj, ctx.config) else None,
                                  help="take the variables without that prefix, or set each one by name")
            ref = source.get("configMapRef")
            if not isinstance(ref, dict):
                continue
            name = ref.get("name")  # another type is schema-invalid, and names no ConfigMap
            config_map = ctx.objects.config_map(obj.namespace, name) if isinstance(name, str) else None
            data = mapping(config_map.data.get("data")) if config_map else {}
            for key in data:
                if f"{prefix}{key}" in DEVICE_ENV_VARS:
                    yield ctx.finding(self, obj, f"{c.label} gets {prefix}{key} from {named('ConfigMap', ref.get('name'))} "
                                      "through envFrom to select devices", ref, "name",
                                      help="remove the key from the ConfigMap and give the pod a ResourceClaim")
