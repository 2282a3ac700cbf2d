"""Where a finding is: a file position for people, and a path for programs.

A path is a tuple of mapping keys (str) and sequence indexes (int) from the root of one YAML
document, e.g. ('spec', 'template', 'spec', 'containers', 0, 'resources', 'limits',
'nvidia.com/gpu'). The fixer, the admission webhook (which has no file) and the audit (which
has no lines) all address the same token by it. Items of a `kind: List` are addressed from
the document root too (('items', 3, 'spec', ...)), so a path always names text in the file."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

Path = tuple[str | int, ...]

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_TOKEN = re.compile(r"""\.?([A-Za-z_][A-Za-z0-9_]*)|\[(\d+)\]|\[("(?:[^"\\]|\\.)*")\]""")


def format_path(path: Path) -> str:
    """`spec.containers[0].resources.limits["nvidia.com/gpu"]`; '' for the document root."""
    out = []
    for part in path:
        if isinstance(part, int):
            out.append(f"[{part}]")
        elif _IDENTIFIER.match(part):
            out.append(f".{part}" if out else part)
        else:
            out.append(f"[{json.dumps(part, ensure_ascii=False)}]")
    return "".join(out)


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


@dataclass(frozen=True, slots=True)
class Location:
    """A place in the input. `line`/`column` are 1-based (columns count characters) and None
    for objects that never had text (admission requests, live objects); `path` is None only
    when the place is a whole file (a read error). `document` is the 0-based index of the YAML
    document in the file."""

    file: str
    line: int | None = None
    column: int | None = None
    path: Path | None = None
    document: int | None = None

    def __reduce__(self) -> tuple[type["Location"], tuple[object, ...]]:
        """Pickled as the class called with the fields (every finding of a `--jobs` part is
        sent back): a slotted dataclass's own state functions list its fields each time,
        half of what sending a finding cost."""
        return Location, (self.file, self.line, self.column, self.path, self.document)

    @property
    def dotted(self) -> str | None:
        return None if self.path is None else format_path(self.path)
