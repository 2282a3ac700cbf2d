"""The pool view's summary kept per node (PoolTally) against the summary made from scratch."""

from draguard.dra.generate import generate
from draguard.dra.inventory import Inventory
from draguard.dra.pools import PoolLayout, PoolTally, PoolView
from draguard.model.manifest import Manifest

WHOLE = {"namePrefix": "whole", "count": 1, "gpus": {"model": "H100-80GB", "count": 2, "mig": "none"}}
STATIC = {"namePrefix": "mig", "count": 1, "gpus": {"model": "H100-80GB", "count": 2, "mig": "static",
                                                    "layout": ["3g.40gb", "2g.20gb", "1g.10gb"]}}
DYNAMIC = {"namePrefix": "dyn", "count": 2, "gpus": {"model": "H100-80GB", "count": 2, "mig": "dynamic"}}


def tallied(*groups: dict) -> list[dict]:
    """Every third device of each node taken, then every device of node whole-0, then all of
    them given back, one at a time: the tally's summary after each, checked against the
    summary of every node's view made from scratch."""
    objects = generate({"nodes": list(groups)})
    inventory = Inventory.from_manifests([Manifest.from_data(o, document=i) for i, o in enumerate(objects)])
    layout = PoolLayout.of(inventory, {n.name: n.labels for n in inventory.nodes})
    names = sorted(layout.parts)
    tally, held = PoolTally(names), set()
    for name in names:
        tally.replace(layout.node(name, held))
    steps = [(s.node_name, d.id) for s in inventory.slices for d in s.devices[::3]]
    steps += [(s.node_name, d.id) for s in inventory.slices if s.node_name == "whole-0" for d in s.devices]
    seen = [tally.summary()]
    for change in (held.add, held.discard):
        for node, device in steps:
            change(device)
            tally.replace(layout.node(node, held))
            seen.append(tally.summary())
            assert seen[-1] == PoolView([layout.node(n, held) for n in names]).summary()
    assert seen[-1] == seen[0]
    return seen


def test_partitions_static_mig_and_whole_gpus_tally_as_summed_from_scratch():
    seen = tallied(DYNAMIC, STATIC, WHOLE)
    assert any("none" in s["largestPlaceable"] for s in seen) and "none" not in seen[-1]["largestPlaceable"]


def test_a_profile_every_device_of_which_is_held_leaves_the_tally_and_comes_back():
    """Atomic devices are counted only while free: with both whole GPUs held, 'gpu' is no
    longer named, as the summary from scratch names it no more."""
    seen = tallied(STATIC, WHOLE)
    assert any("gpu" not in s["allocatable"] for s in seen) and seen[-1]["allocatable"]["gpu"] == 2
