"""Which Dask scheduler a chunked fit runs on: the local one by default, a ``dask.distributed`` cluster on request.

``dask_scheduler(scheduler)`` is the one place estimators, the command line and the benches choose it:

* ``None`` and no ``DASK_SCHEDULER_ADDRESS`` in the environment: Dask's default, i.e. the local threaded
  scheduler (out of core on one machine, nothing to start), or the ``dask.distributed`` Client the caller
  has already made the default one.
* ``"threads"``, ``"sync"``/``"synchronous"``, ``"processes"``: that local scheduler.
* ``"tcp://host:8786"`` (or any ``scheme://`` address), or ``DASK_SCHEDULER_ADDRESS`` set: a
  ``dask.distributed.Client`` connected to that scheduler for the duration of the block, then closed.
* a ``distributed.Client`` (or ``LocalCluster``): used as is (not closed here).

Written by hand: a thin wrapper over ``dask.compute(scheduler=...)`` and ``distributed.Client``.
"""
from __future__ import annotations

import contextlib
import os

__all__ = ["LOCAL_SCHEDULERS", "SCHEDULER_ENV", "dask_scheduler", "is_distributed", "resolve_scheduler"]

#: Environment variable naming a dask.distributed scheduler address (Dask's own name for it).
SCHEDULER_ENV = "DASK_SCHEDULER_ADDRESS"

#: Names of Dask's local schedulers.
LOCAL_SCHEDULERS = ("threads", "threading", "sync", "synchronous", "single-threaded", "processes")

#: Seconds to wait for a remote scheduler to answer before giving up with a plain message.
CONNECT_TIMEOUT = 30


def resolve_scheduler(scheduler=None):
    """The scheduler to use: the argument, else ``DASK_SCHEDULER_ADDRESS``, else None (Dask's default)."""
    if scheduler is None:
        scheduler = os.environ.get(SCHEDULER_ENV) or None
    if isinstance(scheduler, str):
        scheduler = scheduler.strip()
        if scheduler not in LOCAL_SCHEDULERS and "://" not in scheduler:
            raise ValueError(f"scheduler must be one of {LOCAL_SCHEDULERS}, an address such as 'tcp://host:8786' "
                             f"or a dask.distributed Client; got {scheduler!r}")
    return scheduler


@contextlib.contextmanager
def dask_scheduler(scheduler=None, *, timeout: float = CONNECT_TIMEOUT):
    """Context manager yielding what to pass as ``dask.compute(..., scheduler=...)``.

    Parameters
    ----------
    scheduler : None, str or distributed.Client (see the module docstring).
    timeout : seconds to wait for a remote scheduler.

    Yields
    ------
    None (Dask's default), a local scheduler name, or a ``distributed.Client``. A Client this function
    opened (from an address) is closed on exit, also when the block raises.
    """
    scheduler = resolve_scheduler(scheduler)
    if scheduler is None or (isinstance(scheduler, str) and scheduler in LOCAL_SCHEDULERS):
        yield scheduler
        return
    from distributed import Client

    if isinstance(scheduler, Client):
        yield scheduler
        return
    if not isinstance(scheduler, str):  # a cluster object (LocalCluster, ...): a Client on it, closed on exit
        client = Client(scheduler, timeout=timeout, set_as_default=False)
    else:
        try:
            client = Client(scheduler, timeout=timeout, set_as_default=False)
        except (OSError, TimeoutError) as exc:
            raise ConnectionError(f"could not reach the Dask scheduler at {scheduler} within {timeout:g} s: "
                                  f"{exc}") from None
    try:
        yield client
    finally:
        client.close()


def is_distributed(scheduler) -> bool:
    """True for a ``distributed.Client`` (it has ``submit`` and ``gather``)."""
    return hasattr(scheduler, "gather") and hasattr(scheduler, "compute")
