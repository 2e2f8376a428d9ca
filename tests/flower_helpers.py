"""Shared helpers of the Flower tests: a local federation fixture factory and small P3LS data."""
from __future__ import annotations

import contextlib

import numpy as np

from engine.federation.flower.driver import register
from engine.federation.flower.runtime import LocalFederation

#: seconds a whole federated fit or predict may take in a test before it counts as a hang
RUN_TIMEOUT = 400


@contextlib.contextmanager
def running_federation(parties):
    """A registered LocalFederation on 127.0.0.1; stopped (and checked to leave no process) on exit."""
    fed = LocalFederation(parties)
    try:
        with fed:
            register(fed)
            yield fed
    finally:
        fed.stop()
        left = fed.leftover_processes()
        assert not left, f"Flower processes left running: {left}"


def p3ls_data(seed: int = 0, m: int = 24, widths=(2, 3, 2), l: int = 2):
    """Training blocks, Y and new blocks for a small P3LS fit (3 parties by default)."""
    rng = np.random.default_rng(seed)
    n = sum(widths)
    X = rng.standard_normal((m, n))
    Y = X @ rng.standard_normal((n, l)) + 0.1 * rng.standard_normal((m, l))
    X_new = rng.standard_normal((5, n))
    cuts = np.cumsum([0, *widths])
    split = lambda A: [A[:, cuts[i]:cuts[i + 1]] for i in range(len(widths))]  # noqa: E731
    return split(X), Y, split(X_new)
