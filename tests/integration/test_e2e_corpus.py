"""Lint the whole shared corpus: no crash, every finding inside its file and its path on real
text, the JSON contract, and SARIF that validates against the SARIF 2.1.0 schema."""

import json
from collections import Counter
from pathlib import Path

import jsonschema
import pytest

from draguard.core.location import parse_path
from draguard.sources.spans import locate

from support.paths import DATA, corpus, corpus_files

SARIF_SCHEMA = json.loads((DATA / "sarif-schema-2.1.0.json").read_text())
FINDING_KEYS = {"rule", "category", "severity", "message", "help", "file", "line", "column", "document", "path",
                "object", "fix"}


@pytest.fixture(scope="module")
def corpus_report(request):
    corpus_files()
    from draguard.cli import main
    import contextlib
    import io

    reports = {}
    for fmt in ("json", "sarif"):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            code = main(["lint", str(corpus()), "--no-config", "-f", fmt])
        assert code in (0, 1)
        reports[fmt] = json.loads(out.getvalue())
    return reports


def test_every_finding_points_inside_its_file(corpus_report):
    report = corpus_report["json"]
    assert report["summary"]["objects"] > 250
    lines_of = {}
    for finding in report["findings"]:
        assert set(finding) == FINDING_KEYS
        path = finding["file"]
        if path not in lines_of:
            lines_of[path] = Path(path).read_text(encoding="utf-8").splitlines()
        lines = lines_of[path]
        assert 1 <= finding["line"] <= len(lines), finding
        assert 1 <= finding["column"] <= len(lines[finding["line"] - 1]) + 1, finding


def test_per_rule_counts(corpus_report):
    """The summary's counts are the findings' (a report's reader sums neither), and the
    corpus's unrendered templates are said to be templates, each one and nothing else."""
    report = corpus_report["json"]
    counts = Counter(f["rule"] for f in report["findings"])
    assert report["summary"]["byRule"] == dict(sorted(counts.items()))
    assert report["summary"]["total"] == sum(counts.values()) > 0
    # every unrendered template of helm-templates/ is said to be one, and nothing else is
    templates = {f["file"] for f in corpus_report["json"]["findings"] if f["rule"] == "template-unrendered"}
    assert templates == {str(p) for p in (corpus() / "helm-templates").iterdir()}


def test_yaml_inside_comments_is_not_an_object(corpus_report):
    names = {(f["object"]["kind"], f["object"]["name"]) for f in corpus_report["json"]["findings"]}
    assert all(kind != "" or name == "" for kind, name in names)


def test_sarif_validates(corpus_report):
    jsonschema.validate(corpus_report["sarif"], SARIF_SCHEMA)
    assert len(corpus_report["sarif"]["runs"][0]["results"]) == len(corpus_report["json"]["findings"])


def test_every_finding_path_names_text_in_its_document(corpus_report):
    """A finding's path leads to the key or item it is about, in the document it names."""
    checked = 0
    for finding in corpus_report["json"]["findings"]:
        if not finding["path"]:
            continue
        text = Path(finding["file"]).read_text(encoding="utf-8-sig")
        entry = locate(text, finding["document"], parse_path(finding["path"]))
        assert entry is not None, finding
        start = entry.key.start if entry.key is not None else entry.value.start
        assert start.line <= finding["line"], finding  # the finding is at the entry or inside it
        checked += 1
    assert checked > 300
