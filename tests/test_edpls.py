"""edPLS (engine.methods.edpls) against independent oracles.

Oracles: scikit-learn's PLSRegression (noise off), a literal numpy transcription of the spec's
Algorithm 1 pseudo-code with explicit deflation (the fast path's algebra), diPLSlib's ``edpls``
function (the authors' code: sensitivities, sigmas and, with the same Generator, the very same
noise), the privacy core's ledger totals, and empirical noise statistics.
"""
import json
import math
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.cross_decomposition import PLSRegression
from sklearn.exceptions import DataConversionWarning
from sklearn.model_selection import GridSearchCV

import engine.methods.edpls.core as coremod
import engine.methods.edpls.strict as edpls_strict
from engine.methods.edpls import (
    EDPLS,
    edpls_replicates,
    model_from_dict,
    pls1_from_moments,
    rmsep_curve,
    rmsep_vs_components,
    rmsep_vs_preprocessing,
    samples_needed,
    samples_needed_curve,
    to_json,
)
from engine.privacy import SEED_KNOWN_CAVEAT, analytic_gaussian_sigma
from engine.release.manifest import release_problems

CORN = Path(__file__).resolve().parents[2] / "shared" / "data" / "corn"


@pytest.fixture(scope="module")
def corn():
    if not (CORN / "corn_m5spec.csv").exists():
        pytest.skip("corn data not present")
    X = pd.read_csv(CORN / "corn_m5spec.csv").to_numpy(dtype=float)
    y = pd.read_csv(CORN / "corn_propvals.csv")["Moisture"].to_numpy(dtype=float)
    return X, y


def _random(n=40, m=15, seed=0, offset=3.0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, m)) @ rng.standard_normal((m, m)) + offset
    y = X @ rng.standard_normal(m) + rng.standard_normal(n) + 10
    return X, y


def _rel(a, b):
    return np.abs(np.asarray(a) - np.asarray(b)).max() / np.abs(np.asarray(b)).max()


def literal_algorithm(X, y, k, ymax="abs"):
    """Spec Sec. 2 pseudo-code, noise off, explicit deflation: per component w, t, p, c, xmax, ymax."""
    E = X - X.mean(0)
    f = y - y.mean()
    out = []
    for _ in range(k):
        w = E.T @ f
        w = w / np.linalg.norm(w)
        xmax = np.linalg.norm(E, axis=1).max()
        ym = np.abs(f).max() if ymax == "abs" else f.max()
        t = E @ w
        t = t / np.linalg.norm(t)
        p = E.T @ t
        c = f @ t
        out.append((w, t, p, c, xmax, ym))
        E = E - np.outer(t, p)
        f = f - t * c
    return out


# ----------------------------------------------------------------------------- noise off
@pytest.mark.parametrize("k", [1, 2, 5, 10])
def test_noise_off_equals_sklearn_on_corn(corn, k):
    X, y = corn
    ours = EDPLS(n_components=k, epsilon=np.inf).fit(X, y)
    ref = PLSRegression(n_components=k, scale=False).fit(X, y)
    assert _rel(ours.coef_, ref.coef_.ravel()) < 1e-8
    assert _rel(ours.predict(X), ref.predict(X).ravel()) < 1e-8
    assert len(ours.privacy_ledger_) == 0


@pytest.mark.parametrize("shape, k", [((40, 15), 6), ((30, 100), 8), ((200, 5), 5), ((3000, 200), 6)])
@pytest.mark.parametrize("copy_limit", [None, 0])
@pytest.mark.parametrize("blas", [False, True])
def test_noise_off_equals_sklearn_on_random_data(monkeypatch, shape, k, copy_limit, blas):
    if copy_limit is not None:  # exercise the implicit-centring (no copy) path
        monkeypatch.setattr(coremod, "_COPY_LIMIT", copy_limit)
    monkeypatch.setattr(coremod, "_products_by_blas", lambda: blas)  # both kernels, whichever this machine picks
    X, y = _random(*shape, seed=shape[1])
    if X.size > 500_000:  # large enough for the threaded row passes (on a machine with >= 2 cores)
        assert len(coremod._RowPasses(X).groups) == min(3, os.cpu_count() or 1)
    ours = EDPLS(n_components=k, epsilon=np.inf).fit(X, y)
    ref = PLSRegression(n_components=k, scale=False).fit(X, y)
    assert _rel(ours.coef_, ref.coef_.ravel()) < 1e-8
    Xt, _ = _random(*shape, seed=99)
    assert _rel(ours.predict(Xt), ref.predict(Xt).ravel()) < 1e-8


