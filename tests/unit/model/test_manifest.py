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


def test_an_object_set_done_with_an_object_drops_its_views_and_what_was_remembered_for_it():
    """What judging one object derived and remembered is dropped once its rules are done (a
    stream of pods kept every pod's sites to the end of the run); asked again, it is computed
    again."""
    from draguard.model.objectset import ObjectSet

    pod = Manifest.from_data({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
                              "spec": {"containers": [{"name": "c"}]}})
    objects = ObjectSet([pod])
    computed: list[object] = []

    def count(subject, _objects):
        computed.append(subject)
        return len(computed)

    sites = pod_sites(pod)
    assert objects.remembered(count, sites[0]) == objects.remembered(count, sites[0]) == 1 and pod.derived
    objects.done(pod)
    assert pod.derived == {} and objects.remembered(count, sites[0]) == 2
    assert [site.containers[0].name for site in pod_sites(pod)] == ["c"]
