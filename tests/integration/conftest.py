"""What the integration tests share, each built or started once per session: `oracle`, the
upstream allocator and CEL compiler (harness/allocator-oracle); the control planes, `plane`
with the fake kubelet's GPU nodes and the fake driver's slices and classes, and `bare_plane`
with nothing in it (dry-run judgements need no objects of their own)."""

from __future__ import annotations

import os
import shutil
from contextlib import contextmanager

import pytest

from support.cluster import ControlPlane, FakeKubelet, build, gpu_inventory
from support.oracle import oracle_binary
from support.renderers import renderers_dir

SMOKE_NAMESPACE = "smoke"


@pytest.fixture(scope="session")
def oracle():
    binary = oracle_binary()
    if binary is None:
        pytest.skip("Go is not installed: the upstream allocator oracle cannot be built")
    return binary


@pytest.fixture(scope="session")
def helm():
    """The real helm built by harness/renderers, for the chart tests."""
    folder = renderers_dir()
    if folder is None:
        pytest.skip("Go is not installed: helm cannot be built")
    return os.path.join(folder, "helm")


@contextmanager
def _started(tmp_path_factory, name: str):
    if shutil.which("go") is None:
        pytest.skip("Go is not installed: the control plane cannot be built")
    plane = ControlPlane(build(), tmp_path_factory.mktemp(name))
    try:
        plane.start()
        yield plane
    finally:
        plane.stop()


@pytest.fixture(scope="session")
def plane(tmp_path_factory):
    with _started(tmp_path_factory, "control-plane") as plane:
        nodes, driver_objects = gpu_inventory(nodes=2, gpus=2)
        kubelet = FakeKubelet(plane, nodes)
        try:
            kubelet.register_nodes()
            plane.apply(driver_objects)
            plane.apply([{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": SMOKE_NAMESPACE}}])
            kubelet.start()
            yield plane
        finally:
            kubelet.stopping.set()


@pytest.fixture(scope="session")
def bare_plane(tmp_path_factory):
    with _started(tmp_path_factory, "bare-control-plane") as plane:
        yield plane
