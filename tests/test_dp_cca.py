"""DP-CCA (engine.methods.dp_cca) against independent oracles.

Oracles: statsmodels' ``CanCorr`` (all canonical correlations, noise off), scikit-learn's ``CCA``
(first canonical correlation), the poster's closed-form tau, the analytic Gaussian calibration of
the privacy core, empirical noise statistics, ``scipy.linalg.subspace_angles`` and np.corrcoef for
the utility metrics, and the page under Streamlit's AppTest.
"""
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.linalg import subspace_angles
from sklearn.base import clone
from sklearn.cross_decomposition import CCA
from statsmodels.multivariate.cancorr import CanCorr

from engine.data import DataError
from engine.data.samples import make_two_views
from engine.methods.dp_cca import (
    DPCCA,
    analyze_gauss_tau,
    bin_columns,
    captured_correlation,
    cca_from_moments,
    channel_split_views,
    columns_by_prefix,
    compare_fit,
    held_out_correlations,
    sample_size_grid,
    split_rows,
    subspace_similarity,
    summarise_sweep,
    sweep_delta,
    sweep_epsilon,
    sweep_n_samples,
    utility_sweep,
    views_from_frame,
)
from engine.privacy import SEED_KNOWN_CAVEAT, AnalyzeGauss, analytic_gaussian_sigma
from tab_helpers import charts_in, open_tab, tab_block

ROOT = Path(__file__).resolve().parents[1]
CORN = ROOT.parent / "shared" / "data" / "corn"


def poster_tau(n, eps, delta):
    """The poster's formula, written out: tau = sqrt(2)/(N eps) * sqrt(2 ln(1.25/delta))."""
    return math.sqrt(2.0) / (n * eps) * math.sqrt(2.0 * math.log(1.25 / delta))


@pytest.fixture(scope="module")
def views():
    tv = make_two_views(n_samples=3000, dx=6, dy=5, random_state=7)
    return tv.X, tv.Y


@pytest.fixture(scope="module")
def big_views():
    tv = make_two_views(n_samples=36000, random_state=11)
    return tv.X[:30000], tv.Y[:30000], tv.X[30000:], tv.Y[30000:]


# --------------------------------------------------------------------------------------------
# The noise: symmetric, tau as on the poster, empirical std
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("eps,delta", [(0.1, 1e-5), (0.5, 1e-3), (1.0, 1e-6)])
def test_tau_matches_the_poster_formula_with_classic_calibration(views, eps, delta):
    X, Y = views
    n = X.shape[0]
    model = DPCCA(2, eps, delta, random_state=0).fit(X, Y)  # calibration="auto": classic for eps <= 1
    assert model.calibration_ == "classic"
    assert model.tau_ == pytest.approx(poster_tau(n, eps, delta), rel=1e-12)
    # Through the shared mechanism: sqrt(2) sensitivity on the sum, divided by the public N.
    mech = AnalyzeGauss(eps, delta, 1.0, neighbouring="replace", calibration="classic")
    assert mech.sigma / n == pytest.approx(poster_tau(n, eps, delta), rel=1e-12)
    assert analyze_gauss_tau(eps, delta, n, "classic") == pytest.approx(poster_tau(n, eps, delta), rel=1e-12)


def test_analytic_calibration_above_one_and_on_request(views):
    X, Y = views
    n = X.shape[0]
    m = DPCCA(2, 4.0, 1e-5, random_state=0).fit(X, Y)
    assert m.calibration_ == "analytic"
    assert m.tau_ == pytest.approx(analytic_gaussian_sigma(4.0, 1e-5, math.sqrt(2.0)) / n, rel=1e-12)
    m = DPCCA(2, 0.5, 1e-5, calibration="analytic", random_state=0).fit(X, Y)
    assert m.calibration_ == "analytic"
    assert m.tau_ == pytest.approx(analytic_gaussian_sigma(0.5, 1e-5, math.sqrt(2.0)) / n, rel=1e-12)
    assert m.tau_ < poster_tau(n, 0.5, 1e-5)  # the analytic calibration is tighter
    with pytest.raises(ValueError, match="classic"):
        DPCCA(2, 2.0, 1e-5, calibration="classic").fit(X, Y)


