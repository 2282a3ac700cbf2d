"""The simulation's HTML report rendered by headless Chromium: self-contained; the pods-by-state
plot carries a series per phase, the devices plot the devices held, the Gantt chart a bar per
pod that held a device (the old revision's and the new one's told apart); the screenshot is a
page with content."""

from __future__ import annotations

import re
import subprocess
import textwrap

import pytest
import yaml

from draguard.dra.generate import generate
from draguard.rules import REGISTRY

from .test_html_report import CHROMIUM, FLAGS, screenshot

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="headless Chromium is not installed (apt install chromium)")


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    """The rollout-deadlock rule's passing and failing examples on its inventory."""
    from draguard.cli import main

    rule = REGISTRY.get("rollout-deadlock")
    folder = tmp_path_factory.mktemp("simulate-html")
    (folder / "inventory.yaml").write_text(yaml.safe_dump_all(generate(rule.example_inventory)))
    out = {}
    for name, text, status in (("completes", rule.compliant, 0), ("deadlock", rule.noncompliant, 1)):
        (folder / f"{name}.yaml").write_text(textwrap.dedent(text))
        target = folder / f"{name}.html"
        assert main(["simulate", "rollout", str(folder / f"{name}.yaml"), "--inventory", str(folder / "inventory.yaml"),
                     "-f", "html", "-o", str(target)]) == status
        out[name] = target
    return out


def _dom(path) -> str:
    return subprocess.run([CHROMIUM, *FLAGS, "--dump-dom", path.as_uri()], capture_output=True, text=True,
                          timeout=120).stdout


def test_the_pages_are_self_contained(reports):
    for path in reports.values():
        text = path.read_text()
        assert "<script" not in text and "http://" not in text and "https://" not in text


def test_chromium_renders_the_series_and_the_gantt_chart(reports):
    dom = _dom(reports["completes"])
    series = set(re.findall(r'<polyline class="series" data-series="([\w.]+)"', dom))
    assert series == {"Pending", "Starting", "Running", "Succeeded", "Terminating", "devicesAllocated"}
    assert "Allocatable per profile" in dom  # none here: both slices are always held
    holds = re.findall(r'<rect class="hold"[^>]*fill="(#[0-9a-f]+)"[^>]*data-pod="([\w-]+)"', dom)
    assert len(holds) == 4  # two old pods, then two new ones, on the two slices
    assert {pod for colour, pod in holds if colour == "#4a7bd0"} == {"inference-2-1", "inference-2-2"}
    assert "completes in 37.0 s" in dom
    stuck = _dom(reports["deadlock"])
    assert "deadlock: nothing can happen any more" in stuck and "Remedy:" in stuck
    assert stuck.count('class="chain"') == 3


def test_chromium_takes_a_screenshot_with_content(reports, tmp_path):
    assert len(screenshot(reports["completes"], tmp_path, 1000, 1200)) > 15_000
