"""Which rules a run judges with: a profile, then `select` (replaces the profile's rules),
`extendSelect` (adds to them) and `ignore` (takes away), as ruff selects rules. A selector is
a rule id, a category or `all`. Preview rules join only with `preview`; removed rules never
run. Explicit per-rule settings (`rules:` in `.draguard.yaml`) are applied after this, by
the config."""

from __future__ import annotations

from dataclasses import dataclass

from .base import Lifecycle, Profile, Rule
from .index import Entry, known
from .registry import REGISTRY

ALL = "all"


@dataclass(frozen=True)
class Selection:
    profile: Profile = Profile.RECOMMENDED
    select: tuple | None = None  # None: the profile's rules
    extend_select: tuple = ()
    ignore: tuple = ()
    preview: bool = False

    def left_out(self) -> frozenset:
        """The ids of the rules this selection does not run. ValueError, naming the selector,
        for one that names nothing, or that names only a preview rule without `preview`, or a
        removed rule (with why it was removed)."""
        for selector in (*(self.select or ()), *self.extend_select):
            _check_selected(selector, self.preview)
        for selector in self.ignore:
            _matching(selector)
        if self.select is not None:
            chosen = {rule.id for selector in self.select for rule in _matching(selector)}
        else:
            chosen = {rule.id for rule in known()
                      if self.profile is Profile.STRICT or rule.profile is self.profile}
        chosen |= {rule.id for selector in self.extend_select for rule in _matching(selector)}
        chosen -= {rule.id for selector in self.ignore for rule in _matching(selector)}
        return frozenset(rule.id for rule in known() if rule.id not in chosen or not _runs(rule, self.preview))


def _runs(rule: Entry | Rule, preview: bool) -> bool:
    return rule.lifecycle is not Lifecycle.REMOVED and (preview or rule.lifecycle is not Lifecycle.PREVIEW)


def _matching(selector: str) -> list[Entry | Rule]:
    """The rules a selector names (rules.index.known: no rule module imported)."""
    if not isinstance(selector, str):
        raise ValueError(f"a selector is a rule id, a category or '{ALL}', not {selector!r}")
    found = [rule for rule in known() if selector in (ALL, rule.id, rule.category)]
    if not found:
        raise ValueError(f"'{selector}' is neither a rule id nor a category (see `draguard rules`)")
    return found


def _check_selected(selector: str, preview: bool) -> None:
    """A rule named by its id must be able to run: said plainly where it cannot."""
    rule = REGISTRY.get(selector)
    if rule is None:
        _matching(selector)
    elif rule.lifecycle is Lifecycle.REMOVED:
        raise ValueError(f"rule {rule.id} was removed: {' '.join(rule.lifecycle_note.split())}")
    elif rule.lifecycle is Lifecycle.PREVIEW and not preview:
        raise ValueError(f"rule {rule.id} is in preview: add --preview (or `preview: true`) to run it")
