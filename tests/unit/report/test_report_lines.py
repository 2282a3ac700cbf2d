"""The source lines a report shows are read file by file and not kept: every file's lines held
to the end of a lint of 20,000 objects were 600,000 strings (40 MiB) at its memory's peak."""

from __future__ import annotations

from draguard.core.config import Config
from draguard.engine.lint import lint_paths
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
