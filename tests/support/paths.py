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


def corpus_files() -> list[Path]:
    """Every manifest file of the corpus."""
    return sorted(p for p in CORPUS.rglob("*") if p.suffix in (".yaml", ".yml", ".json"))
