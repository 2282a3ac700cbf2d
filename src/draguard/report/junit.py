"""JUnit XML for CI systems that show test reports: one suite per file, one case per finding
(a failure when at or above `--fail-on`), and one passing case for a clean file."""

from __future__ import annotations

from itertools import groupby
from xml.etree import ElementTree as ET

from ..core.finding import Severity
from .prose import printable, sentence, with_help


def render(result, *, fail_on: Severity = Severity.ERROR, **_) -> str:
    suites = ET.Element("testsuites", name="draguard")
    by_file = {f: list(g) for f, g in groupby(result.findings, key=lambda f: f.file)}
    files = sorted(set(by_file) | {s.display for s in result.sources if not s.rendered_by})
    total = failures = 0
    for file in files:
        findings = by_file.get(file, [])
        suite = ET.SubElement(suites, "testsuite", name=printable(file))
        suite_failures = 0
        if not findings:
            ET.SubElement(suite, "testcase", name="no findings", classname=printable(file))
        for f in findings:
            case = ET.SubElement(suite, "testcase", name=printable(f"{f.rule} {f.obj} {f.line}:{f.column}"),
                                 classname=printable(file))
            body = printable(f"{f.file}:{f.line}:{f.column}: {f.severity} [{f.rule}] ") + with_help(f.message, f.help)
            if f.severity >= fail_on:
                failure = ET.SubElement(case, "failure", message=sentence(f.message), type=f.rule)
                failure.text = body
                suite_failures += 1
            else:
                ET.SubElement(case, "system-out").text = body
        count = max(1, len(findings))
        suite.set("tests", str(count))
        suite.set("failures", str(suite_failures))
        total += count
        failures += suite_failures
    suites.set("tests", str(total))
    suites.set("failures", str(failures))
    ET.indent(suites)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suites, encoding="unicode") + "\n"
