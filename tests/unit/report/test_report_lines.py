"""The source lines a report shows are read file by file and not kept: every file's lines held
to the end of a lint of 20,000 objects were 600,000 strings (40 MiB) at its memory's peak."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from draguard.core.config import Config
from draguard.engine.lint import lint_paths, lint_text
from draguard.report import lines as report_lines
from draguard.report import text

FILES = 3 * report_lines._RECENT_FILES


def _pods(tmp_path) -> list[str]:
    """Files of a pod on a GPU with hostIPC (a finding there) at a line of its own, each at another line."""
    paths = []
    for i in range(FILES):
        path = tmp_path / f"pod-{i:02}.yaml"
        path.write_text("# a comment\n" * i + "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n"
                        f"  hostIPC: true  # file {i}\n  containers:\n  - name: c\n    image: x\n"
                        "    resources: {limits: {nvidia.com/gpu: 1}}\n")
        paths.append(str(path))
    return paths


def test_the_text_report_shows_each_files_own_lines_and_keeps_none(tmp_path):
    paths = _pods(tmp_path)
    result = lint_paths([str(tmp_path)], Config())
    rendered = text.render(result)
    for i, path in enumerate(paths):
        assert f"  {i + 6:>5} |   hostIPC: true  # file {i}\n" in rendered, path
    assert not any(source.has_lines for source in result.sources)


def test_lines_asked_out_of_order_are_each_files_own(tmp_path):
    paths = _pods(tmp_path)
    result = lint_paths([str(tmp_path)], Config())
    shown = report_lines.SourceLines(result.sources)
    order = [i for step in range(3) for i in range(FILES)[step::3]] * 2  # more files than are held, out of order
    by_name = {s.display: s for s in result.sources}
    for i in order:
        display = next(name for name in by_name if name.endswith(f"pod-{i:02}.yaml"))
        assert shown.get(display, i + 6) == f"  hostIPC: true  # file {i}"
        assert shown.get(display, i + 11) is None
    assert len(shown._recent) == report_lines._RECENT_FILES
    assert paths


def test_the_lines_around_one_are_those_the_file_has(tmp_path):
    """An excerpt's lines (the HTML report's) in one look: cut at the file's first and last
    lines, none of a file that is not there."""
    path = tmp_path / "pod.yaml"
    path.write_text("a: 1\nb: 2\nc: 3\n")
    shown = report_lines.SourceLines([])
    assert shown.around(str(path), -1, 3) == [(1, "a: 1"), (2, "b: 2"), (3, "c: 3")]
    assert shown.around(str(path), 2, 6) == [(2, "b: 2"), (3, "c: 3")]
    assert shown.around(str(path), 4, 8) == []
    assert shown.around(str(tmp_path / "gone.yaml"), 1, 3) == []


_BREAKS = st.sampled_from(["\n", "\r\n", "\r", "\x0b", "\x0c", "\x1c", "\x85", "\u2028", "\n\n", "\r\r\n"])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.text(alphabet="ab \t:-é", max_size=12), _BREAKS), max_size=40), st.booleans(),
       st.integers(1, 30))
def test_a_large_text_s_lines_cut_on_demand_are_its_splitlines(pieces, ends_open, block):
    """report.lines.lines_of cuts a large text's lines a block at a time: every line, by index
    (negative too) and by slice, in any order of asking, is str.splitlines'; blocks end after a
    line feed only, so a CR LF pair or a lone CR is never split across two."""
    whole = "".join(line + brk for line, brk in pieces) + ("tail" if ends_open else "")
    expected = whole.splitlines()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(report_lines, "ON_DEMAND_CHARS", 0)
        patch.setattr(report_lines, "BLOCK_CHARS", block)
        cut = report_lines.lines_of(whole)
    assert len(cut) == len(expected)
    assert [cut[i] for i in reversed(range(len(expected)))] == expected[::-1]
    assert list(cut) == expected and cut[1:4] == expected[1:4] and cut[-3:] == expected[-3:]
    if expected:
        assert cut[-1] == expected[-1]
    with pytest.raises(IndexError):
        cut[len(expected)]


def test_a_report_of_a_large_stream_reads_its_lines_cut_on_demand(monkeypatch):
    """The text report of a text past ON_DEMAND_CHARS shows the same lines as split whole."""
    stream = "---\n".join(f"apiVersion: v1\nkind: Pod\nmetadata: {{name: p{i}}}\nspec:\n  containers:\n"
                          f"  - name: c\n    image: x\n    resources: {{limits: {{nvidia.com/gpu: 1}}}}\n"
                          for i in range(60))
    whole = text.render(lint_text("s.yaml", stream, Config()))
    monkeypatch.setattr(report_lines, "ON_DEMAND_CHARS", 100)
    monkeypatch.setattr(report_lines, "BLOCK_CHARS", 200)
    made = []
    cut = report_lines.lines_of
    monkeypatch.setattr(report_lines, "lines_of", lambda t: made.append(cut(t)) or made[-1])
    assert text.render(lint_text("s.yaml", stream, Config())) == whole
    assert [type(lines).__name__ for lines in made] == ["_CutOnDemand"]