@pytest.mark.parametrize("blas", [False, True])
@pytest.mark.parametrize("n", [7, 3000])  # one block; several blocks in (on >= 2 cores) several threads' groups
def test_row_pass_products_equal_numpys_with_either_kernel(monkeypatch, blas, n):
    """Each product of the row passes (one or several vectors, one or several rows of U) equals numpy's to
    rounding: a sum of N products errs by at most N eps sum|u_i x_i| <= N^2 eps max|u| max|x| (sequential
    summation; blocked or pairwise only less), twice that between two such sums. The squared row norms: 400 positive
    terms, so 2 x 400 eps relative."""
    monkeypatch.setattr(coremod, "_products_by_blas", lambda: blas)
    rng = np.random.default_rng(n)
    X = rng.normal(size=(n, 400))
    U, V = rng.normal(size=(2, n)), rng.normal(size=(400, 2))
    eps, big = np.finfo(float).eps, max(n, 400)
    bound = 2 * big * big * eps * np.abs(X).max() * max(np.abs(U).max(), np.abs(V).max())
    with coremod._RowPasses(X) as rp:
        assert rp.blas is blas
        np.testing.assert_allclose(rp.tmul(U[0]), U[0] @ X, rtol=0, atol=bound)
        np.testing.assert_allclose(rp.tmul(U), U @ X, rtol=0, atol=bound)
        for got, v in zip(rp.mul(V[:, 0]) + rp.mul(V[:, 0], V[:, 1]), [V[:, 0], V[:, 0], V[:, 1]], strict=True):
            np.testing.assert_allclose(got, X @ v, rtol=0, atol=bound)
        sums, rn2 = rp.sums_and_norms(U)
        np.testing.assert_allclose(sums, U @ X, rtol=0, atol=bound)
        np.testing.assert_allclose(rn2, (X * X).sum(axis=1), rtol=2 * 400 * eps, atol=0)


def test_the_kernel_is_chosen_once_per_process():
    assert coremod._products_by_blas() in (True, False)
    assert coremod._products_by_blas() is coremod._products_by_blas()
    assert coremod._products_by_blas.cache_info().misses == 1


@pytest.mark.parametrize("copy_limit", [None, 0])
@pytest.mark.parametrize("ymax", ["abs", "signed"])
@pytest.mark.parametrize("blas", [False, True])
def test_fast_path_equals_the_literal_algorithm(corn, monkeypatch, copy_limit, ymax, blas):
    if copy_limit is not None:
        monkeypatch.setattr(coremod, "_COPY_LIMIT", copy_limit)
    monkeypatch.setattr(coremod, "_products_by_blas", lambda: blas)
    X, y = corn
    k = 8
    m = EDPLS(n_components=k, epsilon=np.inf, ymax=ymax).fit(X, y)
    lit = literal_algorithm(X, y, k, ymax)
    for j, (w, t, p, c, xmax, ym) in enumerate(lit):
        assert _rel(m.x_weights_[:, j], w) < 1e-9
        assert _rel(m.x_scores_[:, j], t) < 1e-9
        assert _rel(m.x_loadings_[:, j], p) < 1e-9
        assert m.y_loadings_[j] == pytest.approx(c, rel=1e-9)
        # sample bounds from the CURRENT deflated residuals (row norms by the update formula)
        assert m.sensitivities_.loc[j + 1, "t"] == pytest.approx(xmax, rel=1e-9)
        assert m.sensitivities_.loc[j + 1, "c"] == pytest.approx(ym, rel=1e-9)
        assert m.sensitivities_.loc[j + 1, "w"] == pytest.approx(xmax * ym, rel=1e-9)
    # the bounds really change from component to component
    assert m.sensitivities_["t"].iloc[0] > 1.5 * m.sensitivities_["t"].iloc[-1]


def test_spec_worked_numbers_on_corn(corn):
    X, y = corn
    m = EDPLS(n_components=1, epsilon=1.0, random_state=0).fit(X, y)
    assert m.sensitivities_.loc[1, "t"] == pytest.approx(2.912, abs=1e-3)
    assert m.sensitivities_.loc[1, "w"] == pytest.approx(2.50, abs=0.01)
    s = EDPLS(n_components=1, epsilon=1.0, ymax="signed", random_state=0).fit(X, y)
    assert s.sensitivities_.loc[1, "w"] == pytest.approx(2.21, abs=0.01)


# ----------------------------------------------------------------------------- the release
def test_released_w_and_t_have_unit_norm(corn):
    X, y = corn
    m = EDPLS(n_components=6, epsilon=1.0, random_state=3).fit(X, y)
    np.testing.assert_allclose(np.linalg.norm(m.x_weights_, axis=0), 1.0, atol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(m.x_scores_, axis=0), 1.0, atol=1e-12)
    assert m.x_scores_.shape == (80, 6) and m.x_loadings_.shape == (700, 6) and m.y_loadings_.shape == (6,)
    # b = W_dp (P_dp' W_dp)^-1 c_dp
    M = m.x_loadings_.T @ m.x_weights_
    np.testing.assert_allclose(m.coef_, m.x_weights_ @ np.linalg.solve(M, m.y_loadings_), rtol=1e-10)
    assert m.condition_number_ == pytest.approx(np.linalg.cond(M), rel=1e-8)
    assert m.intercept_ == pytest.approx(y.mean() - X.mean(0) @ m.coef_)


