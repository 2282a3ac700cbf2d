"""The HTML report rendered by headless Chromium (the Debian package): the page loads as a
self-contained file, its DOM has the summary, every finding and the fix diffs, and a
screenshot of the window size asked is taken of it."""

from __future__ import annotations

import shutil
import struct
import subprocess

import pytest

from support.paths import EXAMPLES

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="headless Chromium is not installed (apt install chromium)")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"]


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    from draguard.cli import main

    target = tmp_path_factory.mktemp("html") / "report.html"
    assert main(["lint", "--no-config", str(EXAMPLES), "-f", "html", "-o", str(target)]) == 1
    return target


def test_the_report_is_self_contained(report):
    text = report.read_text()
    assert "<script" not in text and "http://" not in text and "https://" not in text.split("<body>")[0]


def test_chromium_renders_the_summary_findings_and_fix_diffs(report):
    dom = subprocess.run([CHROMIUM, *FLAGS, "--dump-dom", report.as_uri()], capture_output=True, text=True,
                         timeout=120).stdout
    assert '<span class="error">7 error</span>' in dom
    assert dom.count('class="finding"') == 7
    assert '<span class="del">-      hostIPC: true' in dom  # the fix's diff, from the real splice


def screenshot(page, folder, width: int, height: int) -> bytes:
    """Chromium's PNG of `page` at that window size (its signature and size checked)."""
    shot = folder / "page.png"
    subprocess.run([CHROMIUM, *FLAGS, f"--window-size={width},{height}", f"--screenshot={shot}", page.as_uri()],
                   capture_output=True, timeout=120)
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert struct.unpack(">II", data[16:24]) == (width, height)
    return data


def test_chromium_takes_a_screenshot_of_it(report, tmp_path):
    assert len(screenshot(report, tmp_path, 1200, 1600)) > 20_000  # a page with content, not a blank one
