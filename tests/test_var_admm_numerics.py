"""VAR-ADMM numerics (issue #16): units, identification, convergence, hostile series, scikit-learn checks.

Oracles: statsmodels' ``VAR(Y).fit(p)`` on the unscaled data (multiplying the series by c leaves the
coefficients unchanged, multiplies the intercepts by c and the residual covariance by c²: exact algebra;
statsmodels on the scaled data is no oracle at extreme scales, its constant column is not rescaled),
scikit-learn's ``Ridge`` and ``Lasso`` (penalised fits) and scikit-learn's estimator checks.
"""
from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import Lasso, Ridge
from sklearn.utils.estimator_checks import check_n_features_in, check_n_features_in_after_fitting
from statsmodels.tsa.api import VAR

from engine.methods.var_admm import CollaborativeVAR, lagged_design, simulate_var, var22_coefs

ROOT = Path(__file__).resolve().parents[1]
SCALES = (1e-150, 1e-6, 1.0, 1e6, 1e150)


def rel(a, b) -> float:
    return float(np.max(np.abs(np.asarray(a) - np.asarray(b))) / np.max(np.abs(b)))


@pytest.fixture(scope="module")
def growth():
    """statsmodels macrodata growth rates diff log(realgdp, realcons, realinv): values about 0.01."""
    from statsmodels.datasets import macrodata

    d = macrodata.load_pandas().data
    return np.diff(np.log(d[["realgdp", "realcons", "realinv"]].to_numpy()), axis=0)


@pytest.fixture(scope="module")
def growth_ref(growth):
    return VAR(growth).fit(2)


@pytest.fixture(scope="module")
def var22():
    return simulate_var(var22_coefs(), 600, random_state=7)


FITS = {  # name: (estimator settings, relative tolerance against the oracle)
    "central": (dict(solver="central"), 1e-10),
    "admm default": (dict(solver="admm", random_state=0), 1e-8),
    "admm paper zero": (dict(solver="admm", scheme="paper", init="zero", rho=0.5, tol=1e-10, max_iter=20_000), 1e-7),
    "admm paper random": (dict(solver="admm", scheme="paper", rho=0.5, tol=1e-10, max_iter=20_000,
                               random_state=3), 1e-7),
}


# ----------------------------------------------------------------------------- units
@pytest.mark.parametrize("c", SCALES)
@pytest.mark.parametrize("fit", list(FITS))
def test_any_units_give_the_same_fit(growth, growth_ref, c, fit):
    kw, tol = FITS[fit]
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        m = CollaborativeVAR(2, **kw).fit(growth * c)
    assert m.converged_
    assert rel(m.coefs_, growth_ref.coefs) <= tol
    assert rel(m.intercept_ / c, growth_ref.intercept) <= 10 * tol
    assert rel(m.sigma_u_ / c**2, growth_ref.sigma_u) <= 10 * tol
    np.testing.assert_allclose(m.forecast(growth[-2:] * c, 3) / c, growth_ref.forecast(growth[-2:], 3),
                               rtol=0, atol=10 * tol * np.abs(growth).max())


def test_the_papers_scheme_runs_the_same_iterations_in_any_units(var22):
    runs = [CollaborativeVAR(2, solver="admm", scheme="paper", init="zero", rho=1.0, tol=1e-8, max_iter=5000,
                             trend="n").fit(var22 * c) for c in SCALES]
    assert len({m.n_iter_ for m in runs}) == 1
    for m in runs:
        assert rel(m.coefs_, runs[2].coefs_) <= 1e-12
    # the random start has the data's scale too (U^0 relative to the targets' root mean square)
    rnd = [CollaborativeVAR(2, solver="admm", scheme="paper", rho=1.0, tol=1e-8, max_iter=5000, trend="n",
                            random_state=5).fit(var22 * c) for c in (1e-6, 1.0, 1e6)]
    assert len({m.n_iter_ for m in rnd}) == 1


