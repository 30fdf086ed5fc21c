"""Helpers for tests that start a child process and interrupt it.

A shell that starts a job in the background (``cmd &``, ``nohup``, ``setsid``
without a terminal) sets SIGINT to "ignore", and an ignored signal stays
ignored across ``fork``/``exec``: ``subprocess``'s ``restore_signals`` only
restores SIGPIPE, SIGXFZ and SIGXFSZ. Python then does not even install its
KeyboardInterrupt handler, so a test that sends SIGINT to its child would
wait for nothing. ``default_sigint`` (a ``preexec_fn``) gives the child the
default handling back, as an interactive shell would.
"""

import signal


def default_sigint() -> None:
    """``preexec_fn`` of a child that the test interrupts with SIGINT."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
