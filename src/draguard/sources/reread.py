"""An object of a large text parsed again from that text when it is read, rather than held.

The positioned tree of a small object costs about ten times its text (a dict per mapping with
its positions and path: 2.8 KiB for a pod of 290 bytes), and the text is held anyway (reports
quote it, fix splices it). So a text larger than `Limits.tree_bytes` keeps no trees: the load
parses each object once for what it is (its kind, its problems) and keeps where its text is;
the object's tree is parsed again from there when a rule reads it, and dropped once its own
rules are done (model.manifest.Manifest.release). What is parsed again is the very text that
was parsed, with its positions where they were: the same data, the same marks.

Only a text that is parsed alone as it was within the stream is re-read this way: a document
that is a mapping starting a line (yamlpos.Document.span) in a stream without directives (a
`%TAG` would change what its tags mean), and an item of a `kind: List` (sources.lists), which
was parsed alone in the first place. Anything else keeps its tree."""

from __future__ import annotations

from .yamlpos import Limits, Paths, parse_stream

#: the paths of every object parsed again, shared: a finding keeps its container's path
_PATHS = Paths()


class Reread:
    """Where an object's text is in `source.text` (a loader.Source: it holds the text, this
    holds no copy), and how it was parsed: `pad` spaces before it (a block
    item of a List keeps its columns), `lines` before its first line (a document of a
    stream), at `root` in its document, within `limits`. `api_version` and `kind` are what
    every index asks of every object, kept so that asking parses nothing."""

    __slots__ = ("source", "start", "end", "pad", "lines", "root", "limits", "api_version", "kind")

    def __init__(self, source, start: int, end: int, pad: int, lines: int, root: tuple, limits: Limits,
                 data: dict | None = None):
        self.source, self.start, self.end, self.pad, self.lines = source, start, end, pad, lines
        self.root, self.limits = root, limits
        api, kind = (data.get("apiVersion"), data.get("kind")) if data is not None else (None, None)
        self.api_version = api if isinstance(api, str) else ""
        self.kind = kind if isinstance(kind, str) else ""

    def text(self) -> str:
        """The object's text as it was parsed (its first line padded as it was)."""
        return " " * self.pad + self.source.text[self.start:self.end]

    def data(self) -> dict:
        """The object's data, parsed again: equal to what the load parsed, positions and paths
        included (its problems were said then). A text that no longer parses to an object
        (it cannot change: sources are never written) is a bug, said as one."""
        documents, _ = parse_stream(self.text(), self.limits, self.root, self.lines, _PATHS)
        data = documents[0].data if documents else None
        if not isinstance(data, dict):
            raise RuntimeError(f"text at {self.start}-{self.end} no longer parses to the object read there")
        return data
