"""`python -m draguard` is the `draguard` command."""

import sys

from .cli import main

sys.exit(main())
