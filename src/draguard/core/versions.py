"""Kubernetes releases draguard targets."""

from __future__ import annotations

from functools import lru_cache

SUPPORTED_KUBE_VERSIONS = ("1.32", "1.33", "1.34", "1.35", "1.36", "1.37")
#: The newest release draguard knows: manifests written today should target current clusters,
#: and a finding about an API a newer release removed is worth more than silence about it.
#: Older clusters set `kubeVersion` in .draguard.yaml or `--kube-version`.
DEFAULT_KUBE_VERSION = "1.37"


def check_kube_version(value: object) -> str:
    """'1.34', 'v1.34.2' or 1.34 -> '1.34'; ValueError for releases draguard does not know."""
    text = str(value).strip().lstrip("v")
    short = ".".join(text.split(".")[:2])
    if short not in SUPPORTED_KUBE_VERSIONS:
        raise ValueError(f"unsupported Kubernetes version {value!r} "
                         f"(supported: {SUPPORTED_KUBE_VERSIONS[0]} to {SUPPORTED_KUBE_VERSIONS[-1]})")
    return short


@lru_cache(maxsize=64)
def minor(kube_version: str) -> int:
    """The minor of a release ('1.34' -> 34); kept for the few releases a process reads
    (rules ask it of the target once an object)."""
    return int(str(kube_version).split(".")[1])
