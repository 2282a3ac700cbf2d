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