def test_the_issues_cases(growth, growth_ref, var22):
    # macro growth rates of about 0.01: the default ADMM equals statsmodels
    m = CollaborativeVAR(2, solver="admm", random_state=0).fit(growth)
    assert m.converged_ and m.scheme_ == "anderson" and rel(m.coefs_, growth_ref.coefs) <= 1e-6
    # the same VAR in other units (x1e-6): no absolute tolerance stops it early, in either scheme
    ref = VAR(var22).fit(2)
    for scheme in ("anderson", "paper"):
        small = CollaborativeVAR(2, solver="admm", scheme=scheme, tol=1e-10, max_iter=20_000,
                                 random_state=0).fit(var22 * 1e-6)
        assert small.converged_ and small.n_iter_ > 2 and rel(small.coefs_, ref.coefs) <= 1e-6
    # x1e155: the squares overflow; a ValueError names the series and the problem
    with pytest.raises(ValueError, match=r"series 1 .*overflow"):
        CollaborativeVAR(2, solver="admm").fit(growth * 1e155)


@settings(max_examples=25, deadline=None)
@given(exponents=st.lists(st.integers(-150, 150), min_size=2, max_size=2), seed=st.integers(0, 2**16),
       solver=st.sampled_from(["central", "admm"]))
def test_each_series_in_its_own_units(var22, exponents, seed, solver):
    """Series i times c_i: owner-major coefficient (i's lag, target j) times c_j / c_i, any seed."""
    c = 10.0 ** np.array(exponents, dtype=float)
    base = CollaborativeVAR(2, solver="central").fit(var22).coef_owner_major_
    m = CollaborativeVAR(2, solver=solver, random_state=seed).fit(var22 * c)
    back = m.coef_owner_major_ * np.repeat(c, 2)[:, None] / c[None, :]
    assert rel(back, base) <= 1e-8
    np.testing.assert_allclose(m.intercept_ / c, CollaborativeVAR(2).fit(var22).intercept_, rtol=1e-7,
                               atol=1e-8)


# ----------------------------------------------------------------------------- convergence
@pytest.mark.parametrize("scheme", ["anderson", "paper", "balanced", "relaxed"])
def test_a_fit_that_stops_early_warns(growth, scheme):
    with pytest.warns(ConvergenceWarning, match="max_iter"):
        m = CollaborativeVAR(2, solver="admm", scheme=scheme, max_iter=2, random_state=0).fit(growth)
    assert not m.converged_ and m.n_iter_ == 2 and "max_iter" in m.convergence_message_
    with warnings.catch_warnings():  # converged, or the paper's fixed K: no warning
        warnings.simplefilter("error", ConvergenceWarning)
        assert CollaborativeVAR(2, solver="admm", scheme=scheme, max_iter=20_000, random_state=0).fit(
            growth).converged_
        fixed = CollaborativeVAR(2, solver="admm", scheme=scheme, tol=None, max_iter=2).fit(growth)
    assert not fixed.converged_ and fixed.convergence_message_ is None


@pytest.mark.parametrize("scheme", ["anderson", "balanced", "relaxed"])
def test_every_scheme_reaches_the_central_fit(var22, scheme):
    central = CollaborativeVAR(2, trend="c").fit(var22)
    m = CollaborativeVAR(2, solver="admm", scheme=scheme, tol=1e-10, max_iter=20_000, random_state=1).fit(var22)
    assert m.converged_ and m.scheme_ == m.trace_.scheme == scheme
    assert rel(m.coefs_, central.coefs_) <= 1e-6


def test_anderson_is_fast_and_seed_free_for_penalised_fits(var22):
    Z, tgt = lagged_design(var22, 2)
    T = len(tgt)
    lasso = Lasso(alpha=0.02, tol=1e-14, max_iter=200_000).fit(Z, tgt)
    ridge = Ridge(alpha=0.05 * T).fit(Z, tgt)
    for seed in (0, 1, 2):
        la = CollaborativeVAR(2, solver="admm", penalty="lasso", alpha=0.02, tol=1e-10, random_state=seed).fit(var22)
        ri = CollaborativeVAR(2, solver="admm", penalty="ridge", alpha=0.05, tol=1e-10, random_state=seed).fit(var22)
        assert la.converged_ and ri.converged_ and la.n_iter_ < 100 and ri.n_iter_ < 30
        np.testing.assert_allclose(la.coef_owner_major_, lasso.coef_.T, atol=1e-7)
        np.testing.assert_allclose(ri.coef_owner_major_, ridge.coef_.T, atol=1e-8)


