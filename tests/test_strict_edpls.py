"""The recommended strict edPLS (issue #18): budget, public-only choices, non-private oracle, audit case."""
from __future__ import annotations

import math

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.cross_decomposition import PLSRegression
from sklearn.linear_model import LinearRegression

from engine.data.sample_generators import make_nir_spectra
from engine.methods.baselines import COUNT_AGAIN, DPConstantRegressor
from engine.methods.edpls import StrictEDPLS, make_strict_edpls
from engine.methods.edpls.audit_case import strict_edpls_case
from engine.methods.edpls.basis import chain_operator, rowwise_chain, spline_basis
from engine.methods.edpls.recommended import RELEASES
from engine.methods.tukey_em import PTR_RELEASE, TUKEY_RELEASE
from engine.privacy import ledger_totals
from engine.privacy.audit import planted_bug, run_case, upper_triangle
from engine.privacy.moments import add_remove_sensitivity
from engine.privacy.ranges import RANGE_RELEASE, RANGE_RELEASE_2, ZOOM_RELEASE

DELTA = 1e-5
Y_RANGE = (8.0, 12.5)


@pytest.fixture(scope="module")
def nir():
    pub = make_nir_spectra(n_samples=200, random_state=1).X
    a = make_nir_spectra(n_samples=1500, random_state=2)
    b = make_nir_spectra(n_samples=1500, random_state=3)
    return pub, a, b


def _basic(ledger):
    return sum(r.epsilon for r in ledger.entries), sum(r.delta for r in ledger.entries)


@pytest.mark.parametrize("eps", [0.5, 1.0, 10.0])
@pytest.mark.parametrize("n", [30, 1500])
def test_whole_fit_ledger_inside_budget(nir, eps, n):
    pub, a, _ = nir
    m = make_strict_edpls(eps, DELTA, y_range=Y_RANGE, X_public=pub, random_state=0).fit(a.X[:n], a.Y[:n, 0])
    led = m.privacy_ledger_
    d = _basic(led)[1]
    e = led.total(led.accountant, DELTA)[0] if led.accountant != "basic" else _basic(led)[0]
    assert led.accountant in ("basic", "gdp")  # gdp: the moment releases are calibrated jointly (exact)
    assert e <= eps * (1 + 1e-9) and d <= DELTA * (1 + 1e-12)
    assert e >= eps * (1 - 1e-9)  # the whole budget is accounted for, selection (the count) included
    names = [r.name for r in m.privacy_ledger_.entries]
    assert names[0] == RELEASES[0]  # the count that sets d is a ledger release
    # the declared range refined privately (refine_y_range=True) whatever the count: one histogram on the
    # TukeyEM path (basic composition), else two halves (the second on the log grid or a zoom)
    assert names[1] == RANGE_RELEASE and names.count(RANGE_RELEASE) == 1
    names.pop(1)
    if not m.choices_["d_why"].startswith("TukeyEM"):
        assert names.pop(1) in (RANGE_RELEASE_2, ZOOM_RELEASE)
    assert all(r.sensitivity_source == "public" for r in m.privacy_ledger_.entries)
    assert ledger_totals(m.privacy_ledger_) is not None
    if m.choices_["d_why"].startswith("TukeyEM"):  # estimator="auto": enough rows for TukeyEM at this epsilon
        assert names == [RELEASES[0], PTR_RELEASE, TUKEY_RELEASE]
    elif m.choices_["d"] == 0:
        assert names == [RELEASES[0], COUNT_AGAIN, "sum of y~"] and np.all(m.coef_ == 0)
    else:
        assert names == list(RELEASES)


def test_fresh_noise_is_proven_and_known_seed_is_not(nir):
    pub, a, _ = nir
    fresh = make_strict_edpls(1.0, DELTA, y_range=Y_RANGE, X_public=pub).fit(a.X, a.Y[:, 0])
    seeded = make_strict_edpls(1.0, DELTA, y_range=Y_RANGE, X_public=pub, random_state=3).fit(a.X, a.Y[:, 0])
    assert fresh.privacy_ledger_.status == "proven"
    assert seeded.privacy_ledger_.status == "not proven"


