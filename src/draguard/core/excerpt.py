"""Bounds on how much of a value a message quotes. Rules quote names and values from the input
('container {name}', 'sets CUDA_VISIBLE_DEVICES={value}'), and the input is the tenant's: a
630 KB value made one 2 MB finding line. A Kubernetes name is at most 253 characters (a DNS
subdomain, the longest name the API server takes), so a longer run without a blank is no
name: it is cut, with an ellipsis and its length, and the message as a whole is cut too."""

from __future__ import annotations

import re

from .patterns import Lazy

#: The longest run of non-blank characters a message keeps whole: any Kubernetes name, a URL.
MAX_WORD = 256
#: The longest message kept: many quoted values with blanks in them still end here.
MAX_MESSAGE = 2048
_KEPT = 96  # characters of an overlong word shown before the ellipsis

_LONG_WORD = Lazy(r"\S{%d,}" % (MAX_WORD + 1))


def _cut(found: re.Match[str]) -> str:
    word = found.group(0)
    return f"{word[:_KEPT]}… ({len(word):,} characters)"


def bounded(text: str) -> str:
    """`text` with each overlong word cut and the whole at most about MAX_MESSAGE characters;
    short text (nearly every message) is returned as it is, untouched and unscanned."""
    if len(text) <= MAX_WORD:
        return text
    text = _LONG_WORD.sub(_cut, text)
    if len(text) > MAX_MESSAGE:
        text = f"{text[:MAX_MESSAGE]}… ({len(text) - MAX_MESSAGE:,} more characters)"
    return text
