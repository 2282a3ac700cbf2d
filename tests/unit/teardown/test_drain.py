"""drain with real processes, real signals and a real HTTP server: a server that exits on
SIGTERM is drained, one that ignores it runs into the deadline, PID 1 is never signalled
unless allowed, the drain endpoint's answer decides, and every wait is bounded."""

from __future__ import annotations

import http.server
import os
import subprocess
import sys
import threading
import time
import uuid

import pytest

from draguard.teardown.drain import Plan, drain, signal_number

SERVE = "import signal, sys, time\n{handler}\nprint('up', flush=True)\ntime.sleep(60)\n"


def fake_server(ignore_term: bool = False):
    """A process whose command line carries a unique marker; it exits on SIGTERM unless told
    to ignore it. Returns (process, marker regex)."""
    marker = f"fake-vllm-{uuid.uuid4().hex[:8]}"
    handler = "signal.signal(signal.SIGTERM, signal.SIG_IGN)" if ignore_term else ""
    proc = subprocess.Popen([sys.executable, "-c", SERVE.format(handler=handler), marker], stdout=subprocess.PIPE)
    assert proc.stdout.readline().strip() == b"up"
    return proc, marker


def test_a_server_that_exits_on_sigterm_is_drained():
    proc, marker = fake_server()
    outcome = drain(Plan(deadline=10, signal="TERM", process=marker, interval=0.05))
    assert outcome.verdict == "drained", outcome.to_json()
    assert proc.wait(5) == -15
    assert outcome.steps[0] == {"action": "signal", "signal": "TERM", "pids": [proc.pid]}


def test_a_server_that_ignores_sigterm_runs_into_the_deadline_and_is_named():
    proc, marker = fake_server(ignore_term=True)
    try:
        started = time.monotonic()
        outcome = drain(Plan(deadline=0.6, signal="TERM", process=marker, interval=0.05))
        assert time.monotonic() - started < 5
        assert (outcome.verdict, outcome.exit_code) == ("deadline", 1)
        assert outcome.remaining[0]["pid"] == proc.pid and marker in outcome.remaining[0]["cmdline"]
    finally:
        proc.kill()
        proc.wait()


def fake_proc(tmp_path, processes: dict[int, str]) -> str:
    for pid, cmdline in processes.items():
        (tmp_path / str(pid)).mkdir()
        (tmp_path / str(pid) / "cmdline").write_bytes(cmdline.replace(" ", "\0").encode() + b"\0")
    return str(tmp_path)


def test_pid1_is_never_signalled_unless_allowed(tmp_path):
    root = fake_proc(tmp_path, {1: "python -m vllm.entrypoints.openai.api_server", 40: "sh -c sleep"})
    sent = []
    outcome = drain(Plan(deadline=1, signal="TERM", process="vllm"), proc_root=root,
                    kill=lambda pid, sig: sent.append(pid))
    assert (outcome.verdict, outcome.exit_code, sent) == ("failed", 3, [])
    assert "PID 1" in outcome.reason and "shareProcessNamespace" in outcome.reason

    allowed = drain(Plan(deadline=0.2, signal="TERM", process="vllm", allow_pid1=True, interval=0.05),
                    proc_root=root, kill=lambda pid, sig: sent.append(pid))
    assert sent == [1] and allowed.verdict == "deadline"  # the fake PID 1 never goes away


def test_no_matching_process_is_said_not_hidden(tmp_path):
    outcome = drain(Plan(deadline=1, signal="TERM", process="tritonserver"), proc_root=fake_proc(tmp_path, {}))
    assert outcome.verdict == "drained" and outcome.steps[0]["note"] == "no process matched 'tritonserver'"


class _Handler(http.server.BaseHTTPRequestHandler):
    seen: list[str] = []

    def do_POST(self):
        _Handler.seen.append(self.path)
        self.send_response(500 if self.path == "/broken" else 200)
        self.end_headers()

    def log_message(self, *args):
        pass


@pytest.fixture
def server():
    httpd = http.server.HTTPServer(("127.0.0.1", 0), _Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    _Handler.seen.clear()
    yield f"http://127.0.0.1:{httpd.server_port}"
    httpd.shutdown()


def test_marks_not_ready_waits_for_endpoints_then_asks_the_server_to_drain(server, tmp_path):
    flag = tmp_path / "draining"
    waits = []
    outcome = drain(Plan(deadline=30, not_ready_file=str(flag), not_ready_url=server + "/not-ready",
                         endpoint_wait=5, drain_url=server + "/drain"), sleep=waits.append)
    assert outcome.verdict == "drained" and flag.exists()
    assert _Handler.seen == ["/not-ready", "/drain"] and waits == [5]
    assert [s["action"] for s in outcome.steps] == ["not-ready-file", "not-ready-url", "endpoint-wait", "drain-url"]


def test_a_failing_drain_endpoint_fails_the_drain(server):
    outcome = drain(Plan(deadline=5, drain_url=server + "/broken"))
    assert (outcome.verdict, outcome.exit_code) == ("failed", 3) and "500" in outcome.reason
    unreachable = drain(Plan(deadline=1, drain_url="http://127.0.0.1:9/drain"))
    assert unreachable.verdict == "failed" and "unreachable" in unreachable.reason


def test_the_endpoint_wait_never_outlasts_the_deadline():
    waits = []
    drain(Plan(deadline=3, endpoint_wait=20), clock=lambda: 0.0, sleep=waits.append)
    assert waits == [3]


@pytest.mark.parametrize("name,number", [("TERM", 15), ("SIGINT", 2), ("9", 9), ("term", 15)])
def test_signal_names(name, number):
    assert signal_number(name) == number


@pytest.mark.parametrize("name", ["FOO", "\u00b2"])
def test_an_unknown_signal_is_refused(name):
    with pytest.raises(ValueError, match="unknown signal"):
        signal_number(name)


def test_the_helper_never_matches_itself(tmp_path):
    """A pattern on the hook's own command line (sh -c 'draguard-teardown drain --process x')
    must not match the hook: this process and its ancestors are spared."""
    me = drain(Plan(deadline=0.2, process="python|pytest", interval=0.05))
    assert all(p["pid"] != os.getpid() for p in me.remaining)