def test_scheme_choice(var22):
    assert CollaborativeVAR(2, solver="admm").fit(var22).scheme_ == "anderson"
    assert CollaborativeVAR(2).fit(var22).scheme_ == "central"
    for kw in ({"keep_values": 2, "tol": None, "max_iter": 2}, {"tol": None, "max_iter": 3},
               {"coef_noise": 0.1, "max_iter": 3, "tol": None}, {"message_noise": 0.1, "max_iter": 3, "tol": None}):
        assert CollaborativeVAR(2, solver="admm", **kw).fit(var22).scheme_ == "paper"
    with pytest.raises(ValueError, match="keep_values needs scheme='paper'"):
        CollaborativeVAR(2, solver="admm", scheme="anderson", keep_values=2).fit(var22)
    with pytest.raises(ValueError, match="noise inside ADMM"):
        CollaborativeVAR(2, solver="admm", scheme="relaxed", coef_noise=0.1).fit(var22)
    with pytest.raises(ValueError, match="variant='base'"):
        CollaborativeVAR(2, solver="admm", scheme="balanced", variant="y_free").fit(var22)
    with pytest.raises(ValueError, match="scheme must be one of"):
        CollaborativeVAR(2, solver="admm", scheme="fast").fit(var22)


# ----------------------------------------------------------------------------- identification
@pytest.mark.parametrize("solver", ["central", "admm"])
@pytest.mark.parametrize("penalty", ["none", "lasso"])
def test_duplicated_or_lagged_copies_are_refused_naming_the_series(var22, solver, penalty):
    dup = pd.DataFrame(np.column_stack([var22, var22[:, 0]]), columns=["north", "south", "north copy"])
    for seed in (0, 1, 2):
        with pytest.raises(ValueError, match=r"series 'north' and series 'north copy' are collinear"):
            CollaborativeVAR(2, solver=solver, penalty=penalty, alpha=0.01, random_state=seed).fit(dup)
    scaled = np.column_stack([var22, -3.0 * var22[:, 1] + 2.0])
    with pytest.raises(ValueError, match=r"series 2 and series 3 are collinear"):
        CollaborativeVAR(2, solver=solver, penalty=penalty, alpha=0.01).fit(scaled)
    lagged = np.column_stack([var22[1:], var22[:-1, 0]])  # series 3 is series 1 one step earlier
    with pytest.raises(ValueError, match=r"series 1 and series 3 are collinear"):
        CollaborativeVAR(2, solver=solver, penalty=penalty, alpha=0.01).fit(lagged)
    geometric = np.column_stack([var22[:, 0], 3.0 * 0.97 ** np.arange(len(var22))])
    with pytest.raises(ValueError, match=r"the lags of series 2 are collinear"):
        CollaborativeVAR(2, solver=solver, penalty=penalty, alpha=0.01).fit(geometric)


def test_a_ridge_penalty_identifies_duplicates_and_the_answer_is_seed_free(var22):
    Y = np.column_stack([var22, var22[:, 0]])
    Z, tgt = lagged_design(Y, 2)
    ref = Ridge(alpha=0.05 * len(tgt)).fit(Z, tgt)
    fits = [CollaborativeVAR(2, solver="admm", penalty="ridge", alpha=0.05, tol=1e-10, random_state=seed).fit(Y)
            for seed in (0, 1, 2)]
    for m in fits:
        assert m.converged_
        np.testing.assert_allclose(m.coef_owner_major_, ref.coef_.T, atol=1e-8)
        np.testing.assert_allclose(m.coef_owner_major_, fits[0].coef_owner_major_, atol=1e-9)


