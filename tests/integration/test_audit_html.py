"""The audit's HTML report rendered by headless Chromium: self-contained, the heat map has a
cell per node coloured by use, the per-profile bars carry the pool view's series, and the
screenshot is a page with content."""

from __future__ import annotations

import re
import subprocess

import pytest

from support.audit_dump import write

from .test_html_report import CHROMIUM, FLAGS, screenshot

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="headless Chromium is not installed (apt install chromium)")


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    from draguard.cli import main

    folder = tmp_path_factory.mktemp("audit-html")
    bundle = write(folder / "bundle", 6, 2, 9)
    target = folder / "audit.html"
    assert main(["audit", "--from", str(bundle), "--no-config", "-f", "html", "-o", str(target)]) == 0
    return target


def test_the_page_is_self_contained(report):
    text = report.read_text()
    assert "<script" not in text and "http://" not in text and "https://" not in text


def test_chromium_renders_the_heat_map_and_the_profile_series(report):
    dom = subprocess.run([CHROMIUM, *FLAGS, "--dump-dom", report.as_uri()], capture_output=True, text=True,
                         timeout=120).stdout
    fills = re.findall(r'<rect class="node"[^>]*fill="rgb\(235,(\d+),\d+\)"', dom)
    assert len(fills) == 6  # one cell per node
    assert any(int(g) < 235 for g in fills)  # nodes holding pods are shaded darker than idle ones
    assert '<rect class="bar"' in dom
    for profile in ("1g.10gb", "2g.20gb", "3g.40gb"):
        assert f'data-label="{profile}"' in dom
    assert 'score 100.0 (A)' in dom


def test_chromium_takes_a_screenshot_with_content(report, tmp_path):
    assert len(screenshot(report, tmp_path, 1000, 1200)) > 15_000  # a page with content, not a blank one