@pytest.mark.parametrize("noise_std", ["sigma", "sigma_squared"])
def test_empirical_noise_std_is_the_configured_one(corn, noise_std):
    """Spec checklist 3: std of (w_dp_raw - w) equals sigma_w (or sigma_w^2) within 5%."""
    X, y = corn
    est = EDPLS(n_components=2, epsilon=10.0, noise_std=noise_std)
    clean = EDPLS(n_components=2, epsilon=np.inf).fit(X, y)
    out = est.sample_releases(X, y, 300, random_state=1, keep_raw=True)
    tab = out["noise_table"].set_index(["component", "quantity"])
    for j in (1, 2):
        sig = tab.loc[(j, "w"), "sigma"]
        expected = sig if noise_std == "sigma" else sig**2
        assert tab.loc[(j, "w"), "std_applied"] == pytest.approx(expected)
        emp = (out["W_raw"][:, j - 1, :] - clean.x_weights_[:, j - 1]).std()
        assert emp == pytest.approx(expected, rel=0.05)
        emp_t = (out["T_raw"][:, j - 1, :] - clean.x_scores_[:, j - 1]).std()
        sig_t = tab.loc[(j, "t"), "sigma"]
        assert emp_t == pytest.approx(sig_t if noise_std == "sigma" else sig_t**2, rel=0.05)
        emp_p = (out["P"][:, :, j - 1] - clean.x_loadings_[:, j - 1]).std()
        assert emp_p == pytest.approx(tab.loc[(j, "p"), "std_applied"], rel=0.05)
    # the two modes are distinguishable at this setting (the test can fail)
    s = tab.loc[(1, "w"), "sigma"]
    assert abs(s - s**2) > 0.1 * s


def test_sigmas_are_the_analytic_calibration_and_split_budget(corn):
    X, y = corn
    k = 3
    m = EDPLS(n_components=k, epsilon=2.0, delta=0.01, random_state=0).fit(X, y)
    unit = analytic_gaussian_sigma(2.0, 0.01, 1.0)
    np.testing.assert_allclose(m.sigmas_.to_numpy(), unit * m.sensitivities_.to_numpy(), rtol=1e-12)
    led = m.privacy_ledger_
    assert len(led) == 4 * k and not led.proven
    assert all(r.sensitivity_source == "data" and r.claimed_epsilon == 2.0 for r in led.entries)
    assert led.total("basic") == pytest.approx((4 * k * 2.0, 4 * k * 0.01))
    s = EDPLS(n_components=k, epsilon=2.0, delta=0.01, budget="split", random_state=0).fit(X, y)
    unit_s = analytic_gaussian_sigma(2.0 / (4 * k), 0.01 / (4 * k), 1.0)
    np.testing.assert_allclose(s.sigmas_.to_numpy(), unit_s * s.sensitivities_.to_numpy(), rtol=1e-12)
    assert s.privacy_ledger_.total("basic") == pytest.approx((2.0, 0.01))
    # sigma^2 mode: the ledger records the applied std and the epsilon it actually gives
    q = EDPLS(n_components=k, epsilon=2.0, noise_std="sigma_squared", random_state=0).fit(X, y)
    r = q.privacy_ledger_.entries[0]
    assert r.scale == pytest.approx(q.sigmas_.loc[1, "w"] ** 2) and r.claimed_epsilon == 2.0
    assert r.epsilon != pytest.approx(2.0, rel=1e-3)


@pytest.mark.parametrize("eps", [1.0, 10.0])
@pytest.mark.parametrize("noise_std", ["sigma_squared", "sigma"])
def test_agrees_with_diplslib_edpls(corn, monkeypatch, eps, noise_std):
    """Sensitivities exactly, sigmas to 1e-8, and (std sigma^2, same Generator) the same noise.

    diPLSlib bisects until |B(s) - delta| <= 1e-12; at delta = 0.01 and eps <= 10 that moves
    sigma by < 1e-9 relative (we measured ~6e-12), hence rtol 1e-8 for the sigmas.
    """
    F = pytest.importorskip("diPLSlib.functions")
    X, y = corn
    Xc, yc = X - X.mean(0), y - y.mean()
    calls = []
    orig = F.calibrateAnalyticGaussianMechanism

    def recording(epsilon, delta, GS, tol=1e-12):
        s = orig(epsilon, delta, GS, tol)
        calls.append((float(np.ravel(GS)[0]), float(np.ravel(s)[0])))
        return s

    monkeypatch.setattr(F, "calibrateAnalyticGaussianMechanism", recording)
    k = 5
    theirs = F.edpls(Xc, yc[:, None], k, eps, 0.01, rng=np.random.default_rng(7))
    ours = EDPLS(n_components=k, epsilon=eps, delta=0.01, ymax="signed", noise_std=noise_std,
                 random_state=np.random.default_rng(7)).fit(X, y)
    sens = np.array([c[0] for c in calls]).reshape(k, 4)
    sig = np.array([c[1] for c in calls]).reshape(k, 4)
    np.testing.assert_allclose(ours.sensitivities_.to_numpy(), sens, rtol=1e-12)
    np.testing.assert_allclose(ours.sigmas_.to_numpy(), sig, rtol=1e-8)
    if noise_std == "sigma_squared":
        assert _rel(ours.coef_, theirs[0].ravel()) < 1e-6
        assert _rel(ours.x_weights_, theirs[1]) < 1e-6 and _rel(ours.x_loadings_, theirs[2]) < 1e-6
    else:
        assert _rel(ours.coef_, theirs[0].ravel()) > 1e-3


