"""`--format json`: the documented contract, version 2 (README: "JSON report")."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Iterator

from ..core import jsonindent
from ..core.cached import kept
from .pieces import each, in_runs, made_in_part

VERSION = 2


def document(result, *, show_suppressed: bool = False) -> dict:
    """The report as data (what the MCP server returns; render prints it)."""
    out = {
        "version": VERSION,
        "findings": [f.as_json() for f in result.findings],
        "summary": result.summary(),
    }
    if show_suppressed:
        out["suppressed"] = [dict(f.as_json(), reason=f.suppressed_by) for f in result.suppressed]
    return out


def _item(finding, suppressed: bool) -> str:
    """A finding as it reads in the report's list (report.pieces): its leaves encoded by one
    call, its object's and fix's shared texts after them."""
    fix, obj = finding.fix, finding.obj
    # the object keyed by its fields as a tuple: hashing the ObjectRef (core.value) took 3 times as long
    placed = [("object", _shared(_OBJECTS, (obj.api_version, obj.kind, obj.namespace, obj.name), obj.as_json)),
              ("fix", _NULL if fix is None else _shared(_FIXES, fix.key(), fix.as_json))]
    if suppressed:
        placed.append(("reason", jsonindent.dumps(finding.suppressed_by)))
    return jsonindent.mapping(finding.json_fields(), placed, level=2)


_NULL = jsonindent.dumps(None)


def _shared(table: dict[Hashable, str], key: Hashable | None, data: Callable[[], object]) -> str:
    """The text of a finding's part that many findings share (its object: 4 findings an object
    in the replicated corpus; its fix: 838 different fixes of 4,928), encoded once for all
    of them by its `key` (None: not shared) and kept in `table`, as it reads in the report's
    list."""
    text = table.get(key) if key is not None else None
    if text is None:
        text = jsonindent.Encoded(_nested(data(), 3))
        if key is not None:
            kept(table, key, text, _SHARED_HELD)
    return text


#: the shared parts' texts (_shared), by their keys: an object's fields, and apart from them a
#: fix's (core.fixes.Fix.key). Apart: an object's findings come together and its text is not
#: asked for again, while a fix comes back over hundreds of objects; in one table the objects
#: emptied it of the fixes (a part of the 4,158-object tree encoded 778 fixes of 446 different
#: ones, 500 with the tables apart), and a fix costs 7 to 10 times an object to encode (about 48
#: against 4-7 us, best of 5)
_OBJECTS: dict[Hashable, str] = {}
_FIXES: dict[Hashable, str] = {}
#: an object's findings come together and the common fixes come back soon: 256 texts keep 93%
#: of 4,096's hits on the 4,158-object tree, and 4,096 of 17,000 pods' fixes held 3.5 MB
#: more at the peak of a 5 MB one-line List (tests/integration/test_live_input.py's bound)
_SHARED_HELD = 256


def pieces(findings, suppressed, sources, *, show_suppressed: bool = False, **_):
    """What a `lint --jobs` part renders of its findings (report.pieces)."""
    return made_in_part(findings, suppressed, sources, _item, show_suppressed)


def chunks(result, *, show_suppressed: bool = False, **_) -> Iterator[str]:
    """The text of `render`, piece by piece: each finding made into data and encoded as it is
    written, so that neither the report's data nor its text is ever held whole (for 3 MB of
    pods they were 8 times the input, the largest part of a run's peak)."""
    yield f'{{\n  "version": {VERSION},\n  "findings": '
    yield from _items(each(result, ((f, False) for f in result.findings), _item))
    yield ',\n  "summary": ' + _nested(result.summary(), 1)
    if show_suppressed:
        yield ',\n  "suppressed": '
        yield from _items(each(result, ((f, True) for f in result.suppressed), _item))
    yield "\n}\n"


def render(result, *, show_suppressed: bool = False, **_) -> str:
    return "".join(chunks(result, show_suppressed=show_suppressed))


def _items(items: Iterable[str]) -> Iterator[str]:
    """A list at the document's second level, as json.dumps with indent=2 writes it (each
    item encoded at that level: _item), in texts of runs of items joined by one call
    (report.pieces.in_runs)."""
    runs = in_runs(items)
    first = next(runs, None)
    if first is None:
        yield "[]"
        return
    yield "[\n    " + _BETWEEN.join(first)
    for run in runs:
        yield _BETWEEN + _BETWEEN.join(run)
    yield "\n  ]"


_BETWEEN = ",\n    "


def _nested(value: object, depth: int) -> str:
    """`value` encoded as it reads `depth` levels down (core.jsonindent: json.dumps' bytes with
    the C encoder)."""
    return jsonindent.dumps(value, level=depth)
