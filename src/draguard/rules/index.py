"""The rule catalog's index: each rule's id, the module that defines it and the metadata a run
decides with before it judges anything (category, profile and lifecycle for the selection;
the kinds it judges, what it needs and whether it is written for authored manifests only),
so that a run imports the module of a rule only when an object of a kind it judges is there.

Importing every rule module costs a one-file lint more than judging the file does (each
brings its models, and those the CEL engine, the allocator and the simulator). The index is
derived from the catalog itself, once, and kept in the per-user cache (core.usercache) with
the size and modification time of every draguard module the catalog imported: an edited rule,
or a model whose kinds a rule targets, is a miss, and the index is built again by importing
them all. With the cache off every run builds it, which is the cost of importing them all.
Everything that shows the catalog (`draguard rules`, the docs, SARIF, the policies) iterates
the registry, which imports every module; the index never replaces a rule's metadata there."""

from __future__ import annotations

import os
import sys
from functools import lru_cache
from typing import Any, NamedTuple

from .. import __version__
from ..core.usercache import cached_json
from .base import Lifecycle, Needs, Profile, Rule
from .registry import REGISTRY, load_catalog

Kind = tuple[str, str]


class Entry(NamedTuple):
    """One rule as the index holds it. `targets` None: every object."""

    id: str
    module: str
    category: str
    profile: Profile
    lifecycle: Lifecycle
    needs: Needs
    targets: frozenset[Kind] | None
    has_check: bool
    authored_only: bool


def known() -> list[Entry | Rule]:
    """Every rule, in the catalog's order (category, then id): the registered rule where its
    module is imported already (its metadata as it is now), else the index's entry; rules
    registered from elsewhere too."""
    loaded = {rule.id: rule for rule in REGISTRY.loaded()}
    rules: list[Entry | Rule] = [loaded.pop(rule_id, entry) for rule_id, entry in entries().items()]
    return sorted([*rules, *loaded.values()], key=lambda rule: (rule.category, rule.id))


def judges_any(rule: Entry | Rule, kinds: set[Kind] | None) -> bool:
    """Whether `rule` judges an object of one of `kinds` (None: of any kind)."""
    return rule.targets is None or kinds is None or not rule.targets.isdisjoint(kinds)


@lru_cache(maxsize=1)
def entries() -> dict[str, Entry]:
    """Every rule of the catalog by id, in the catalog's order (category, then id)."""
    return _parsed(cached_json("rules", f"index {__version__} {os.path.dirname(__file__)}", _build, _current)["rules"])


def _parsed(rows: list[list[Any]]) -> dict[str, Entry]:
    found = {}
    for rule_id, module, category, profile, lifecycle, needs, targets, has_check, authored_only in rows:
        found[str(rule_id)] = Entry(
            str(rule_id), str(module), str(category), Profile(profile), Lifecycle(lifecycle), Needs(needs),
            None if targets is None else frozenset((str(g), str(k)) for g, k in targets),
            bool(has_check), bool(authored_only))
    return found


def _build() -> dict[str, list[list[Any]]]:
    """The index of the whole catalog (every rule module imported), with the stamps of every
    draguard module loaded by then: what a rule's metadata may have been computed from."""
    load_catalog()
    rules: list[list[Any]] = [
        [rule.id, type(rule).__module__, rule.category, rule.profile.value, rule.lifecycle.value, rule.needs.value,
         None if rule.targets is None else sorted([g, k] for g, k in rule.targets), rule.has_check,
         rule.authored_only]
        for rule in REGISTRY]
    return {"files": _stamps(), "rules": rules}


def _stamps() -> list[list[Any]]:
    stamps: list[list[Any]] = []
    for name, module in sorted(sys.modules.items()):
        path = getattr(module, "__file__", None)
        if (name == "draguard" or name.startswith("draguard.")) and path:
            status = os.stat(path)
            stamps.append([path, status.st_size, status.st_mtime_ns])
    return stamps


def _current(value: Any) -> bool:
    """Whether a cached index was built from the draguard modules as they are now and reads
    as an index (a damaged entry is stale: it is built again)."""
    try:
        for path, size, mtime in value["files"]:
            status = os.stat(path)
            if status.st_size != size or status.st_mtime_ns != mtime:
                return False
        return bool(_parsed(value["rules"]))
    except (OSError, TypeError, ValueError, KeyError):
        return False