# ----------------------------------------------------------------------------- replicates
@pytest.mark.parametrize("params", [
    dict(noise_std="sigma"), dict(noise_std="sigma_squared", ymax="signed"), dict(budget="split"),
    dict(mode="strict", x_bound=20.0, y_bound=12.0, epsilon=1e4),
])
def test_replicates_equal_separate_fits(corn, params):
    X, y = corn
    params = dict(params)
    if params.get("mode") == "strict":
        X = X[:, ::5]  # 140 wavelengths: keeps the (m+1)^2 eigendecompositions cheap
    base = EDPLS(n_components=4, epsilon=params.pop("epsilon", 10.0), **params)
    coefs, icpts = base.fit_replicates(X, y, 4, random_state=np.random.default_rng(11))
    g = np.random.default_rng(11)
    for r in range(4):
        single = clone(base).set_params(random_state=g).fit(X, y)
        np.testing.assert_allclose(coefs[r], single.coef_, rtol=1e-11, atol=1e-14)
        assert icpts[r] == pytest.approx(single.intercept_, rel=1e-11)
    assert not np.allclose(coefs[0], coefs[1])
    c2, i2 = edpls_replicates(X, y, 2, random_state=5, **{k: v for k, v in base.get_params().items()
                                                          if k != "random_state"})
    c3, _ = base.fit_replicates(X, y, 2, random_state=5)
    np.testing.assert_array_equal(c2, c3)


def test_int_seed_reproducible_and_none_random(corn):
    X, y = corn
    a = EDPLS(n_components=3, epsilon=5.0, random_state=4).fit(X, y)
    b = EDPLS(n_components=3, epsilon=5.0, random_state=4).fit(X, y).coef_
    c = EDPLS(n_components=3, epsilon=5.0).fit(X, y)
    np.testing.assert_array_equal(a.coef_, b)
    assert not np.array_equal(a.coef_, c.coef_)
    # a known seed is recorded as such; the default (fresh noise) is not
    assert SEED_KNOWN_CAVEAT in a.privacy_ledger_.caveats
    assert SEED_KNOWN_CAVEAT not in c.privacy_ledger_.caveats


# ----------------------------------------------------------------------------- strict mode
def test_strict_mode_needs_public_bounds(corn):
    X, y = corn
    with pytest.raises(ValueError, match="public bounds"):
        EDPLS(mode="strict", y_bound=1.0).fit(X, y)
    with pytest.raises(ValueError, match="x_bound must be"):
        EDPLS(mode="strict", x_bound=-1.0, y_bound=1.0).fit(X, y)
    with pytest.raises(ValueError, match="only in paper mode"):
        EDPLS(mode="strict", x_bound=1.0, y_bound=1.0, noise_std="sigma_squared").fit(X, y)
    with pytest.raises(ValueError, match="both x_center and y_center"):
        EDPLS(mode="strict", x_bound=1.0, y_bound=1.0, x_center=X.mean(0)).fit(X, y)


@pytest.mark.parametrize("centre", ["private", "public"])
def test_strict_ledger_fits_inside_the_budget(corn, centre):
    X, y = corn
    X = X[:, ::5]
    # public: the construction without the constant column (private_intercept=False; the default's constant column
    # is the "private" brute force below, tests/test_edpls_strict_intercept.py covers it with a public centre)
    kw = (dict(x_center=X.mean(0), y_center=float(y.mean()), private_intercept=False) if centre == "public"
          else {})
    m = EDPLS(n_components=3, epsilon=1.0, delta=0.01, mode="strict", x_bound=15.0, y_bound=11.0,
              **kw).fit(X, y)  # fresh noise (the default): a proven guarantee
    led = m.privacy_ledger_
    assert len(led) == 1 and led.proven and led.status == "proven" and not led.caveats
    eps_b, delta_b = led.total("basic")
    assert eps_b <= 1.0 + 1e-12 and delta_b <= 0.01 + 1e-15
    eps_pld, _ = led.total("pld", 0.01)
    assert eps_pld <= 1.0 + 1e-6
    # the exact worst case of the released upper triangle, from the row at the bounds (brute force)
    a2 = 15.0**2 + 11.0**2 if centre == "private" else 0.0
    z = np.zeros(X.shape[1] + 1 + (centre == "private"))
    z[0], z[X.shape[1]] = 15.0, 11.0
    if centre == "private":
        z[-1] = math.sqrt(a2)
    z /= math.sqrt(15.0**2 + 11.0**2 + a2)
    worst = np.linalg.norm(np.outer(z, z)[np.triu_indices(z.size)])
    assert led.entries[0].sensitivity == pytest.approx(worst, rel=1e-12)
    assert led.entries[0].scale == pytest.approx(analytic_gaussian_sigma(1.0, 0.01, worst), rel=1e-9)
    assert worst < (math.sqrt(3) / 2 + 1e-12 if centre == "private" else 1.0)
    assert m.x_scores_ is None and m.x_weights_.shape == (140, 3)
    np.testing.assert_allclose(np.linalg.norm(m.x_weights_, axis=0), 1.0, atol=1e-12)
    # noise is really there
    m2 = clone(m).fit(X, y)
    assert not np.allclose(m.coef_, m2.coef_)  # two fits at default settings draw different noise
    m3 = clone(m).set_params(random_state=1).fit(X, y)
    assert m3.privacy_ledger_.status == "not proven" and m3.privacy_ledger_.caveats == [SEED_KNOWN_CAVEAT]


