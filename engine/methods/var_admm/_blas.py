"""One BLAS thread for the collaborative VAR's many small products (temporary until engine.threads)."""
from __future__ import annotations

import functools

from threadpoolctl import threadpool_limits


def _one_blas_thread(func):
    """Run ``func`` with one BLAS thread: its products are modest, and on a busy machine
    multi-threaded OpenBLAS makes small products 10-50x slower (oversubscription)."""

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        with threadpool_limits(limits=1, user_api="blas"):
            return func(*args, **kwargs)

    return wrapper
