"""``python -m bytepair.cli``: the command line (as ``python -m bytepair``)."""

import sys

from bytepair.cli import main

sys.exit(main())