def test_strict_clipping_count_on_a_constructed_example():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((30, 4))
    X /= np.linalg.norm(X, axis=1, keepdims=True)  # every row norm 1
    X[[0, 1, 2]] *= 3.0  # 3 rows over x_bound = 2
    y = rng.uniform(-1, 1, 30)
    y[[2, 3]] = [5.0, -4.0]  # rows 2 (already counted) and 3 over y_bound = 2
    m = EDPLS(n_components=2, epsilon=np.inf, mode="strict", x_bound=2.0, y_bound=2.0, x_center=np.zeros(4),
              y_center=0.0, private_intercept=False).fit(X, y)
    assert m.n_clipped_ == 4
    assert m.clip_report_["n_clipped_x"] == 3 and m.clip_report_["n_clipped_y"] == 2
    # noise-free strict = plain PLS (uncentred at the public centre 0) of the clipped rows
    Xc = X.copy()
    Xc[[0, 1, 2]] *= 2.0 / 3.0
    yc = np.clip(y, -2, 2)
    ref = pls1_from_moments(Xc.T @ Xc, Xc.T @ yc, 2)["coef"]
    np.testing.assert_allclose(m.coef_, ref, rtol=1e-10)
    assert m.intercept_ == pytest.approx(0.0, abs=1e-12)


@pytest.mark.parametrize("centre", ["private", "public"])
def test_strict_noise_free_equals_plain_pls(corn, centre):
    X, y = corn
    kw = dict(x_center=X.mean(0), y_center=float(y.mean())) if centre == "public" else {}
    for k in (1, 4, 8):
        m = EDPLS(n_components=k, epsilon=np.inf, mode="strict", x_bound=100.0, y_bound=100.0, **kw).fit(X, y)
        ref = PLSRegression(n_components=k, scale=False).fit(X, y)
        assert m.n_clipped_ == 0 and len(m.privacy_ledger_) == 0
        assert _rel(m.coef_, ref.coef_.ravel()) < 1e-8
        assert _rel(m.predict(X), ref.predict(X).ravel()) < 1e-8


def test_pls_from_moments_equals_sklearn_and_batches():
    X, y = _random(60, 12, seed=3)
    Xc, yc = X - X.mean(0), y - y.mean()
    out = pls1_from_moments(Xc.T @ Xc, Xc.T @ yc, 5)
    ref = PLSRegression(n_components=5, scale=False).fit(X, y)
    assert _rel(out["coef"], ref.coef_.ravel()) < 1e-9
    assert _rel(np.abs(out["W"]), np.abs(ref.x_weights_)) < 1e-9
    batch = pls1_from_moments(np.stack([Xc.T @ Xc] * 3), np.stack([Xc.T @ yc] * 3), 5)
    np.testing.assert_allclose(batch["coef"][2], out["coef"], rtol=1e-12)


# ----------------------------------------------------------------------------- sklearn API
def test_get_params_clone_and_gridsearch(corn):
    X, y = corn
    est = EDPLS(n_components=3, epsilon=10.0, delta=0.05, random_state=0)
    params = est.get_params()
    assert params["n_components"] == 3 and params["delta"] == 0.05 and params["mode"] == "paper"
    assert set(params) == {"n_components", "epsilon", "delta", "mode", "x_bound", "y_bound", "calibration",
                           "noise_std", "ymax", "budget", "centering", "x_center", "y_center", "random_state",
                           "sensitivity_source", "caveats", "private_intercept"}
    assert clone(est).get_params() == params
    gs = GridSearchCV(EDPLS(epsilon=np.inf), {"n_components": [1, 3, 6]}, cv=4,
                      scoring="neg_root_mean_squared_error").fit(X, y)
    assert gs.best_params_["n_components"] == 6
    gs2 = GridSearchCV(est, {"n_components": [1, 2]}, cv=3, scoring="neg_root_mean_squared_error").fit(X, y)
    assert np.isfinite(gs2.best_score_)
    assert -1 < EDPLS(n_components=5, epsilon=np.inf).fit(X, y).score(X, y) <= 1


@pytest.mark.parametrize("bad, message", [
    (dict(X=np.full((10, 3), np.nan)), "NaN"),
    (dict(y2=True), "one response"),
    (dict(X=np.ones(10)), "2D array"),
    (dict(y=np.ones(7)), "inconsistent numbers of samples"),
    (dict(k=20), "exceeds the rank bound"),
    (dict(rank2=True, k=4), "rank"),
    (dict(params=dict(mode="tight")), "mode must be one of"),
    (dict(params=dict(epsilon=0)), "epsilon must be"),
    (dict(params=dict(delta=1.5)), "delta must be"),
    (dict(params=dict(n_components=0)), "n_components must be"),
    (dict(params=dict(calibration="classic", epsilon=5.0)), "proven only for epsilon <= 1"),
])
def test_input_validation_messages(bad, message):
    rng = np.random.default_rng(0)
    X = bad.get("X", rng.standard_normal((10, 12)))
    y = bad.get("y", rng.standard_normal(10))
    if bad.get("y2"):
        y = rng.standard_normal((10, 2))
    if bad.get("rank2"):
        X = rng.standard_normal((10, 2)) @ rng.standard_normal((2, 12))
    params = {"n_components": bad.get("k", 2), **bad.get("params", {})}
    with pytest.raises(ValueError, match=message):
        EDPLS(**params).fit(X, y)


