"""Where a character of a YAML string value sits in the file.

A CEL error points at a character of the expression, but the expression is a YAML scalar:
plain, quoted (with escapes and folded line breaks) or a block (`|`/`>`, with indentation).
`char_position` walks the scalar's source text and returns the line and column of the
character with the given offset in the parsed value."""

from __future__ import annotations

_ESCAPE_LENGTH = {"x": 2, "u": 4, "U": 8}


def char_position(lines: list[str], line: int, column: int, offset: int) -> tuple[int, int]:
    """`line`/`column` (1-based) is where the scalar starts in `lines`; returns the 1-based
    position of value character `offset` (clamped to the scalar's last character)."""
    if not 0 < line <= len(lines):
        return line, column
    first = lines[line - 1][column - 1:]
    indicator = first[:1]
    if indicator in ("|", ">"):
        return _block(lines, line, offset)
    if indicator in ("'", '"'):
        return _quoted(lines, line, column, offset, indicator)
    return _plain(lines, line, column, offset)


def _block(lines: list[str], line: int, offset: int) -> tuple[int, int]:
    body = lines[line:]
    indent = next((len(x) - len(x.lstrip(" ")) for x in body if x.strip()), 0)
    remaining = offset
    last = (line + 1, indent + 1)
    for number, text in enumerate(body, line + 1):
        if text.strip() and len(text) - len(text.lstrip(" ")) < indent:
            break  # the block ended
        content = text[indent:]
        if remaining <= len(content):
            return number, indent + remaining + 1
        remaining -= len(content) + 1  # the line break is one character of the value
        last = (number, indent + len(content) + 1)
    return last


def _plain(lines: list[str], line: int, column: int, offset: int) -> tuple[int, int]:
    remaining, number, start = offset, line, column - 1
    while number <= len(lines):
        text = lines[number - 1].rstrip()
        content = text[start:] if number == line else text.lstrip()
        lead = start if number == line else len(text) - len(text.lstrip())
        if remaining <= len(content):
            return number, lead + remaining + 1
        remaining -= len(content) + 1  # a folded line break reads as one space
        number += 1
    return line, column


def _quoted(lines: list[str], line: int, column: int, offset: int, quote: str) -> tuple[int, int]:
    remaining = offset
    number, index = line, column  # index: 0-based position just after the opening quote
    while number <= len(lines):
        text = lines[number - 1]
        while index < len(text):
            ch = text[index]
            if ch == quote:
                if quote == "'" and text[index + 1:index + 2] == "'":
                    if remaining == 0:
                        return number, index + 1
                    remaining -= 1
                    index += 2
                    continue
                return number, index + 1  # the closing quote
            if remaining == 0:
                return number, index + 1
            if quote == '"' and ch == "\\":
                code = text[index + 1:index + 2]
                index += 2 + _ESCAPE_LENGTH.get(code, 0)
            else:
                index += 1
            remaining -= 1
        remaining -= 1  # folded line break
        number += 1
        if number <= len(lines):
            following = lines[number - 1]
            index = len(following) - len(following.lstrip())
        if remaining < 0:
            return number, index + 1
    return line, column
