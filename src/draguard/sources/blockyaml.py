"""The block-style subset of YAML most Kubernetes manifests are written in, read straight
from the text's lines into the positioned trees `yamlpos` builds.

libyaml's composer makes a Node and two Mark objects for every node, and yamlpos then turns
them into YMap/YSeq: the Python objects made only to be thrown away were most of a parse
(cProfile of a lint of 20,000 objects). This reader makes only the trees. It reads block
mappings and `- ` sequences by indentation, plain scalars (over lines too), quoted ones
(single, double with the escapes libyaml decodes, over lines too), `{}`, flow sequences of
scalars (`["sh", "-c"]`, over lines too where each line ends after a comma), comments, `---` and `...`; it resolves plain scalars
with the very resolver libyaml's path uses (YAML 1.1 safe: `0o7`, `1:30`, `yes`, `~`, ...).
A document holding anything else (other flow collections, anchors, aliases, tags, merge
keys, block scalars, a `?` key, a root scalar, odd indentation, ...), or near a `Limits`
refusal, is read by libyaml instead, from its own text with its lines offset; where libyaml
finds it broken, from there to the end (a quote left open over a `---` line). Both readers
give the same documents, values, positions, paths and problems
(tests/unit/sources/test_blockyaml.py compares them). A text with a directive, or with
characters libyaml counts lines or columns of otherwise or may refuse (CR, NEL, LS, PS, a
BOM, a tab, control characters), is read by libyaml whole.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable, Generator, Sequence
from sys import intern

from ..core.cached import kept
from ..core.patterns import Lazy

from .resolver import FLOAT, INT, STR, tag_of, value_of
from .yamlpos import (DEFAULT_LIMITS, BlockMap, Document, Limits, ParseProblem, Paths, YMap, YSeq, _sealed, _short,
                      has_directive)

#: what libyaml's path reads on its own: a generator of a slice's documents that adds its
#: problems to the list given and returns True where a syntax error ended the stream
Fallback = Callable[..., Generator[Document, None, bool]]

def _line_safe(text: str) -> bool:
    """True when every character is one this reader counts lines and columns of as libyaml
    does: no CR/NEL/LS/PS (line breaks to libyaml), BOM, tab or control character. Python's
    printable characters (no Cc, Cf, Cs, Co, Cn, Zl, Zp, nor a space but ' ') are all printable
    to libyaml; what else YAML prints (a no-break space, a soft hyphen) is left to libyaml.
    An ASCII text (nearly every manifest) is checked as bytes, with nothing left once its
    printable characters and line feeds are deleted: a quarter of the time of the other way."""
    if text.isascii():
        return not text.encode("ascii").translate(None, _ASCII_SAFE)
    return text.replace("\n", "").isprintable()


#: the ASCII characters str.isprintable accepts (a space to `~`), and the line feed
_ASCII_SAFE = bytes(range(0x20, 0x7F)) + b"\n"


class _Unsure(Exception):
    """The document holds something this reader does not read with certainty."""


#: plain scalars' values by their text: the same few hundred repeat across a tree (kinds,
#: images, booleans, small numbers); bounded like yamlpos.Paths
_PLAIN: dict[str, object] = {}
_PLAIN_SIZE = 4096
#: a larger document is libyaml's: this reader holds three objects a line while it builds,
#: and for one document of 300,000 lines (3.8 MB) that peaked 90 MB above libyaml's nodes.
#: The API server stores no object past 1.5 MiB (etcd's request limit), so manifests are
#: smaller; a List is split into its items before either reader sees it (sources.lists)
LARGEST_PART = 1 << 20
#: the common lines by their text from the key on: `key: value` of a scalar alone on the
#: line (key, value, the value's column past the key's: plain, quoted, a comment after it) and
#: `key:` with its value below (key, None, 0); bounded like _PLAIN
_LINES: dict[str, tuple[str, object, int]] = {}
#: sequence items' lines of a scalar alone (`- bash`) by their text: (value, the value's column
#: past the dash's); bounded like _PLAIN
_ITEMS: dict[str, tuple[object, int]] = {}
#: first characters after which the safe resolver can only answer str (yaml.resolver's
#: implicit resolvers are keyed by first character; '' resolves to null)
_MAYBE_TYPED = frozenset("-+.0123456789yYnNtTfFoO~<=")
_NOT_FIRST = frozenset("[]{}#&*!|>'\"%@`,?:")  # indicators a plain scalar or key here may not start with
#: of those, the two that start a plain scalar where no space follows (`value: :8080`): in block
#: context, as `-` does (PyYAML's Scanner.check_plain, libyaml's yaml_parser_fetch_next_token)
_FIRST_IF_FOLLOWED = frozenset("?:")
#: what ends a plain scalar in flow context here (or stops this reader: `#`, a nested collection)
_FLOW_ENDS = frozenset(":,{}[]#")


def _plain(text: str):
    """A plain scalar's value, resolved as libyaml's path resolves it (sources.resolver)."""
    hit = _PLAIN.get(text, _PLAIN)
    if hit is not _PLAIN:
        return hit
    if text[0] not in _MAYBE_TYPED:
        value: object = _short(text)
    else:
        tag = tag_of(text)
        if tag == STR:
            value = _short(text)
        elif (tag == INT or tag == FLOAT) and len(text) > 1000:
            raise _Unsure  # past Python's digits limit: libyaml's path says so with its position
        else:
            value = value_of(tag, text)
    return kept(_PLAIN, text, value, _PLAIN_SIZE)


#: double-quoted escapes libyaml decodes (scanner.c, yaml_parser_scan_flow_scalar), bar
#: `\/` and `\'`, which this reader leaves to it
_ESCAPES = {"0": "\0", "a": "\x07", "b": "\x08", "t": "\t", "n": "\n", "v": "\x0b", "f": "\x0c", "r": "\r",
            "e": "\x1b", " ": " ", '"': '"', "\\": "\\", "N": "\x85", "_": "\xa0", "L": "\u2028", "P": "\u2029"}
_ESCAPE = Lazy(r"\\(x[0-9A-Fa-f]{2}|u[0-9A-Fa-f]{4}|U[0-9A-Fa-f]{8}|.?)", re.S)


def _escaped(match: re.Match[str]) -> str:
    code = match.group(1)
    if len(code) > 1:
        number = int(code[1:], 16)
        if 0xD800 <= number <= 0xDFFF or number > 0x10FFFF:
            raise _Unsure
        return chr(number)
    hit = _ESCAPES.get(code)
    if hit is None:
        raise _Unsure
    return hit


#: the escapes of nearly every double-quoted scalar over lines (yaml.safe_dump's: a line break,
#: a quote, a space kept at a line's start, a tab), replaced as text before the pattern reads
#: the rest: a call of _escaped for each was a tenth of reading such scalars
_COMMON_ESCAPES = tuple(("\\" + code, _ESCAPES[code]) for code in 'n" t')


def _unescape(text: str) -> str:
    """A double-quoted scalar's line with its escapes decoded. Where no `\\\\` is in it, every
    backslash starts an escape of two characters that overlaps no other, and no value
    replaced holds a backslash: the common ones are replaced whole, the pattern decodes what
    is left."""
    if "\\" not in text:
        return text
    if "\\\\" not in text:
        for escape, value in _COMMON_ESCAPES:
            text = text.replace(escape, value)
        if "\\" not in text:
            return text
    return _ESCAPE.sub(_escaped, text)


def _decoded(text: str, double: bool) -> str:
    """A quoted scalar's text (one line of it) decoded: its escapes in double quotes, `''`
    in single ones."""
    return _unescape(text) if double else text.replace("''", "'")


def closing(text: str, quote: str) -> int:
    """Where the quoted scalar opening `text` closes (-1: not in `text`); a line of a
    scalar over lines is looked for alone, after its quote (a quote at a line's start
    cannot be escaped by what ends the line before)."""
    at = 1
    while True:
        end = text.find(quote, at)
        if end < 0:
            return -1
        if quote == "'":
            if text[end + 1:end + 2] != "'":
                return end
            at = end + 2
            continue
        before = end
        while text[before - 1] == "\\":
            before -= 1
        if (end - before) % 2 == 0:
            return end
        at = end + 1


def _trailing_backslashes(text: str) -> int:
    return len(text) - len(text.rstrip("\\"))


def _folded(content: str, double: bool) -> str:
    """A quoted scalar's value from its text between the quotes, folded over lines as
    PyYAML's scanner folds it (scan_flow_scalar_spaces/_breaks): a line break between two
    lines is a space, each blank line a newline; a double-quoted line ending in `\\` joins
    the next with nothing."""
    parts = content.split("\n")
    out: list[str] = []
    blanks, joined, last = 0, False, len(parts) - 1
    for i, part in enumerate(parts):
        if i:
            part = part.lstrip(" ")
            if not part and i < last:
                blanks += 1
                continue
            out.append("\n" * blanks if blanks or joined else " ")
        joined = False
        if i < last:
            if double and _trailing_backslashes(part) % 2:
                part, joined = part[:-1], True
            else:
                stripped = part.rstrip(" ")
                if double and stripped != part and _trailing_backslashes(stripped) % 2:
                    raise _Unsure  # an escaped space before the line break
                part = stripped
        out.append(_decoded(part, double))
        blanks = 0
    return "".join(out)


def _one_line(text: str) -> tuple[str, str]:
    """(value, what follows) of a quoted scalar closed on its line."""
    end = closing(text, text[0])
    if end < 0:
        raise _Unsure
    return _decoded(text[1:end], text[0] == '"'), text[end + 1:]


def _ends_on_its_line(text: str) -> bool:
    """Whether the scalar starting `text` ends on its line. A quoted one may go on over lines
    that are no content line (one whose text starts with `#` is the scalar's, not a comment),
    so that the next content line being the next one does not tell: such a line is not
    remembered by its text (`_LINES`, `_ITEMS`)."""
    return (text[0] != '"' and text[0] != "'") or closing(text, text[0]) >= 0


def _blank_rest(rest: str) -> bool:
    """Nothing but spaces and a comment after a scalar or marker."""
    stripped = rest.lstrip(" ")
    return not stripped or (stripped[0] == "#" and len(stripped) < len(rest))


def _entry(text: str) -> bool:
    """A `- ` sequence entry (or a bare `-`)."""
    return text[0] == "-" and (len(text) == 1 or text[1] == " ")


def _spaces_past(text: str, at: int) -> int:
    """The offset of the first character from `at` on that is not a space (_Unsure at the line's end)."""
    while at < len(text) and text[at] == " ":
        at += 1
    if at >= len(text):
        raise _Unsure  # a flow collection over lines
    return at


def _flow_scalar(text: str, at: int, ends: str) -> tuple[str, bool, int]:
    """(its text, quoted, the offset of what follows it past spaces: one of `ends`) of a
    scalar in flow context at offset `at` (an item of a flow sequence, a key or value of a
    flow mapping), a quoted one decoded; _Unsure where anything else follows it on its line."""
    first = text[at]
    if first == "'" or first == '"':
        value, rest = _one_line(text[at:])
        end, quoted = len(text) - len(rest), True
    else:
        end = at
        while end < len(text) and text[end] not in _FLOW_ENDS:
            end += 1
        value, quoted = text[at:end].rstrip(" "), False
        if not value or first in _NOT_FIRST or (first == "-" and text[at + 1:at + 2] in ("", " ")):
            raise _Unsure  # an empty item, an indicator (`- `: a block entry, libyaml's error here)
    end = _spaces_past(text, end)
    if text[end] not in ends:
        raise _Unsure  # a comment, a nested collection, a pair in a sequence, a quote closed mid-scalar
    return value, quoted, end


class _Reader:
    """One document: its lines (`body`, the first at 1-based line `base`) and of them the
    content lines: `nums` (1-based lines), `cols` (their indentation) and `texts` (each
    from its first character, trailing spaces kept). Builds what yamlpos._Builder builds,
    in the same order (paths are shared in it). A node's `indent` is the column of the
    block it is in: a scalar goes on over the lines indented past it."""

    def __init__(self, body: list[str], base: int, nums: list[int], cols: Sequence[int], texts: Sequence[str],
                 limits: Limits, paths: Paths, line_offset: int):
        self.body, self.base = body, base
        self.nums, self.cols, self.texts = nums, cols, texts
        self.n = len(texts)
        self.max_depth = limits.max_depth
        self.shared = paths.sharing()
        self.offset = line_offset
        self.count = 0
        self.problems: list[ParseProblem] = []
        self.dropped_any = False  # a live object's managedFields read and left out of the tree
        self.unlocated = False  # a flow sequence read over lines, or a flow mapping: fix.located does not look there

    def node(self, k: int, col: int, text: str, path: tuple, indent: int):
        """(value, next content line) of the node whose text starts at column `col` of line `k`."""
        if _entry(text):
            return self.sequence(k, col, text, path)
        value, alone, after = self.scalar(k, text, indent)
        if not alone:
            return self.mapping(k, col, text, path)
        self.count += 1
        return value, after

    def scalar(self, k: int, text: str, indent: int) -> tuple[object, bool, int]:
        """(value, True, next content line) of a scalar starting `text` on line `k`;
        (None, False, k) where `text` is a mapping entry."""
        first = text[0]
        if first == "'" or first == '"':
            value, rest, after = self.quoted(k, text, indent)
            if rest[:1] == ":" and (len(rest) == 1 or rest[1] == " "):
                if after != k + 1:
                    raise _Unsure  # a key over lines
                return None, False, k
            if not _blank_rest(rest):
                raise _Unsure
            return _short(value), True, after
        if text[-1] == ":" or text.find(": ") >= 0:
            return None, False, k
        if (first in _NOT_FIRST and (first not in _FIRST_IF_FOLLOWED or text[1:2] in ("", " "))) or \
                (first == "-" and text[1:2] in ("", " ")):
            raise _Unsure  # `-` then a space or the line's end: a block entry, libyaml's error here
        value, after = self.plain(k, text, indent)
        return value, True, after

    def plain(self, k: int, text: str, indent: int):
        """A plain scalar and its continuation lines (indented past `indent`), folded."""
        cut = text.find(" #")
        if cut >= 0:  # a comment ends it
            return _plain(text[:cut].rstrip(" ")), k + 1
        nums, cols, texts, n = self.nums, self.cols, self.texts, self.n
        k += 1
        if k >= n or cols[k] <= indent:
            return _plain(text.rstrip(" ")), k
        chunks = [text.rstrip(" ")]
        while k < n and cols[k] > indent:
            line = texts[k]
            if line[-1] == ":" or ": " in line:
                raise _Unsure  # libyaml's error
            gap = nums[k] - nums[k - 1] - 1
            if gap and any(self.body[i - self.base].strip(" ") for i in range(nums[k - 1] + 1, nums[k])):
                raise _Unsure  # a comment line ends the scalar
            chunks.append("\n" * gap if gap else " ")
            k += 1
            cut = line.find(" #")
            if cut >= 0:
                chunks.append(line[:cut].rstrip(" "))
                break
            chunks.append(line.rstrip(" "))
        return _plain("".join(chunks)), k

    def quoted(self, k: int, text: str, indent: int) -> tuple[str, str, int]:
        """(value, what follows it on its last line, next content line) of a quoted scalar."""
        end = closing(text, text[0])
        if end >= 0:
            return _one_line(text) + (k + 1,)
        body, at = self.body, self.nums[k] - self.base
        last, quote, lines = self.nums[-1] - self.base, text[0], [text]
        while end < 0:
            at += 1
            if at > last:
                raise _Unsure  # past the document's content
            raw = body[at]
            line = raw.lstrip(" ")
            if line and len(raw) - len(line) <= indent:
                raise _Unsure  # not indented past its block
            lines.append(raw)
            if quote in line:  # looked for in this line alone: a long scalar is read once
                end = closing(quote + raw, quote) - 1
        text = "\n".join(lines)
        end += len(text) - len(raw)
        return _folded(text[1:end], quote == '"'), text[end + 1:], bisect_right(self.nums, self.base + at)

    def key(self, text: str, col: int) -> tuple[str, int, str]:
        """(key, column of its colon, what follows the colon) of a mapping entry's text."""
        if text[0] == "'" or text[0] == '"':
            key, rest = _one_line(text)
            if rest[:1] != ":" or (len(rest) > 1 and rest[1] != " ") or len(key) > 1000:
                raise _Unsure
            return intern(key), col + len(text) - len(rest), rest[1:]
        colon = text.find(": ")
        if colon < 0:
            colon = len(text) - 1
            if text[colon] != ":":
                raise _Unsure  # a scalar where a key should be
        key = text[:colon]
        if text[0] in _NOT_FIRST or _entry(text) or " #" in key or key[-1] == " " or key == "<<" or colon > 1000:
            raise _Unsure  # a comment, a merge key, past libyaml's 1,024 characters of a simple key
        return intern(key), col + colon, text[colon + 1:]

    def collection(self, cls, path: tuple, line: int, col: int):
        if len(path) >= self.max_depth:
            raise _Unsure  # libyaml's path refuses it, with its message
        self.count += 1
        result = cls()
        result.path = self.shared(path, path)
        return result, [line + self.offset, col + 1]

    def flow(self, k: int, text: str, path: tuple, line: int, col: int, indent: int):
        """(value, next content line) of a flow collection starting `text` on line `k`: `{}`,
        or a sequence of scalars (`["sh", "-c", 1]`), over lines too where each line but its
        last ends after a comma (an argument list wrapped), its lines indented past the block
        it is in (`indent`), with a comment at most after it."""
        if text[0] == "{":
            return self.flow_mapping(text, path, line, col), k + 1
        result, marks = self.collection(YSeq, path, line, col)
        here, at, size = line + self.offset, 1, len(text)
        while True:
            while at < size and text[at] == " ":
                at += 1
            if at >= size or text[at] == "#" and text[at - 1] == " ":  # the line ends after `[` or a comma
                k += 1
                if k >= self.n or self.cols[k] <= indent:
                    raise _Unsure
                self.unlocated = True
                text, col, at = self.texts[k], self.cols[k], 0
                here, size = self.nums[k] + self.offset, len(text)
            first = text[at]
            if first == "]":
                end = at
                break
            item, quoted, end = _flow_scalar(text, at, ",]")
            result.append(_short(item) if quoted else _plain(item))
            marks += (here, col + at + 1)
            self.count += 1
            if text[end] == "]":
                break
            at = end + 1
        if not _blank_rest(text[end + 1:]):
            raise _Unsure
        result.marks = _sealed(marks)
        return result, k + 1

    def flow_mapping(self, text: str, path: tuple, line: int, col: int) -> YMap:
        """A flow mapping on one line: `{}`, or `{key: value, ...}` of scalars (plain or quoted
        on one line), with a comment at most after it (`metadata: {name: web}`). Anything else
        in it (a nested collection, a key without a value, a repeated key, a `:` or `#` in a
        plain scalar, a line break) is libyaml's. fix.located finds no node in such a tree
        (`unlocated`): it reads no flow mapping but `{}`."""
        result, marks = self.collection(YMap, path, line, col)
        here, at = line + self.offset, _spaces_past(text, 1)
        while text[at] != "}":
            key_at = at
            key, quoted, at = _flow_scalar(text, at, ":,}")
            if text[at:at + 2] != ": " or len(key) > 1000 or not quoted and (key == "<<" or " #" in key):
                raise _Unsure
            value_at = _spaces_past(text, at + 2)
            value, quoted, at = _flow_scalar(text, value_at, ":,}")
            if text[at] == ":" or key in result:
                raise _Unsure  # `{a: b: c}`; a repeated key, which libyaml's path says with its positions
            result[intern(key)] = _short(value) if quoted else _plain(value)
            marks += (here, col + key_at + 1, here, col + value_at + 1)
            self.count += 1
            if text[at] == ",":
                at = _spaces_past(text, at + 1)
        if not _blank_rest(text[at + 1:]):
            raise _Unsure
        if result:
            self.unlocated = True
        result.marks = _sealed(marks)
        return result

    def dropped(self, read: Callable, *args):
        """A live object's managedFields: read (it must parse), then dropped as yamlpos drops
        it, sharing no path and saying no problem of it."""
        shared, problems = self.shared, len(self.problems)
        self.shared, self.dropped_any = Paths().sharing(), True
        try:
            return read(*args)
        finally:
            self.shared = shared
            del self.problems[problems:]

    def value(self, k: int, key: str, text: str, path: tuple, line: int, col: int, indent: int):
        """(value, dropped, next content line) of a value starting on its key's line at `col`."""
        if text[0] == "[" or text[0] == "{":
            sub = path + (key,)
            if key == "managedFields" and path[-1:] == ("metadata",) and text[0] == "[":
                return None, True, self.dropped(self.flow, k, text, sub, line, col, indent)[1]
            value, k = self.flow(k, text, sub, line, col, indent)
            return value, False, k
        value, alone, after = self.scalar(k, text, indent)
        if not alone:
            raise _Unsure  # `a: b: c`
        self.count += 1
        if after == k + 1 and _ends_on_its_line(text):  # a scalar alone on its key's line (`image: "x"`)
            kept(_LINES, self.texts[k], (key, value, col + 1 - indent), _PLAIN_SIZE)
        return value, False, after

    def mapping(self, k: int, col: int, text: str, path: tuple):
        """(the block mapping whose first key starts `text` at column `col` of line `k`, next
        content line). Each entry is a line met before (`_LINES`), a `key: value` of a plain
        scalar, a `key:` with its value below, or what `key` and `value` read; a key with
        nothing after it on its line is followed here (its node below, or null), not in a call."""
        nums, cols, texts, n, offset = self.nums, self.cols, self.texts, self.n, self.offset
        if len(path) >= self.max_depth:
            raise _Unsure  # libyaml's path refuses it, with its message
        result = YMap()  # collection(), inline: a call fewer for each of a tree's mappings
        result.path = self.shared(path, path)
        here = nums[k] + offset  # the entry's line as positions count it
        marks = [here, col + 1]
        count = 1  # nodes read here, added to self.count once
        plain, not_first, known = _PLAIN, _NOT_FIRST, _LINES
        while True:
            # each entry gives its key and either its value, read, with the value's column
            # (1-based) and `k` past it, or `colon` (0-based) where nothing follows the key
            hit = known.get(text)
            if hit is not None and (not hit[2] or not (k + 1 < n and cols[k + 1] > col)):
                key, value, at = hit  # a line met before: `key: value` (`kind: Pod`, ...), or `key:`
                k += 1
                if at:
                    count += 1
                    vcol, colon, drop = col + at, 0, False
                else:
                    colon = col + len(key)
            elif 0 < (colon := text.find(": ")) <= 1000 and text[0] not in not_first and text[colon - 1] != " " and \
                    text[colon + 2:colon + 3] not in ("", " ", "#"):
                key = text[:colon]  # the common line, `key: value`
                rest = text[colon + 2:]
                if " #" in key or key == "<<":
                    raise _Unsure
                key = intern(key)
                first = rest[0]
                vcol = col + colon + 3
                if (":" in rest or "#" in rest or first in not_first or rest[-1] == " " or
                        (first == "-" and rest[1:2] in ("", " ")) or (k + 1 < n and cols[k + 1] > col)):
                    value, drop, k = self.value(k, key, rest, path, here - offset, vcol - 1, col)
                else:
                    value = plain.get(rest, plain)
                    if value is plain:
                        value = _plain(rest)
                    if len(known) >= _PLAIN_SIZE:
                        known.clear()
                    known[text] = (key, value, colon + 3)
                    count += 1
                    drop = False
                    k += 1
                colon = 0
            elif colon < 0 and text[-1] == ":" and text[0] not in not_first and text[-2:-1] != " " and \
                    len(text) <= 1000 and "#" not in text and text != "-:":
                key = intern(text[:-1])  # `key:`, its value on the lines below
                if key == "<<":
                    raise _Unsure
                if len(known) >= _PLAIN_SIZE:
                    known.clear()
                known[text] = (key, None, 0)
                value = None
                k += 1
                colon = col + len(key)
            else:
                key, colon, rest = self.key(text, col)
                value_text = rest.lstrip(" ")
                if value_text and value_text[0] != "#":
                    vcol = colon + 2 + len(rest) - len(value_text)
                    value, drop, k = self.value(k, key, value_text, path, here - offset, vcol - 1, col)
                    colon = 0
                else:
                    value = None
                    k += 1
            nested = None
            if colon:  # nothing after the key: its node starts the next line, or it is null
                if k < n and (cols[k] > col or (cols[k] == col and texts[k][0] == "-" and texts[k][1:2] in ("", " "))):
                    nested, vline, vcol, drop = texts[k], nums[k] + offset, cols[k] + 1, False
                    if key == "managedFields" and path[-1:] == ("metadata",) and _entry(nested):
                        drop, k = True, self.dropped(self.node, k, cols[k], nested, path + (key,), col)[1]
                else:
                    count += 1
                    vline, vcol, drop = here, colon + 2, False
            else:
                vline = here
            if not drop:
                if key in result:
                    again = 2 + 4 * list(result).index(key)
                    self.problems.append(ParseProblem("duplicate-key", f"mapping key {key!r} already defined",
                                                      here - offset, col + 1, earlier=(marks[again], marks[again + 1])))
                    marks[again:again + 4] = (here, col + 1, vline, vcol)
                else:
                    marks += (here, col + 1, vline, vcol)
                if nested is not None:
                    if nested[0] == "-" and nested[1:2] in ("", " "):
                        value, k = self.sequence(k, cols[k], nested, path + (key,))
                    elif nested[0] not in not_first and (nested[-1] == ":" or ": " in nested):
                        value, k = self.mapping(k, cols[k], nested, path + (key,))
                    else:
                        value, k = self.node(k, cols[k], nested, path + (key,), col)
                result[key] = value
            if k >= n or cols[k] < col:
                break
            text = texts[k]
            if cols[k] > col or (text[0] == "-" and text[1:2] in ("", " ")):
                raise _Unsure  # a sequence where a key should be
            here = nums[k] + offset
        result.marks = _sealed(marks)
        self.count += count
        return result, k

    def sequence(self, k: int, col: int, text: str, path: tuple):
        """(the block sequence whose first `- ` starts `text` at column `col` of line `k`, next
        content line). An item line met before that held a scalar alone (`- bash`, `- -c`:
        `_ITEMS`) is answered from it, as `mapping` answers a `key: value` line."""
        nums, cols, texts, n, offset = self.nums, self.cols, self.texts, self.n, self.offset
        if len(path) >= self.max_depth:
            raise _Unsure  # libyaml's path refuses it, with its message
        result = YSeq()  # collection(), inline, as in mapping()
        result.path = self.shared(path, path)
        here = nums[k] + offset  # the item's line as positions count it
        marks = [here, col + 1]
        count = 1  # nodes read here, added to self.count once
        known = _ITEMS
        while True:
            hit = known.get(text)
            if hit is not None and not (k + 1 < n and cols[k + 1] > col):
                value, at = hit
                marks += (here, col + at)
                count += 1
                k += 1
            elif (item := text[1:].lstrip(" ")) and item[0] != "#":
                icol = col + len(text) - len(item)
                marks += (here, icol + 1)
                if item[0] == "[" or item[0] == "{":
                    value, k = self.flow(k, item, path + (len(result),), here - offset, icol, col)
                elif item[0] not in _NOT_FIRST and (item[-1] == ":" or ": " in item) and item[1:2] != " ":
                    value, k = self.mapping(k, icol, item, path + (len(result),))  # `- key: value`
                else:
                    value, after = self.node(k, icol, item, path + (len(result),), col)
                    if after == k + 1 and value.__class__ is not YMap and value.__class__ is not YSeq and \
                            _ends_on_its_line(item):
                        kept(known, text, (value, icol - col + 1), _PLAIN_SIZE)  # a scalar alone on its line
                    k = after
            elif k + 1 < n and cols[k + 1] > col:
                k += 1
                marks += (nums[k] + offset, cols[k] + 1)
                value, k = self.node(k, cols[k], texts[k], path + (len(result),), col)
            else:
                k += 1
                marks += (here, col + 2)
                value = None
                count += 1
            result.append(value)
            if k >= n or cols[k] < col:
                break
            text = texts[k]
            if cols[k] > col:
                raise _Unsure
            if not (text[0] == "-" and text[1:2] in ("", " ")):
                break  # a key of the mapping this sequence is the value of, at its column
            here = nums[k] + offset
        result.marks = _sealed(marks)
        self.count += count
        return result, k


def _marker(text: str, at: int, marker: str) -> bool:
    """`---` or `...` at offset `at` (a line's start), followed by a space, a line end or the end."""
    return text.startswith(marker, at) and text[at + 3:at + 4] in ("", " ", "\n")


def documents(text: str, problems: list[ParseProblem], limits: Limits, root_path: tuple, line_offset: int,
              paths: Paths, libyaml: Fallback) -> Generator[Document, None, bool]:
    """yamlpos.stream_documents' documents: each read here, or by `libyaml` (its reader of a
    text, sources.libyaml.documents) where this reader is unsure. Returns True where a
    syntax error ended the stream."""
    if not _line_safe(text) or has_directive(text):
        return (yield from libyaml(text, problems, limits, root_path, line_offset, paths))
    index = 0
    start, first_line = 0, 0  # offset and 0-based line of a part: text up to the next `---` line
    size = len(text)
    while start < size:
        end = text.find("\n---", start)
        while end >= 0 and not _marker(text, end + 1, "---"):
            end = text.find("\n---", end + 1)
        end = size if end < 0 else end + 1
        part = text[start:end]
        try:
            if len(part) > LARGEST_PART:
                raise _Unsure
            lines = part.split("\n")
            doc = _document(part, lines, start, first_line, end < size, limits, root_path, line_offset, paths)
        except (_Unsure, RecursionError):
            read, stopped = _by_libyaml(libyaml, part, start, first_line, limits, root_path, line_offset, paths)
            if stopped:  # what a syntax error says may hang on the text after: a quote open over `---`
                read, stopped = _by_libyaml(libyaml, text[start:], start, first_line, limits, root_path, line_offset,
                                            paths)
            for said, doc in read:
                problems += said
                if doc is not None:
                    doc.index = index
                    index += 1
                    yield doc
            if stopped:
                return True
        else:
            if doc is not None:
                doc.index = index
                index += 1
                yield doc
        start, first_line = end, first_line + part.count("\n")
    return False


def read_whole(text: str) -> list[Document] | None:
    """The documents of `text` where this reader reads every one itself, None where it would
    leave any to libyaml: what a caller that would otherwise load the text with PyYAML
    (model.plugin_config) reads without importing it."""
    try:
        return list(documents(text, [], DEFAULT_LIMITS, (), 0, Paths(), _left))
    except _Unsure:
        return None


def _left(*reading) -> Generator[Document, None, bool]:
    """read_whole's fallback: a document left to libyaml ends the reading."""
    raise _Unsure


def _by_libyaml(libyaml: Fallback, part: str, start: int, first_line: int, limits: Limits, root_path: tuple,
                line_offset: int, paths: Paths) -> tuple[list[tuple[list[ParseProblem], Document | None]], bool]:
    """libyaml's reading of `part`, the text from offset `start` (line `first_line`) on:
    (problems met, then the document they came before) in turn, and whether a syntax error
    ended it; positions are the whole text's (`earlier` is a position of the data, offset
    already)."""
    local: list[ParseProblem] = []
    read: list[tuple[list[ParseProblem], Document | None]] = []
    reading = libyaml(part, local, limits, root_path, line_offset + first_line, paths)
    while True:
        try:
            doc = next(reading)
        except StopIteration as stop:
            doc, stopped = None, bool(stop.value)
        for problem in local + (doc.problems if doc is not None else []):
            problem.line += first_line
        read.append((local[:], doc))
        local.clear()  # the list libyaml's reader adds to
        if doc is None:
            return read, stopped
        doc.start_line, doc.end_line = doc.start_line + first_line, doc.end_line + first_line
        if doc.span is not None:
            doc.span = (doc.span[0] + start, doc.span[1] + start)


def _document(part: str, lines: list[str], start: int, first_line: int, ended: bool, limits: Limits,
              root_path: tuple, line_offset: int, paths: Paths) -> Document | None:
    """The document of a part (None: a part of comments only), or _Unsure."""
    explicit = _marker(part, 0, "---")
    if explicit and not _blank_rest(lines[0][3:]):
        raise _Unsure  # a node on the `---` line
    body = lines[1:] if explicit else lines
    base = first_line + (2 if explicit else 1)  # the 1-based line of body[0]
    rows = [(j, len(raw) - len(text), text) for j, raw in enumerate(body)
            if (text := raw.lstrip(" ")) and text[0] != "#"]
    stop = None  # the line of a `...`
    if part.startswith("...") or "\n..." in part:
        ends = [at for at, (j, col, text) in enumerate(rows) if not col and _marker(text, 0, "...")]
        if ends:
            at = ends[0]
            if at != len(rows) - 1 or not at and not explicit or not _blank_rest(rows[at][2][3:]):
                raise _Unsure  # something after `...`, or a `...` alone
            stop = rows[at][0] + (1 if explicit else 0)
            del rows[at]
    if not rows:
        nums: list[int] = []
    else:
        keep, cols, texts = zip(*rows)
        nums = [base + j for j in keep]
    if stop is not None:
        end_line, end_index = first_line + stop + 1, start + sum(map(len, lines[:stop])) + stop
    elif ended:
        end_line, end_index = first_line + len(lines), start + len(part)
    else:  # libyaml's end of the stream starts a line of its own
        end_line, end_index = first_line + len(lines) + (1 if lines[-1] else 0), start + len(part)
    if not nums:
        return Document(0, None, end_line, end_line) if explicit else None
    head = nums[0] - first_line - 1
    begin = start + sum(map(len, lines[:head])) + head + cols[0]
    if end_index - begin > limits.max_document_bytes:
        raise _Unsure  # refused by libyaml's path, unbuilt
    reader = _Reader(body, base, nums, cols, texts, limits, paths, line_offset)
    data, k = reader.node(0, cols[0], texts[0], root_path, -1)
    paths.bounded()  # what the document's paths hold past the bound is its tree's alone
    if k < reader.n or data.__class__ not in (YMap, YSeq) or reader.count > limits.max_nodes:
        raise _Unsure  # lines after the root; a root scalar (its end is its own); a refusal
    if data.__class__ is YMap and not reader.problems and not reader.dropped_any and not reader.unlocated:
        data.__class__ = BlockMap  # the tree is the text's, key for key
    doc = Document(0, data, nums[0], end_line, reader.problems)
    if cols[0] == 0 and isinstance(data, YMap):
        doc.span = (begin, end_index)
    return doc
