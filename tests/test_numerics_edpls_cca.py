"""edPLS and DP-CCA numerics (issue #16): every fit scikit-learn makes, any scale, named refusals.

Oracles: scikit-learn's ``PLSRegression(scale=False)`` and numpy's least squares (edPLS at eps = inf),
statsmodels' ``CanCorr`` and the defining identities of canonical weights (DP-CCA at eps = inf),
scikit-learn's own ``check_estimator`` checks, and the same fit on unscaled data with the same noise seed
(strict mode with the bounds in the new units; DP-CCA paper mode, which standardises by the data).
"""
from __future__ import annotations

import re
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.cross_decomposition import PLSRegression
from sklearn.exceptions import DataConversionWarning
from sklearn.model_selection import cross_validate
from sklearn.utils.estimator_checks import check_estimator, check_supervised_y_2d, parametrize_with_checks
from statsmodels.multivariate.cancorr import CanCorr

from engine.methods.dp_cca import DPCCA
from engine.methods.edpls import EDPLS
from engine.privacy import SEED_KNOWN_CAVEAT

SCALES = (1e-150, 1e-6, 1.0, 1e6, 1e150)


def rel(a, b) -> float:
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return float(np.abs(a - b).max() / np.abs(b).max())


def regression_frame(seed=0, n=60, m=8):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, m)) * rng.uniform(0.5, 3.0, m) + rng.uniform(-5, 5, m)
    y = X @ rng.standard_normal(m) + rng.standard_normal(n) + 10.0
    return (pd.DataFrame(X, columns=[f"chan_{j:02d}" for j in range(m)]), pd.Series(y, name="moisture"))


def two_views(seed=0, n=120, dx=4, dy=3):
    rng = np.random.default_rng(seed)
    L = rng.standard_normal((n, 3)) * [2.0, 1.2, 0.6]
    X = L @ rng.standard_normal((3, dx)) + 0.7 * rng.standard_normal((n, dx)) + rng.uniform(-4, 4, dx)
    Y = L[:, :dy] @ rng.standard_normal((min(3, dy), dy)) + 0.7 * rng.standard_normal((n, dy)) + rng.uniform(-4, 4, dy)
    return (pd.DataFrame(X, columns=[f"xv_{j}" for j in range(dx)]),
            pd.DataFrame(Y, columns=[f"yv_{j}" for j in range(dy)]))


# =============================================================================================
# edPLS at eps = inf: every k scikit-learn fits
# =============================================================================================
@pytest.fixture(scope="module")
def gaussian_5000x300():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((5000, 300))
    y = X @ rng.standard_normal(300) + rng.standard_normal(5000)
    return X, y


def test_issue_case_k18_on_a_full_rank_5000x300_matrix_equals_sklearn(gaussian_5000x300):
    """The issue's case: refused before with "X has rank 17" (false: the matrix has rank 300)."""
    X, y = gaussian_5000x300
    ours = EDPLS(n_components=18, epsilon=np.inf).fit(X, y)
    ref = PLSRegression(n_components=18, scale=False).fit(X, y)
    assert rel(ours.coef_, ref.coef_.ravel()) < 1e-8
    assert rel(ours.predict(X[:50]), ref.predict(X[:50]).ravel()) < 1e-8
    eig = np.linalg.eigvalsh(X.T @ X)
    assert eig[0] > 1e-3 * eig[-1]  # full rank 300, well conditioned: the old message was false


def test_beyond_the_least_squares_fit_the_path_stays_exact_and_says_so(gaussian_5000x300):
    """After ~23 components the Krylov sequence has converged (X'f at rounding level): further components
    are fitted (as scikit-learn does) on orthonormal rounding-level directions, the coefficients stay the
    least-squares solution (scikit-learn's own NIPALS drifts by ~1e-2 there), P'W stays well conditioned,
    and a warning gives the true reason."""
    X, y = gaussian_5000x300
    Xc, yc = X - X.mean(0), y - y.mean()
    ols = np.linalg.lstsq(Xc, yc, rcond=None)[0]
    with pytest.warns(UserWarning, match=r"explained as far as X can explain it: the least-squares fit is reached"):
        ours = EDPLS(n_components=40, epsilon=np.inf).fit(X, y)
    assert rel(ours.coef_, ols) < 1e-10
    assert ours.condition_number_ < 10
    np.testing.assert_allclose(ours.x_weights_.T @ ours.x_weights_, np.eye(40), atol=1e-10)
    np.testing.assert_allclose(ours.x_scores_.T @ ours.x_scores_, np.eye(40), atol=1e-10)


