"""Regular expressions compiled when first used, not when their module is imported.

A one-file lint imports modules whose patterns it never matches (the renderer's, a rule's
for kinds the file does not hold), and compiling a pattern costs 0.1 to 2 ms: at every start
that added up to a tenth of the start-up (issue #44, item 3)."""

from __future__ import annotations

import re
from typing import Any


class Lazy:
    """A pattern compiled at its first use: reads like the `re.Pattern` it stands for
    (`.match`, `.search`, `.sub`, ...; `.pattern` is its source, as there). Each method read
    is kept on the instance, so that later reads find it as a plain attribute, without coming
    here again."""

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self.pattern = pattern
        self.flags = flags

    def __getattr__(self, name: str) -> Any:  # only for what the instance does not hold yet
        method = getattr(re.compile(self.pattern, self.flags), name)
        setattr(self, name, method)
        return method
