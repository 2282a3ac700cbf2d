"""The claim the scheduler makes for extended resources backed by DRA (KEP-5004): the cases
of upstream's Test_createRequestsAndMappings_requests (kubernetes v1.37.2
pkg/scheduler/framework/plugins/dynamicresources/extendeddynamicresources_test.go), and the
DeviceClass a resource name resolves to (deviceclass/extendedresourcecache)."""

from __future__ import annotations

import pytest

from draguard.core.quantity import QuantityError, parse_quantity_form
from draguard.dra.extended import is_extended_resource, special_claim_requests
from draguard.model.extended_resources import ClassRef, resolver

GPU = "example.com/gpu"


def _container(requests: dict, restart: str | None = None) -> dict:
    body = {"name": "c", "resources": {"requests": {k: str(v) for k, v in requests.items()}}}
    if restart:
        body["restartPolicy"] = restart
    return body


def _pod(containers: list, init: list = ()) -> dict:
    return {"containers": containers, "initContainers": list(init)}


def _req(name: str, cls: str, count: int) -> tuple:
    return name, cls, count


def _requests(spec, backed, classes) -> list[tuple]:
    return [(r["name"], r["exactly"]["deviceClassName"], r["exactly"]["count"])
            for r in special_claim_requests(spec, set(backed), classes)]


ONE_CONTAINER = _pod([_container({GPU: 1, GPU + "1": 2})])
TWO_CONTAINERS = _pod([_container({GPU: 1}), _container({GPU + "1": 2})])
INIT = _pod([_container({GPU: 1})], [_container({GPU + "init": 2})])
TWO_INITS = _pod([_container({GPU: 1})], [_container({GPU + "init": 1}), _container({GPU + "init": 2})])
INITS_AND_SIDECAR = _pod([_container({GPU: 1})], [_container({GPU + "init": 1}), _container({GPU + "init": 1}, "Always"),
                                                 _container({GPU + "init": 2})])
CLASS = {GPU: "class"}
TWO_CLASSES = {GPU: "class", GPU + "1": "class1"}
INIT_CLASSES = {GPU: "class", GPU + "init": "classInit"}


@pytest.mark.parametrize("spec, backed, classes, expected", [
    (ONE_CONTAINER, [], {}, []),
    (ONE_CONTAINER, [GPU], CLASS, [_req("container-0-request-0", "class", 1)]),
    (ONE_CONTAINER, [GPU, GPU + "1"], CLASS, [_req("container-0-request-0", "class", 1)]),
    (ONE_CONTAINER, [GPU, GPU + "1"], TWO_CLASSES, [_req("container-0-request-0", "class", 1),
                                                    _req("container-0-request-1", "class1", 2)]),
    (TWO_CONTAINERS, [GPU, GPU + "1"], TWO_CLASSES, [_req("container-0-request-0", "class", 1),
                                                     _req("container-1-request-0", "class1", 2)]),
    (INIT, [GPU, GPU + "init"], INIT_CLASSES, [_req("container-0-request-0", "classInit", 2),
                                               _req("container-1-request-0", "class", 1)]),
    (TWO_INITS, [GPU, GPU + "init"], INIT_CLASSES, [_req("container-1-request-0", "classInit", 2),
                                                    _req("container-2-request-0", "class", 1)]),
    (INITS_AND_SIDECAR, [GPU, GPU + "init"], INIT_CLASSES, [_req("container-1-request-0", "classInit", 1),
                                                            _req("container-2-request-0", "classInit", 2),
                                                            _req("container-3-request-0", "class", 1)]),
], ids=["nil", "one match", "one of two matches", "two match", "two containers", "init and regular",
        "two inits", "inits and a sidecar"])
def test_the_special_claims_requests(spec, backed, classes, expected):
    assert _requests(spec, backed, classes) == expected


def test_a_sidecar_covers_an_earlier_init_container_and_zero_or_fractions_ask_nothing():
    spec = _pod([_container({GPU: "500m"})], [_container({GPU: 1}), _container({GPU: 2}, "Always")])
    assert _requests(spec, [GPU], CLASS) == [_req("container-1-request-0", "class", 2)]
    assert _requests(_pod([_container({GPU: 0})]), [GPU], CLASS) == []


def test_a_quantity_written_as_a_sequence_or_mapping_asks_nothing():
    """Not a quantity (the API server refuses such a pod): no request, as for "x", and not
    a TypeError from the parse's cache that ended request-unsatisfiable on the pod (an
    internal-error finding, the base's too); True is refused after 1.0, one key to an untyped
    cache, was read (1.0 read as a quantity first, True was read as 1)."""
    for odd in ([1], {"count": 1}, "x"):
        spec = _pod([{"name": "c", "resources": {"limits": {GPU: odd}}}, _container({GPU: 1})])
        assert _requests(spec, [GPU], CLASS) == [_req("container-1-request-0", "class", 1)]
    assert parse_quantity_form(1.0)[0] == 1
    with pytest.raises(QuantityError):
        parse_quantity_form(True)


def test_the_newest_class_serves_a_resource_then_the_lower_name_and_every_class_its_implicit_name():
    classes = [ClassRef("b", GPU), ClassRef("a", GPU), ClassRef("old", GPU, "2026-01-01T00:00:00Z"),
               ClassRef("new", GPU, "2026-06-01T00:00:00Z"), ClassRef("plain")]
    assert resolver(classes[:2])[GPU] == "a"
    assert resolver(classes)[GPU] == "new"
    assert resolver(classes)["deviceclass.resource.kubernetes.io/plain"] == "plain"


@pytest.mark.parametrize("name, extended", [
    ("nvidia.com/gpu", True), ("deviceclass.resource.kubernetes.io/gpu", True), ("cpu", False),
    ("kubernetes.io/x", False), ("hugepages-2Mi", False), ("requests.nvidia.com/gpu", False),
    ("node.kubernetes.io/x", False)])
def test_which_names_are_extended_resources(name, extended):
    assert is_extended_resource(name) is extended
