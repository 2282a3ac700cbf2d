"""Names a device publishes twice: bare and as '<driver>/name'. Its own module, not the device
model's (dra.devices): the rule that reports them (rules.cel device-name-twice) judges every
ResourceSlice of a lint, and importing the device model for it (its eight dataclasses: 6 ms
of CPU after the rule modules) was paid again by each part of a `lint --jobs` run."""

from __future__ import annotations


def published_twice(raw: dict, driver: str) -> list[str]:
    """The names of a device's attributes or capacities (`raw`) published both bare and as
    '<driver>/name': one name to a selector (rules.cel device-name-twice reports them)."""
    return [k for k in raw if isinstance(k, str) and "/" not in k and f"{driver}/{k}" in raw]
