"""The real helm and kustomize, built from their Go modules by harness/renderers/build.sh."""

from __future__ import annotations

import shutil
from pathlib import Path

from support.harness import built

BUILD = Path(__file__).resolve().parents[2] / "harness" / "renderers" / "build.sh"


def renderers_dir() -> str | None:
    """The folder holding helm and kustomize, or None without Go (they cannot be built)."""
    if shutil.which("go") is None:
        return None
    return built(BUILD)