def test_a_true_rank_deficit_is_refused_with_the_true_rank():
    rng = np.random.default_rng(3)
    X = rng.standard_normal((50, 3)) @ rng.standard_normal((3, 12)) + 1.0  # rank 3 after centring
    y = X @ rng.standard_normal(12) + rng.standard_normal(50)
    ok = EDPLS(n_components=3, epsilon=np.inf).fit(X, y)
    assert rel(ok.coef_, PLSRegression(3, scale=False).fit(X, y).coef_.ravel()) < 1e-8
    with pytest.raises(ValueError, match=r"X has numerical rank 3 .*use n_components <= 3"):
        EDPLS(n_components=5, epsilon=np.inf).fit(X, y)


def test_y_explained_exactly_is_a_refusal_that_says_so():
    """X'f = 0 after one component: no second weight exists (scikit-learn warns "y residual is constant")."""
    X = np.array([[1.0, 0.0], [-1.0, 0.0], [0.0, 1.0], [0.0, -1.0]])
    y = np.array([1.0, -1.0, 0.0, 0.0])
    with pytest.warns(UserWarning, match="y residual is constant at iteration 1"):
        PLSRegression(2, scale=False).fit(X, y)
    with pytest.raises(ValueError, match=r"explained to machine precision after 1 component.*n_components <= 1"):
        EDPLS(n_components=2, epsilon=np.inf).fit(X, y)
    assert "rank" not in str(pytest.raises(ValueError, EDPLS(2, np.inf).fit, X, y).value)


def test_y_explained_to_rounding_level_warns_and_equals_fewer_components():
    rng = np.random.default_rng(1)
    Q, _ = np.linalg.qr(rng.standard_normal((40, 6)))
    Q, _ = np.linalg.qr(Q - Q.mean(0))
    X = Q * [5.0, 4.0, 3.0, 2.0, 1.5, 1.0]
    y = pd.Series(2 * X[:, 0] + X[:, 1] + 3.0, name="oil")
    with pytest.warns(UserWarning, match=r"y 'oil' is explained to machine precision .* after 2 PLS component"):
        three = EDPLS(n_components=3, epsilon=np.inf).fit(X, y)
    two = EDPLS(n_components=2, epsilon=np.inf).fit(X, y)
    assert np.abs(three.coef_ - two.coef_).max() < 1e-12
    with pytest.warns(UserWarning, match="y residual is constant at iteration 2"):  # scikit-learn agrees
        ref = PLSRegression(3, scale=False).fit(X, y)
    assert np.abs(three.coef_ - ref.coef_.ravel()).max() < 1e-12


# =============================================================================================
# edPLS scale equivariance
# =============================================================================================
@pytest.mark.parametrize("cx, cy", [(c, 1.0) for c in SCALES] + [(1.0, c) for c in SCALES] + [(c, c) for c in SCALES])
def test_edpls_eps_inf_scale_equivariance_against_sklearn(cx, cy):
    """c X, c' y: coef * c / c' and intercept / c' equal scikit-learn's fit of the unscaled data to 1e-8."""
    X, y = regression_frame()
    ref = PLSRegression(n_components=3, scale=False).fit(X.to_numpy(), y.to_numpy())
    ours = EDPLS(n_components=3, epsilon=np.inf).fit(X * cx, y * cy)
    assert rel(ours.coef_ * (cx / cy), ref.coef_.ravel()) < 1e-8
    assert rel(ours.predict(X * cx) / cy, ref.predict(X.to_numpy()).ravel()) < 1e-9
    base = EDPLS(n_components=3, epsilon=np.inf).fit(X, y)
    assert ours.intercept_ / cy == pytest.approx(base.intercept_, rel=1e-9)


