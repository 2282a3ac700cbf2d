"""draguard-teardown as a container runs it: the installed console script, in a fresh
interpreter, against a fake `pynvml` module (tests/support/fake_pynvml) that reads a scenario
file. Also: the helper loads none of the lint stack."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path


from support.paths import ROOT

SCRIPT = shutil.which("draguard-teardown", path=str(Path(sys.executable).parent))
FAKE = ROOT / "tests" / "support" / "fake_pynvml"


def helper(tmp_path, *argv, scenario: dict | None = None, env: dict | None = None, **kwargs):
    environment = {**os.environ, **(env or {})}
    if scenario is not None:
        path = tmp_path / f"scenario-{len(list(tmp_path.iterdir()))}.json"
        path.write_text(json.dumps(scenario))
        environment["FAKE_NVML_SCENARIO"] = str(path)
        environment["PYTHONPATH"] = os.pathsep.join([str(FAKE), str(ROOT / "tests")])
    return subprocess.run([SCRIPT, *argv], capture_output=True, text=True, env=environment, timeout=60, **kwargs)


def verdict(result) -> dict:
    return json.loads(result.stdout.strip().splitlines()[-1])


IDLE = {"gpus": [{"uuid": "GPU-0", "script": [[0, 500]]}]}


def test_baseline_then_verify_released(tmp_path):
    state = tmp_path / "state" / "baseline.json"
    recorded = helper(tmp_path, "baseline", "--state", str(state), scenario=IDLE)
    assert recorded.returncode == 0, recorded.stderr
    assert verdict(recorded)["devices"][0]["uuid"] == "GPU-0" and state.exists()
    released = helper(tmp_path, "verify", "--state", str(state), "--timeout", "5", scenario=IDLE)
    assert (released.returncode, verdict(released)["verdict"]) == (0, "released")


def test_verify_names_what_is_held_and_appends_to_the_report(tmp_path):
    state, report = tmp_path / "b.json", tmp_path / "report.log"
    helper(tmp_path, "baseline", "--state", str(state), scenario=IDLE)
    busy = {"gpus": [{"uuid": "GPU-0", "script": [[1, 30000]]}]}
    held = helper(tmp_path, "verify", "--state", str(state), "--grace-period", "6", "--margin", "5",
                  "--interval", "0.2", "--report", str(report), scenario=busy)
    assert held.returncode == 1
    assert verdict(held)["verdict"] == "held" and "GPU-0: 1 compute process(es)" in verdict(held)["reason"]
    assert json.loads(report.read_text()) == verdict(held)


def test_cannot_verify_without_a_driver_or_without_a_baseline(tmp_path):
    missing = helper(tmp_path, "baseline", "--state", str(tmp_path / "b.json"),
                     scenario={"gpus": [], "fail": {"nvmlInit": ["NVML_ERROR_LIBRARY_NOT_FOUND"]}})
    assert (missing.returncode, verdict(missing)["problem"]) == (3, "library-missing")
    nothing = helper(tmp_path, "verify", "--state", str(tmp_path / "none.json"), "--timeout", "1")
    assert (nothing.returncode, verdict(nothing)["problem"]) == (3, "no-baseline")


def test_usage_errors_exit_2_with_a_message(tmp_path):
    for argv, message in [(["verify"], "--timeout SECONDS or --grace-period"),
                          (["verify", "--grace-period", "3"], "leaves nothing after --margin 5"),
                          (["drain", "--deadline", "1", "--signal", "TERM"], "--signal needs --process"),
                          (["drain", "--deadline", "1", "--signal", "FOO", "--process", "x"], "unknown signal"),
                          # a negative or NaN bound would end the step at once, a zero period spin
                          (["verify", "--timeout", "-5"], "seconds must be a finite number 0 or more"),
                          (["drain", "--deadline", "nan"], "seconds must be a finite number 0 or more"),
                          (["verify", "--timeout", "1", "--interval", "0"], "seconds must be a finite number above 0"),
                          (["verify", "--timeout", "soon"], "'soon' is not a number of seconds")]:
        result = helper(tmp_path, *argv)
        assert result.returncode == 2 and message in result.stderr, (argv, result.stderr)
        assert "Traceback" not in result.stderr


def test_sidecar_records_then_idles_until_sigterm(tmp_path):
    state = tmp_path / "b.json"
    env = {**os.environ, "FAKE_NVML_SCENARIO": str(tmp_path / "s.json"),
           "PYTHONPATH": os.pathsep.join([str(FAKE), str(ROOT / "tests")])}
    (tmp_path / "s.json").write_text(json.dumps(IDLE))
    proc = subprocess.Popen([SCRIPT, "sidecar", "--state", str(state)], stdout=subprocess.PIPE, text=True, env=env)
    assert json.loads(proc.stdout.readline())["step"] == "baseline"
    assert proc.poll() is None and state.exists()
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(10) == 0


def test_drain_by_server_preset(tmp_path):
    result = helper(tmp_path, "drain", "--server", "triton", "--deadline", "1", "--proc", str(tmp_path))
    assert result.returncode == 0
    assert verdict(result)["steps"][0] == {"action": "signal", "signal": "TERM", "pids": [],
                                           "note": "no process matched 'tritonserver'"}


def test_servers_table_is_data(tmp_path):
    table = json.loads(helper(tmp_path, "servers", "--json").stdout)
    vllm = next(s for s in table if s["name"] == "vllm")
    assert vllm["drain_flag"] == "--shutdown-timeout" and vllm["flag_required"] is True


def test_the_helper_loads_no_lint_stack():
    probe = ("import sys\nfrom draguard.teardown import cli\n"
             "print(sorted(m for m in sys.modules if m.startswith(('draguard', 'yaml', 'cel_expr', 'google', "
             "'jsonschema', 'pynvml'))))")
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    # the helper's own modules and the two core tables it shares with the rules, with the
    # records one of them is made of (stdlib only)
    shared = {"draguard.core", "draguard.core.amounts", "draguard.core.servers", "draguard.core.value"}
    assert all(m == "draguard" or m.startswith("draguard.teardown") or m in shared for m in eval(loaded)), loaded


def test_runs_with_nothing_but_the_standard_library_and_nvml(tmp_path):
    """A minimal install (`pip install --no-deps draguard nvidia-ml-py`): with site-packages
    off (-S) and only src/ and a copy of pynvml on the path, every command starts."""
    import pynvml

    shutil.copy(pynvml.__file__, tmp_path / "pynvml.py")
    env = {"PATH": os.environ["PATH"], "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(tmp_path)])}
    for argv, code in [(["servers"], 0), (["drain", "--deadline", "1", "--proc", str(tmp_path)], 0),
                       (["verify", "--timeout", "1", "--state", str(tmp_path / "none.json")], 3),
                       (["baseline", "--state", str(tmp_path / "b.json")], 3)]:
        done = subprocess.run([sys.executable, "-S", "-m", "draguard.teardown.cli", *argv], capture_output=True,
                              text=True, env=env, timeout=60)
        assert done.returncode == code and "Traceback" not in done.stderr, (argv, done.stderr)


def test_the_servers_table_in_the_docs_matches_the_data():
    from draguard.core.servers import SERVERS

    docs = (ROOT / "docs" / "teardown.md").read_text()
    rows = {line.split("|")[1].strip().lower(): line for line in docs.splitlines()
            if line.startswith("| ") and "| SIGTERM |" in line}
    assert sorted(rows) == sorted(s.name for s in SERVERS)
    for server in SERVERS:
        row = rows[server.name]
        bound = row.split("|")[3]
        assert (f"`{server.drain_flag}" in bound) if server.drain_flag else bound.strip().startswith("none"), row
        if server.drain_seconds is not None:
            assert f"{server.drain_seconds:g}" in row.split("|")[4], row
