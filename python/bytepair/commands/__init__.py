"""Commands that live in their own modules.

Each module listed in ``COMMANDS`` has ``register(subparsers)``, which adds
its parser and sets ``run=function(args, out) -> int`` as the default, like
the commands in ``bytepair.cli``. Heavy imports stay inside the functions so
that ``bytepair --help`` stays fast.
"""

COMMANDS = [
    "bytepair.commands.show",
    "bytepair.commands.inspect",
    "bytepair.commands.compare",
    "bytepair.commands.serve",
    "bytepair.commands.data",
    "bytepair.commands.convert",
    "bytepair.commands.chunk",
    "bytepair.commands.explain",
]