@pytest.mark.parametrize("c", SCALES)
@pytest.mark.parametrize("centre", ["private", "public"])
def test_edpls_strict_scale_equivariance_with_the_same_seed(c, centre):
    """Data and public bounds (and centre) times c, same noise seed: the same release in the new units."""
    X, y = regression_frame(seed=4)
    Xa, ya = X.to_numpy(), y.to_numpy()
    bx, by = 30.0, 60.0  # public bounds; a few rows are clipped
    kw = dict(x_center=np.full(8, 1.0), y_center=10.0) if centre == "public" else {}
    base = EDPLS(3, 1.0, 0.01, mode="strict", x_bound=bx, y_bound=by, random_state=7, **kw).fit(Xa, ya)
    kw_c = {k: v * c for k, v in kw.items()}
    ours = EDPLS(3, 1.0, 0.01, mode="strict", x_bound=bx * c, y_bound=by * c, random_state=7, **kw_c)
    ours.fit(Xa * c, ya * c)
    assert ours.n_clipped_ == base.n_clipped_
    assert rel(ours.coef_, base.coef_) < 1e-9
    assert ours.intercept_ / c == pytest.approx(base.intercept_, rel=1e-9)
    assert rel(ours.x_loadings_ / c, base.x_loadings_) < 1e-9 and rel(ours.y_loadings_ / c, base.y_loadings_) < 1e-9
    assert rel(ours.x_mean_ / c, base.x_mean_) < 1e-9
    assert ours.privacy_ledger_.entries[0].scale == base.privacy_ledger_.entries[0].scale  # noise on the unit ball
    assert not np.allclose(base.coef_, EDPLS(3, np.inf, mode="strict", x_bound=bx, y_bound=by, **kw).fit(Xa, ya).coef_)


def test_edpls_paper_noise_overflow_is_a_named_refusal():
    """sigma^2 (the authors' code) of a data-unit sensitivity near 1e300 overflows: say so, name the columns."""
    X, y = regression_frame()
    with pytest.raises(ValueError, match=r"overflow.*y 'moisture'.*X column 'chan_"):
        EDPLS(2, 0.5, noise_std="sigma_squared", random_state=0).fit(X * 1e150, y * 1e150)
    assert np.isfinite(EDPLS(2, 0.5, random_state=0).fit(X * 1e150, y * 1e150).coef_).all()


# =============================================================================================
# Hostile input: a named ValueError
# =============================================================================================
HOSTILE = {
    "nan": r"NaN", "inf": r"inf", "huge": r"overflow", "tiny_column": r"underflow", "constant": r"constant",
    "duplicate": r"identical", "text": r"non-numeric", "one_row": r"1 sample",
}


def inject(frame: pd.DataFrame, kind: str, col: int) -> pd.DataFrame:
    f = frame.copy()
    name = f.columns[col]
    if kind == "nan":
        f.iloc[5, col] = np.nan
    elif kind == "inf":
        f.iloc[5, col] = -np.inf
    elif kind == "huge":
        f.iloc[5, col] = 1e300
    elif kind == "tiny_column":
        f[name] = f[name] * 1e-300
    elif kind == "constant":
        f[name] = 2.5
    elif kind == "duplicate":
        f[name] = f[f.columns[col - 1]].to_numpy()
    elif kind == "text":
        f[name] = f[name].astype(object)
        f.loc[5, name] = "n/a"
    return f


@pytest.mark.parametrize("kind", list(HOSTILE))
@pytest.mark.parametrize("target", ["X", "y"])
@pytest.mark.parametrize("mode", ["paper", "strict"])
def test_edpls_hostile_input_is_a_value_error_naming_the_column(kind, target, mode):
    if kind == "duplicate" and target == "y":
        pytest.skip("y has one column")
    X, y = regression_frame()
    est = EDPLS(2, 1.0, random_state=0) if mode == "paper" else EDPLS(2, 1.0, mode="strict", x_bound=30.0,
                                                                     y_bound=60.0, random_state=0)
    if kind == "one_row":
        X, y = X.iloc[:1], y.iloc[:1]
        wanted = None
    elif target == "X":
        X, wanted = inject(X, kind, 3), "'chan_03'"
    else:
        y, wanted = inject(y.to_frame(), kind, 0)["moisture"], "y 'moisture'"
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no numpy RuntimeWarning on the way to the refusal
        with pytest.raises(ValueError) as info:
            est.fit(X, y)
    msg = str(info.value)
    assert re.search(HOSTILE[kind], msg), msg
    if wanted:
        assert wanted in msg, msg
    if kind == "duplicate":
        assert "'chan_02'" in msg


