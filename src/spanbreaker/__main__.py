"""``python -m spanbreaker``: the ``spanbreaker`` command (``replay``, ...) where its script is not on the PATH."""

import sys

from .cli import main

sys.exit(main())
