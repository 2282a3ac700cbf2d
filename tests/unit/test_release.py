"""The release workflow (.github/workflows/release.yml) builds what a release is, on a tag:
the wheel and sdist checked by twine, the image from the Dockerfile under the name and tag the
chart runs, and the chart package; and the versions it relies on agree (the tag is checked
against pyproject's version, and the image tag against the chart's)."""

from __future__ import annotations

import tomllib

import yaml

from support.paths import ROOT

WORKFLOW = ROOT / ".github" / "workflows" / "release.yml"
CHART = ROOT / "deploy" / "helm" / "draguard"


def _workflow() -> dict:
    return yaml.safe_load(WORKFLOW.read_text())


def _runs(job: dict) -> str:
    return "\n".join(step.get("run", "") for step in job["steps"])


def test_it_runs_on_a_version_tag_only():
    workflow = _workflow()
    on = workflow.get("on", workflow.get(True))  # YAML 1.1 reads a bare `on` as true
    assert on == {"push": {"tags": ["v*"]}}


def test_it_builds_the_wheel_the_image_and_the_chart():
    jobs = _workflow()["jobs"]
    assert "python -m build" in _runs(jobs["python"]) and "twine check --strict" in _runs(jobs["python"])
    assert "pipx install dist/*.whl" in _runs(jobs["python"])
    [push] = [s for s in jobs["image"]["steps"] if s.get("uses", "").startswith("docker/build-push-action")]
    assert push["with"]["context"] == "." and (ROOT / "Dockerfile").is_file()
    assert push["with"]["tags"] == "ghcr.io/draguard/draguard:${{ steps.version.outputs.version }}"
    assert "helm package deploy/helm/draguard" in _runs(jobs["chart"]) and CHART.is_dir()
    assert set(jobs["release"]["needs"]) == {"python", "image", "chart"}


def test_the_versions_a_release_ties_together_agree():
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    chart = yaml.safe_load((CHART / "Chart.yaml").read_text())
    values = yaml.safe_load((CHART / "values.yaml").read_text())
    assert chart["version"] == chart["appVersion"] == version
    assert values["image"] == f"ghcr.io/draguard/draguard:{version}"


def test_the_images_copy_what_building_the_wheel_reads():
    """pyproject names README.md and the LICENSE (license-files): an image that builds the
    wheel without copying them fails at `pip wheel` (setuptools: pattern did not match)."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    needed = {"pyproject.toml", project["readme"], *project["license-files"]}
    for dockerfile in (ROOT / "Dockerfile", ROOT / "deploy" / "teardown" / "Dockerfile"):
        copied = {word for line in dockerfile.read_text().splitlines() if line.startswith("COPY ") and "--from" not in line
                  for word in line.split()[1:-1]}
        assert needed <= copied, (dockerfile, needed - copied)
    ignore = (ROOT / ".dockerignore").read_text().splitlines()
    assert ignore[0] == "*" and {f"!{name}" for name in needed} <= set(ignore)  # the context lets them through
