"""``python -m bytepair``: the command line."""

import sys

from bytepair.cli import main

sys.exit(main())
