"""TukeyEM (Amin et al. 2023) and the joint calibration of Gaussian releases (issue #30).

Oracles: scikit-learn's LinearRegression (TukeyEM at epsilon = inf), dp-accounting's PLD accountant (the
joint calibration), the audit's empirical lower bound (TukeyEM's fit).
"""
from __future__ import annotations

import math

import dp_accounting
import numpy as np
import pytest
from dp_accounting.pld import PLDAccountant
from sklearn.linear_model import LinearRegression

from engine.methods.tukey_em import (
    PTR_RELEASE,
    TUKEY_RELEASE,
    TukeyEM,
    distance_to_unsafety,
    tukey_em_case,
    tukey_mechanism,
)
from engine.privacy import analytic_gaussian_sigma, gaussian_sigmas_for_budget
from engine.privacy.audit import run_case


@pytest.mark.parametrize("eps,delta", [(0.5, 1e-6), (1.0, 1e-5), (5.0, 1e-5)])
def test_joint_calibration_meets_eps_delta_under_dp_accounting_pld(eps, delta):
    # StrictEDPLS's three releases (count, Z'Z, Z'y~) with its shares of mu^2
    sens = np.array([1.0, math.sqrt(3) / 2, 1.0])
    sig = gaussian_sigmas_for_budget(eps, delta, sens, "gdp", weights=[0.05, 0.45, 0.5])
    acc = PLDAccountant(neighboring_relation=dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE,
                        value_discretization_interval=1e-4)
    for s, d in zip(sig, sens):
        acc.compose(dp_accounting.GaussianDpEvent(s / d))
    # the PLD discretisation is pessimistic by about its interval: delta within 2 % of the target, both sides
    assert acc.get_delta(eps) == pytest.approx(delta, rel=0.02)
    # and tighter than calibrating each release alone at the same share of (eps, delta) (basic composition)
    alone = [analytic_gaussian_sigma(eps * w, delta * w, d) for w, d in zip([0.05, 0.45, 0.5], sens)]
    assert np.all(sig < alone)


def _data(n, p=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    y = X @ np.arange(1.0, p + 1) + 3.0 + 0.3 * rng.normal(size=n)
    return X, y


def test_tukey_em_equals_ols_at_eps_inf_without_bounds():
    X, y = _data(500)
    X = 1e3 * X  # no bound anywhere: any scale
    est = TukeyEM(np.inf).fit(X, y)
    ols = LinearRegression().fit(X, y)
    # least squares through two solvers: agreement to cond(X) * machine epsilon * a small factor
    tol = 100 * np.linalg.cond(np.hstack([X, np.ones((500, 1))])) * np.finfo(float).eps
    assert np.allclose(est.coef_, ols.coef_, rtol=tol, atol=tol * np.abs(ols.coef_).max())
    assert est.intercept_ == pytest.approx(ols.intercept_, abs=tol * np.abs(ols.coef_).max() * 1e3)
    assert len(est.privacy_ledger_) == 0


def test_tukey_em_reaches_ols_with_many_rows_and_records_its_ledger():
    X, y = _data(20000)
    est = TukeyEM(1.0, 1e-5, random_state=3).fit(X, y)
    assert est.ptr_passed_
    assert np.abs(est.coef_ - [1.0, 2.0, 3.0]).max() < 0.1 and abs(est.intercept_ - 3.0) < 0.1
    names = [r.name for r in est.privacy_ledger_.entries]
    assert names == ["count n", PTR_RELEASE, TUKEY_RELEASE]
    assert est.privacy_ledger_.total("basic") == pytest.approx((1.0, 1e-5))
    assert est.privacy_ledger_.total("pld", 1e-5)[0] == pytest.approx(1.0)  # basic composition: no tighter claim
    assert est.privacy_ledger_.status == "not proven"  # a known seed


def test_tukey_em_ptr_fails_with_few_rows_and_says_so():
    X, y = _data(200)
    est = TukeyEM(1.0, 1e-5, random_state=0).fit(X, y)
    assert not est.ptr_passed_ and np.all(est.coef_ == 0) and est.intercept_ == 0
    assert "failed" in est.choices_["model"]


def test_distance_to_unsafety_has_sensitivity_one():
    # changing one model moves the distance lower bound by at most one (the PTR test's premise)
    rng = np.random.default_rng(5)
    for _ in range(20):
        models = rng.standard_t(3, size=(300, 3))
        other = models.copy()
        other[rng.integers(300)] = 50 * rng.normal(size=3)
        ks = []
        for mdl in (models, other):
            S = np.sort(mdl.T, axis=1)
            widths = S[:, ::-1][:, :150] - S[:, :150]
            ks.append(distance_to_unsafety(np.log(widths).sum(axis=0), 1.0, 1e-5, 75))
        assert abs(ks[0] - ks[1]) <= 1


def test_tukey_mechanism_samples_inside_the_models_hull():
    rng = np.random.default_rng(1)
    models = rng.normal(size=(2000, 2)) + [5.0, -1.0]
    point, facts = tukey_mechanism(models, 2.0, 1e-5, rng)
    assert facts["ptr_passed"] and facts["depth"] >= facts["t"]
    assert np.all(point > models.min(axis=0)) and np.all(point < models.max(axis=0))


@pytest.mark.slow  # 2000 TukeyEM fits, 23 s (pytest --durations, load 7-15, 2026-11-27): out of the fast lane
def test_tukey_em_fit_audit_stays_below_its_claim():
    r = run_case(tukey_em_case("strict", 1.0, 1e-5), 2000, 0, alpha=0.01)
    assert r["ok"] and r["eps_lb"] < r["claimed_eps"], r
