"""Regular expressions as Go's regexp package runs them for the Kubernetes CEL regex library
(k8s.io/apiserver/pkg/cel/library/regex.go): RE2 syntax and semantics (no look-around or
back-references, ASCII `\\d`, leftmost-first), Go's error texts, and FindAllString's rule that
an empty match right after the previous match is skipped."""

from __future__ import annotations

from functools import lru_cache
from typing import Any


# RE2's messages -> regexp/syntax ErrorCode texts (both name the offending fragment after ": ")
_GO_ERRORS = {
    "missing )": "missing closing )",
    "missing ]": "missing closing ]",
    "unexpected )": "unexpected )",
    "invalid perl operator": "invalid or unsupported Perl syntax",
    "bad repetition operator": "invalid nested repetition operator",
    "invalid repetition size": "invalid repeat count",
    "invalid named capture group": "invalid named capture",
    "no argument for repetition operator": "missing argument to repetition operator",
    "invalid character class range": "invalid character class range",
    "invalid character class": "invalid character class",
    "invalid escape sequence": "invalid escape sequence",
    "bad UTF-8": "invalid UTF-8",
    "pattern too large - compile failed": "expression too large",
}


class RegexError(ValueError):
    """A pattern Go's regexp.Compile rejects; the text is Go's ("error parsing regexp: ...")."""


@lru_cache(maxsize=1)
def _re2() -> tuple[Any, Any]:
    """re2 and its options, imported at the first pattern: a run that matches none (most
    lint runs) does not load it. Any: re2 ships no type information."""
    import re2

    options = re2.Options()
    options.log_errors = False  # RE2 would print every rejected pattern to stderr
    return re2, options


def _any_byte_escape(pattern: str) -> bool:
    """Whether the pattern escapes `\\C` (any byte) outside a `\\Q...\\E` quote: RE2 takes it,
    Go's regexp/syntax does not."""
    i = 0
    while i < len(pattern) - 1:
        if pattern[i] != "\\":
            i += 1
            continue
        if pattern[i + 1] == "C":
            return True
        if pattern[i + 1] == "Q":
            end = pattern.find("\\E", i + 2)
            i = len(pattern) if end < 0 else end + 2
            continue
        i += 2
    return False


@lru_cache(maxsize=1024)
def compile_pattern(pattern: str) -> Any:
    """Go's regexp.Compile, as an re2 pattern (Any: re2 ships no type information)."""
    if _any_byte_escape(pattern):
        raise RegexError("error parsing regexp: invalid escape sequence: `\\C`")
    re2, options = _re2()
    try:
        return re2.compile(pattern, options)
    except re2.error as exc:
        text = exc.args[0].decode("utf-8", "replace") if exc.args and isinstance(exc.args[0], bytes) else str(exc)
        code, _, fragment = text.partition(": ")
        raise RegexError(f"error parsing regexp: {_GO_ERRORS.get(code, code)}: `{fragment or pattern}`") from None


def find(text: str, pattern: str) -> str:
    """regexp.FindString: the leftmost match, or '' when there is none."""
    match = compile_pattern(pattern).search(text)
    return match.group(0) if match else ""


def find_all(text: str, pattern: str, limit: int = -1) -> list[str]:
    """regexp.FindAllString(text, limit): successive non-overlapping matches, at most `limit`
    when it is not negative; an empty match abutting the previous match is not reported."""
    regex = compile_pattern(pattern)
    found: list[str] = []
    position, previous_end = 0, -1
    while (limit < 0 or len(found) < limit) and position <= len(text):
        match = regex.search(text, position)
        if match is None:
            break
        start, end = match.start(), match.end()
        accept = not (start == end and start == previous_end)
        position = end + 1 if start == end else end
        previous_end = end
        if accept:
            found.append(match.group(0))
    return found