def test_single_column_y_and_predict_checks():
    X, y = _random(30, 6, seed=1)
    with pytest.warns(DataConversionWarning, match="column-vector y"):  # as scikit-learn's regressors
        a = EDPLS(n_components=2, epsilon=np.inf).fit(X, y[:, None])
    b = EDPLS(n_components=2, epsilon=np.inf).fit(X, y)
    np.testing.assert_allclose(a.coef_, b.coef_)
    with pytest.raises(ValueError, match="features"):
        b.predict(X[:, :4])


# ----------------------------------------------------------------------------- scale test
def test_scale_test_exposes_the_sigma_squared_bug(corn):
    """Spec checklist 8: X -> 1e-3 X. Correct mode: P_dp and c_dp are exactly equivariant (the
    noise-to-signal ratio of P is unchanged, for the same seed). Reference mode: RMSEP improves
    sharply (the noise std sigma^2 shrinks like scale^2, the signal like scale)."""
    X, y = corn
    rng = np.random.default_rng(0)
    idx = rng.permutation(80)
    tr, te = idx[:56], idx[56:]
    s = 1e-3
    a = EDPLS(n_components=8, epsilon=10.0, random_state=5).fit(X[tr], y[tr])
    b = EDPLS(n_components=8, epsilon=10.0, random_state=5).fit(s * X[tr], y[tr])
    np.testing.assert_allclose(b.x_loadings_, s * a.x_loadings_, rtol=1e-9, atol=1e-15)
    np.testing.assert_allclose(b.y_loadings_, a.y_loadings_, rtol=1e-9)
    nsr = lambda m, c: np.linalg.norm(m.x_loadings_ - c.x_loadings_) / np.linalg.norm(c.x_loadings_)  # noqa: E731
    ca = EDPLS(n_components=8, epsilon=np.inf).fit(X[tr], y[tr])
    cb = EDPLS(n_components=8, epsilon=np.inf).fit(s * X[tr], y[tr])
    assert nsr(b, cb) == pytest.approx(nsr(a, ca), rel=1e-9)
    med = {}
    for scale in (1.0, s):
        df = rmsep_curve(scale * X[tr], y[tr], scale * X[te], y[te], [10.0], 8, 60, noise_std="sigma_squared",
                         random_state=2)
        med[scale] = df["median"].iloc[0]
        nonpriv = df["nonprivate"].iloc[0]
    assert med[s] < 0.2 * med[1.0]
    assert med[s] < 2 * nonpriv


# ----------------------------------------------------------------------------- sweeps, export
def test_sweeps_have_the_documented_columns(corn):
    X, y = corn
    tr, te = slice(0, 56), slice(56, None)
    calls = []
    df = rmsep_curve(X[tr], y[tr], X[te], y[te], [1.0, 100.0, 1e5], 5, 20, random_state=0,
                     progress=lambda f, msg: calls.append(f))
    assert list(df.columns[:7]) == ["epsilon", "median", "q25", "q75", "mean", "sem", "nonprivate"]
    assert calls and calls[-1] == pytest.approx(1.0)
    assert (df["q25"] <= df["median"]).all() and (df["median"] <= df["q75"]).all()
    assert df["median"].iloc[-1] < df["median"].iloc[0]  # eps = 1e5 is almost noise-free
    assert df["median"].iloc[-1] == pytest.approx(df["nonprivate"].iloc[0], rel=0.2)
    assert (df["epsilon_total_basic"] == 20 * df["epsilon"]).all() and not df["proven"].any()
    assert (df["status"] == "not proven").all()  # paper mode: data-derived sensitivities (and a known seed)
    comp = rmsep_vs_components(X[tr], y[tr], X[te], y[te], [1, 3], [10.0], 10, random_state=0)
    assert set(comp["n_components"]) == {1, 3} and len(comp) == 2
    pre = rmsep_vs_preprocessing({"raw": "none", "sg1": "sg1"}, X[tr], y[tr], X[te], y[te], [10.0], 3, 10,
                                 random_state=0, noise_std="sigma_squared")
    assert list(pre["chain"]) == ["raw", "sg1"]


def test_samples_needed_curve_for_strict_mode():
    rng = np.random.default_rng(1)
    L = rng.standard_normal((400, 2))
    X = L @ rng.standard_normal((2, 8)) + 0.1 * rng.standard_normal((400, 8))
    y = L @ np.array([1.0, -0.5]) + 0.1 * rng.standard_normal(400)
    curve = samples_needed_curve(X[:200], y[:200], X[200:], y[200:], [50, 500, 5000, 50000], 1.0, 2, 20,
                                 x_bound=8.0, y_bound=4.0, x_center=np.zeros(8), y_center=0.0, random_state=0)
    assert list(curve.columns[:7]) == ["n", "median", "q25", "q75", "mean", "sem", "nonprivate"]
    assert curve["median"].iloc[-1] < curve["median"].iloc[0]
    assert curve["median"].iloc[-1] < 1.5 * curve["nonprivate"].iloc[-1]
    target = float(curve["median"].iloc[1])
    assert samples_needed(curve, target) <= 500
    assert samples_needed(curve, 1e-9) == math.inf


