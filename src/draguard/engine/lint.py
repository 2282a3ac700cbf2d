"""The lint front doors, each building one `Run` (engine.run): `lint_paths` reads files,
folders, charts and stdin first (`read_inputs`, as a `Reading` says; engine.parallel reads
the same way); `lint_objects` judges objects already in memory; `lint_text` one text held in
memory. All return the same result."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, BinaryIO

from ..core.collector import cyclic_gc_paused
from ..core.config import Config
from ..core.value import Value
from ..model.manifest import Manifest
from ..sources.discover import DEFAULT_INCLUDE, Unit, expand
from ..sources.loader import Loaded, Source, load_reference, load_text, load_units
from ..sources.options import RenderOptions
from ..sources.yamlpos import Limits
from .result import INTERNAL_ERROR, LintResult
from .run import LIVE_OBJECTS, Against, Inputs, Run

if TYPE_CHECKING:
    from ..dra.inventory import Inventory

__all__ = ["INTERNAL_ERROR", "LIVE_OBJECTS", "LintResult", "Reading", "lint_objects", "lint_paths", "lint_text",
           "read_inputs", "read_units"]

#: what lint reads within: a text past 4 MiB holds no trees (sources.reread), each object
#: parsed again when judged and let go after (model.objectset.ObjectSet.done). Half the
#: memory of a large stream of small objects, for a second parse (1.45x the CPU of a 10 MB
#: stream); below 4 MiB the memory is mostly the interpreter's own, and the trees are kept
LINT_LIMITS = Limits(tree_bytes=4 * 1024 * 1024)

#: progress(stage, total) -> the callable that advances that stage (report.progress)
Progress = Callable[[str, int], Callable[[], object]]


def lint_objects(objects: Iterable[Manifest | dict], config: Config, *,
                 inventory: Inventory | None = None) -> LintResult:
    """Judge `objects` (manifests, or plain object data, numbered as documents in the order
    given) with every enabled rule, against `inventory` (else the configured one, else the
    built-in GPU inventory)."""
    return Run(config, Inputs.objects(objects), Against(inventory)).findings()


class Reading(Value):
    """How `lint_paths` reads its inputs: the files a folder holds that are read (`include`,
    `exclude`: globs), the input limits, what '-' reads (`stdin`: binary, default the
    process's), the values files and --set pairs charts are rendered with, and `reference`:
    inputs whose objects the rules read (sources.loader.load_reference) but never judge."""

    __slots__ = ("include", "exclude", "limits", "stdin", "helm_values", "helm_set", "reference")

    def __init__(self, include: tuple[str, ...] = DEFAULT_INCLUDE, exclude: tuple[str, ...] = (),
                 limits: Limits = LINT_LIMITS, stdin: BinaryIO | None = None, helm_values: tuple[str, ...] = (),
                 helm_set: tuple[str, ...] = (), reference: tuple[str, ...] = ()):
        self.include = include
        self.exclude = exclude
        self.limits = limits
        self.stdin = stdin
        self.helm_values = helm_values
        self.helm_set = helm_set
        self.reference = reference


def read_inputs(inputs: list[str], config: Config, reading: Reading, progress: Progress | None) -> Inputs:
    """`inputs` (files, folders, charts, kustomizations, '-') read as `reading` says, charts
    rendered for the config's release; the objects of `reading.reference` are there for the
    rules to read, not judged."""
    return read_units(expand(inputs, reading.include, reading.exclude), config, reading, progress)


def read_units(units: list[Unit], config: Config, reading: Reading, progress: Progress | None) -> Inputs:
    """`units` (sources.discover.expand) read as `reading` says (read_inputs)."""
    options = RenderOptions(reading.helm_values, reading.helm_set, config.kube_version)
    loaded = load_units(units, reading.limits, reading.stdin, options,
                        progress("reading", len(units)) if progress else None)
    given = Inputs.loaded(loaded)
    if reading.reference:
        read = load_reference(list(reading.reference), units, reading.include, reading.exclude, reading.limits,
                              options)
        ids = {id(m) for m in given.manifests}
        given.manifests += [Manifest.from_entry(entry) for entry in read.entries]
        given.judged = lambda m: id(m) in ids
    return given


def lint_paths(inputs: list[str], config: Config, reading: Reading = Reading(), *,
               progress: Progress | None = None) -> LintResult:
    """Read `inputs` (read_inputs) and lint what they hold. A configured inventory that cannot
    be read stops the run (UsageError, exit status 2). `progress(stage, total)`, when given,
    returns the callable that advances that stage."""
    with cyclic_gc_paused():
        given = read_inputs(inputs, config, reading, progress)
        advance = progress("checking", len(given.manifests)) if progress else None
        return Run(config, given).findings(advance=advance)


def lint_text(display: str, text: str, config: Config) -> LintResult:
    """Lint one text held in memory (a rule's example, an edited file), named `display`."""
    loaded = Loaded()
    load_text(Source(display, text), loaded)
    return Run(config, Inputs.loaded(loaded)).findings()
