"""``python -m pdpboot``: the same as the ``pdpboot`` command."""

import sys

from .cli import main

sys.exit(main())