@pytest.mark.parametrize("kind", list(HOSTILE))
@pytest.mark.parametrize("target", ["X", "Y"])
@pytest.mark.parametrize("params", [dict(), dict(epsilon=np.inf), dict(mode="strict", x_bound=20.0, y_bound=20.0)],
                         ids=["paper", "inf", "strict"])
def test_dpcca_hostile_input_is_a_value_error_naming_the_column(kind, target, params):
    X, Y = two_views()
    est = DPCCA(2, **{"epsilon": 1.0, "random_state": 0, **params})
    if kind == "one_row":
        X, Y = X.iloc[:1], Y.iloc[:1]
        wanted = None
    elif target == "X":
        X, wanted = inject(X, kind, 2), "X column 'xv_2'"
    else:
        Y, wanted = inject(Y, kind, 1), "Y column 'yv_1'"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError) as info:
            est.fit(X, Y)
    msg = str(info.value)
    assert re.search(HOSTILE[kind], msg), msg
    if kind == "duplicate":  # both columns named: "X column 'xv_1' and column 'xv_2' are identical"
        wanted = wanted.replace("column 'xv_2'", "column 'xv_1' and column 'xv_2'").replace(
            "column 'yv_1'", "column 'yv_0' and column 'yv_1'")
    if wanted:
        assert wanted in msg, msg


def test_text_labels_as_y_are_a_named_refusal_not_a_numpy_crash():
    X, Y = two_views()
    labels = np.array(["setosa", "virginica", "versicolor"])[np.arange(len(X)) % 3]
    with pytest.raises(ValueError, match=r"Y column 0 is non-numeric: row 0 holds 'setosa'"):
        DPCCA(1).fit(X, labels)
    with pytest.raises(ValueError, match=r"y 'species' is non-numeric: row 0 holds 'setosa'"):
        EDPLS(1, np.inf).fit(X, pd.Series(labels, name="species"))
    with pytest.raises(TypeError, match="argument must be a string or a real number"):  # sklearn's convention
        EDPLS(1, np.inf).fit(np.array([[1.0, {"a": 1}], [2.0, 3.0], [0.5, 1.0]], dtype=object), [1.0, 2.0, 0.0])


# =============================================================================================
# DP-CCA: scale
# =============================================================================================
def test_dpcca_issue_case_values_above_1e154():
    """Before: correlations [0, 0], zero weights and NaN means without an error. Now: the same fit at 1e152,
    and at 1e155 (squares overflow float64) a refusal naming the column and the cause."""
    X, Y = two_views(n=60, dx=3, dy=2)
    base = DPCCA(2, np.inf).fit(X, Y)
    big = DPCCA(2, np.inf).fit(X * 1e152, Y)
    np.testing.assert_allclose(big.canonical_correlations_, base.canonical_correlations_, atol=1e-12)
    assert rel(big.x_weights_ * 1e152, base.x_weights_) < 1e-9 and rel(big.x_mean_ / 1e152, base.x_mean_) < 1e-12
    with pytest.raises(ValueError, match=r"X column 'xv_\d' overflows float64"):
        DPCCA(2, np.inf, mode="paper").fit(X * 1e155, Y)


@pytest.mark.parametrize("cx, cy", [(c, 1.0) for c in SCALES] + [(1.0, c) for c in SCALES]
                         + [(c, 1 / c) for c in SCALES])
