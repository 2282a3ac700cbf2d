"""The benchmarks' harness (benchmarks/_measure.py) times what it says: commands run in turn
(A B A B) after an uncounted warm-up of each, each run a whole process, a failing command
stops the benchmark, and a ratio is taken run by run."""

from __future__ import annotations

import sys

import pytest

from support.paths import ROOT

sys.path.insert(0, str(ROOT / "benchmarks"))

import _measure  # noqa: E402


def appending(log, name: str, code: int = 0) -> list[str]:
    return [sys.executable, "-c", f"open({str(log)!r}, 'a').write({name!r}); raise SystemExit({code})"]


def test_commands_run_in_turn_after_a_warm_up(tmp_path):
    log = tmp_path / "log"
    a, b = _measure.Command("A", appending(log, "A")), _measure.Command("B", appending(log, "B"))
    runs = _measure.in_turn([a, b], runs=3)
    assert log.read_text() == "AB" + "ABABAB"  # the warm-up, then three counted turns
    assert [len(r.walls) for r in runs] == [3, 3] and all(w > 0 for r in runs for w in r.walls)
    assert all(p > 0 for r in runs for p in r.peaks)


def test_a_setup_step_runs_before_each_run_untimed(tmp_path):
    log = tmp_path / "log"
    command = _measure.Command("A", appending(log, "A"), before=lambda: log.open("a").write("s"))
    _measure.in_turn([command], runs=2)
    assert log.read_text() == "sA" * 3


def test_with_settle_every_run_starts_after_the_same_idle(tmp_path, monkeypatch):
    """A short command timed after a long one pays the long one's load on a virtual machine;
    `settle` gives each run, whichever command, the same idle before it."""
    log = tmp_path / "log"
    slept = []
    monkeypatch.setattr(_measure.time, "sleep", lambda s: (slept.append(s), log.open("a").write("z")))
    a, b = _measure.Command("A", appending(log, "A")), _measure.Command("B", appending(log, "B"))
    _measure.in_turn([a, b], runs=2, settle=7.5)
    assert log.read_text() == "zAzB" * 3 and slept == [7.5] * 6
    slept.clear()
    _measure.in_turn([a, b], runs=1)
    assert slept == []  # none by default


def test_a_failing_command_stops_the_benchmark(tmp_path):
    with pytest.raises(SystemExit, match="exit 3"):
        _measure.in_turn([_measure.Command("A", appending(tmp_path / "log", "A", code=3))], runs=1)
    assert _measure.in_turn([_measure.Command("A", appending(tmp_path / "log", "A", 1), ok=(0, 1))], runs=1)


def test_the_ratio_is_taken_pair_by_pair():
    a = _measure.Runs(_measure.Command("A", []), walls=[2.0, 10.0, 3.0])
    b = _measure.Runs(_measure.Command("B", []), walls=[1.0, 10.0, 1.0])
    # medians alone would say 3.0 / 1.0 = 3x; the pairs say 2x, 1x, 3x
    assert _measure.ratio(a, b) == "2.00x (1.00-3.00)"
    assert _measure.ratio_of_medians(a, b) == "3.00x"  # printed beside it: a gap says the sitting drifted


def test_the_load_is_recorded_as_each_run_begins(tmp_path):
    runs = _measure.in_turn([_measure.Command("A", appending(tmp_path / "log", "A"))], runs=3)
    assert len(runs[0].loads) == 3 and all(x >= 0 for x in runs[0].loads)
    runs[0].loads[:] = [2.0, 0.5, 4.0]
    assert _measure.load(runs) == "2.0 (0.5-4.0)"


def test_the_bytecode_switch_is_not_passed_on(tmp_path, monkeypatch):
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    out = tmp_path / "flag"
    probe = [sys.executable, "-c", f"import sys; open({str(out)!r}, 'w').write(str(sys.dont_write_bytecode))"]
    _measure.in_turn([_measure.Command("probe", probe)], runs=1)
    assert out.read_text() == "False"


