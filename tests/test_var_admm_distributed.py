"""The accelerated VAR ADMM split into owners and a central node (anderson_distributed) against run_anderson.

Oracle: the in-process accelerated scheme (:func:`engine.methods.var_admm.anderson.run_anderson`) on the very
arrays the estimator gives it. Tolerance: both runs stop at tol 1e-10 by the same rule; the distributed run's
Anderson weights come from the pooled normal equations (squared conditioning), so iterates differ by rounding and
the converged coefficients agree to about the stopping tolerance times the coefficients' size, far below 1e-8.
"""
from __future__ import annotations

import numpy as np
import pytest

import engine.methods.var_admm.estimator as estimator_module
from engine.methods.var_admm import anderson
from engine.methods.var_admm.anderson_distributed import Central, Owner, run_in_process
from engine.methods.var_admm.estimator import CollaborativeVAR


def _captured_inputs(monkeypatch, Y, **kw):
    seen = {}

    def spy(data, G, **args):
        Z, Yi = data.arrays()
        seen.update(Z=Z, Y=Yi, G=G, **args)
        return anderson.run_anderson(data, G, **args)

    monkeypatch.setattr(estimator_module, "run_anderson", spy)
    est = CollaborativeVAR(solver="admm", tol=1e-10, max_iter=500, **kw).fit(Y)
    return est, seen


@pytest.mark.parametrize("n,penalty,variant", [(3, "ridge", "base"), (6, "none", "base"), (3, "lasso", "y_free")])
def test_owners_and_central_reproduce_the_in_process_fit(monkeypatch, n, penalty, variant):
    rng = np.random.default_rng(n)
    Y = rng.normal(size=(90, n)).cumsum(0) * 0.1 + rng.normal(size=(90, n))
    est, c = _captured_inputs(monkeypatch, Y, lags=2, penalty=penalty, alpha=0.01, variant=variant, random_state=0)
    Z, Yi, G = c["Z"], c["Y"], c["G"]
    T, p = Yi.shape[0], len(c["lags"])
    owners = [Owner(i, Z[:, i * p:(i + 1) * p], G[i], Yi[:, i], np.zeros((p, n)), n=n, penalty=penalty,
                    lasso_w_i=None if c["lasso_w"] is None else c["lasso_w"][i],
                    ridge_w_i=None if c["ridge_w"] is None else c["ridge_w"][i], inner_tol=c["inner_tol"],
                    memory=anderson.anderson_memory(p), y_free=variant == "y_free") for i in range(n)]
    central = Central(np.zeros_like(Yi) if variant == "y_free" else Yi, n=n, p=p, T=T, tol=c["tol"], atol=c["atol"],
                      max_iter=c["max_iter"], y_free=variant == "y_free")
    B = run_in_process(owners, central)
    B_ref = est.coef_owner_major_ / est.series_scale_.repeat(p)[:, None] * est.series_scale_[None, :]
    assert central.converged and est.converged_
    np.testing.assert_allclose(B, B_ref, rtol=0, atol=1e-9)
    assert central.k <= 2 * est.n_iter_  # the same acceleration (LASSO's inner solves round differently)


def test_a_federation_error_names_the_owner_behind_each_party_id():
    """Both Flower runs (paper and accelerated) share one wrapper that says which owner a party id is."""
    from engine.methods.var_admm.flower_roles import FederationError, _owners_named

    with pytest.raises(FederationError, match=r"^party 1 \(owner site-b\) stopped"):
        with _owners_named(["0", "1"], ["site-a", "site-b"]):
            raise FederationError("party 1 stopped answering")
