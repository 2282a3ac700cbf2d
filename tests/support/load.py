"""Loading inputs into manifests in tests."""

from __future__ import annotations

from draguard.model.manifest import Manifest


def manifests(loaded) -> list[Manifest]:
    """The manifests of a `Loaded` (what the engine builds from its entries)."""
    return [Manifest.from_entry(entry) for entry in loaded.entries]


def where(location) -> tuple:
    """(file, line, column) of a Location."""
    return (location.file, location.line, location.column)
