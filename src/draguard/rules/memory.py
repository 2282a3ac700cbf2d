"""memory: node memory a GPU pod can take without bound."""

from __future__ import annotations

from ..findings import Severity
from ..model.workloads import POD_KINDS, pod_sites
from .base import Rule, register
from .examples import COMPLIANT_POD


@register
class ShmSizeLimit(Rule):
    id = "shm-size-limit"
    name = "/dev/shm without a size limit"
    category = "memory"
    severity = Severity.WARNING
    kinds = POD_KINDS
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

    def check(self, obj, ctx):
        for site in pod_sites(obj):
            shm = set()
            for c in site.containers:
                mounts = c.container.get("volumeMounts")
                for mount in mounts if isinstance(mounts, list) else []:
                    if isinstance(mount, dict) and str(mount.get("mountPath", "")).rstrip("/") == "/dev/shm":
                        shm.add(mount.get("name"))
            volumes = site.spec.get("volumes")
            for volume in volumes if isinstance(volumes, list) else []:
                empty = volume.get("emptyDir") if isinstance(volume, dict) else None
                if isinstance(empty, dict) and empty.get("medium") == "Memory" and "sizeLimit" not in empty \
                        and volume.get("name") in shm:
                    yield ctx.finding(self, obj, f"volume '{volume.get('name')}' backs /dev/shm with memory and no "
                                      "sizeLimit", volume, "emptyDir", fix="add emptyDir.sizeLimit (e.g. 8Gi)")
