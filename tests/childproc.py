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


# A child's ``ru_maxrss`` starts at its parent's resident size: Linux carries the
# peak of the memory image that ``exec`` replaces (with ``vfork``, the parent's own
# peak). A child of a test process that has grown to gigabytes would then start
# "over" any memory limit that reads ``ru_maxrss`` (libFuzzer's -rss_limit_mb).
# A shell in between forks the child from its own small image.
FRESH_PEAK = ["/bin/sh", "-c", '"$@"; exit $?', "sh"]


def with_fresh_peak(argv: list) -> list:
    """``argv`` run through a shell, so that the child's ``ru_maxrss`` counts
    only its own memory. ``/bin/sh`` keeps the child's exit status (a signal
    becomes 128 + its number).

    >>> with_fresh_peak(["python", "-V"])[-2:]
    ['python', '-V']
    """
    return FRESH_PEAK + list(argv)
