"""AdaSSP (Wang 2018, Algorithm 2) and the private constant predictor: closed forms, ledgers, noise levels."""
from __future__ import annotations

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.linear_model import LinearRegression

from engine.methods.adassp import RELEASES, AdaSSP
from engine.methods.baselines import COUNT_AGAIN, COUNT_RELEASE, SUM_RELEASE, DPConstantRegressor
from engine.privacy import analytic_gaussian_sigma, noise_scale

DELTA = 1e-5


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(3000, 4)) / 2
    y = X @ np.array([0.8, -0.4, 0.2, 0.0]) + 0.05 * rng.normal(size=3000)
    return X, y


def test_epsilon_inf_is_ols_without_intercept(data):
    X, y = data
    est = AdaSSP(np.inf, DELTA, x_bound=10.0, y_bound=10.0, fit_intercept=False).fit(X, y)
    np.testing.assert_allclose(est.coef_, np.linalg.solve(X.T @ X, X.T @ y), rtol=1e-10)
    assert est.intercept_ == 0.0 and est.ridge_lambda_ == 0.0 and len(est.privacy_ledger_) == 0


def test_epsilon_inf_with_public_centre_is_ols_around_it(data):
    X, y = data
    xc, yc = X.mean(axis=0), float(y.mean())  # oracle: centring at the sample means gives sklearn's OLS
    est = AdaSSP(np.inf, DELTA, x_bound=10.0, y_bound=10.0, x_center=xc, y_center=yc).fit(X, y)
    ols = LinearRegression().fit(X, y)
    np.testing.assert_allclose(est.coef_, ols.coef_, rtol=1e-9)
    np.testing.assert_allclose(est.predict(X[:5]), ols.predict(X[:5]), rtol=1e-9)


def test_rows_are_clipped_to_the_bounds(data):
    X, y = data
    big = np.vstack([X, 100 * np.ones((1, 4))])
    a = AdaSSP(np.inf, DELTA, x_bound=1.0, y_bound=1.0, fit_intercept=False).fit(big, np.append(y, 100.0))
    Xc = np.vstack([X, np.ones((1, 4)) / 2.0])  # the outlier scaled onto ||x|| = 1, y clipped to 1
    np.testing.assert_allclose(a.coef_, np.linalg.solve(Xc.T @ Xc, Xc.T @ np.append(y, 1.0)), rtol=1e-9)


def test_ledger_inside_budget_and_useful(data):
    X, y = data
    est = AdaSSP(1.0, DELTA, x_bound=1.0, y_bound=1.5, random_state=0).fit(X, y)
    led = est.privacy_ledger_
    assert [r.name for r in led.entries] == list(RELEASES)
    # jointly calibrated: the exact Gaussian-DP total meets the budget (the basic sum of the records exceeds it)
    assert led.accountant == "gdp" and led.total("gdp", DELTA)[0] == pytest.approx(1.0, rel=1e-9)
    assert led.total("pld", DELTA)[0] <= 1.0 + 1e-9
    assert sum(r.delta for r in led.entries) <= DELTA * (1 + 1e-12)
    # the private intercept's constant column: row bound sqrt(2) x_bound
    assert led.entries[1].sensitivity == pytest.approx(2.0) and led.entries[2].sensitivity == pytest.approx(
        1.5 * np.sqrt(2))
    assert led.status == "not proven"  # known seed
    assert np.abs(est.coef_ - [0.8, -0.4, 0.2, 0.0]).max() < 0.2
    assert est.ridge_lambda_ >= 0
    assert clone(est).get_params()["x_bound"] == 1.0


def test_constant_at_epsilon_inf_is_the_clipped_mean():
    y = np.array([1.0, 2.0, 3.0, 50.0])
    c = DPConstantRegressor(np.inf, DELTA, y_range=(0.0, 10.0)).fit(np.zeros((4, 1)), y)
    assert c.constant_ == pytest.approx(np.mean(np.clip(y, 0, 10)))
    assert len(c.privacy_ledger_) == 0


@pytest.mark.parametrize("eps", [0.5, 1.0, 10.0])
def test_constant_is_within_the_noise_of_the_true_mean(eps):
    rng = np.random.default_rng(1)
    n, lo, hi = 2000, 0.0, 10.0
    y = rng.uniform(2.0, 4.0, size=n)
    # the Gaussian-DP budget left by the 5 % count: a third buys a second count, the rest the sum (exact GDP)
    sigma_n = noise_scale("gaussian", eps * 0.05, DELTA * 0.05, 1.0)
    mu2 = 1.0 / analytic_gaussian_sigma(eps, DELTA, 1.0) ** 2 - 1.0 / sigma_n**2
    sigma_n2, sigma_sum = 1.0 / np.sqrt(mu2 / 3), 1.0 / np.sqrt(2 * mu2 / 3)
    sigma_count = 1.0 / np.sqrt(1.0 / sigma_n**2 + 1.0 / sigma_n2**2)  # the inverse-variance combination
    mean_t = (y.mean() - 5.0) / 5.0  # the mean of y~ (centre 5, half-width 5)
    # delta method: mean = S / N, Var = (sigma_S / n)^2 + (mean sigma_N / n)^2, in data units times the half-width
    sd = 5.0 * np.hypot(sigma_sum, mean_t * sigma_count) / n
    vals = [DPConstantRegressor(eps, DELTA, y_range=(lo, hi), random_state=s).fit(np.zeros((n, 1)), y).constant_
            for s in range(200)]
    err = np.array(vals) - y.mean()
    assert abs(err.mean()) < 4 * sd / np.sqrt(200) + 0.01 * sd
    assert 0.8 * sd < err.std() < 1.25 * sd
    led = DPConstantRegressor(eps, DELTA, y_range=(lo, hi)).fit(np.zeros((n, 1)), y).privacy_ledger_
    assert [r.name for r in led.entries] == [COUNT_RELEASE, COUNT_AGAIN, SUM_RELEASE] and led.accountant == "gdp"
    assert led.total("gdp", DELTA)[0] == pytest.approx(eps, rel=1e-6) and led.status == "proven"
    assert sum(r.delta for r in led.entries) == pytest.approx(DELTA)


def test_epsilon_inf_without_bounds_is_sklearn_ols_with_intercept(data):
    X, y = data
    X = 100 * X + 5.0  # far from any centre, no bound given: nothing is clipped
    est = AdaSSP(np.inf, DELTA, x_bound=None, y_bound=None).fit(X, y + 40.0)
    ols = LinearRegression().fit(X, y + 40.0)
    np.testing.assert_allclose(est.coef_, ols.coef_, rtol=1e-8)
    assert est.intercept_ == pytest.approx(ols.intercept_, rel=1e-8)
    with pytest.raises(ValueError, match="x_bound and y_bound"):
        AdaSSP(1.0, DELTA, x_bound=None, y_bound=None).fit(X, y)


def test_private_intercept_recovers_an_offset_the_public_centre_misses(data):
    X, y = data
    far = AdaSSP(1.0, DELTA, x_bound=1.0, y_bound=4.0, x_center=np.zeros(4), y_center=0.0, random_state=1)
    est = far.fit(X, y + 2.0)  # the data's mean is 2 away from the public centre
    assert abs(est.intercept_ - 2.0) < 0.2
    none = AdaSSP(1.0, DELTA, x_bound=1.0, y_bound=4.0, x_center=np.zeros(4), y_center=0.0, fit_intercept=False,
                  random_state=1).fit(X, y + 2.0)
    assert none.intercept_ == 0.0
