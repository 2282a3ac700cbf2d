"""memory: node memory a GPU pod can take without bound."""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from ..core.finding import Finding, Severity
from ..core.fixes import Applicability, Fix, FixAvailability, set_value
from ..model.pods import named, pod_sites, text
from ..model.workloads import POD_TARGETS
from ..model.manifest import edit_path
from .admission import SPEC_CONTAINERS
from .base import Admission, Mutation, Option, Profile, Rule
from .examples import COMPLIANT_POD
from .registry import register

if TYPE_CHECKING:
    from ..model.manifest import Manifest
    from .context import Context

_SHM = "/dev/shm"
#: CEL: volume `v` of pod spec `s` is a memory-backed /dev/shm without a sizeLimit
_UNBOUNDED_SHM = ("(has(v.emptyDir) && has(v.emptyDir.medium) && v.emptyDir.medium == 'Memory' && "
                  f"!has(v.emptyDir.sizeLimit) && {SPEC_CONTAINERS}.exists(c, has(c.volumeMounts) && "
                  "c.volumeMounts.exists(m, has(m.name) && has(v.name) && m.name == v.name && has(m.mountPath) && "
                  "string(m.mountPath).matches('^/dev/shm/*$'))))")


@register
class ShmSizeLimit(Rule):
    id = "shm-size-limit"
    name = "/dev/shm without a size limit"
    category = "memory"
    severity = Severity.WARNING
    profile = Profile.STRICT
    profile_reason = """
        a memory-backed /dev/shm without sizeLimit is already bounded by the pod's memory
        limit where it has one (tmpfs pages are charged to the pod's memory cgroup); a size of
        its own is hygiene the guideline documents ask for, not a fault"""
    targets = POD_TARGETS
    fixable = FixAvailability.ALWAYS
    options = {"sizeLimit": Option("8Gi", "the sizeLimit the fix sets")}
    admission = Admission(f"!has(s.volumes) || s.volumes.all(v, !{_UNBOUNDED_SHM})",
                          "a memory-backed /dev/shm has no sizeLimit", over="podSpecs")
    mutation = Mutation(
        f"s.volumes.transformList(j, v, {_UNBOUNDED_SHM}, JSONPatch{{op: 'add', path: site.pointer + "
        "'/volumes/' + string(j) + '/emptyDir/sizeLimit', value: params.data['shm-size-limit.sizeLimit']})",
        Applicability.UNSAFE, many=True, since="1.35")
    summary = "An emptyDir with medium: Memory mounted at /dev/shm has no sizeLimit."
    rationale = """
        Inference and training frameworks (NCCL, PyTorch data loaders, vLLM) use /dev/shm
        heavily. A memory-backed emptyDir counts against the pod's memory limit when there
        is one, and otherwise grows until the node runs out of memory, evicting other
        tenants. Set `sizeLimit` to what the workload was sized for."""
    reference = "https://kubernetes.io/docs/concepts/storage/volumes/#emptydir"
    noncompliant = """
        apiVersion: v1
        kind: Pod
        metadata: {name: trainer}
        spec:
          containers:
          - name: train
            image: pytorch/pytorch
            volumeMounts: [{name: dshm, mountPath: /dev/shm}]
          volumes:
          - name: dshm
            emptyDir: {medium: Memory}
        """
    compliant = COMPLIANT_POD

    def check(self, obj: Manifest, ctx: Context) -> Iterator[Finding]:
        size = ctx.option(self, "sizeLimit")
        for site in pod_sites(obj):
            shm = {text(mount.get("name")) for c in site.containers for mount in c.volume_mounts
                   if str(mount.get("mountPath", "")).rstrip("/") == _SHM}
            for volume in site.volumes:
                empty = volume.get("emptyDir")
                if isinstance(empty, dict) and empty.get("medium") == "Memory" and "sizeLimit" not in empty \
                        and text(volume.get("name")) in shm:
                    yield ctx.finding(self, obj, f"{named('volume', volume.get('name'))} backs /dev/shm with memory and no "
                                      "sizeLimit", volume, "emptyDir", help="add emptyDir.sizeLimit: what the workload "
                                      "was sized for", fix=Fix(f"set sizeLimit: {size}", Applicability.UNSAFE,
                                                               (set_value(edit_path(empty, "sizeLimit"), size),)))
