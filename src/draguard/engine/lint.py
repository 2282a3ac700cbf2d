"""The lint front doors, each building one `Run` (engine.run): `lint_paths` reads files,
folders, charts and stdin first; `lint_objects` judges objects already in memory;
`lint_text` one text held in memory. All return the same result."""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable

from ..core.collector import cyclic_gc_paused
from ..core.config import Config
from ..model.manifest import Manifest
from ..sources.discover import DEFAULT_INCLUDE, expand
from ..sources.loader import Loaded, Source, load_reference, load_text, load_units
from ..sources.render import RenderOptions
from ..sources.yamlpos import DEFAULT_LIMITS, Limits
from .result import INTERNAL_ERROR, LintResult
from .run import LIVE_OBJECTS, Against, Inputs, Run

if TYPE_CHECKING:
    from ..dra.inventory import Inventory

__all__ = ["INTERNAL_ERROR", "LIVE_OBJECTS", "LintResult", "lint_loaded", "lint_objects", "lint_paths", "lint_text"]


def lint_objects(objects: Iterable[Manifest | dict], config: Config, *,
                 inventory: Inventory | None = None) -> LintResult:
    """Judge `objects` (manifests, or plain object data, numbered as documents in the order
    given) with every enabled rule, against `inventory` (else the configured one, else the
    built-in GPU inventory)."""
    return Run(config, Inputs.objects(objects), Against(inventory)).findings()


def lint_paths(inputs: list[str], config: Config, *, include: tuple = DEFAULT_INCLUDE, exclude: tuple = (),
               limits: Limits = DEFAULT_LIMITS, stdin=None, helm_values: tuple = (),
               helm_set: tuple = (), progress=None, reference: tuple = ()) -> LintResult:
    """Read `inputs` (files, folders, charts, kustomizations, '-') and lint what they hold;
    charts are rendered for the target release with the given values files and --set pairs.
    The objects of `reference` (sources.loader.load_reference) are there for the rules to read,
    not judged. A configured inventory that cannot be read stops the run (UsageError, exit
    status 2). `progress(stage, total)`, when given, returns the callable that advances that
    stage."""
    options = RenderOptions(tuple(helm_values), tuple(helm_set), config.kube_version)
    units = expand(inputs, include, exclude)
    with cyclic_gc_paused():
        loaded = load_units(units, limits, stdin, options, progress("reading", len(units)) if progress else None)
        given = Inputs.loaded(loaded)
        if reference:
            read = load_reference(list(reference), units, include, exclude, limits, options)
            ids = {id(m) for m in given.manifests}
            given.manifests += [Manifest.from_entry(entry) for entry in read.entries]
            given.judged = lambda m: id(m) in ids
        advance = progress("checking", len(given.manifests)) if progress else None
        return Run(config, given).findings(advance=advance)


def lint_text(display: str, text: str, config: Config) -> LintResult:
    """Lint one text held in memory (a rule's example, an edited file), named `display`."""
    loaded = Loaded()
    load_text(Source(display, text), loaded)
    return Run(config, Inputs.loaded(loaded)).findings()


def lint_loaded(loaded: Loaded, config: Config, only=None, manifests: list[Manifest] | None = None,
                advance=None, *, inventory: Inventory | None = None) -> LintResult:
    """A thin shim over `Run` for `lint --jobs` (engine.parallel, written against the earlier
    entry point at the same time as the Run): what was read into `loaded` (its entries
    already made into `manifests`, when given), judging those `only` lets through. New code
    builds a Run."""
    return Run(config, Inputs.loaded(loaded, manifests, only), Against(inventory)).findings(advance=advance)
