"""Where a finding is: a file position for people, and a path for programs.

A path is a tuple of mapping keys (str) and sequence indexes (int) from the root of one YAML
document, e.g. ('spec', 'template', 'spec', 'containers', 0, 'resources', 'limits',
'nvidia.com/gpu'). The fixer, the admission webhook (which has no file) and the audit (which
has no lines) all address the same token by it. Items of a `kind: List` are addressed from
the document root too (('items', 3, 'spec', ...)), so a path always names text in the file."""

from __future__ import annotations

import json

from .cached import kept as held
from .patterns import Lazy
from .value import Value

Path = tuple[str | int, ...]

_IDENTIFIER = Lazy(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_TOKEN = Lazy(r"""\.?([A-Za-z_][A-Za-z0-9_]*)|\[(\d+)\]|\[("(?:[^"\\]|\\.)*")\]""")


def format_path(path: Path) -> str:
    """`spec.containers[0].resources.limits["nvidia.com/gpu"]`; '' for the document root.
    Each key's text is made once (_key_text): a report writes a path for each finding and
    each fix's edit, and the keys are few (a regular expression and an f-string a part took
    3-5 us a path)."""
    texts = _KEY_TEXTS
    out = []
    for part in path:
        if type(part) is str:  # exactly: a key equal to another type's (1 and True) is never looked up
            text = texts.get(part)
            out.append(_key_text(part) if text is None else text)
        elif isinstance(part, int):
            out.append(f"[{part}]")
        else:
            out.append(_key_text(part, kept=False))
    joined = "".join(out)
    return joined[1:] if joined[:1] == "." else joined  # a first key without its dot


def _key_text(key: str, kept: bool = True) -> str:
    """`.key`, or `["key"]` where it is no identifier, kept in _KEY_TEXTS when `kept`."""
    text = f".{key}" if _IDENTIFIER.match(key) else f"[{json.dumps(key, ensure_ascii=False)}]"
    return held(_KEY_TEXTS, key, text, _KEY_TEXTS_HELD) if kept else text


#: each key's text in a path (format_path), by the key
_KEY_TEXTS: dict[str, str] = {}
_KEY_TEXTS_HELD = 4096


def parse_path(text: str) -> Path:
    """The inverse of `format_path`; ValueError names the first character it cannot read."""
    parts: list[str | int] = []
    position = 0
    while position < len(text):
        match = _TOKEN.match(text, position)
        if match is None or (match.group(0).startswith(".") and not parts) or \
                (not match.group(0).startswith((".", "[")) and parts):
            raise ValueError(f"cannot read path {text!r} at character {position + 1}")
        name, index, quoted = match.groups()
        parts.append(name if name is not None else int(index) if index is not None else json.loads(quoted))
        position = match.end()
    return tuple(parts)


def json_pointer(path: Path) -> str:
    """RFC 6901 pointer (what JSON Patch and the apiserver's field errors use): `/` in a key
    is `~1`, `~` is `~0`."""
    return "".join("/" + str(part).replace("~", "~0").replace("/", "~1") for part in path)


class Location(Value):
    """A place in the input. `line`/`column` are 1-based (columns count characters) and None
    for objects that never had text (admission requests, live objects); `path` is None only
    when the place is a whole file (a read error). `document` is the 0-based index of the YAML
    document in the file."""

    __slots__ = ("file", "line", "column", "path", "document")

    def __init__(self, file: str, line: int | None = None, column: int | None = None, path: Path | None = None,
                 document: int | None = None):
        self.file = file
        self.line = line
        self.column = column
        self.path = path
        self.document = document

    @property
    def dotted(self) -> str | None:
        return None if self.path is None else format_path(self.path)
