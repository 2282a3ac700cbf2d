"""`device` bound to a name, `cel.bind(d, device, body)`, checked and evaluated as `body` with
`d.<field>` read as `device.<field>`.

Upstream's `device` is a kubernetes.DRADevice object, which an expression may bind; cel-cpp
has no record type whose fields are maps of maps, so draguard declares `device` field by field
(cel.env.rewrite_device_fields) and cannot bind it. CEL is pure, so the substitution keeps the
meaning, and it keeps every diagnostic: an error in the body is the same error on the
substituted text, its offset mapped back (OffsetMap). Upstream estimates such a bind at the
body's cost and 11 more: the empty list its macro iterates (10) and the `device` read (1).

Only a bind whose name the body reads as `d.<field>` alone is substituted; `[device]`,
`device == device`, or a body that binds the name again stays as written (draguard's engine
then cannot check it: cel.env reports it as unsupported)."""

from __future__ import annotations

import bisect
import re

from .rewrite import matching_end, without_strings

#: upstream's estimate of `cel.bind(d, device, body)` over `body`'s: the macro's empty
#: iteration range (a list creation, 10) and reading `device` (1)
BIND_COST = 11

_BIND = re.compile(r"\bcel\s*\.\s*bind\s*\(\s*([A-Za-z_]\w*)\s*,\s*device\s*,\s*")


class OffsetMap:
    """Offsets in the substituted text back to the original: each replacement is an anchor
    (new start, new end, original start, original end); inside a replacement, its start."""

    def __init__(self) -> None:
        self.anchors: list[tuple[int, int, int, int]] = []

    def original(self, offset: int) -> int:
        index = bisect.bisect_right(self.anchors, offset, key=lambda anchor: anchor[0]) - 1
        if index < 0:
            return offset
        new_start, new_end, old_start, old_end = self.anchors[index]
        return old_start if offset < new_end else old_end + offset - new_end


def substitute(expression: str) -> tuple[str, OffsetMap, int]:
    """(the expression with each substitutable bind of `device` replaced by its body, the map
    of offsets back, how many binds were replaced)."""
    pieces: list[tuple[int, int, str]] = []  # (original start, original end, replacement)
    blank = without_strings(expression)
    for match in _BIND.finditer(blank):
        name, open_paren = match.group(1), blank.index("(", match.start())
        close = matching_end(expression, open_paren) - 1
        if close >= len(expression) or expression[close] != ")" or any(
                s < close and match.start() < e for s, e, _ in pieces):
            continue
        body = blank[match.end():close]
        reads = list(re.finditer(rf"(?<![\w.]){re.escape(name)}\b", body))
        fields = [r for r in reads if re.match(r"\s*\.\s*[A-Za-z_]", body[r.end():])]
        if not reads or len(fields) != len(reads):
            continue  # the name read otherwise (a value, or bound again): left as written
        pieces.append((match.start(), match.end(), ""))
        pieces += [(match.end() + r.start(), match.end() + r.end(), "device") for r in fields]
        pieces.append((close, close + 1, ""))
    offsets, out, cursor, written = OffsetMap(), [], 0, 0
    for start, end, text in sorted(pieces):
        out.append(expression[cursor:start])
        written += start - cursor
        offsets.anchors.append((written, written + len(text), start, end))
        out.append(text)
        written += len(text)
        cursor = end
    out.append(expression[cursor:])
    binds = sum(1 for _, _, text in pieces if text == "") // 2
    return "".join(out), offsets, binds