PUBLIC_KEYS = ("basis", "centre_source", "x_bound", "x_bound_source", "y_center", "y_bound", "chain", "d_max")


def test_private_rows_set_no_public_quantity(nir):
    pub, a, b = nir
    # the declared range as is (refined privately, y's centre and bound are DP outputs instead: checked in
    # tests/test_private_range.py)
    est = make_strict_edpls(1.0, DELTA, y_range=Y_RANGE, X_public=pub, random_state=0, refine_y_range=False)
    fa, fb = clone(est).fit(a.X, a.Y[:, 0]), clone(est).fit(b.X * 1.3 + 0.2, b.Y[:, 2])
    for key in PUBLIC_KEYS:
        assert fa.choices_[key] == fb.choices_[key], key
    d = min(fa.choices_["d"], fb.choices_["d"])
    np.testing.assert_array_equal(fa.components_[:, :d], fb.components_[:, :d])
    # the budget split and sigmas are public too
    assert fa.choices_["budget"] == fb.choices_["budget"]
    # ... and they move with the public inputs
    other = make_strict_edpls(1.0, DELTA, y_range=(0.0, 20.0), X_public=pub[:100] * 2.0, random_state=0,
                              refine_y_range=False)
    fc = other.fit(a.X, a.Y[:, 0])
    assert fc.choices_["x_bound"] != fa.choices_["x_bound"]
    assert (fc.choices_["y_center"], fc.choices_["y_bound"]) == (10.0, 10.0)