def test_a_run_past_its_time_is_stopped_not_waited_for(tmp_path):
    sleeper = _measure.Command("slow", [sys.executable, "-c", "import time; time.sleep(30)"], timeout=0.5)
    with pytest.raises(_measure.Stopped, match="stopped after 0.5 s"):
        _measure.once(sleeper)


def test_a_run_past_its_memory_is_stopped(tmp_path):
    hog = _measure.Command("hog", [sys.executable, "-c", "b = bytearray(512 << 20)"], memory_mib=256)
    with pytest.raises(_measure.Stopped, match="over 256 MiB"):
        _measure.once(hog)


BENCHMARKS = sorted(p for p in (ROOT / "benchmarks").glob("*.py") if p.name != "_measure.py")


@pytest.mark.parametrize("script", BENCHMARKS, ids=lambda p: p.name)
def test_each_benchmark_times_whole_processes_or_says_why_not(script):
    """Issue #44: a benchmark times what the user waits for, as whole processes in turn
    (the harness), or says in its docstring why a component timing is what is waited for."""
    text = script.read_text()
    docstring = text.split('"""')[1]
    assert "from _measure import" in text or "on purpose:" in docstring, script.name


def test_pairs_times_two_commands_in_turn_and_prints_both_ratios(tmp_path, capsys):
    import pairs

    log = tmp_path / "log"
    pairs.main(["--runs", "2", "--vs", f"{sys.executable} -c \"open({str(log)!r}, 'a').write('B')\"", "--",
                *appending(log, "A", code=1)])
    assert log.read_text() == "AB" * 3  # one warm-up pair, then two counted; exit 1 is a run like any other
    out = capsys.readouterr().out
    assert "A/B wall, pair by pair" in out and "A/B cpu, pair by pair" in out
    assert "1-minute load as each run began" in out


def test_each_format_runs_right_after_a_text_run_of_its_own(tmp_path, capsys, monkeypatch):
    """lint_throughput --formats: text F text G ..., so each ratio's pair shares its moment's
    load (all formats after one text run put the last of them runs away from it)."""
    import argparse

    import lint_throughput

    log = tmp_path / "log"
    written: set[tuple[str, str]] = set()

    def draguard(*args: str) -> list[str]:  # lint --no-config -f F -o REPORT TREE
        written.add((args[3], args[5]))
        return appending(log, args[3][0])

    monkeypatch.setattr(lint_throughput, "draguard", draguard)
    lint_throughput.formats(tmp_path, str(tmp_path / "report.txt"),
                            argparse.Namespace(formats=["html", "sarif"], runs=2, baseline_src=None))
    assert log.read_text() == "thts" * 3  # the warm-up, then two counted rounds
    # each format's report a file of its own: none frees another's pages as it replaces it
    assert written == {(fmt, str(tmp_path / f"report.{fmt}")) for fmt in ("text", "html", "sarif")}
    out = capsys.readouterr().out
    assert out.count("/ -f text: CPU, pair by pair") == 2 and out.count("/ -f text: wall, pair by pair") == 2
    assert out.count("of medians") == 4 and "1-minute load as each run began" in out


def test_the_html_report_parts_are_each_measured(tmp_path, capsys, monkeypatch):
    """benchmarks/html_report_parts.py: every part of the HTML report's CPU beside the text
    report's, on a tree with a fix (one that the `legacy-gpu-resource` rule migrates)."""
    import html_report_parts

    (tmp_path / "pod.yaml").write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n"
                                       "  - name: c\n    image: x\n    resources: {limits: {nvidia.com/gpu: 1}}\n")
    monkeypatch.setattr(sys, "argv", ["html_report_parts.py", "--tree", str(tmp_path), "--runs", "1"])
    assert html_report_parts.main() == 0
    out = capsys.readouterr().out
    assert "1 with a fix" in out
    for part in ("text report", "HTML report", "the fixes' diffs", "the excerpts", "the page without the diffs",
                 "the page joined", "HTML sections crossing", "text sections crossing", "HTML page written"):
        assert part in out, part
