"""JUnit XML for CI systems that show test reports: one suite per file, one case per finding
(a failure when at or above `--fail-on`), and one passing case for a clean file.

Each case is written by ElementTree on its own, indented as it stands in the document (two
levels down), so that a `lint --jobs` part can write its findings' cases (report.pieces);
the suites and the document around them are joined here, in the bytes ElementTree writes
for the whole document with `ET.indent`."""

from __future__ import annotations

from itertools import groupby
from xml.etree import ElementTree as ET

from ..core.finding import Severity
from .pieces import each, made_in_part
from .prose import printable, sentence, with_help

_HEADER = '<?xml version="1.0" encoding="UTF-8"?>\n'


class _Case:
    """A finding's test case as XML (report.pieces)."""

    def __init__(self, fail_on: Severity):
        self.fail_on = fail_on

    def __call__(self, f, suppressed: bool = False) -> str:
        case = ET.Element("testcase", name=printable(f"{f.rule} {f.obj} {f.line}:{f.column}"),
                          classname=printable(f.file))
        body = printable(f"{f.file}:{f.line}:{f.column}: {f.severity} [{f.rule}] ") + with_help(f.message, f.help)
        if f.severity >= self.fail_on:
            ET.SubElement(case, "failure", message=sentence(f.message), type=f.rule).text = body
        else:
            ET.SubElement(case, "system-out").text = body
        ET.indent(case, level=2)
        return ET.tostring(case, encoding="unicode")


def pieces(findings, suppressed, sources, *, fail_on: Severity = Severity.ERROR, **_):
    """What a `lint --jobs` part renders of its findings (report.pieces)."""
    return made_in_part(findings, suppressed, sources, _Case(fail_on), False)


def _opening(tag: str, **attributes: str) -> str:
    """An element's start tag as ElementTree writes it (attributes in order, escaped)."""
    return ET.tostring(ET.Element(tag, attributes), encoding="unicode")[:-len(" />")] + ">"


def render(result, *, fail_on: Severity = Severity.ERROR, **_) -> str:
    by_file = {f: list(g) for f, g in groupby(result.findings, key=lambda f: f.file)}
    files = sorted(set(by_file) | {s.display for s in result.sources if not s.rendered_by})
    cases = dict(zip(map(id, result.findings), each(result, ((f, False) for f in result.findings), _Case(fail_on))))
    suites = []
    total = failures = 0
    for file in files:
        findings = by_file.get(file, [])
        count, failed = max(1, len(findings)), sum(1 for f in findings if f.severity >= fail_on)
        body = [cases[id(f)] for f in findings] or \
            [ET.tostring(ET.Element("testcase", name="no findings", classname=printable(file)), encoding="unicode")]
        suites.append(f"\n  {_opening('testsuite', name=printable(file), tests=str(count), failures=str(failed))}"
                      + "".join(f"\n    {case}" for case in body) + "\n  </testsuite>")
        total += count
        failures += failed
    root = ET.Element("testsuites", name="draguard", tests=str(total), failures=str(failures))
    if not suites:
        return _HEADER + ET.tostring(root, encoding="unicode") + "\n"
    return _HEADER + _opening("testsuites", **root.attrib) + "".join(suites) + "\n</testsuites>\n"
