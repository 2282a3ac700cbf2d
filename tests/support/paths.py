"""Where things are: the repository, its examples, the shared corpus, test data."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT.parent / "shared" / "corpus"
EXAMPLES = ROOT / "examples"
DATA = Path(__file__).resolve().parent / "data"


def corpus_files() -> list[Path]:
    """Every manifest file of the shared corpus (the tests that need it skip without it)."""
    import pytest

    if not CORPUS.is_dir():
        pytest.skip(f"shared corpus not found at {CORPUS}")
    return sorted(p for p in CORPUS.rglob("*") if p.suffix in (".yaml", ".yml", ".json"))