def test_noise_matrix_is_exactly_symmetric_and_its_std_matches_tau(views):
    X, Y = views
    n, D = X.shape[0], X.shape[1] + Y.shape[1]
    out = DPCCA(2, 0.5, 1e-5).sample_fits(X, Y, 400, random_state=1, return_moments=True)
    E = out["C_hat"] - out["C"][None]
    assert np.array_equal(E, np.swapaxes(E, 1, 2))  # bit for bit
    iu = np.triu_indices(D)
    entries = E[:, iu[0], iu[1]]  # (400, D(D+1)/2) independent draws
    tau = poster_tau(n, 0.5, 1e-5)
    assert out["tau"] == pytest.approx(tau, rel=1e-12)
    # 400 * 66 = 26400 draws: the sd of the sample std is ~0.4 %; allow 3 %.
    assert entries.std() == pytest.approx(tau, rel=0.03)
    assert abs(entries.mean()) < 4 * tau / math.sqrt(entries.size)
    # Diagonal and off-diagonal entries have the same std (Analyze-Gauss, not 2x on the diagonal).
    diag = E[:, np.arange(D), np.arange(D)]
    off = E[:, iu[0][iu[0] != iu[1]], iu[1][iu[0] != iu[1]]]
    assert diag.std() == pytest.approx(tau, rel=0.06)
    assert off.std() == pytest.approx(tau, rel=0.04)
    # The shared mechanism's own output is exactly symmetric too.
    Z = np.random.default_rng(0).standard_normal((50, 7))
    Z /= np.linalg.norm(Z, axis=1, keepdims=True)
    G = AnalyzeGauss(1.0, 1e-5, neighbouring="replace").randomise(Z, 3, n_replicates=5)
    assert np.array_equal(G, np.swapaxes(G, 1, 2))


def test_fit_equals_first_replicate_with_the_same_seed(views):
    X, Y = views
    est = DPCCA(3, 1.0, 1e-5, random_state=5)
    m = clone(est).fit(X, Y)
    out = est.sample_fits(X, Y, 3, random_state=5)
    np.testing.assert_array_equal(m.x_weights_, out["U"][0])
    np.testing.assert_array_equal(m.canonical_correlations_, out["rho"][0])
    assert not np.allclose(out["U"][0], out["U"][1])


# --------------------------------------------------------------------------------------------
# Non-private limit: statsmodels CanCorr and scikit-learn CCA
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("mode_params", [
    {"mode": "paper"},
    {"mode": "strict", "x_bound": 1e4, "y_bound": 1e4},  # private centring from the same release
    {"mode": "strict", "row_bound": 1e4, "x_center": 0.0, "y_center": 0.0},  # public centre (data centred)
])
def test_nonprivate_limit_equals_statsmodels_cancorr(views, mode_params):
    X, Y = views
    if "x_center" in mode_params:  # a public centre of 0 is right only for centred data
        X, Y = X - X.mean(0), Y - Y.mean(0)
    K = min(X.shape[1], Y.shape[1])
    model = DPCCA(K, np.inf, **mode_params).fit(X, Y)
    oracle = CanCorr(Y, X).cancorr
    np.testing.assert_allclose(model.canonical_correlations_, np.sort(oracle)[::-1][:K], atol=1e-6)
    assert len(model.privacy_ledger_) == 0
    assert model.n_clipped_ == 0 and model.tau_ == 0.0 and model.regularization_ == 0.0


def test_nonprivate_weights_are_canonical(views):
    X, Y = views
    model = DPCCA(3, np.inf).fit(X, Y)
    xs, ys = model.transform(X, Y)
    n = X.shape[0]
    # (1/N) U'X'XU = I and the k-th pair is correlated with rho_k, different pairs not at all.
    np.testing.assert_allclose(xs.T @ xs / n, np.eye(3), atol=1e-8)
    np.testing.assert_allclose(ys.T @ ys / n, np.eye(3), atol=1e-8)
    np.testing.assert_allclose(xs.T @ ys / n, np.diag(model.canonical_correlations_), atol=1e-8)
    # The planted truth (0.9, 0.7, 0.4) within sampling error at N = 3000.
    np.testing.assert_allclose(model.canonical_correlations_, [0.9, 0.7, 0.4], atol=0.05)


