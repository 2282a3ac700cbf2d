"""Allocator state over time (ClusterState) and the bounds of one search."""

import sys

import pytest

from draguard.dra.allocator import Allocator, BudgetExceeded
from draguard.dra.inventory import Inventory
from draguard.dra.state import ClusterState, StateError

from support.dra import claim, dev, device_class, node, req, slice_


def state(slices, nodes=("node-1",)):
    inventory = Inventory(slices=list(slices), nodes=[node(n) for n in nodes],
                          classes={"gpu": device_class()})
    return ClusterState(inventory)


def test_commit_holds_devices_until_release():
    s = state([slice_("s", [dev("gpu-0"), dev("gpu-1")])])
    first, second, third = claim("a", req()), claim("b", req()), claim("c", req())
    node_a, outcome = s.place([first])
    s.commit("a", outcome.results[0])
    _, outcome = s.place([second])
    s.commit("b", outcome.results[0])
    assert {d for _, _, d in s.in_use} == {"gpu-0", "gpu-1"}
    assert s.place([third]) == (None, s.place([third])[1]) and s.place([third])[1].kind == "unschedulable"
    s.release("a")
    _, outcome = s.place([third])
    assert outcome.allocated and outcome.results[0].results[0].device == "gpu-0"
    assert node_a.name == "node-1"


def test_commits_that_contradict_the_state_are_refused():
    s = state([slice_("s", [dev("gpu-0")])])
    _, outcome = s.place([claim("a", req())])
    s.commit("a", outcome.results[0])
    with pytest.raises(StateError, match="already allocated"):
        s.commit("a", outcome.results[0])
    with pytest.raises(StateError, match="gpu-0"):
        s.commit("b", outcome.results[0])
    with pytest.raises(StateError, match="not allocated"):
        s.release("zzz")


def test_admin_access_results_hold_no_device():
    s = state([slice_("s", [dev("gpu-0")])])
    _, admin = s.place([claim("monitor", req(admin=True))])
    s.commit("monitor", admin.results[0])
    assert not s.in_use
    _, outcome = s.place([claim("tenant", req())])
    assert outcome.allocated


def test_cordon_and_taints_invalidate_what_was_derived():
    s = state([slice_("s1", [dev("gpu-0")], node="node-1"), slice_("s2", [dev("gpu-0")], node="node-2")],
              nodes=("node-1", "node-2"))
    assert s.place([claim("a", req())])[0].name == "node-1"
    s.cordon("node-1")
    assert s.place([claim("a", req())])[0].name == "node-2"
    s.uncordon("node-1")
    tainted = slice_("s1", [dev("gpu-0", taints=[{"key": "broken", "effect": "NoSchedule"}])], node="node-1")
    s.invalidate(slices=[tainted, s.inventory.slices[1]])
    assert s.place([claim("a", req())])[0].name == "node-2"
    s.invalidate(slices=[])
    assert s.place([claim("a", req())]) [1].kind == "unschedulable"


def test_an_exhausting_search_stops_at_its_budget():
    """16 devices, a claim for 9 of them that a constraint makes impossible: the search
    backtracks through C(16, 9) subsets unless the budget stops it."""
    devices = [dev(f"gpu-{i}", {"group": i % 2 if i else 7}) for i in range(16)]
    slices = [slice_("s", devices)]
    impossible = claim("c", req(count=9), constraints=[{"requests": [], "matchAttribute": "gpu.example.com/group"}])
    bounded = Allocator(slices, {"gpu": device_class()}, budget=5000)
    outcome = bounded.attempt([impossible], node("node-1"))
    assert outcome.kind == "budget-exceeded" and outcome.steps == 5000 and "budget" in outcome.error
    with pytest.raises(BudgetExceeded):
        bounded.allocate([impossible], node("node-1"))


def test_deep_searches_need_no_recursion_limit():
    """40 claims of 20 devices each: 800 nested steps, past Python's default limit of 1000
    frames were it recursive (two frames a device)."""
    devices = [dev(f"gpu-{i}") for i in range(800)]
    a = Allocator([slice_("s", devices)], {"gpu": device_class()})
    claims = [claim(f"c{i}", req(count=20)) for i in range(40)]
    limit = sys.getrecursionlimit()
    results = a.allocate(claims, node("node-1"))
    assert sys.getrecursionlimit() == limit
    assert len({r.device for result in results for r in result.results}) == 800


def test_first_fit_placement_with_its_shortcuts_places_as_a_fresh_search_would():
    """Random commits and releases on three nodes: after each, place() (which skips the nodes
    where nothing changed since the same claims did not fit) answers as a state that never
    placed anything before, with the same devices in use."""
    import random

    rng = random.Random(7)
    slices = [slice_(f"s{n}", [dev(f"gpu-{n}-{i}", {"size": i % 3}) for i in range(3)], node=f"node-{n}")
              for n in range(3)]
    shapes = [lambda name: claim(name, req(count=1)), lambda name: claim(name, req(count=2)),
              lambda name: claim(name, req(selectors=["device.attributes['gpu.example.com'].size == 2"]))]
    s, held = state(slices, nodes=("node-0", "node-1", "node-2")), []
    for step in range(200):
        if held and rng.random() < 0.4:
            s.release(held.pop(rng.randrange(len(held))))
            continue
        wanted = [rng.choice(shapes)(f"c{step}")]
        fresh = state(slices, nodes=("node-0", "node-1", "node-2"))
        fresh.allocator.allocated |= s.in_use
        node_, outcome = s.place(wanted)
        expected_node, expected = fresh.place(wanted)
        assert (node_ and node_.name, outcome.kind) == (expected_node and expected_node.name, expected.kind), step
        if outcome.allocated:
            s.commit(f"c{step}", outcome.results[0])
            held.append(f"c{step}")


def test_a_device_is_judged_by_the_selectors_once_until_the_slices_change(monkeypatch):
    """The scheduler tries one claim shape on node after node and again after every release:
    whether a device passes its class's and the claim's selectors is asked once per allocator,
    not once per attempt, and asked again once the slices changed (a republished device)."""
    from draguard.dra import allocator

    judged = []
    match = allocator._Run._selectors_match
    def counted(run, device, selectors, owner):
        judged.append(device.name)
        return match(run, device, selectors, owner)

    monkeypatch.setattr(allocator._Run, "_selectors_match", counted)
    wanted = req(selectors=("device.attributes['gpu.example.com'].model == 'a100'",))
    s = state([slice_("s", [dev("gpu-0", {"model": "h100"}), dev("gpu-1", {"model": "a100"})])])
    assert s.place([claim("a", wanted)])[1].results[0].results[0].device == "gpu-1"
    first = len(judged)
    assert judged == ["gpu-0", "gpu-0", "gpu-1", "gpu-1"]  # each: its class's selectors, then the claim's
    assert s.place([claim("b", wanted)])[1].results[0].results[0].device == "gpu-1"
    assert len(judged) == first  # the same answers, not asked again
    s.invalidate(slices=[slice_("s", [dev("gpu-0", {"model": "a100"}), dev("gpu-1", {"model": "h100"})],
                                generation=2)])
    assert s.place([claim("c", wanted)])[1].results[0].results[0].device == "gpu-0"
    assert len(judged) > first
