"""What a chart or kustomization is rendered with, apart from the renderer: a module of its own
so that a lint which meets no chart builds it without importing the renderer (subprocess,
tarfile, the chart dependency reader: about 12 ms of a one-file lint's start)."""

from __future__ import annotations

from ..core.value import Value


class RenderOptions(Value):
    """What `helm template` is given besides the chart: values files and --set pairs as the
    user would pass them, and the target release (charts branch on .Capabilities.KubeVersion,
    e.g. to choose resource.k8s.io/v1 or v1beta1)."""

    __slots__ = ("values", "set_values", "kube_version")

    def __init__(self, values: tuple = (), set_values: tuple = (), kube_version: str | None = None) -> None:
        self.values = values
        self.set_values = set_values
        self.kube_version = kube_version