# ----------------------------------------------------------------------------- hostile series
def _hostile(var22, kind):
    df = pd.DataFrame(var22.copy(), columns=["plant A", "plant B"])
    if kind == "nan":
        df.iloc[9, 1] = np.nan
    elif kind == "inf":
        df.iloc[9, 1] = -np.inf
    elif kind == "1e300":
        df.iloc[9, 1] = 1e300
    elif kind == "constant":
        df["plant B"] = 4.2
    elif kind == "machine constant":
        df["plant B"] = 1e10 + 1e-4 * np.sin(np.arange(len(df)))
    elif kind == "text":
        df["plant B"] = df["plant B"].astype(object)
        df.iloc[9, 1] = "n/a"
    elif kind == "underflow":
        df["plant B"] = df["plant B"] * 1e-300
    return df


HOSTILE = {"nan": r"NaN\) at row 9", "inf": r"inf\) at row 9", "1e300": "overflow", "constant": "constant",
           "machine constant": "constant to machine precision", "text": r"not numeric: row 9 holds 'n/a'",
           "underflow": "underflow"}


@pytest.mark.parametrize("kind", list(HOSTILE))
@pytest.mark.parametrize("solver", ["central", "admm"])
def test_hostile_series_give_a_value_error_naming_the_series(var22, kind, solver):
    df = _hostile(var22, kind)
    with pytest.raises(ValueError, match=r"series 'plant B' " + r".*" + HOSTILE[kind]):
        CollaborativeVAR(2, solver=solver).fit(df)
    arr = df.to_numpy()
    with pytest.raises(ValueError, match=r"series 2 .*" + HOSTILE[kind]):
        CollaborativeVAR(2, solver=solver).fit(arr)


def test_too_few_rows_and_wrong_shapes(var22):
    with pytest.raises(ValueError, match="n_samples = 3"):
        CollaborativeVAR(2).fit(var22[:3])
    with pytest.raises(ValueError, match="2-D"):
        CollaborativeVAR(2).fit(var22[:, 0])
    with pytest.raises(ValueError, match="0 feature"):
        CollaborativeVAR(2).fit(np.empty((10, 0)))


# ----------------------------------------------------------------------------- scikit-learn
@pytest.mark.parametrize("solver", ["central", "admm"])
def test_n_features_in(solver, var22):
    est = CollaborativeVAR(1, solver=solver)
    check_n_features_in("CollaborativeVAR", est)
    check_n_features_in_after_fitting("CollaborativeVAR", est)
    m = CollaborativeVAR(2, solver=solver).fit(var22)
    assert m.n_features_in_ == 2 and not hasattr(m, "feature_names_in_")
    m.fit(pd.DataFrame(var22, columns=["a", "b"]))
    assert list(m.feature_names_in_) == ["a", "b"]
    Z, tgt = lagged_design(var22, 2)
    assert CollaborativeVAR(2, solver=solver).fit_design(Z, tgt).n_features_in_ == 2


# ----------------------------------------------------------------------------- page
@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")  # the early stop is the point
def test_page_says_which_scheme_ran_and_when_it_did_not_converge():
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "pages" / "var_admm.py"), default_timeout=120)
    at.run()
    assert not at.exception, at.exception
    text = " ".join(m.value for m in at.markdown)
    assert "ADMM scheme that ran: anderson" in text
    at.selectbox(key="var_admm_scheme").set_value("paper").run()
    at.number_input(key="var_admm_iter").set_value(3).run()
    assert not at.exception, at.exception
    text = " ".join(m.value for m in at.markdown)
    assert "ADMM scheme that ran: paper" in text
    warned = " ".join(w.value for w in at.warning)
    assert "Not converged" in warned and "max_iter" in warned