def test_population_moments_give_the_planted_correlations_and_weights():
    """Closed form: the generator's population covariance has canonical correlations (0.9, 0.7, 0.4, 0...)."""
    tv = make_two_views(n_samples=10, dx=6, dy=5, correlations=(0.9, 0.7, 0.4), random_state=2)
    R = np.zeros((6, 5))
    R[[0, 1, 2], [0, 1, 2]] = tv.planted
    C = np.block([[tv.Mx.T @ tv.Mx, tv.Mx.T @ R @ tv.My], [tv.My.T @ R.T @ tv.Mx, tv.My.T @ tv.My]])
    fit = cca_from_moments(C, 6, 5)
    np.testing.assert_allclose(fit["rho"], [0.9, 0.7, 0.4, 0.0, 0.0], atol=1e-10)
    # The first three weight vectors are the true ones (unit-variance variates), up to sign.
    for k in range(3):
        u, true = fit["U"][:, k], tv.x_weights[:, k]
        assert abs(u @ true) / (np.linalg.norm(u) * np.linalg.norm(true)) == pytest.approx(1.0, abs=1e-10)
        assert u @ C[:6, :6] @ u == pytest.approx(1.0, abs=1e-10)


def test_first_correlation_equals_sklearn_cca(views):
    X, Y = views
    model = DPCCA(1, np.inf).fit(X, Y)
    sk = CCA(n_components=1, max_iter=5000, tol=1e-14).fit(X, Y)
    a, b = sk.transform(X, Y)
    assert model.canonical_correlations_[0] == pytest.approx(np.corrcoef(a[:, 0], b[:, 0])[0, 1], abs=1e-6)


def test_corn_m5_vs_mp5_nonprivate_limit():
    if not (CORN / "corn_mp5spec.csv").exists():
        pytest.skip("corn data not present")
    m5 = pd.read_csv(CORN / "corn_m5spec.csv").to_numpy(dtype=float)
    mp5 = pd.read_csv(CORN / "corn_mp5spec.csv").to_numpy(dtype=float)
    X, _ = bin_columns(m5, 5)
    Y, _ = bin_columns(mp5, 5)
    model = DPCCA(5, np.inf).fit(X, Y)
    np.testing.assert_allclose(model.canonical_correlations_, np.sort(CanCorr(Y, X).cancorr)[::-1], atol=1e-6)
    assert model.canonical_correlations_[0] > 0.95  # the same 80 samples on two instruments


# --------------------------------------------------------------------------------------------
# Modes, ledger, clipping, regularisation, validation
# --------------------------------------------------------------------------------------------
def test_ledger_paper_is_data_dependent_and_strict_is_proven(views):
    X, Y = views
    paper = DPCCA(2, 1.0, 1e-5, random_state=0).fit(X, Y)
    led = paper.privacy_ledger_
    assert len(led) == 1 and not led.proven
    rec = led.entries[0]
    assert rec.sensitivity_source == "data" and rec.claimed_epsilon == 1.0
    assert rec.sensitivity == pytest.approx(math.sqrt(2.0)) and rec.scale == pytest.approx(paper.sigma_)
    assert led.total("basic") == (1.0, 1e-5)
    strict = DPCCA(2, 1.0, 1e-5, mode="strict", x_bound=10.0, y_bound=10.0).fit(X, Y)  # fresh noise
    assert strict.privacy_ledger_.proven and len(strict.privacy_ledger_) == 1
    assert strict.privacy_ledger_.caveats == []
    assert strict.privacy_ledger_.entries[0].sensitivity_source == "public"
    # per-view bounds with private centring: the tight sensitivity sqrt(32/27), not sqrt(2)
    assert strict.privacy_ledger_.entries[0].sensitivity == pytest.approx(math.sqrt(32 / 27), rel=1e-15)
    # A known noise seed: the same release, not proven, and the ledger says why.
    seeded = DPCCA(2, 1.0, 1e-5, mode="strict", x_bound=10.0, y_bound=10.0, random_state=0).fit(X, Y)
    assert seeded.privacy_ledger_.status == "not proven"
    assert seeded.privacy_ledger_.caveats == [SEED_KNOWN_CAVEAT]
    assert strict.privacy_ledger_.neighbouring == "replace"
    # The exact Gaussian total of the one release is the budget (classic sigma is conservative).
    assert strict.privacy_ledger_.total("gdp", 1e-5)[0] <= 1.0 + 1e-9