def test_dpcca_eps_inf_scale_equivariance_against_statsmodels(cx, cy):
    X, Y = two_views()
    n = len(X)
    oracle = np.sort(CanCorr(Y.to_numpy(), X.to_numpy()).cancorr)[::-1][:3]
    base = DPCCA(3, np.inf).fit(X, Y)
    ours = DPCCA(3, np.inf).fit(X * cx, Y * cy)
    np.testing.assert_allclose(ours.canonical_correlations_, oracle, atol=1e-8)
    assert rel(ours.x_weights_ * cx, base.x_weights_) < 1e-9 and rel(ours.y_weights_ * cy, base.y_weights_) < 1e-9
    assert rel(ours.x_mean_ / cx, base.x_mean_) < 1e-12 and rel(ours.y_mean_ / cy, base.y_mean_) < 1e-12
    xs, ys = ours.transform(X * cx, Y * cy)  # canonical in the new units
    np.testing.assert_allclose(xs.T @ xs / n, np.eye(3), atol=1e-8)
    np.testing.assert_allclose(xs.T @ ys / n, np.diag(oracle), atol=1e-8)


@pytest.mark.parametrize("c", SCALES)
def test_dpcca_paper_mode_same_seed_same_release_at_any_scale(c):
    X, Y = two_views()
    base = DPCCA(2, 1.0, random_state=3).fit(X, Y)
    ours = DPCCA(2, 1.0, random_state=3).fit(X * c, Y / c)
    np.testing.assert_allclose(ours.canonical_correlations_, base.canonical_correlations_, atol=1e-10)
    assert rel(ours.x_weights_ * c, base.x_weights_) < 1e-8 and rel(ours.y_weights_ / c, base.y_weights_) < 1e-8
    assert rel(ours.released_moments_, base.released_moments_) < 1e-10


@pytest.mark.parametrize("c", SCALES)
@pytest.mark.parametrize("bounds", [dict(x_bound=12.0, y_bound=10.0),
                                    dict(row_bound=15.0, x_center=1.0, y_center=-1.0)], ids=["per_view", "joint"])
def test_dpcca_strict_same_seed_and_scaled_bounds_same_release(c, bounds):
    """Noise is calibrated on the unit ball: data, bounds and centre times c give the same release (scaled)."""
    X, Y = two_views()
    base = DPCCA(2, 1.0, mode="strict", random_state=5, **bounds).fit(X, Y)
    scaled = {k: v * c for k, v in bounds.items()}
    ours = DPCCA(2, 1.0, mode="strict", random_state=5, **scaled).fit(X * c, Y * c)
    assert ours.n_clipped_ == base.n_clipped_ > 0
    np.testing.assert_allclose(ours.canonical_correlations_, base.canonical_correlations_, atol=1e-10)
    assert rel(ours.released_moments_, base.released_moments_) < 1e-10 and ours.sigma_ == base.sigma_
    assert rel(ours.x_weights_ * c, base.x_weights_) < 1e-8 and rel(ours.y_weights_ * c, base.y_weights_) < 1e-8
    assert rel(ours.x_mean_ / c, base.x_mean_) < 1e-9 and rel(ours.y_mean_ / c, base.y_mean_) < 1e-9


# =============================================================================================
# DP-CCA: identification, 1-D Y, scikit-learn's checks
# =============================================================================================
def test_dpcca_collinear_view_without_noise_is_refused_naming_the_columns():
    X, Y = two_views()
    X["xv_3"] = 2.0 * X["xv_0"] - X["xv_1"]
    with pytest.raises(ValueError, match=r"X columns .* are collinear: .*numerical rank 3 < 4") as info:
        DPCCA(2, np.inf).fit(X, Y)
    assert all(f"'xv_{j}'" in str(info.value) for j in (0, 1, 3)) and "'xv_2'" not in str(info.value)
    noisy = DPCCA(2, 1.0, random_state=0).fit(X, Y)  # regularised noisy moments: identified
    assert np.isfinite(noisy.x_weights_).all() and noisy.regularization_ > 0


