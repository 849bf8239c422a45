"""The Dask cluster a release runs on (a local one or a scheduler address), and computing a list of tasks
with progress."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator, Sequence
from typing import Any

import dask

from ppdm.exceptions import ParameterError

__all__ = ["CONNECT_TIMEOUT", "FROM_MEMORY_ROWS", "compute", "connect"]


CONNECT_TIMEOUT = "20s"  # how long to wait for a --scheduler address to answer


@contextlib.contextmanager
def connect(scheduler: str | None = None) -> Iterator[dict[str, Any]]:
    """Where the work runs; yields ``{"client": Client | None, "cluster": str, "seconds": float}``.

    ``None``: an already active ``distributed.Client`` of this process if there is one, else a
    LocalCluster on 127.0.0.1 sized to the machine (dashboard on an ephemeral port), closed on exit.
    ``'synchronous'`` / ``'threads'``: dask's local schedulers, no cluster. Anything else is a
    scheduler address such as ``tcp://host:8786``.
    """
    t0 = time.perf_counter()
    if scheduler in ("synchronous", "threads"):
        with dask.config.set(scheduler=scheduler):
            yield {"client": None, "cluster": scheduler, "seconds": 0.0}
        return
    from distributed import Client

    if scheduler is None:
        from distributed import LocalCluster, get_client

        try:
            active = get_client()
        except ValueError:
            active = None
        if active is not None:
            yield {"client": active, "cluster": "existing client", "seconds": 0.0}
            return
        # loopback only; ":0" puts the scheduler's HTTP/dashboard server on an ephemeral port; the workers'
        # own logs stay quiet (a task's failure comes back here as its one-line error, not as their log)
        import logging

        with LocalCluster(host="127.0.0.1", dashboard_address=":0", processes=True,
                          silence_logs=logging.CRITICAL) as cluster, \
                Client(cluster) as client:
            n = len(cluster.workers)
            yield {"client": client, "cluster": f"local ({n} workers)", "seconds": time.perf_counter() - t0}
        return
    try:
        client = Client(scheduler, timeout=CONNECT_TIMEOUT)
    except (OSError, TimeoutError, ValueError) as e:
        raise ParameterError(
            f"cannot reach the Dask scheduler at '{scheduler}' ({type(e).__name__}); check --scheduler "
            "(tcp://host:port) and that the scheduler is running"
        ) from None
    with client:
        yield {"client": client, "cluster": "scheduler", "seconds": time.perf_counter() - t0}


def compute(tasks: Sequence[Any], what: str, client: Any) -> list[Any]:
    """Compute delayed tasks, with a transient progress bar on a terminal when a cluster runs them."""
    if client is None or not tasks:
        return list(dask.compute(*tasks))
    from distributed import as_completed
    from rich.console import Console
    from rich.progress import Progress

    futures = client.compute(list(tasks))
    console = Console(stderr=True)
    with Progress(console=console, transient=True, disable=not console.is_terminal) as bar:
        job = bar.add_task(what, total=len(futures))
        for _ in as_completed(futures):
            bar.advance(job)
    return list(client.gather(futures))


FROM_MEMORY_ROWS = 262_144  # rows per partition when a DataFrame/array is handed to the dask backend
