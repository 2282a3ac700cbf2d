"""`python -m draguard` is the `draguard` command."""

import sys

from .cli import program

sys.exit(program())
