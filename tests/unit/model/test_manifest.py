"""Where a fix's edit lands: a path in an object the engine judges, never a guess in data
without paths."""

import pytest

from draguard.model.manifest import Manifest, edit_path
from draguard.model.pods import pod_sites

POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
       "spec": {"containers": [{"image": "x", "resources": {"limits": {"nvidia.com/gpu": 1}}}]}}


def test_an_edit_addresses_the_path_of_positioned_data():
    pod = Manifest.from_data(POD)
    [site] = pod_sites(pod)
    [container] = site.containers
    assert edit_path(container.container, "resources") == ("spec", "containers", 0, "resources")
    assert container.path == ("spec", "containers", 0)


def test_data_without_paths_gets_no_edit():
    """A snapshot's plain objects have no paths until Manifest.position: an edit there would
    address nothing (it failed with a TypeError on None, inside the fix)."""
    pod = Manifest.from_data(POD, positions=False)
    [site] = pod_sites(pod)
    [container] = site.containers
    with pytest.raises(ValueError, match="without paths"):
        edit_path(container.container, "resources")
    assert container.path == ()
    pod.position()
    [site] = pod_sites(pod)
    assert site.containers[0].label == "the container at spec.containers[0]"
