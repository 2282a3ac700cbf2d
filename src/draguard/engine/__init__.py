"""The engine: the `Run` every command asks for findings (engine.run), its front doors for
files and objects (engine.lint), config files, suppressions and inventories."""

from .lint import lint_objects, lint_paths, lint_text
from .result import LintResult
from .run import Against, Inputs, Run

__all__ = ["Against", "Inputs", "LintResult", "Run", "lint_objects", "lint_paths", "lint_text"]