def test_strict_clipping_counts_rows_beyond_the_public_bounds(views):
    X, Y = views
    bx, by = 3.0, 3.0
    m = DPCCA(2, 1.0, 1e-5, mode="strict", x_bound=bx, y_bound=by, x_center=0.0, y_center=0.0,
              random_state=0).fit(X, Y)
    over = (np.linalg.norm(X, axis=1) > bx) | (np.linalg.norm(Y, axis=1) > by)
    assert m.n_clipped_ == int(over.sum()) > 0
    joint = DPCCA(2, 1.0, 1e-5, mode="strict", row_bound=4.0, random_state=0).fit(X, Y)
    assert joint.n_clipped_ == int((np.linalg.norm(np.hstack([X, Y]), axis=1) > 4.0).sum())
    # Bounds that hold change nothing: the non-private limit is plain CCA.
    loose = DPCCA(2, np.inf, mode="strict", x_bound=100.0, y_bound=100.0).fit(X, Y)
    assert loose.n_clipped_ == 0
    # Private centring recovers the sample mean exactly without noise.
    np.testing.assert_allclose(loose.x_mean_, X.mean(0), atol=1e-10)


def test_regularisation_keeps_indefinite_noisy_blocks_usable():
    tv = make_two_views(n_samples=200, dx=6, dy=5, random_state=0)
    m = DPCCA(3, 0.1, 1e-6, random_state=0).fit(tv.X, tv.Y)
    assert m.indefinite_  # tau ~ 0.1 on C: the noise dominates
    assert np.all(np.isfinite(m.x_weights_)) and np.all(np.isfinite(m.y_weights_))
    assert np.all((m.canonical_correlations_ >= 0) & (m.canonical_correlations_ <= 1))
    assert m.regularization_ == pytest.approx(2 * math.sqrt(11) * m.tau_)
    fixed = DPCCA(3, 0.1, 1e-6, regularization=0.05, random_state=0).fit(tv.X, tv.Y)
    assert fixed.regularization_ == 0.05
    # Without regularisation the whitening floor alone still gives finite output.
    raw = cca_from_moments(np.diag([-1.0, 2.0, 3.0, -0.5]) + 0.1, 2, 2, 0.0)
    assert np.all(np.isfinite(raw["U"])) and raw["min_eig_x"] < 0


@pytest.mark.parametrize("params,match", [
    ({"mode": "strict"}, "public bounds"),
    ({"mode": "strict", "x_bound": 1.0}, "public bounds"),
    ({"mode": "strict", "x_bound": 1.0, "y_bound": 1.0, "row_bound": 1.0}, "not both"),
    ({"mode": "strict", "x_bound": 1.0, "y_bound": 1.0, "x_center": 0.0}, "both x_center and y_center"),
    ({"mode": "paper", "x_bound": 1.0}, "strict"),
    ({"n_components": 0}, "n_components"),
    ({"n_components": 9}, "exceeds"),
    ({"epsilon": 0.0}, "epsilon"),
    ({"delta": 1.0}, "delta"),
    ({"regularization": -1.0}, "regularization"),
    ({"mode": "fancy"}, "mode"),
])
def test_bad_parameters_are_named(views, params, match):
    X, Y = views
    with pytest.raises(ValueError, match=match):
        DPCCA(**params).fit(X, Y)


def test_input_validation_and_transform(views):
    X, Y = views
    with pytest.raises(ValueError, match="same rows"):
        DPCCA(2).fit(X, Y[:-1])
    with pytest.raises(ValueError):
        DPCCA(2).fit(np.where(np.arange(X.size).reshape(X.shape) == 3, np.nan, X), Y)
    m = DPCCA(2, 1.0, random_state=0).fit(pd.DataFrame(X, columns=list("abcdef")), Y)
    assert m.transform(pd.DataFrame(X, columns=list("abcdef"))).shape == (X.shape[0], 2)
    with pytest.raises(ValueError, match="columns"):
        m.transform(pd.DataFrame(X, columns=list("abcdef")), Y[:, :3])
    assert m.get_params()["epsilon"] == 1.0 and clone(m).get_params() == m.get_params()