# =============================================================================================
# The central solve from the normal equations (issue #33): accuracy against LAPACK's SVD solver
# =============================================================================================
@pytest.mark.parametrize("collinear", [1e-1, 1e-4, 1e-7, 1e-12])
def test_normal_equations_solve_matches_gelsd_at_its_conditioning(collinear):
    """``least_squares`` (Cholesky on Z'Z, refined from the residual when cond(Z'Z) eps > 1e-10, gelsd when
    nearly singular) against scipy's gelsd on designs whose last column approaches the first: the error of a
    backward-stable solve is about cond(Z) eps, so that is the tolerance (x 100 for the constants)."""
    from scipy import linalg

    from engine.methods.var_admm.moments import least_squares

    rng = np.random.default_rng(5)
    Z = rng.standard_normal((2000, 6))
    Z[:, 5] = Z[:, 0] + collinear * rng.standard_normal(2000)
    Y = Z @ rng.standard_normal((6, 3)) + rng.standard_normal((2000, 3))
    ref = linalg.lstsq(Z, Y, lapack_driver="gelsd")[0]
    ours = least_squares(lambda: (Z, Y), Z.T @ Z, Z.T @ Y)
    cond = np.linalg.cond(Z)
    assert np.abs(ours - ref).max() <= 100 * cond * np.finfo(float).eps * np.abs(ref).max()


@pytest.mark.parametrize("noise", [1.0, 1e-2, 1e-4, 1e-9])
def test_residual_moment_from_the_moments_equals_the_residuals(noise):
    """sigma_u's R'R comes from the moments (Y'Y - B'Z'Y - Y'Z B + B'Z'Z B) while each residual keeps over 1e-6 of
    its series' sum of squares, else from R itself (noise 1e-4 and 1e-9: fits closer than that). Oracle: R'R of
    the explicit residual. Error analysis: the moments carry about 4 eps ||y_j||^2 of rounding per entry, so
    relative to R'R's diagonal (sqrt(R_ii R_jj) off the diagonal) the error stays below 4 eps / 1e-6 ~ 1e-9."""
    from engine.methods.var_admm.moments import ScaledDesign, least_squares, residual_moment

    rng = np.random.default_rng(7)
    Z = rng.standard_normal((3000, 8))
    Y = Z @ rng.standard_normal((8, 4)) + noise * rng.standard_normal((3000, 4))
    B = least_squares(lambda: (Z, Y), Z.T @ Z, Z.T @ Y)
    ours = residual_moment(ScaledDesign.from_arrays(Z, Y), B)
    R = Y - Z @ B
    ref = R.T @ R
    scale = np.sqrt(np.outer(np.diag(ref), np.diag(ref)))
    assert np.abs(ours - ref).max() / scale.max() <= 1e-9
    assert np.all(np.abs(ours - ref) <= 1e-9 * scale)


# =============================================================================================
# The design built from the series (issue #33): the same figures as the explicit lagged design
# =============================================================================================
@pytest.mark.parametrize("lags,centre", [((1, 2), True), ((1, 2, 24), True), ((1, 3), False), ((2,), True)])
def test_centred_design_from_the_series_equals_the_explicit_design(lags, centre):
    """``centred_lagged`` (each lag column's sum, minimum and maximum from the rows all ranges share plus the
    edge rows) against numpy on the explicit design of ``lagged_design``. Minima and maxima are exact; the means
    are sums of T values in another order: |error| <= T eps max|Y| (Higham's bound for recursive summation), so
    the centred values agree to that too, and the spreads and levels used by the constant-column check."""
    from engine.methods.var_admm.moments import centred_design, centred_lagged

    rng = np.random.default_rng(len(lags))
    Y = rng.normal(size=(300, 4)).cumsum(axis=0) + 50.0 * np.arange(1, 5)
    Y[:30, 1] = Y[30, 1]  # a series that starts flat: its lag columns' extremes come from other rows
    Z, target = lagged_design(Y, lags)
    fast, ref = centred_lagged(Y, lags, centre), centred_design(Z, target, centre)
    tol = Y.shape[0] * np.finfo(float).eps * np.abs(Y).max()
    for name in ("Zc", "Yc", "z_mean", "y_mean", "spread", "y_spread"):
        np.testing.assert_allclose(getattr(fast, name), getattr(ref, name), rtol=0, atol=2 * tol, err_msg=name)
    np.testing.assert_array_equal(fast.level, np.abs(Z).max(axis=0))
    np.testing.assert_allclose(fast.spread, np.abs(Z - Z.mean(axis=0) * centre).max(axis=0), rtol=0, atol=2 * tol)
    assert centred_lagged(Y[:2 * max(lags)], lags, centre) is None  # no row shared by every range