def test_dpcca_accepts_a_1d_y_as_one_column():
    X, Y = two_views()
    y = Y["yv_0"]
    a = DPCCA(1, np.inf).fit(X, y)
    b = DPCCA(1, np.inf).fit(X, Y[["yv_0"]])
    np.testing.assert_array_equal(a.x_weights_, b.x_weights_)
    np.testing.assert_array_equal(a.canonical_correlations_, b.canonical_correlations_)
    assert a.n_features_y_ == 1 and a.transform(X, y)[1].shape == (len(X), 1)
    assert a.score(X, y) == pytest.approx(b.score(X, Y[["yv_0"]]))
    np.testing.assert_array_equal(DPCCA(1, np.inf).fit_transform(X, y), a.transform(X))


@parametrize_with_checks([DPCCA(n_components=1), DPCCA(n_components=1, epsilon=np.inf),
                          DPCCA(n_components=1, mode="strict", x_bound=5.0, y_bound=5.0),
                          DPCCA(n_components=1, mode="strict", row_bound=5.0, x_center=0.0, y_center=0.0)])
def test_dpcca_passes_check_estimator(estimator, check):
    """Every check, private fits included (the checks fix random_state where they compare two fits)."""
    check(estimator)


def test_dpcca_default_k2_fails_only_for_k_above_the_one_column_y():
    """check_estimator gives a 1-D y (one Y column); K = 2 then exceeds min(Dx, Dy) = 1, exactly as for
    scikit-learn's own CCA() (whose suite runs it with n_components=1). Every failure says so."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = check_estimator(DPCCA(), on_fail=None)
    failed = [r for r in results if r["status"] == "failed"]
    assert failed
    for r in failed:
        exc = r["exception"]
        text = str(exc) + str(getattr(exc, "__cause__", "") or "") + str(getattr(exc, "__context__", "") or "")
        assert "n_components=2 exceeds min(Dx, Dy) = 1" in text, (r["check_name"], text)


@pytest.mark.parametrize("est", [EDPLS(n_components=2, epsilon=np.inf), EDPLS(n_components=2, epsilon=1.0)], ids=repr)
def test_edpls_column_vector_y_warns_and_is_ravelled(est):
    check_supervised_y_2d("EDPLS", est)
    X, y = regression_frame()
    with pytest.warns(DataConversionWarning, match="column-vector y"):
        a = clone(est).set_params(random_state=0).fit(X, y.to_numpy()[:, None])
    b = clone(est).set_params(random_state=0).fit(X, y)
    np.testing.assert_array_equal(a.coef_, b.coef_)


# =============================================================================================
# Clones in cross-validation: fresh noise per fold unless a seed is fixed
# =============================================================================================
def _same_training_rows(n, folds=3):
    idx = np.arange(n)
    return [(idx[: n - 10], idx[n - 10:])] * folds  # identical folds: only the noise can differ


@pytest.mark.parametrize("method", ["edpls", "dpcca"])
def test_cross_validation_clones_draw_fresh_noise_unless_seeded(method):
    if method == "edpls":
        X, y = regression_frame(n=80)
        est = EDPLS(2, 1.0, mode="strict", x_bound=30.0, y_bound=60.0)
        weights = lambda m: m.coef_  # noqa: E731
    else:
        X, y = two_views(n=80)
        est = DPCCA(2, 1.0)
        weights = lambda m: m.x_weights_  # noqa: E731
    cv = _same_training_rows(len(X))
    fresh = cross_validate(est, X, y, cv=cv, return_estimator=True)["estimator"]
    w = [weights(m) for m in fresh]
    assert not np.allclose(w[0], w[1]) and not np.allclose(w[1], w[2])  # random_state=None: fresh noise per fold
    assert all(SEED_KNOWN_CAVEAT not in m.privacy_ledger_.caveats for m in fresh)
    seeded = cross_validate(clone(est).set_params(random_state=np.random.default_rng(1)), X, y, cv=cv,
                            return_estimator=True)["estimator"]
    w = [weights(m) for m in seeded]
    np.testing.assert_array_equal(w[0], w[1])  # a Generator is copied into every clone: the same noise
    np.testing.assert_array_equal(w[1], w[2])
    assert all(m.privacy_ledger_.status == "not proven" and SEED_KNOWN_CAVEAT in m.privacy_ledger_.caveats
               for m in seeded)