# --------------------------------------------------------------------------------------------
# Utility metrics and sweeps
# --------------------------------------------------------------------------------------------
def test_utility_metrics_match_direct_computation(big_views):
    X, Y, Xt, Yt = big_views
    tr = slice(0, 4000)
    res = compare_fit(X[tr], Y[tr], Xt, Yt, n_components=3, epsilon=2.0, random_state=0)
    priv, ref = res["private"], res["nonprivate"]
    xs_p, ys_p = priv.transform(Xt, Yt)
    xs_r, ys_r = ref.transform(Xt, Yt)
    corr_p = [np.corrcoef(xs_p[:, k], ys_p[:, k])[0, 1] for k in range(3)]
    corr_r = [np.corrcoef(xs_r[:, k], ys_r[:, k])[0, 1] for k in range(3)]
    np.testing.assert_allclose(held_out_correlations(priv.x_weights_, priv.y_weights_, Xt, Yt), corr_p, atol=1e-10)
    assert res["captured"] == pytest.approx(sum(corr_p) / sum(corr_r), abs=1e-10)
    assert captured_correlation(priv, ref, Xt, Yt) == pytest.approx(res["captured"])
    sim = subspace_similarity(priv, ref)
    assert sim["angle_cos_x"] == pytest.approx(np.cos(subspace_angles(priv.x_weights_, ref.x_weights_)).mean())
    assert sim["angle_cos_y"] == pytest.approx(np.cos(subspace_angles(priv.y_weights_, ref.y_weights_)).mean())
    # Self-comparison is perfect.
    assert captured_correlation(ref, ref, Xt, Yt) == pytest.approx(1.0)
    assert subspace_similarity(ref, ref)["angle_cos"] == pytest.approx(1.0)


def test_utility_increases_with_epsilon_and_n_and_delta_on_average(big_views):
    """The poster's trends, with gaps of many standard errors (0.2+ vs SE ~0.03) for any seed."""
    X, Y, Xt, Yt = big_views
    kw = dict(n_replicates=20, random_state=123, n_components=3)
    e = summarise_sweep(sweep_epsilon(X[:5000], Y[:5000], Xt, Yt, [0.3, 2.0, 16.0], **kw))
    n = summarise_sweep(sweep_n_samples(X, Y, Xt, Yt, [500, 4000, 30000], epsilon=1.0, **kw))
    d = summarise_sweep(sweep_delta(X[:5000], Y[:5000], Xt, Yt, [1e-12, 1e-2], epsilon=1.0, **kw))
    for table in (e, n, d):
        for metric in ("captured_mean", "angle_cos_mean"):
            values = table.sort_values("value")[metric].to_numpy()
            assert np.all(np.diff(values) > 0.05), (table, metric)
    assert e.sort_values("value")["captured_mean"].iloc[-1] > 0.95  # eps = 16: close to non-private
    assert n.sort_values("value")["captured_mean"].iloc[-1] > 0.85  # N = 30000, eps = 1


def test_sweep_long_format_progress_and_limit(views):
    X, Y = views
    calls = []
    long = utility_sweep(X[:2000], Y[:2000], X[2000:], Y[2000:], "epsilon", [0.5, np.inf], n_replicates=4,
                         random_state=0, n_components=2, progress=lambda f, m: calls.append((f, m)))
    assert len(long) == 8 and set(long["replicate"]) == {0, 1, 2, 3}
    assert calls and calls[-1][0] == pytest.approx(1.0) and all(0 <= f <= 1 for f, _ in calls)
    limit = long[np.isinf(long["value"])]
    np.testing.assert_allclose(limit["captured"], 1.0, atol=1e-12)
    np.testing.assert_allclose(limit["angle_cos"], 1.0, atol=1e-9)
    assert (limit["tau"] == 0).all()
    s = summarise_sweep(long)
    assert {"captured_mean", "captured_sd", "angle_cos_mean", "angle_cos_sd"} <= set(s.columns)
    with pytest.raises(ValueError, match="outside"):
        sweep_n_samples(X[:100], Y[:100], X[2000:], Y[2000:], [50, 200], n_replicates=2)
    with pytest.raises(ValueError, match="parameter"):
        utility_sweep(X, Y, X, Y, "lambda", [1.0])
    assert sample_size_grid(3500) == [20, 50, 100, 200, 500, 1000, 2000, 3500]