def test_json_export_is_the_shareable_release_and_round_trips(corn):
    X, y = corn
    X = X[:, ::5]
    for params in (dict(mode="strict", x_bound=15.0, y_bound=11.0),
                   dict(mode="strict", x_bound=15.0, y_bound=11.0, x_center=X.mean(0), y_center=float(y.mean()))):
        m = EDPLS(n_components=2, **params).fit(X, y)
        text = to_json(m)
        data = json.loads(text)
        assert data["format"] == "privalab.edpls.release/1" and data["kind"] == "shareable release"
        assert data["fields"]["n_components"] == 2 and len(data["fields"]["coef_"]) == 140
        assert len(data["ledger"]["entries"]) == len(m.privacy_ledger_) == 1
        assert release_problems(text) == [] and "random_state" not in text
        back = model_from_dict(text)
        np.testing.assert_allclose(back.predict(X), m.predict(X), rtol=1e-12)
        assert back.privacy_ledger_.total("basic") == pytest.approx(m.privacy_ledger_.total("basic"))
        assert back.privacy_ledger_.status == m.privacy_ledger_.status == "proven"
    with pytest.raises(ValueError, match="no privacy"):
        to_json(EDPLS(n_components=2, epsilon=np.inf).fit(X, y))


def test_strict_release_is_analyze_gauss(corn):
    """A strict fit's noisy moments are AnalyzeGauss.randomise of the clipped, scaled rows (same stream)."""
    from engine.privacy import AnalyzeGauss

    X, y = corn
    X = X[:, ::10]
    est = EDPLS(n_components=2, epsilon=3.0, delta=0.01, mode="strict", x_bound=15.0, y_bound=11.0)
    prep = est._prepare(X, y)
    ours = prep.draw(2, 3.0, 2, np.random.default_rng(8))
    # AnalyzeGauss's sensitivity is row_bound^2: row_bound = sqrt(Delta) gives the tight Delta
    delta_s = prep.strict.sensitivity
    G = AnalyzeGauss(3.0, 0.01, math.sqrt(delta_s)).randomise(prep.strict.Z, np.random.default_rng(8), n_replicates=2,
                                                               check_bound=False)
    ref = edpls_strict._strict_postprocess(G, prep.strict, 2, noisy=True)
    np.testing.assert_allclose(ours["coef"], ref["coef"], rtol=1e-10)
    assert np.all(np.linalg.norm(prep.strict.Z, axis=1) <= 1 + 1e-12)
    assert prep.noise_table(2, 3.0)["sigma"].iloc[0] == pytest.approx(analytic_gaussian_sigma(3.0, 0.01, delta_s))


def test_strict_fit_with_bounds_read_off_the_data_is_recorded_as_not_proven(corn):
    """The same strict release, but the caller says its bounds came from the private rows: the ledger
    must not call that a proven guarantee; with public bounds (and fresh noise) it does."""
    X, y = corn
    common = dict(n_components=3, epsilon=1.0, delta=1e-5, mode="strict", x_bound=1.0, y_bound=100.0)
    assert EDPLS(**common).fit(X, y).privacy_ledger_.status == "proven"
    public = EDPLS(**common, random_state=0).fit(X, y)
    from_data = EDPLS(**common, sensitivity_source="data", random_state=0).fit(X, y)
    assert public.privacy_ledger_.reasons_not_proven() == [SEED_KNOWN_CAVEAT]  # only the known seed
    reasons = from_data.privacy_ledger_.reasons_not_proven()
    assert len(reasons) == 2 and "private data" in reasons[0] and reasons[1] == SEED_KNOWN_CAVEAT
    assert from_data.privacy_ledger_.entries[0].sensitivity_source == "data"
    np.testing.assert_array_equal(public.coef_, from_data.coef_)  # same noise draw: only the label differs
    with pytest.raises(ValueError, match="sensitivity_source"):
        EDPLS(**common, sensitivity_source="guess").fit(X, y)
    chain = EDPLS(**common, caveats=("the preprocessing 'msc' was fitted on the private rows",)).fit(X, y)
    assert chain.privacy_ledger_.status == "not proven"
    assert chain.privacy_ledger_.caveats == ["not proven: the preprocessing 'msc' was fitted on the private rows"]
    with pytest.raises(ValueError, match="caveats"):
        EDPLS(**common, caveats="a bare string").fit(X, y)


