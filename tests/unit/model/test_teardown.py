"""The kubelet's termination timeline (kuberuntime_container.go killContainer)."""

import pytest

from draguard.model.teardown import Timeline, hook_budget, loops_unbounded


@pytest.mark.parametrize("grace, pre_stop, sigterm_at, kill_at", [
    (30, 0, 0, 30),
    (60, 10, 10, 60),
    (30, 45, 30, 32),  # the hook used the whole period: 2 s of SIGTERM still follow
    (0, 0, 0, 2),
])
def test_timeline(grace, pre_stop, sigterm_at, kill_at):
    timeline = Timeline(grace, pre_stop)
    assert (timeline.sigterm_at, timeline.kill_at) == (sigterm_at, kill_at)


def test_hook_budget_and_unbounded_loops():
    assert hook_budget({"exec": {"command": ["sh", "-c", "sleep 1m; timeout 30 drain"]}}) == 90
    assert hook_budget({"sleep": {"seconds": True}}) == 0  # not a number
    assert loops_unbounded({"exec": {"command": ["sh", "-c", "until ready; do sleep 1; done"]}})
    assert not loops_unbounded({"exec": {"command": ["sh", "-c", "timeout 9 sh -c 'while x; do :; done'"]}})


def test_the_helpers_own_bounds_count_as_hook_waits():
    from draguard.model.teardown import helper_bound

    assert hook_budget({"exec": {"command": ["draguard-teardown", "verify", "--timeout", "100"]}}) == 100
    assert hook_budget({"exec": {"command": ["sh", "-c", "sleep 5; draguard-teardown drain --grace-period 60 "
                                             "--server vllm && draguard-teardown verify --grace-period=60 --margin=10"]}}) == 110
    assert helper_bound("verify", " --state /x") == 0  # no bound: the helper refuses to run


@pytest.mark.parametrize("grace, containers, expected", [
    # a sidecar's preStop runs at once, beside the server's; its SIGTERM waits for the server
    (30, [("check", 20, True), ("server", 5, False)], {"check": (20, 30), "server": (5, 30)}),
    (30, [("check", 0, True), ("server", 10, False)], {"check": (10, 30), "server": (10, 30)}),
    # the server's hook used the whole period: the sidecar gets no wait, 2 s of SIGTERM each
    (30, [("check", 0, True), ("server", 45, False)], {"check": (30, 32), "server": (30, 32)}),
    # sidecars stop in reverse order: 'first' waits for 'second'
    (60, [("first", 0, True), ("second", 15, True), ("server", 5, False)],
     {"first": (15, 60), "second": (15, 60), "server": (5, 60)}),
    (0, [("check", 10, True), ("server", 10, False)], {"check": (0, 2), "server": (0, 2)}),
])
def test_termination_schedule_with_native_sidecars(grace, containers, expected):
    from draguard.model.teardown import Stopping, schedule

    got = schedule(grace, [Stopping(name, hook, sidecar) for name, hook, sidecar in containers])
    assert {s.name: (s.sigterm_at, s.kill_at) for s in got} == expected