# --------------------------------------------------------------------------------------------
# Helpers the page uses
# --------------------------------------------------------------------------------------------
def test_views_from_frame_and_helpers():
    df = pd.DataFrame({"x1": [1.0, 2, 3, 4], "x2": [0.0, 1, 0, 2], "y1": [3.0, 1, 2, 5], "t": list("abcd")})
    X, Y = views_from_frame(df, columns_by_prefix(df.columns, "x"), ["y1"], "f.csv")
    assert list(X.columns) == ["x1", "x2"] and Y.shape == (4, 1)
    with pytest.raises(DataError, match="both views"):
        views_from_frame(df, ["x1", "y1"], ["y1"], "f.csv")
    with pytest.raises(DataError, match="text"):
        views_from_frame(df, ["x1"], ["t"], "f.csv")
    with pytest.raises(DataError, match="at least one column"):
        views_from_frame(df, [], ["y1"], "f.csv")
    const = df.assign(x2=1.0)
    with pytest.raises(DataError, match="same value"):
        views_from_frame(const, ["x1", "x2"], ["y1"], "f.csv")
    binned, labels = bin_columns(np.arange(12.0).reshape(2, 6), 3, [str(w) for w in range(1100, 1112, 2)])
    np.testing.assert_allclose(binned, [[0.5, 2.5, 4.5], [6.5, 8.5, 10.5]])
    assert labels == ["1100–1102", "1104–1106", "1108–1110"]
    spectra = pd.DataFrame(np.random.default_rng(0).random((5, 8)), columns=[str(c) for c in range(8)])
    A, B = channel_split_views(spectra, spectra.columns, 2)
    assert A.shape == (5, 2) and B.shape == (5, 2)
    tr, te = split_rows(10, 0.3, 0)
    assert len(te) == 3 and len(set(tr) | set(te)) == 10


# --------------------------------------------------------------------------------------------
# The page
# --------------------------------------------------------------------------------------------
def test_page_fits_shows_charts_ledger_and_sweeps():
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "pages" / "dp_cca.py"), default_timeout=60)
    at.session_state["pl_mode"] = "paper"
    at.session_state["pl_epsilon"] = 2.0
    at.run()
    assert not at.exception, at.exception
    assert at.title[0].value == "DP-CCA"
    metrics = {m.label: m.value for m in at.metric}
    assert 0 < float(metrics["Captured correlation (held-out)"]) <= 1.2
    assert float(metrics["Noise τ on C"]) > 0
    # lazy tabs: only the open tab computes; each is opened as a click on it does
    assert charts_in(tab_block(at, "Canonical correlations")) >= 1  # correlation bars
    assert charts_in(tab_block(at, "Loadings")) == 0  # hidden: not computed
    assert charts_in(open_tab(at, "dp_cca_tabs", "Loadings")) >= 1  # first-pair loadings
    assert any("Paper-faithful" in w.value for w in at.warning)
    open_tab(at, "dp_cca_tabs", "Scores (not DP)")
    assert any("NOT differentially private" in w.value for w in at.warning)
    open_tab(at, "dp_cca_tabs", "Privacy ledger")
    text = " ".join(m.value for m in at.markdown)
    assert "1 noisy release" in text and "not** a proven guarantee" in text
    open_tab(at, "dp_cca_tabs", "Sweeps (ε, N, δ)")
    at.number_input(key="dp_cca_reps").set_value(3).run()
    at.button(key="dp_cca_run_sweeps").click().run()
    assert not at.exception, at.exception
    assert charts_in(tab_block(at, "Sweeps (ε, N, δ)")) >= 3  # the eps, N and delta curves
    open_tab(at, "dp_cca_tabs", "Privacy ledger")
    # Strict mode: clipping count, proven ledger.
    at.sidebar.radio(key="dp_cca_mode").set_value("strict").run()
    assert not at.exception
    assert "Rows clipped" in {m.label for m in at.metric}
    assert "proven guarantee" in " ".join(m.value for m in at.markdown)


def test_page_block_split_reports_bad_choices_without_crashing():
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "pages" / "dp_cca.py"), default_timeout=60)
    at.run()
    at.radio(key="dp_cca_source").set_value("split").run()
    assert not at.exception, at.exception
    assert at.metric, "the sample two-view table splits by prefix x/y"
    at.text_input(key="dp_cca_y_prefix").set_value("x").run()  # the same columns in both views
    assert not at.exception
    assert any("both views" in e.value for e in at.error)
    at.radio(key="dp_cca_source").set_value("instruments").run()
    assert not at.exception, at.exception
    assert charts_in(tab_block(at, "Canonical correlations")) >= 1
    assert charts_in(open_tab(at, "dp_cca_tabs", "Loadings")) >= 1
