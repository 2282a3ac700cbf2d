"""Messages as sentences for the reports people read (text, SARIF, GitHub, JUnit): a capital
first letter where the message starts with a plain word, and a full stop. A message that
starts with a name as written (`resource.k8s.io/v1`, `maxSurge`, `spec.template:`) keeps it."""

from __future__ import annotations

import re
import textwrap

_PLAIN_WORD = re.compile(r"[a-z]+\b(?![.:/\-_])")


def sentence(text: str) -> str:
    text = text.strip()
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
    return "```yaml\n" + textwrap.dedent(text).strip("\n") + "\n```\n"


def with_help(message: str, help_text: str | None) -> str:
    return sentence(message) + (f" {sentence(help_text)}" if help_text else "")