def test_a_lag_column_constant_over_the_fitted_rows_is_refused_by_both_paths():
    """A series that moves only in its last row: its lag columns (rows up to T - 1 - lag) are constant, which the
    check must see from the edge rows (fit) as from the explicit design (fit_design)."""
    rng = np.random.default_rng(3)
    Y = rng.normal(size=(200, 3))
    Y[:, 2] = 1.0
    Y[-1, 2] = 2.0
    with pytest.raises(ValueError, match=r"series 3 is constant over the fitted rows at lag 1"):
        CollaborativeVAR(2).fit(Y)
    Z, target = lagged_design(Y, 2)
    with pytest.raises(ValueError, match=r"series 3 is constant over the fitted rows at lag 1"):
        CollaborativeVAR(2, penalty="ridge", alpha=1e-3).fit_design(Z, target)


@pytest.mark.parametrize("log_cond", [2, 8, 10.5, 11.5, 12.5, 14])
def test_the_cheap_identification_bound_never_accepts_what_the_eigenvalues_refuse(log_cond):
    """``check_identified`` skips the eigendecomposition only when ||C||_F ||C^-1||_F (an upper bound of the
    condition number) is 100x below the refusal's 1e12; oracle: numpy's eigenvalues of C (unit diagonal, as
    check_identified normalises it). The bound holds for every symmetric positive definite C, so a matrix of
    condition 1e12 or more is never accepted by it; the well conditioned ones take the shortcut; the refusals
    still raise."""
    from engine.methods.var_admm.checks import COLLINEAR_RCOND, _clearly_identified, check_identified

    rng = np.random.default_rng(int(10 * log_cond))
    Q, _ = np.linalg.qr(rng.normal(size=(12, 12)))
    C = (Q * np.logspace(0, -log_cond, 12)) @ Q.T
    C = (C + C.T) / 2
    C /= np.sqrt(np.outer(np.diag(C), np.diag(C)))
    w = np.linalg.eigvalsh(C)
    refused = np.sqrt(max(w[0], 0.0) / w[-1]) < COLLINEAR_RCOND
    if _clearly_identified(C):
        assert w[-1] / w[0] <= 1e10 * (1 + 1e-6)
    else:
        assert w[-1] / w[0] >= 1e10 / 12 * (1 - 1e-6)  # the bound is at most n (12) times the condition number
    if refused:
        with pytest.raises(ValueError, match="collinear"):
            check_identified(C, 6, (1, 2), [f"s{i}" for i in range(6)])
    else:
        check_identified(C, 6, (1, 2), [f"s{i}" for i in range(6)])


@pytest.mark.parametrize("where,value,message", [
    ("Z", np.nan, r"^Z: series 2 at lag 2 has a missing value \(NaN\) at row 7$"),
    ("Z", 1e160, r"^Z: series 2 at lag 2 has values up to 1e\+160: overflow"),
    ("targets", -np.inf, r"^targets: series 2 has an infinite value \(inf\) at row 7$"),
])
def test_fit_design_names_the_first_bad_column_and_row(where, value, message):
    """fit_design's checks (all columns in one pass, the first bad one examined alone) name the column and row."""
    rng = np.random.default_rng(0)
    Z, target = lagged_design(rng.normal(size=(60, 3)), 2)
    Z, target = Z.copy(), target.copy()
    if where == "Z":
        Z[7, 3] = value  # owner-major: column 3 is series 2 at lag 2
        Z[9, 5] = value  # a later column too: the first is named
    else:
        target[7, 1] = value
        target[9, 2] = value
    with pytest.raises(ValueError, match=message):
        CollaborativeVAR(2).fit_design(Z, target)
