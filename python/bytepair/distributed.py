"""The Dask engine: word counting and dataset encoding spread over the
workers of a ``dask.distributed`` cluster.

The inputs are cut into *units* (consecutive files, at least ~16 MB on disk
each: :func:`bytepair.corpus.group_units`). Each unit is one task:

- **counting**: a worker counts its unit's files in order and sends back
  the table (as ``(word, count)`` items, or as a counts file in ``workdir``
  when one is given); this process adds the tables up in unit order, which
  gives exactly the table that counting the files one after another here
  gives (first appearances included), so training is identical;
- **dataset encoding** (:mod:`bytepair.dataset`): a worker encodes its unit
  into token pieces in the output folder, and this process cuts the pieces
  into shards in order.

The workers read the input files by their absolute paths and, for dataset
encoding, write into the output folder: on a real cluster both must be on
storage that every worker and this process see at the same path (NFS, a
shared volume...). See ``docs/cluster.md``.

Dask is imported only when a client is made or used (``pip install
'bytepair[dask]'``).

>>> is_local("local"), is_local("tcp://10.0.0.5:8786")
(True, False)
"""

from __future__ import annotations

import contextlib
import os
from typing import Any, Callable, Iterator, List, Optional, Sequence

from bytepair.corpus import Source
from bytepair.errors import BytepairError, InputError

UNIT_BYTES = 16 << 20
LOCAL_WORKERS = 2


def import_distributed():
    try:
        import distributed
    except ImportError:
        raise BytepairError("the Dask engine needs dask.distributed: pip install 'bytepair[dask]'") from None
    return distributed


def is_local(address: str) -> bool:
    """Whether ``address`` asks for a cluster on this machine (``local`` or
    ``local:N`` for N workers)."""
    return address == "local" or address.startswith("local:")


@contextlib.contextmanager
def connect(address: str) -> Iterator[Any]:
    """A ``dask.distributed.Client`` for ``address``: ``local`` starts a
    ``LocalCluster`` of 2 worker processes (``local:N`` for N) for the
    duration of the block; anything else (``tcp://host:8786``) connects to a
    running scheduler."""
    distributed = import_distributed()
    if is_local(address):
        n = LOCAL_WORKERS
        if ":" in address:
            try:
                n = int(address.split(":", 1)[1])
            except ValueError:
                n = 0
            if n < 1:
                raise BytepairError(f"address={address!r}: the number of local workers must be a positive integer")
        cluster = distributed.LocalCluster(
            n_workers=n, threads_per_worker=1, processes=True, dashboard_address=":0", silence_logs=40
        )
        try:
            with distributed.Client(cluster) as client:
                yield client
        finally:
            cluster.close()
        return
    import logging

    # the client logs its reconnection attempts with tracebacks when the scheduler goes away: the error
    # raised below says it in one line instead
    quiet = logging.getLogger("distributed.client")
    level = quiet.level
    quiet.setLevel(logging.CRITICAL)
    try:
        # the connect timeout is Dask's own setting (distributed.comm.timeouts.connect, 30 s unless configured)
        client = distributed.Client(address)
    except (OSError, TimeoutError) as e:
        quiet.setLevel(level)
        raise BytepairError(f"cannot reach the Dask scheduler at {address}: {e}") from None
    try:
        yield client
    except Exception as e:
        if not isinstance(e, BytepairError) and _scheduler_lost(e, client):
            raise BytepairError(
                f"the Dask scheduler at {address} went away during the job ({type(e).__name__}); nothing was "
                "finished: run the command again (encode-dataset resumes where it stopped)"
            ) from None
        raise
    finally:
        try:
            client.close(timeout=10)
        except Exception:  # the scheduler is gone: nothing to close cleanly
            pass
        quiet.setLevel(level)


def _scheduler_lost(e: BaseException, client: Any = None) -> bool:
    """Whether ``e`` says the client lost its scheduler (a cancelled future
    with reason "scheduler-connection-lost", or a closed connection while
    the client is no longer running)."""
    import concurrent.futures

    text = str(e).lower()
    if "scheduler-connection-lost" in text or "lost the connection to the scheduler" in text:
        return True
    gone = client is not None and getattr(client, "status", "running") != "running"
    return gone and (isinstance(e, (concurrent.futures.CancelledError, OSError))
                     or type(e).__name__ in ("FutureCancelledError", "CommClosedError", "CancelledError"))


def result_of(future: Any, tries: int = 8, resubmit: Optional[Callable[[], Any]] = None) -> Any:
    """``future.result()``, tried again when the connection that carried it
    closed (a worker killed while its result was being fetched: the
    scheduler recomputes it elsewhere) and the client is still running; and,
    given ``resubmit`` (which submits the task again), when the scheduler
    cancelled the task with the client still connected (a worker killed
    while it held what the task needs: the scheduler forgets the task).

    >>> class Done:
    ...     def result(self):
    ...         return 42
    >>> result_of(Done())
    42
    """
    import time

    for k in range(tries):
        try:
            return future.result()
        except Exception as e:
            client = getattr(future, "client", None)
            running = client is None or getattr(client, "status", "running") == "running"
            closed = type(e).__name__ == "CommClosedError" or isinstance(e, (ConnectionError, EOFError))
            forgotten = resubmit is not None and type(e).__name__ == "FutureCancelledError" and \
                not _scheduler_lost(e, client)
            if not ((closed or forgotten) and running) or k == tries - 1:
                raise
            if forgotten:
                future = resubmit()
            time.sleep(min(0.2 * 2**k, 5.0))


def check_sources(srcs: Sequence[Source]) -> List[Source]:
    """The sources with absolute paths (workers may run elsewhere)."""
    out = []
    for s in srcs:
        if s.path == "-":
            raise InputError("standard input (-) cannot be sent to Dask workers: give files")
        if not os.path.exists(s.path):
            raise InputError(f"{s.path}: no such file")
        out.append(Source(os.path.abspath(s.path), s.kind, s.compression, s.field, s.column))
    return out
