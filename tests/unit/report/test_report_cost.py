"""Reports cost what the lint does, not the square of a file: a fix's text replacement (SARIF)
and its diff (HTML) used to compose or parse the whole file again for each finding, so a
file of many documents with a fix each cost its size times its findings (SARIF 14x the text
report on 2,000 files). The bound is on the text handed to the YAML composer while a report
is rendered, which does not depend on the machine's speed."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from draguard.core.config import Config
from draguard.core.fixes import Fix
from draguard.engine.lint import lint_text
from draguard.report import chunk_renderer, html, junit, pieces, sarif, text
from draguard.report.prose import sentence
from draguard.sources import libyaml

DOCUMENTS = 120


def _stream() -> str:
    pod = ("apiVersion: v1\nkind: Pod\nmetadata: {{name: p{0}}}\nspec:\n  hostIPC: true\n  containers:\n"
           "  - name: c\n    image: x\n    resources: {{limits: {{nvidia.com/gpu: 1}}}}\n")
    return "---\n".join(pod.format(i) for i in range(DOCUMENTS))


@pytest.fixture
def composing(monkeypatch):
    """Called once the lint is done: the list of the lengths of the texts libyaml composes
    from then on (the report's splices)."""
    def start() -> list[int]:
        lengths: list[int] = []
        original = libyaml.Loader.__init__

        def counting(self, stream):
            lengths.append(len(stream))
            original(self, stream)

        monkeypatch.setattr(libyaml.Loader, "__init__", counting)
        return lengths
    return start


@pytest.mark.parametrize("report", [sarif, html, junit], ids=["sarif", "html", "junit"])
def test_a_report_composes_a_file_a_bounded_number_of_times(report, composing):
    text = _stream()
    result = lint_text("many.yaml", text, Config())
    assert sum(f.rule == "host-ipc" and f.fix is not None for f in result.findings) == DOCUMENTS
    composed = composing()
    rendered = report.render(result)
    assert "hostIPC" in rendered or report is junit
    assert sum(composed) <= 4 * len(text), (sum(composed) / len(text), len(composed))


def test_sarif_composes_only_the_documents_whose_fixes_may_map(composing):
    """A SARIF fix is a text replacement only where each edit sets a scalar or removes an
    entry (sources.spans.text_replacement): the documents of other fixes (a legacy GPU
    request migrated to a claim adds documents) are not composed, and the one document
    whose fix may map is composed alone, not with the whole file."""
    pod = ("apiVersion: v1\nkind: Pod\nmetadata: {{name: p{0}}}\nspec:\n{1}  containers:\n"
           "  - name: c\n    image: x\n    resources: {{limits: {{nvidia.com/gpu: 1}}}}\n")
    documents = [pod.format(i, "  hostIPC: true\n" if i == DOCUMENTS - 1 else "") for i in range(DOCUMENTS)]
    text = "---\n".join(documents)
    result = lint_text("many.yaml", text, Config())
    assert sum(f.rule == "legacy-gpu-resource" and f.fix is not None for f in result.findings) == DOCUMENTS
    composed = composing()
    report = sarif.render(result)
    assert composed == [len(documents[-1])]  # the last document alone
    fixed = [r for r in json.loads(report)["runs"][0]["results"] if r.get("fixes")]
    assert [r["ruleId"] for r in fixed] == ["host-ipc"]
    region = fixed[0]["fixes"][0]["artifactChanges"][0]["replacements"][0]["deletedRegion"]
    assert region["startLine"] == text.count("\n", 0, text.index("hostIPC")) + 1  # a line of the whole file


def test_the_text_report_expands_tabs_in_the_excerpt_not_the_whole_line(monkeypatch):
    """A one-line JSON List (`kubectl get pods -A -o json | jq -c`) is one line of megabytes
    with a finding per pod: expanding the tabs of the whole line for each finding made the
    text report the square of the file (10 MB: 270 s). Only the excerpt shown is expanded,
    with the same columns (a tab is one space)."""
    from draguard.report import text
    from draguard.report.lines import SourceLines

    expanded: list[int] = []

    class Line(str):
        def expandtabs(self, tabsize=8):
            expanded.append(len(self))
            return str.expandtabs(self, tabsize)

    pod = '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p%d"},"spec":{"containers":[{"name":"c","image":"x",' \
          '"resources":{"limits":{"nvidia.com/gpu":1}}}]}}'
    line = '{"apiVersion":"v1","kind":"List","items":[' + ",".join(pod % i for i in range(DOCUMENTS)) + "]}"
    result = lint_text("pods.json", line + "\n", Config())
    assert len(result.findings) >= DOCUMENTS
    real_get = SourceLines.get
    monkeypatch.setattr(SourceLines, "get", lambda self, file, number: Line(real_get(self, file, number)))
    rendered = text.render(result)
    assert "gpu" in rendered and expanded == []  # the whole line never
    tabbed = lint_text("t.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: c\n"
                       "    image: x\n    resources: {limits: {nvidia.com/gpu: 1}}\t# one GPU\n", Config())
    assert "      8 |     resources: {limits: {nvidia.com/gpu: 1}} # one GPU\n" in text.render(tabbed)


def test_the_html_report_locates_block_style_fixes_on_the_judged_trees(composing, monkeypatch):
    """Each fix of a block-style document is located on the tree its rule judged (fix.located),
    not on the document composed again, and the report is the same as composed."""
    pod = ("apiVersion: v1\nkind: Pod\nmetadata:\n  name: p{0}\nspec:\n  hostIPC: true\n  containers:\n"
           "  - name: c\n    image: x\n    resources:\n      limits:\n        nvidia.com/gpu: 1\n")
    text = "---\n".join(pod.format(i) for i in range(20))
    result = lint_text("many.yaml", text, Config())
    assert sum(f.fix is not None for f in result.findings) >= 40
    composed = composing()
    located = html.render(result)
    assert composed == []
    monkeypatch.setattr(html, "_block_read", lambda *_: None)
    assert html.render(result) == located and composed


def test_the_json_report_makes_each_objects_data_once_for_all_its_findings(monkeypatch):
    """An object's JSON is encoded once for its findings (report.json_report._shared); the
    finding's own mapping does not make it again to have it replaced."""
    from draguard.core.finding import ObjectRef
    from draguard.report import json_report

    result = lint_text("pods.yaml", _stream(), Config())
    objects = {f.obj for f in result.findings}
    assert len(result.findings) >= 2 * len(objects)  # several findings an object
    made = []
    real = ObjectRef.as_json
    monkeypatch.setattr(ObjectRef, "as_json", lambda self: made.append(self) or real(self))
    monkeypatch.setattr(json_report, "_OBJECTS", {})
    text = json_report.render(result)
    assert len(made) == len(objects)
    monkeypatch.undo()
    assert json.loads(text) == json.loads(json.dumps(json_report.document(result), indent=2))


def test_the_html_reports_fix_diffs_import_nothing_once_a_fix(monkeypatch):
    """The splice and the diff are imported with the report, not in each fix's diff (a
    relative import cost 13 us a fix at load 4)."""
    import builtins

    result = lint_text("many.yaml", _stream(), Config())
    html.render(result)  # what the first fix loads
    counted: list[str] = []
    real = builtins.__import__

    def counting(name, globals=None, locals=None, fromlist=(), level=0):
        counted.append((globals or {}).get("__name__", ""))
        return real(name, globals, locals, fromlist, level)

    monkeypatch.setattr(builtins, "__import__", counting)
    rendered = html.render(result)
    monkeypatch.undo()
    assert rendered.count('<span class="add">') >= DOCUMENTS
    assert [module for module in counted if module.startswith(("draguard.report", "draguard.fix"))] == []


def test_the_html_report_makes_what_findings_share_once(monkeypatch):
    """A rule's help text, a message many objects share and a fix's title are one string for
    many findings (the 2,125-file tree: 22 help texts, 208 messages for 7,736 findings): each
    is made a sentence and escaped once a report, not once a finding, and reads the same."""
    result = lint_text("many.yaml", _stream(), Config())
    said = {f.message for f in result.findings} | {f.help for f in result.findings if f.help}
    assert len(result.findings) > 2 * len(said)
    whole = html.render(result)
    calls: list[str] = []
    monkeypatch.setattr(html, "sentence", lambda text: calls.append(text) or sentence(text))
    assert html.render(result) == whole
    assert sorted(calls) == sorted(said)


FIX_MODULES_PROBE = ("import importlib, sys\nimportlib.import_module(sys.argv[1])\n"
                     "print(' '.join(sorted(m for m in sys.modules if m.startswith('draguard.fix'))))")


def _fix_modules_of(module: str) -> set[str]:
    """The modules of draguard.fix a fresh interpreter holds once it has imported `module`."""
    done = subprocess.run([sys.executable, "-c", FIX_MODULES_PROBE, module], capture_output=True, text=True,
                          check=True)
    return set(done.stdout.split())


def test_the_html_report_brings_its_fix_diffs_modules_before_a_run_forks():
    """report.html imports the splice, the diff and the key adds' path with itself, and `lint
    --jobs` imports the report's module before it forks its parts (report.piece_renderer), so
    the parts inherit them: imported on each part's first fix, they cost every part 20-30 ms."""
    assert {"draguard.fix.splice", "draguard.fix.hunks", "draguard.fix.added_keys"} <= \
        _fix_modules_of("draguard.report.html")


HTML_RUN_PROBE = ("import io, contextlib, sys\nfrom draguard.cli import main\n"
                  "with contextlib.redirect_stdout(io.StringIO()):\n    main(sys.argv[1:])\n"
                  "print(sorted(m for m in ('dataclasses', 'inspect') if m in sys.modules))")


def test_the_html_report_of_fixes_makes_no_dataclass():
    """The fix diffs' modules the HTML report brings (sources.spans under fix.splice) hold
    records written by hand (core.value): `dataclasses`, with inspect, ast, dis and tokenize,
    was about 14 ms of CPU of a `lint -f html` process that nothing else of it imports (a
    file with no device selector: compiling one imports it)."""
    done = subprocess.run([sys.executable, "-c", HTML_RUN_PROBE, "lint", "--no-config", "-f", "html",
                           "tests/rules/legacy-gpu-resource/fail.yaml"], capture_output=True, text=True, check=True)
    assert done.stdout.split("\n")[-2] == "[]"


@pytest.mark.parametrize("module", ["draguard.report.simulate_html", "draguard.report.audit_html"])
def test_the_simulate_and_audit_pages_import_no_fix_module(module):
    """They share the lint page's styles (report.page_style), not its fix diffs."""
    assert _fix_modules_of(module) == set()


def test_a_fixs_edits_are_unpacked_once_for_its_diff(monkeypatch):
    """Fix.edits unpacks the held edits each time it is read: a fix the key adds' path
    declines is read once for both paths (the pods' flow-style limits: the general path)."""
    result = lint_text("many.yaml", _stream(), Config())
    fixes = sum(f.fix is not None for f in result.findings)
    reads: list[Fix] = []
    edits = Fix.edits
    monkeypatch.setattr(Fix, "edits", property(lambda fix: reads.append(fix) or edits.fget(fix)))
    page = html.render(result)
    assert page.count('<span class="add">') >= DOCUMENTS
    assert len(reads) == fixes


def test_the_html_page_is_written_in_runs_of_sections(monkeypatch):
    """`lint -f html` writes the page as it comes, a run of findings' sections at a time,
    not joined whole first; joined, the runs are the page, and a page without findings
    says so."""
    result = lint_text("many.yaml", _stream(), Config())
    monkeypatch.setattr(pieces, "RUN_CHARS", 4000)
    written = list(chunk_renderer("html")(result))
    assert "".join(written) == html.render(result)
    runs = written[1:-1]  # the head, the runs, the end
    sections = [run.count('<div class="finding">') for run in runs]
    assert sum(sections) == len(result.findings) and len(runs) > 3 and min(sections) >= 1
    for run, count in zip(runs, sections):  # each reaches the bound with its last section, not before it
        before_last = run.rindex('<div class="finding">') - (count - 1)  # less the line breaks
        assert before_last < 4000
        assert len(run) - count >= 4000 or run is runs[-1]
    empty = lint_text("ok.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: n}\n", Config())
    assert list(chunk_renderer("html")(empty))[1:] == ['<p class="muted">No findings.</p>\n', "</body></html>\n"]


def test_the_text_report_is_written_in_runs_of_lines(monkeypatch):
    """`lint -f text` writes its report as it comes, a run of lines at a time (report.pieces.
    in_runs), not joined whole first (three copies of the report at the end of a run); joined,
    the runs are the report: each file's name, its findings, a blank line, the summary."""
    result = lint_text("many.yaml", _stream(), Config())
    monkeypatch.setattr(pieces, "RUN_CHARS", 2000)
    written = list(chunk_renderer("text")(result))
    whole = text.render(result)
    assert "".join(written) == whole and len(written) > 3
    assert all(run.endswith("\n") and len(run) < 3000 for run in written)  # a finding's text is under 1,000
    lines = whole.split("\n")
    assert lines[0] == "many.yaml" and lines[-2].startswith(f"{DOCUMENTS} objects in 1 files")
