"""Plain strict EDPLS learns its intercept privately by default (issue #30 item 4), as AdaSSP and DPPCR do."""
from __future__ import annotations

import numpy as np
import pytest
from sklearn.cross_decomposition import PLSRegression

from engine.methods.edpls import EDPLS

DELTA = 1e-5


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(7)
    X = rng.normal(size=(400, 6)) @ rng.normal(size=(6, 6)) + 30.0  # far from the public centre 0
    y = X @ rng.normal(size=6) + 100.0 + 0.1 * rng.normal(size=400)
    return X, y


@pytest.mark.parametrize("k", [1, 3])
def test_epsilon_inf_with_a_far_public_centre_is_sklearn_pls(data, k):
    """At epsilon = inf the private centring is exact: the model is PLS on the data centred at its own mean
    (scikit-learn's PLSRegression, scale=False), however far the declared centre is. The oracle's error is
    cond(X'X) u relative; the data are well conditioned (cond ~ 1e2), so 1e-8 has room."""
    X, y = data
    big = 10.0 * float(np.abs(X).max() + np.abs(y).max()) * np.sqrt(X.shape[1])  # nothing is clipped
    est = EDPLS(n_components=k, epsilon=np.inf, delta=DELTA, mode="strict", x_bound=big, y_bound=big,
                x_center=np.zeros(X.shape[1]), y_center=0.0).fit(X, y)
    oracle = PLSRegression(n_components=k, scale=False).fit(X, y)
    np.testing.assert_allclose(est.predict(X), oracle.predict(X).ravel(), rtol=1e-8)
    assert len(est.privacy_ledger_) == 0


def test_private_intercept_is_the_default_and_can_be_switched_off(data):
    X, y = data
    big = 10.0 * float(np.abs(X).max() + np.abs(y).max()) * np.sqrt(X.shape[1])
    kw = dict(n_components=2, epsilon=np.inf, delta=DELTA, mode="strict", x_bound=big, y_bound=big,
              x_center=np.zeros(X.shape[1]), y_center=0.0)
    assert EDPLS().get_params()["private_intercept"] is True
    on = EDPLS(**kw).fit(X, y)
    off = EDPLS(**kw, private_intercept=False).fit(X, y)
    rmse = [float(np.sqrt(np.mean((m.predict(X) - y) ** 2))) for m in (on, off)]
    # the public centre 0 is the model's centre without the private intercept: far off the data
    assert rmse[1] > 3 * rmse[0]


def test_noisy_fit_with_a_far_centre_stays_near_the_mean(data):
    """epsilon = 5, wide bounds around a centre far from the data: the intercept comes from the release."""
    X, y = data
    xc, yc = np.zeros(X.shape[1]), 0.0
    xb = float(np.linalg.norm(X - xc, axis=1).max()) * 1.1
    yb = float(np.abs(y - yc).max()) * 1.1
    errs = {pi: np.median([np.sqrt(np.mean((EDPLS(n_components=2, epsilon=5.0, delta=DELTA, mode="strict",
                                                      x_bound=xb, y_bound=yb, x_center=xc, y_center=yc,
                                                      private_intercept=pi, random_state=s).fit(X, y).predict(X)
                                                - y) ** 2)) for s in range(5)])
            for pi in (True, False)}
    assert errs[True] < errs[False]