# ----------------------------------------------------------------------------- the pass floor (issue #33)
@pytest.mark.parametrize("shape, k, seed", [((3000, 200), 10, 1), ((500, 60), 25, 2)])
def test_one_product_per_pass_gives_the_two_product_path(monkeypatch, shape, k, seed):
    """The path from one product X_c'u per pass (the loading or the next weight direction derived from the other)
    and X_c p from the Lanczos relation equals the path computing every product explicitly, to rounding; and it
    really takes ~2 products per component (an oracle independent of the shortcuts: the same code with them off)."""
    rng = np.random.default_rng(seed)
    n, m = shape
    L = rng.standard_normal((n, 8))
    X = L @ rng.standard_normal((8, m)) + 0.1 * rng.standard_normal((n, m)) + 2.0
    y = L @ rng.standard_normal(8) + 0.1 * rng.standard_normal(n)
    counts = {"vectors": 0}
    tmul, mul = coremod._RowPasses.tmul, coremod._RowPasses.mul

    def counting_tmul(self, u):
        counts["vectors"] += 1 if u.ndim == 1 else u.shape[0]
        return tmul(self, u)

    def counting_mul(self, *vs):
        counts["vectors"] += len(vs)
        return mul(self, *vs)

    monkeypatch.setattr(coremod._RowPasses, "tmul", counting_tmul)
    monkeypatch.setattr(coremod._RowPasses, "mul", counting_mul)
    fast = coremod._nipals_path(X, y, k, centring=True, ymax_rule="abs")
    fast_products = counts["vectors"]
    monkeypatch.setattr(coremod, "_ONE_PRODUCT_SLACK", 0.0)  # never derive: both products every component
    monkeypatch.setattr(coremod, "_KRYLOV_TOL", -1.0)  # never the Lanczos relation: X_c p explicitly
    counts["vectors"] = 0
    full = coremod._nipals_path(X, y, k, centring=True, ymax_rule="abs")
    assert counts["vectors"] >= 4 * k - 3
    assert fast_products <= 2 * k + 2
    for name in ("W", "T", "P", "c", "xmax", "ymax"):  # the leading components, well determined by the data
        a, b = getattr(fast, name)[..., :8], getattr(full, name)[..., :8]
        assert np.abs(a - b).max() <= 1e-10 * np.abs(b).max(), name
    # all k: later components follow noise directions that rounding perturbs (in either path) by up to the Krylov
    # conditioning; the coefficients, the fitted model, agree
    coef = [p.W @ np.linalg.solve(p.P.T @ p.W, p.c) for p in (fast, full)]
    assert np.abs(coef[0] - coef[1]).max() <= 1e-9 * np.abs(coef[1]).max()


# ------------------------------------------------------------------ the fit's draw records its release
_LEDGER_CASES = {
    "strict public bounds": dict(mode="strict", x_bound=40.0, y_bound=60.0),
    "strict public centre": dict(mode="strict", x_bound=40.0, y_bound=60.0, private_intercept=False),
    "strict bounds from data": dict(mode="strict", x_bound=40.0, y_bound=60.0, sensitivity_source="data"),
    "strict caveat": dict(mode="strict", x_bound=40.0, y_bound=60.0, caveats=("bounds guessed",)),
    "paper sigma": dict(mode="paper"),
    "paper sigma squared": dict(mode="paper", noise_std="sigma_squared"),
}


@pytest.mark.parametrize("case", list(_LEDGER_CASES))
@pytest.mark.parametrize("random_state", [None, 5])
def test_fit_ledger_equals_the_record_of_one_draw(case, random_state):
    """The ledger a fit's draw records (``_Prepared.draw(..., ledger=)``) equals the record of one draw that
    replicates and sweeps use (``_Prepared.ledger``): the same releases, field for field, and the same caveats
    in the same order (the caller's, then the known seed's)."""
    X, y = _random(60, 12, seed=3)
    kw = dict(_LEDGER_CASES[case])
    if kw.pop("private_intercept", True) is False:
        kw.update(x_center=X.mean(0), y_center=float(y.mean()), private_intercept=False)
    est = EDPLS(n_components=2, epsilon=2.0, delta=1e-5, random_state=random_state, **kw).fit(X, y)
    prep = est._prepare(X, y)
    expected = prep.ledger(2, 2.0, seed_known=random_state is not None)
    got = est.privacy_ledger_
    assert got.entries == expected.entries and got.caveats == expected.caveats
    assert got.to_dict() == expected.to_dict()
    assert len(got) == (1 if kw["mode"] == "strict" else 8)
    assert (SEED_KNOWN_CAVEAT in got.caveats) == (random_state is not None)
    assert EDPLS(n_components=2, epsilon=np.inf, **kw).fit(X, y).privacy_ledger_.to_dict() == prep.ledger(2, np.inf
                                                                                                          ).to_dict()


def test_strict_fit_draws_its_noise_only_inside_a_recording_call(monkeypatch):
    """Plain strict EDPLS draws its release's noise only inside ``MomentsRelease.randomise`` with the fit's
    ledger, which grows by that release in the same call (a mechanism draws and records in one call): a draw
    that no ledger records fails here."""
    import engine.privacy.moments as moments

    recording = {"on": False, "draws": 0, "recorded": 0}
    real_sample, real_randomise = moments.sample_symmetric_gaussian, moments.MomentsRelease.randomise

    def sample(*args, **kwargs):
        assert recording["on"], "noise drawn outside a call that records it"
        recording["draws"] += 1
        return real_sample(*args, **kwargs)

    def randomise(self, G, n_replicates=1, random_state=None, *, ledger=None, **kwargs):
        before = None if ledger is None else len(ledger)
        recording["on"] = ledger is not None
        try:
            out = real_randomise(self, G, n_replicates, random_state, ledger=ledger, **kwargs)
        finally:
            recording["on"] = False
        if ledger is not None:
            assert len(ledger) == before + 1
            recording["recorded"] += 1
        return out

    monkeypatch.setattr(moments, "sample_symmetric_gaussian", sample)
    monkeypatch.setattr(moments.MomentsRelease, "randomise", randomise)
    X, y = _random(60, 12, seed=3)
    est = EDPLS(n_components=2, epsilon=1.0, delta=1e-5, mode="strict", x_bound=40.0, y_bound=60.0).fit(X, y)
    assert recording["draws"] == 1 and recording["recorded"] == 1 and len(est.privacy_ledger_) == 1
    with pytest.raises(ValueError, match="a ledger records one release"):
        est._prepare(X, y).draw(2, 1.0, 2, np.random.default_rng(0), ledger=type(est.privacy_ledger_)())