def test_without_public_data_the_bound_is_data_free_and_holds():
    m = 120
    est = make_strict_edpls(1.0, DELTA, y_range=(0, 1))
    setup = est.public_setup(m)
    assert "data-free" in setup["x_bound_source"]
    rng = np.random.default_rng(0)
    hostile = np.vstack([rng.normal(size=(200, m)), np.tile([1.0, -1.0], m // 2), rng.standard_cauchy((50, m)),
                         np.cumsum(rng.normal(size=(50, m)), axis=1)])
    U = setup["chain"].transform(hostile) @ setup["V"] - setup["x_center"]
    assert np.linalg.norm(U, axis=1).max() <= setup["x_bound"] * (1 + 1e-9)
    # the operator is the chain's linear part; the spline basis is orthonormal
    M = chain_operator("snv+sg1", m)
    np.testing.assert_allclose(rowwise_chain("sg1", m).transform(hostile[:3]), hostile[:3] @ M.T, atol=1e-9)
    V = spline_basis(m, 12)
    np.testing.assert_allclose(V.T @ V, np.eye(12), atol=1e-10)


def _projected(est, X):
    setup = est.public_setup(X.shape[1])
    return setup["chain"].transform(X) @ setup["V"] - setup["x_center"]


@pytest.mark.parametrize("n_components", ["auto", "ridge"])
def test_epsilon_inf_is_least_squares_on_the_projection(nir, n_components):
    pub, a, _ = nir
    X, y = a.X[:400], a.Y[:400, 0]
    est = StrictEDPLS(np.inf, DELTA, y_range=(0.0, 40.0), X_public=pub, x_bound=1e6, max_dim=6,
                      n_components=n_components).fit(X, y)
    assert len(est.privacy_ledger_) == 0 and est.privacy_ledger_.status == "no privacy"
    U, Ut = _projected(est, X), _projected(est, a.X[400:600])
    oracle = LinearRegression().fit(U, y)
    np.testing.assert_allclose(est.predict(a.X[400:600]), oracle.predict(Ut), rtol=1e-7, atol=1e-7)


@pytest.mark.parametrize("k", [1, 3])
def test_epsilon_inf_pls_is_sklearn_pls_on_the_projection(nir, k):
    pub, a, _ = nir
    X, y = a.X[:400], a.Y[:400, 2]
    est = StrictEDPLS(np.inf, DELTA, y_range=(0.0, 40.0), X_public=pub, x_bound=1e6, max_dim=6,
                      n_components=k).fit(X, y)
    U, Ut = _projected(est, X), _projected(est, a.X[400:600])
    oracle = PLSRegression(n_components=k, scale=False).fit(U, y)
    np.testing.assert_allclose(est.predict(a.X[400:600]), oracle.predict(Ut).ravel(), rtol=1e-7, atol=1e-7)


def test_fallback_is_exactly_the_private_constant(nir):
    pub, a, _ = nir
    X, y = a.X[:20], a.Y[:20, 0]
    ours = make_strict_edpls(0.5, DELTA, y_range=Y_RANGE, X_public=pub, random_state=5,
                             refine_y_range=False).fit(X, y)
    assert ours.choices_["d"] == 0
    const = DPConstantRegressor(0.5, DELTA, y_range=Y_RANGE, random_state=5).fit(X, y)
    np.testing.assert_allclose(ours.predict(a.X[:5]), const.predict(a.X[:5]), rtol=1e-12)


def test_useful_at_large_n(nir):
    pub, a, b = nir
    big = make_nir_spectra(n_samples=8000, random_state=4)
    m = make_strict_edpls(1.0, DELTA, y_range=(8.2, 12.2), X_public=pub, random_state=0).fit(big.X, big.Y[:, 0])
    rmse = np.sqrt(np.mean((m.predict(b.X) - b.Y[:, 0]) ** 2)) / b.Y[:, 0].std()
    assert m.choices_["d"] >= 3 and rmse < 0.5


def test_released_changes_match_the_proven_sensitivities():
    X_pub = np.random.default_rng(0).normal(size=(30, 4))
    est = StrictEDPLS(1.0, DELTA, y_range=(-2.0, 2.0), X_public=X_pub, preprocessing="none", max_dim=2)
    pub = est.public_setup(4)
    X = np.random.default_rng(1).normal(size=(10, 4)) * 0.2
    row = X_pub.mean(axis=0) + pub["V"][:, 0] * pub["x_bound"]  # projection norm exactly x_bound, y~ = 1
    r0, y0 = est.scaled_rows(X, np.zeros(10), pub, 2)
    r1, y1 = est.scaled_rows(np.vstack([X, row]), np.append(np.zeros(10), 2.0), pub, 2)
    dG = upper_triangle((r1.Z.T @ r1.Z - r0.Z.T @ r0.Z)[None])[0]
    np.testing.assert_allclose(np.linalg.norm(dG), add_remove_sensitivity([1.0], 1.0), rtol=1e-9)
    np.testing.assert_allclose(np.linalg.norm(r1.Z.T @ y1 - r0.Z.T @ y0), 1.0, rtol=1e-9)
    assert math.isclose(add_remove_sensitivity([1.0], 1.0), math.sqrt(3) / 2)


@pytest.mark.slow  # 13 s (pytest --durations, load 7-15, 2026-11-27): out of the fast lane
def test_audit_case_holds_and_catches_bugs():
    assert run_case(strict_edpls_case(epsilon=1.0), n_trials=40_000, random_state=0)["ok"]
    assert run_case(strict_edpls_case(epsilon=1.0, part="cross"), n_trials=40_000, random_state=0)["ok"]
    with planted_bug("noise_scale", 0.25):  # in production: the fit's own draws (halved: bench/audit_all.py)
        r = run_case(strict_edpls_case(epsilon=1.0, part="cross"), n_trials=100_000, random_state=0)
    assert r["eps_lb"] > r["claimed_eps"], r


def test_sklearn_basics_and_refusals(nir):
    pub, a, _ = nir
    est = make_strict_edpls(1.0, DELTA, y_range=Y_RANGE, X_public=pub, n_components=2)
    params = est.get_params()
    assert params["n_components"] == 2 and params["y_range"] == Y_RANGE
    assert clone(est).get_params()["epsilon"] == 1.0
    with pytest.raises(ValueError, match="y_range"):
        make_strict_edpls(1.0, DELTA, y_range=(1.0, 1.0)).fit(a.X[:50], a.Y[:50, 0])
    with pytest.raises(ValueError, match="row-wise"):
        make_strict_edpls(1.0, DELTA, y_range=Y_RANGE, preprocessing="msc").fit(a.X[:50], a.Y[:50, 0])
    with pytest.raises(ValueError, match="count_share"):
        StrictEDPLS(1.0, DELTA, y_range=Y_RANGE, count_share=0.5, cross_share=0.6).fit(a.X[:50], a.Y[:50, 0])
    with pytest.raises(ValueError, match="X_public"):
        make_strict_edpls(1.0, DELTA, y_range=Y_RANGE, X_public=pub[:, :10]).fit(a.X[:50], a.Y[:50, 0])


@pytest.mark.parametrize("public", [False, True])
def test_sample_weight_counts_equal_the_repeated_rows(nir, public):
    """Integer counts are the repeated rows: same releases from the same generator, same model (the oracle is
    the fit on the materialised rows); the constant fallback too (n = 12: no axis)."""
    pub, a, b = nir
    kw = {"X_public": pub} if public else {}
    for n in (12, 300):
        X, y = a.X[:n], a.Y[:n, 0]
        counts = np.random.default_rng(n).integers(0, 4, n)
        counts[0] = max(counts[0], 1)
        idx = np.repeat(np.arange(n), counts)
        w = make_strict_edpls(1.0, DELTA, y_range=Y_RANGE, random_state=np.random.default_rng(5), **kw)
        r = make_strict_edpls(1.0, DELTA, y_range=Y_RANGE, random_state=np.random.default_rng(5), **kw)
        fw, fr = w.fit(X, y, sample_weight=counts), r.fit(X[idx], y[idx])
        assert fw.choices_["d"] == fr.choices_["d"]
        np.testing.assert_allclose(fw.predict(b.X[:50]), fr.predict(b.X[:50]), rtol=1e-9, atol=1e-9)
        assert [e.name for e in fw.privacy_ledger_.entries] == [e.name for e in fr.privacy_ledger_.entries]
    # ones are the unweighted fit; a count of 0 drops the row
    one = make_strict_edpls(np.inf, DELTA, y_range=Y_RANGE, **kw)
    np.testing.assert_allclose(clone(one).fit(a.X[:300], a.Y[:300, 0], sample_weight=np.ones(300)).coef_,
                               clone(one).fit(a.X[:300], a.Y[:300, 0]).coef_)
    drop = np.ones(300)
    drop[:100] = 0
    kept = clone(one).fit(a.X[100:300], a.Y[100:300, 0])
    dropped = clone(one).fit(a.X[:300], a.Y[:300, 0], sample_weight=drop)
    # Error analysis: both fits solve the same normal equations, summed in a different order (zero-weighted rows
    # vs a subset: BLAS blocks the products differently). The centring is done on the raw moments G = [Z 1]'[Z 1]
    # (C = G_zz - n mean mean'), so the solve's relative forward error is about kappa(G) u (u = 2^-53), not
    # kappa(C) u: here kappa(G) ~ 4e9, i.e. 5e-7 relative (OpenBLAS' Haswell and Sandybridge kernels give 1e-9 to
    # 2e-9 normwise, 5e-8 to 4e-7 on small entries; the old rtol 1e-8 elementwise failed there). Checked normwise
    # at 2 kappa(G) u (one kappa(G) u per fit); a weight that does not drop its row is off by O(1).
    pub = one._kept_public_setup(a.X.shape[1])
    rows, _ = one.scaled_rows(a.X[100:300], a.Y[100:300, 0], pub, pub["V"].shape[1])
    kappa = np.linalg.cond(rows.Z.T @ rows.Z)
    tol = 2 * kappa * np.finfo(float).eps / 2
    err = np.linalg.norm(dropped.coef_ - kept.coef_) / np.linalg.norm(kept.coef_)
    assert err <= tol, (err, kappa)
    assert abs(dropped.intercept_ - kept.intercept_) <= tol * abs(kept.intercept_)


@pytest.mark.parametrize("bad", [np.full(50, 0.5), -np.ones(50), np.ones(49), np.zeros(50)])
def test_sample_weight_refuses_what_has_no_sensitivity_argument(nir, bad):
    pub, a, _ = nir
    with pytest.raises(ValueError, match="sample_weight"):
        make_strict_edpls(1.0, DELTA, y_range=Y_RANGE, X_public=pub).fit(a.X[:50], a.Y[:50, 0], sample_weight=bad)


def test_a_flat_spectrum_maps_to_the_zero_row_and_few_channels_are_refused_by_name():
    chain = rowwise_chain("snv+sg1", 12)
    rising = np.arange(12.0) ** 1.5
    out = chain.transform(np.vstack([np.full(12, 3.0), rising]))
    assert np.array_equal(out[0], np.zeros(12))  # SNV of a flat row has no shape: zero, inside every bound
    np.testing.assert_array_equal(out[1], rowwise_chain("snv+sg1", 12).transform(rising[None, :])[0])
    X = np.random.default_rng(0).normal(size=(20, 12))
    X[3] = 1.0  # a flat private row does not break the fit
    model = make_strict_edpls(1.0, 1e-5, y_range=(-3.0, 3.0), random_state=0).fit(X, X[:, 0])
    assert np.isfinite(model.predict(X)).all()
    with pytest.raises(ValueError, match="at least 8 channels"):
        make_strict_edpls(1.0, 1e-5, y_range=(-3.0, 3.0)).fit(X[:, :3], X[:, 0])


def test_refits_reuse_the_public_setup_until_a_public_input_changes(nir, monkeypatch):
    """A sweep refits with only random_state changed: the public setup is computed once, and again as soon as
    a public input (X_public, y_range, epsilon) changes; every refit equals a fresh estimator's fit, also after
    a fit that fell back to the private constant (which must not alter the kept setup)."""
    X_public, a, _ = nir
    X, y = a.X, a.Y[:, 0]
    calls = []
    original = StrictEDPLS.public_setup
    monkeypatch.setattr(StrictEDPLS, "public_setup", lambda self, m: calls.append(m) or original(self, m))

    def fresh(seed, rows=slice(None), **kw):
        params = {"y_range": (0.0, 100.0), "X_public": X_public, "random_state": seed, **kw}
        return make_strict_edpls(1.0, 1e-5, **params).fit(X[rows], y[rows])

    est = make_strict_edpls(1.0, 1e-5, y_range=(0.0, 100.0), X_public=X_public)
    for seed, rows in ((1, slice(None)), (2, slice(0, 30)), (3, slice(None))):
        kept = est.set_params(random_state=seed).fit(X[rows], y[rows])
        ref = fresh(seed, rows)
        assert kept.choices_["d"] == ref.choices_["d"]
        np.testing.assert_array_equal(kept.coef_, ref.coef_)
        assert kept.intercept_ == ref.intercept_
        assert [r.name for r in kept.privacy_ledger_.entries] == [r.name for r in ref.privacy_ledger_.entries]
    assert est.set_params(random_state=2).fit(X[:30], y[:30]).choices_["d"] == 0  # the fallback was exercised
    assert len(calls) == 1 + 3  # the kept estimator's first fit, and each fresh estimator's
    est.set_params(y_range=(0.0, 50.0)).fit(X, y)
    est.set_params(X_public=X_public[::2]).fit(X, y)
    est.set_params(epsilon=2.0).fit(X, y)
    assert len(calls) == 4 + 3
