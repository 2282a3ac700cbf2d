"""Messages as sentences for the reports people read (text, SARIF, GitHub, JUnit): a capital
first letter where the message starts with a plain word, and a full stop. A message that
starts with a name as written (`resource.k8s.io/v1`, `maxSurge`, `spec.template:`) keeps it."""

from __future__ import annotations

from ..core.patterns import Lazy

_PLAIN_WORD = Lazy(r"[a-z]+\b(?![.:/\-_])")


#: control characters and bidirectional overrides a manifest's strings can carry into a
#: message (a container named "c\x1b[2J" clears the terminal the report is printed on; U+202E
#: reorders what the reader sees): shown escaped, as Python writes them
_UNSAFE = Lazy("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def printable(text: str) -> str:
    """`text` with control characters and bidi overrides escaped (`\\n`, `\\x1b`, `\\u202e`).
    Every character `_UNSAFE` matches is one `str.isprintable` refuses (Unicode's Cc and Cf),
    so a printable text, nearly every one a report writes, is returned without a search."""
    if text.isprintable():
        return text
    return _UNSAFE.sub(lambda m: repr(m.group())[1:-1], text)


def sentence(text: str) -> str:
    text = printable(text.strip())
    if not text:
        return text
    if _PLAIN_WORD.match(text):
        text = text[0].upper() + text[1:]
    return text if text[-1] in ".!?" else text + "."


def paragraph(text: str) -> str:
    """A docstring-style block of rule text (rationale, upstream note) as one line."""
    return " ".join(text.split())


def yaml_block(text: str) -> str:
    """A rule example as a fenced YAML block for markdown (the docs and the agent files)."""
    import textwrap  # the docs and the agent files only: a report does not show examples

    return "```yaml\n" + textwrap.dedent(text).strip("\n") + "\n```\n"


def with_help(message: str, help_text: str | None) -> str:
    return sentence(message) + (f" {sentence(help_text)}" if help_text else "")
