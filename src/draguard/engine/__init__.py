"""The engine: every command's lint run (`lint_objects`, `lint_paths`), config files,
suppressions and inventories."""

from .lint import LintResult, lint_loaded, lint_objects, lint_paths, lint_text

__all__ = ["LintResult", "lint_loaded", "lint_objects", "lint_paths", "lint_text"]
