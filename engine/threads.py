"""The one BLAS-thread helper: run NumPy/SciPy linear algebra on one BLAS thread.

Why: the sweeps and the ADMM iterations do many small matrix products (d of a few hundred at most);
with a multi-threaded BLAS each product pays thread start-up and synchronisation that cost more than
the product itself, and worker threads that each call a multi-threaded BLAS oversubscribe the cores.
threadpoolctl (a scikit-learn dependency) sets the limit; this module only gives it one name.

Large products and eigendecompositions are no exception on this app's machines: multi-threaded OpenBLAS is fast
only on idle cores. As soon as anything else runs (another session of the server, another process), its threads
spin-wait for cores they do not get. Measured on 2 shared cores: two eigh of 700 x 700 took 6.8 s (median) with
OpenBLAS's 2 threads against 0.57 s with one; edPLS's 4-chain RMSEP sweep on the fermentation spectra (1041
channels) took 208 s when strict mode kept the threads and 16-38 s on one thread (the "238 s once, 22 s the next
time" of issue #19; ``bench/bench_sweep.py``).

Examples
--------
>>> import numpy as np
>>> with one_blas_thread():
...     float(np.ones((2, 2)) @ np.ones(2) @ np.ones(2))
4.0
>>> @one_blas_thread()
... def small_products(a):
...     return a @ a
"""
from __future__ import annotations

import sys
import threading
from contextlib import ContextDecorator

from threadpoolctl import ThreadpoolController, threadpool_limits

__all__ = ["one_blas_thread", "serve_with_one_blas_thread"]


class one_blas_thread(ContextDecorator):  # noqa: N801 - used like a function: `with one_blas_thread():`
    """Context manager and decorator: BLAS limited to one thread inside, restored on exit (also on error).

    Parameters
    ----------
    openmp : bool, default False. Limit OpenMP pools too: scikit-learn's KMeans runs on OpenMP, and a sweep
        of small KMeans fits under worker threads took 234 s instead of 10 s with only BLAS limited.
    """

    def __init__(self, openmp: bool = False):
        self.openmp = openmp

    def _recreate_cm(self):
        # A decorated function gets a fresh instance per call, so calls overlapping across threads
        # (Streamlit sessions) each restore their own saved limits.
        return type(self)(self.openmp)

    def __enter__(self):
        self._limits = _controller().limit(limits=1, user_api=None if self.openmp else "blas")
        return self

    def __exit__(self, *exc):
        self._limits.restore_original_limits()
        return False


_CONTROLLER: list = []  # [(len(sys.modules) when it was made, ThreadpoolController)]


def _controller() -> ThreadpoolController:
    """threadpoolctl's view of the loaded thread pools, made again only after a new module was imported (a new
    module may load a new BLAS). ``threadpool_limits`` lists the loaded libraries on every call: about 1 ms, as
    much as a whole VAR fit's normal equations at 20 sites; a kept controller's ``limit`` takes 10 us."""
    with _SERVER_LOCK:
        if not _CONTROLLER or _CONTROLLER[0][0] != len(sys.modules):
            _CONTROLLER[:] = [(len(sys.modules), ThreadpoolController())]
        return _CONTROLLER[0][1]


_SERVER_LIMITS: list[object] = []  # the process-wide threadpool_limits, kept alive
_SERVER_LOCK = threading.Lock()


def serve_with_one_blas_thread() -> None:
    """Limit BLAS and OpenMP to one thread for the whole process, once (later calls do nothing): for the Streamlit
    server (app.py), whose sessions run side by side on few cores.

    A server's page runs are never alone on its cores for long (other sessions, a rerun beside the one it
    replaces, other processes), and multi-threaded OpenBLAS then spin-waits: measured on 2 shared cores, P3LS's
    page run (its federation, imports excluded) took 21.8 s with OpenBLAS's 2 threads against 4.6-4.8 s with one,
    and edPLS's sweep 208 s against 16-38 s (see the module docstring). Libraries loaded after the call (a module
    imported later that brings its own BLAS) are not limited; numpy's and scipy's are loaded by then.
    """
    with _SERVER_LOCK:
        if not _SERVER_LIMITS:
            _SERVER_LIMITS.append(threadpool_limits(limits=1))
