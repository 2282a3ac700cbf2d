"""Where things are: the repository, its examples, the corpus, test data. Everything is inside
the repository: a clone has nothing beside it."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
DATA = Path(__file__).resolve().parent / "data"
#: public manifests that request GPUs, each with its repository, commit, path and licence in
#: SOURCES.tsv (copied whole from the project's shared corpus)
CORPUS = DATA / "corpus"


def corpus() -> Path:
    """The corpus folder. Without it (a checkout that left the test data out) the test, or
    the module that asks while it is collected, is skipped, saying so: never a collection
    error that stops the whole run."""
    if not CORPUS.is_dir():
        import pytest

        pytest.skip(f"the corpus is not there ({CORPUS})", allow_module_level=True)
    return CORPUS


def corpus_files() -> list[Path]:
    """Every manifest file of the corpus (skipped without it: corpus())."""
    return sorted(p for p in corpus().rglob("*") if p.suffix in (".yaml", ".yml", ".json"))
