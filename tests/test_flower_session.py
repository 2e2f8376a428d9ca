"""Federations kept between fits (engine/federation/flower/session.py): the next fit reuses the running processes,
the idle timer stops them, nothing is left behind.

Oracles: the in-process accelerated fit (coefficients to 1e-8, as bench_federation checks), the processes' ids
(the same SuperLink serves both fits), and /proc (no process of the federation's groups alive after the idle stop).
"""
from __future__ import annotations

import time

import numpy as np
import pytest

from engine.federation.flower.session import shared_federation, stop_all
from engine.methods.var_admm.estimator import CollaborativeVAR
from engine.methods.var_admm.flower_roles import processes_in_groups

pytest.importorskip("flwr")


def _series(n=3, T=50, seed=5):
    rng = np.random.default_rng(seed)
    Y = np.zeros((T, n))
    for t in range(1, T):
        Y[t] = 0.4 * Y[t - 1] + rng.normal(size=n)
    return Y * np.array([1.0, 8.0, 0.25])


def test_second_fit_reuses_the_federation_and_the_idle_timer_stops_it():
    Y = _series()
    params = dict(lags=1, solver="admm", tol=1e-10, max_iter=500, random_state=2, flower_timeout=120.0)
    local = CollaborativeVAR(**params).fit(Y).coef_owner_major_
    parties = ["0", "1", "2"]
    try:
        with shared_federation(parties, owner="test", idle=3.0) as fed:
            first_address, pgids = fed.address, [p.pid for p in fed.processes.values()]
            B1 = CollaborativeVAR(transport="flower", superlink=fed.address, **params).fit(Y).coef_owner_major_
        with shared_federation(parties, owner="test", idle=3.0) as fed:
            assert fed.address == first_address and [p.pid for p in fed.processes.values()] == pgids
            B2 = CollaborativeVAR(transport="flower", superlink=fed.address, **params).fit(Y).coef_owner_major_
        np.testing.assert_allclose(B1, local, atol=1e-8, rtol=0)
        np.testing.assert_allclose(B2, local, atol=1e-8, rtol=0)
        deadline = time.monotonic() + 60
        while processes_in_groups(pgids) and time.monotonic() < deadline:
            time.sleep(0.5)
        assert processes_in_groups(pgids) == []
        with pytest.raises(ValueError, match="no running federation"):
            CollaborativeVAR(transport="flower", superlink=first_address, **params).fit(Y)
    finally:
        stop_all()


def test_a_use_that_raises_stops_the_federation():
    try:
        with pytest.raises(RuntimeError, match="boom"), shared_federation(["0", "1"], owner="raise") as fed:
            pgids = [p.pid for p in fed.processes.values()]
            raise RuntimeError("boom")
        assert processes_in_groups(pgids) == []
    finally:
        stop_all()
