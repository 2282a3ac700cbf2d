"""Which rules a run judges with: a profile, then `select` (replaces the profile's rules),
`extendSelect` (adds to them) and `ignore` (takes away), as ruff selects rules. A selector is
a rule id, a category or `all`. Preview rules join only with `preview`; removed rules never
run. Explicit per-rule settings (`rules:` in `.draguard.yaml`) are applied after this, by
the config.

The checks a `.draguard.yaml` declares (rules.custom) are selected like the built-in rules,
by id, by their category `custom` or by `all`, as ruff selects a plugin's rules by code: the
user declared them to run, so both profiles hold them (a `select` that names none of them
leaves them out, as it leaves out the profile's other rules)."""

from __future__ import annotations

from .base import Lifecycle, Profile, Rule
from .index import Entry, known
from .registry import REGISTRY
from ..core.value import Value

ALL = "all"


class Selection(Value):
    """Which rules a run judges with: the profile, the selected, added and ignored ids."""

    __slots__ = ("profile", "select", "extend_select", "ignore", "preview", "checks")

    def __init__(self, profile: Profile = Profile.RECOMMENDED, select: tuple[str, ...] | None = None,
                 extend_select: tuple[str, ...] = (), ignore: tuple[str, ...] = (), preview: bool = False,
                 checks: tuple[Rule, ...] = ()):
        self.profile = profile
        self.select = select  # None: the profile's rules
        self.extend_select = extend_select
        self.ignore = ignore
        self.preview = preview
        # the config's own checks (rules.custom.UserCheck), selected beside the built-in rules
        self.checks = checks

    def left_out(self) -> frozenset[str]:
        """The ids of the rules this selection does not run. ValueError, naming the selector,
        for one that names nothing, or that names only a preview rule without `preview`, or a
        removed rule (with why it was removed)."""
        rules = (*known(), *self.checks)  # the index's entries: no rule module imported
        for selector in (*(self.select or ()), *self.extend_select):
            _check_selected(rules, selector, self.preview)
        for selector in self.ignore:
            _matching(rules, selector)
        if self.select is not None:
            chosen = {rule.id for selector in self.select for rule in _matching(rules, selector)}
        else:
            chosen = {rule.id for rule in rules if self.profile is Profile.STRICT or rule.profile is self.profile}
        chosen |= {rule.id for selector in self.extend_select for rule in _matching(rules, selector)}
        chosen -= {rule.id for selector in self.ignore for rule in _matching(rules, selector)}
        return frozenset(rule.id for rule in rules if rule.id not in chosen or not _runs(rule, self.preview))


def _runs(rule: Entry | Rule, preview: bool) -> bool:
    return rule.lifecycle is not Lifecycle.REMOVED and (preview or rule.lifecycle is not Lifecycle.PREVIEW)


def _matching(rules: tuple[Entry | Rule, ...], selector: str) -> list[Entry | Rule]:
    if not isinstance(selector, str):
        raise ValueError(f"a selector is a rule id, a category or '{ALL}', not {selector!r}")
    found = [rule for rule in rules if selector in (ALL, rule.id, rule.category)]
    if not found:
        raise ValueError(f"'{selector}' is neither a rule id nor a category (see `draguard rules`)")
    return found


def _check_selected(rules: tuple[Entry | Rule, ...], selector: str, preview: bool) -> None:
    """A rule named by its id must be able to run: said plainly where it cannot."""
    rule = next((r for r in rules if r.id == selector), None)
    if rule is None:
        _matching(rules, selector)
    elif rule.lifecycle is Lifecycle.REMOVED:
        note = getattr(REGISTRY.get(rule.id), "lifecycle_note", "")  # its module imported for the note
        raise ValueError(f"rule {rule.id} was removed: {' '.join(note.split())}")
    elif rule.lifecycle is Lifecycle.PREVIEW and not preview:
        raise ValueError(f"rule {rule.id} is in preview: add --preview (or `preview: true`) to run it")
