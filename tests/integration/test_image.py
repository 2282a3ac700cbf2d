"""The two images built from the repository's Dockerfiles by `deploy/image/build.sh` (buildah,
no Docker engine) and run: the webhook image as the chart names it (tag, non-root UID,
exec-form entrypoint, port) lints and denies a legacy GPU pod over HTTPS; the teardown
image runs its helper as nobody with nothing but the standard library and NVML's bindings.
Marked `image` (about 3 min, debootstrap and two pip installs): CI runs it after the default
run."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest
import yaml

from support.webhook import LEGACY_DEPLOYMENT, post, review, running_webhook

ROOT = Path(__file__).resolve().parents[2]
VERSION = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
WEBHOOK_IMAGE = f"ghcr.io/draguard/draguard:{VERSION}"
TEARDOWN_IMAGE = f"localhost/draguard-teardown:{VERSION}"
MISSING = [tool for tool in ("buildah", "debootstrap") if shutil.which(tool) is None]
ENV = {**os.environ, "STORAGE_DRIVER": "vfs", "BUILDAH_ISOLATION": "chroot"}

pytestmark = [pytest.mark.image,
              pytest.mark.skipif(bool(MISSING), reason=f"{' and '.join(MISSING)} not installed (apt-get install "
                                                      "buildah debootstrap): the images cannot be built here"),
              pytest.mark.skipif(os.geteuid() != 0, reason="buildah's chroot isolation needs root here")]


def buildah(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(["buildah", *args], capture_output=True, text=True, env=ENV, check=check)


@pytest.fixture(scope="module")
def archives(tmp_path_factory):
    out = tmp_path_factory.mktemp("images")
    built = subprocess.run([str(ROOT / "deploy/image/build.sh"), str(out)], capture_output=True, text=True, env=ENV)
    assert built.returncode == 0, built.stderr[-4000:]
    return out


@pytest.fixture
def container(archives):
    """A working container of an image, removed afterwards."""
    made = []

    def make(image: str) -> str:
        made.append(buildah("from", "--quiet", image).stdout.strip())
        return made[-1]
    yield make
    for name in made:
        buildah("rm", name, check=False)


def config(image: str) -> dict:
    return json.loads(buildah("inspect", "--type", "image", image).stdout)["OCIv1"]["config"]


def test_the_archives_are_oci_images(archives):
    for name in (f"draguard-{VERSION}.oci.tar", f"draguard-teardown-{VERSION}.oci.tar"):
        listing = subprocess.run(["tar", "-tf", str(archives / name)], capture_output=True, text=True, check=True).stdout
        assert "oci-layout" in listing.split() and "index.json" in listing.split(), name


def test_the_webhook_image_is_the_one_the_chart_names(archives):
    values = yaml.safe_load((ROOT / "deploy/helm/draguard/values.yaml").read_text())
    assert values["image"] == WEBHOOK_IMAGE
    settings = config(WEBHOOK_IMAGE)
    assert settings["User"] == "65532:65532"  # non-root, the chart's runAsUser
    assert settings["Entrypoint"] == ["draguard"] and "8443/tcp" in settings["ExposedPorts"]


def test_the_webhook_image_lints_as_the_readme_does(container):
    name = container(WEBHOOK_IMAGE)
    mount = ["--volume", f"{ROOT / 'examples'}:/examples:ro"]
    version = buildah("run", "--user", "65532:65532", name, "--", "draguard", "--version")
    assert version.stdout.split() == ["draguard", VERSION]
    clean = buildah("run", "--user", "65532:65532", *mount, name, "--", "draguard", "lint", "/examples/dra-inference",
                    check=False)
    assert clean.returncode == 0, clean.stdout + clean.stderr
    legacy = buildah("run", "--user", "65532:65532", *mount, name, "--", "draguard", "lint", "/examples/legacy-multitenant",
                     check=False)
    assert legacy.returncode == 1 and "legacy-gpu-resource" in legacy.stdout, legacy.stdout + legacy.stderr


def test_the_webhook_image_denies_a_legacy_gpu_pod_over_https(container, monkeypatch):
    """`buildah run` shares the host's network under chroot isolation: the server listens on
    loopback as it would on the pod's address."""
    name = container(WEBHOOK_IMAGE)
    launcher = ("buildah", "run", "--user", "65532:65532", name, "--", "draguard")
    monkeypatch.setenv("STORAGE_DRIVER", "vfs")
    monkeypatch.setenv("BUILDAH_ISOLATION", "chroot")
    with running_webhook(command=launcher) as (url, ca, _):
        status, answer = post(url, ca, review(LEGACY_DEPLOYMENT))
    assert status == 200 and answer["response"]["allowed"] is False
    assert "legacy-gpu-resource" in answer["response"]["status"]["message"]


def test_the_teardown_image_runs_its_helper_with_the_standard_library_only(container):
    name = container(TEARDOWN_IMAGE)
    settings = config(TEARDOWN_IMAGE)
    assert settings["User"] == "65534:65534" and settings["Entrypoint"] == ["draguard-teardown"]
    table = buildah("run", "--user", "65534:65534", name, "--", "draguard-teardown", "servers", "--json")
    assert any(server["name"] == "vllm" for server in json.loads(table.stdout))
    # installed without dependencies: the lint stack's libraries are not there to import
    probe = buildah("run", name, "--", "python3", "-c", "import yaml", check=False)
    assert probe.returncode != 0 and "No module named 'yaml'" in probe.stderr
    nvml = buildah("run", name, "--", "python3", "-c", "import pynvml", check=False)
    assert nvml.returncode == 0, nvml.stderr
