"""PCA-Gauss (issue #6): releases, sensitivities, noise scales, moments, budget, utility and the page.

Oracles: closed forms of the spec (Sec. 2-3), numpy/scipy eigen-decompositions, scikit-learn's PCA,
brute-force replace-one pairs, and the real-data utility of scikit-learn models.
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer, load_diabetes, load_digits
from sklearn.decomposition import PCA

from engine.data import DataError
from engine.methods.pca_gauss import (
    ALPHA_GRID,
    PCAGauss,
    alg1_release_query,
    alg3_class_moments,
    lap_pca_noise_scale,
    sensitivities,
)
from engine.methods.pca_gauss.baselines import IdentityQueryRelease
from engine.methods.pca_gauss.utility import (
    arrays_from_frame,
    load_bundled,
    make_split,
    release_report,
    run_method,
    summarise,
    utility_sweep,
)
from engine.privacy import laplace_scale
from tab_helpers import charts_in, open_tab, tab_block

ROOT = Path(__file__).resolve().parents[1]


# ------------------------------------------------------------------------------------------- fixtures
@pytest.fixture(scope="module")
def cancer():
    X, y = load_breast_cancer(return_X_y=True)
    return make_split(X, y, "classification", random_state=0)


@pytest.fixture(scope="module")
def diabetes():
    X, y = load_diabetes(return_X_y=True)
    return make_split(X, y, "regression", random_state=0)


@pytest.fixture(scope="module")
def digits_X():
    return load_digits().data


def paper_box(X):
    """The spec's paper-mode pre-processing, written out independently: centre, divide by max |.|."""
    Xc = X - X.mean(axis=0)
    s = np.abs(Xc).max(axis=0)
    s[s == 0] = 1.0
    return Xc / s


# ------------------------------------------------------------------------------------------- formulas
def test_sensitivity_table_matches_the_spec():
    N, P, M = 500, 3, 30
    assert sensitivities("unsupervised", P, N, nonprivate_w=True)["eigenvalues"] == pytest.approx(P / N)  # Thm 4
    assert sensitivities("unsupervised", P, N, rule="tight", nonprivate_w=True)["eigenvalues"] == pytest.approx(2 / N)
    assert sensitivities("regression", P, N)["second_moment"] == pytest.approx((P**2 + 4 * P + 1) / N)  # Thm 5
    tight = sensitivities("regression", P, N, rule="tight")["second_moment"]
    assert tight == pytest.approx((min(P**2, 2 * P) + 4 * math.sqrt(P) + 1) / N)
    assert sensitivities("regression", M, N, identity_dim=M)["second_moment"] == pytest.approx(
        (M**2 + 4 * M + 1) / N)  # Prop. 4 (Liu)
    assert sensitivities("unsupervised", M, N, identity_dim=M)["second_moment"] == pytest.approx(M**2 / N)  # Prop 3
    counts = np.array([40.0, 60.0])
    cls = sensitivities("classification", P, N, class_counts=counts)
    np.testing.assert_allclose(cls["class_mean"], 2 * P / counts)  # Thm 6
    np.testing.assert_allclose(cls["class_covariance"], P**2 / counts)
    safe = sensitivities("classification", P, N, rule="tight", class_counts=counts)["class_covariance"]
    np.testing.assert_allclose(safe, np.maximum(P**2, 6 * P + 4 * P / counts) / counts)
    assert lap_pca_noise_scale(M, N, 2.0, "M") == pytest.approx(M / (N * 2.0))
    assert lap_pca_noise_scale(M, N, 2.0, "M2") == pytest.approx(M * M / (N * 2.0))


def test_every_release_has_the_spec_scale_in_the_ledger(cancer):
    N, M, P, eps = len(cancer.X_train), cancer.X_train.shape[1], 3, 4.0
    est = PCAGauss(P, eps, task="classification", pca_source="laplace", mode="paper", alpha=0.3,
                   random_state=0).fit(cancer.X_train, cancer.y_train, X_public=cancer.X_public)
    led = est.privacy_ledger_.to_frame().set_index("name")
    lap = led.loc["Lap-PCA covariance"]
    # As printed: scale M a^2/(N eps_PCA); the true sensitivity M^2/N makes it (M eps_PCA)-DP.
    assert lap["scale"] == pytest.approx(M / (N * 0.3 * eps))
    assert lap["sensitivity"] == pytest.approx(M * M / N)
    assert lap["epsilon"] == pytest.approx(M * 0.3 * eps)
    assert lap["claimed_epsilon"] == pytest.approx(0.3 * eps)
    log = est.noise_log_
    classes = log[log["release"].str.startswith("class mean")]
    eps_g = 0.7 * eps
    for _, row in classes.iterrows():
        assert row["scale"] == pytest.approx(2 * P / (row["N_C"] * 0.1 * eps_g))  # Lap(2Pa/(N_C eps_mu))
    covs = log[log["release"].str.startswith("class covariance")]
    for _, row in covs.iterrows():
        assert row["scale"] == pytest.approx(P**2 / (row["N_C"] * 0.9 * eps_g))  # Lap(P^2 a^2/(N_C eps_Sigma))
    assert set(covs["N_C"]) == set(np.bincount(cancer.y_train))  # exact counts in paper mode
    assert not est.privacy_ledger_.proven

    strict = PCAGauss(P, eps, task="classification", pca_source="laplace", mode="strict", alpha=0.3,
                      bounds="public", labels=(0, 1)).fit(cancer.X_train, cancer.y_train, X_public=cancer.X_public)
    led = strict.privacy_ledger_.to_frame().set_index("name")
    assert led.loc["Lap-PCA covariance", "scale"] == pytest.approx(M * M / (N * 0.3 * eps))
    for name, row in led.iterrows():
        assert row["scale"] == pytest.approx(laplace_scale(row["epsilon"], row["sensitivity"]))
    assert strict.privacy_ledger_.proven


def test_alg1_and_alg2_scales():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(300, 12))
    est = PCAGauss(4, 2.0, task="unsupervised", pca_source="nonprivate", random_state=0).fit(X)
    row = est.privacy_ledger_.to_frame().iloc[0]
    assert row["scale"] == pytest.approx(4 / (300 * 2.0))  # Lap(P a^2/(N eps))
    Xp, Xt = X[:40], X[40:]
    y = rng.normal(size=300)
    reg = PCAGauss(3, 2.0, task="regression", pca_source="public", random_state=0).fit(Xt, y[40:], X_public=Xp)
    row = reg.privacy_ledger_.to_frame().iloc[0]
    assert row["scale"] == pytest.approx((9 + 12 + 1) / (260 * 2.0))  # Lap((P^2+4P+1) a^2/(N eps))
    ag = PCAGauss(3, 0.8, task="regression", pca_source="analyze_gauss", alpha=0.5, random_state=0).fit(Xt, y[40:])
    g = ag.privacy_ledger_.to_frame().iloc[0]
    # AG-PCA: replace-one L2 sensitivity sqrt(2), classic calibration at eps_PCA <= 1, delta = 1/N.
    assert g["mechanism"] == "gaussian" and g["sensitivity"] == pytest.approx(math.sqrt(2))
    assert g["scale"] == pytest.approx(math.sqrt(2) * math.sqrt(2 * math.log(1.25 * 260)) / 0.4)
    assert g["delta"] == pytest.approx(1 / 260)


def test_laplace_noise_entries_have_std_sqrt2_b():
    """Spec 8.2: the noise on the released matrix has std sqrt(2) b (1e5 entries, within 3 %)."""
    rng = np.random.default_rng(2)
    X = rng.uniform(-1, 1, size=(200, 30))
    exact = PCAGauss(2, np.inf, pca_source="identity", random_state=0).fit(X).covariance_raw_
    noise = []
    for seed in range(112):
        est = PCAGauss(2, 1.0, pca_source="identity", random_state=seed).fit(X)
        noise.append((est.covariance_raw_ - exact).ravel())
    noise = np.concatenate(noise)
    b = est.privacy_ledger_.entries[0].scale
    assert b == pytest.approx(30**2 / 200)
    assert noise.size >= 1e5
    assert noise.std() == pytest.approx(math.sqrt(2) * b, rel=0.03)


# ------------------------------------------------------------------------------------------- eps = inf
def test_alg1_noise_off_gives_the_scaled_eigenvalues(digits_X):
    """Spec 8.1: S = diag(top-P eigenvalues of X'X)/(MN) to 1e-10 (oracle: sklearn PCA)."""
    P = 6
    Xb = paper_box(digits_X)
    N, M = Xb.shape
    est = PCAGauss(P, np.inf, task="unsupervised", pca_source="nonprivate", random_state=0).fit(digits_X)
    lam = PCA(P).fit(Xb).explained_variance_ * (N - 1)  # eigenvalues of X'X of the centred data
    np.testing.assert_allclose(est.covariance_raw_, np.diag(lam) / (M * N), atol=1e-10)
    assert len(est.privacy_ledger_) == 0  # no noise, no guarantee
    W, S = alg1_release_query(Xb, P)
    np.testing.assert_allclose(S, est.covariance_raw_, atol=1e-12)


def test_alg2_and_alg3_noise_off_reproduce_the_moments(diabetes, cancer):
    reg = PCAGauss(3, np.inf, task="regression", pca_source="public", random_state=0).fit(
        diabetes.X_train, diabetes.y_train, X_public=diabetes.X_public)
    Z = reg.transform(diabetes.X_train)
    V = np.column_stack([Z, reg.transform_y(diabetes.y_train)])
    S_a = V.T @ V / len(V)
    np.testing.assert_allclose(reg.covariance_raw_, S_a, atol=1e-12)
    Zs, ys = reg.sample(200_000, random_state=3)
    syn = np.column_stack([Zs, ys])
    np.testing.assert_allclose(syn.T @ syn / len(syn), S_a, atol=0.01 * np.abs(S_a).max() + 1e-4)

    cls = PCAGauss(2, np.inf, task="classification", pca_source="public", random_state=0).fit(
        cancer.X_train, cancer.y_train, X_public=cancer.X_public)
    Zc = cls.transform(cancer.X_train)
    Zs, ls = cls.sample(100_000, random_state=4)
    for k, c in enumerate(cls.classes_):
        mu, S = alg3_class_moments(Zc[cancer.y_train == c])
        np.testing.assert_allclose(cls.class_means_[k], mu, atol=1e-12)
        np.testing.assert_allclose(cls.class_covariances_raw_[k], S, atol=1e-12)
        part = Zs[ls == c]
        np.testing.assert_allclose(part.mean(axis=0), mu, atol=5 * np.sqrt(S.diagonal().max() / len(part)))
        np.testing.assert_allclose(np.cov(part.T, bias=True), S, atol=0.05 * np.abs(S).max())
    # Classes drawn in proportion to N_C.
    np.testing.assert_allclose(np.bincount(ls) / len(ls), np.bincount(cancer.y_train) / len(cancer.y_train),
                               atol=1e-4)


# ------------------------------------------------------------------------------------------- sensitivity
def test_empirical_sensitivities_stay_within_the_bounds():
    """Spec 8.3 over random replace-one pairs with entries in [-1, 1]."""
    rng = np.random.default_rng(5)
    N, M, P = 40, 8, 3
    worst_eig = worst_t5 = worst_mean = 0.0
    W = np.linalg.qr(rng.normal(size=(M, P)))[0]
    for _ in range(300):
        X = rng.uniform(-1, 1, size=(N, M))
        X2 = X.copy()
        X2[rng.integers(N)] = rng.choice([-1.0, 1.0], size=M) * rng.uniform(0.5, 1, size=M)
        # Thm 4 (uncentred, as the theorem's query): eigenvalues of X'X/(MN).
        e1 = np.sort(np.linalg.eigvalsh(X.T @ X))[::-1][:P] / (M * N)
        e2 = np.sort(np.linalg.eigvalsh(X2.T @ X2))[::-1][:P] / (M * N)
        worst_eig = max(worst_eig, np.abs(e1 - e2).sum())
        # Thm 5 with a fixed W and y in [-1, 1].
        y = rng.uniform(-1, 1, N)
        y2 = y.copy()
        y2[0] = -y[0]
        V1 = np.column_stack([X @ W / math.sqrt(M), y])
        V2 = np.column_stack([X2 @ W / math.sqrt(M), y2])
        worst_t5 = max(worst_t5, np.abs(V1.T @ V1 - V2.T @ V2).sum() / N)
        worst_mean = max(worst_mean, np.abs((X @ W).mean(0) - (X2 @ W).mean(0)).sum() / math.sqrt(M))
    assert worst_eig <= sensitivities("unsupervised", P, N, nonprivate_w=True)["eigenvalues"] + 1e-12
    assert worst_eig <= sensitivities("unsupervised", P, N, rule="tight", nonprivate_w=True)["eigenvalues"] + 1e-12
    assert worst_t5 <= sensitivities("regression", P, N)["second_moment"] + 1e-12
    assert worst_mean <= 2 * P / N + 1e-12


@pytest.mark.parametrize("P", [1, 2, 3])
def test_alg3_covariance_bound_fails_for_small_P_and_the_safe_one_holds(P):
    """Spec 9.2(b): all other class points at v, x = v replaced by -v moves S_C by 4 v v'/N_C."""
    N_C = 50
    v = np.full(P, 1.0 / math.sqrt(P))  # ||v||_2 = a = 1, inside the box
    Z = np.tile(v, (N_C, 1))
    Z2 = Z.copy()
    Z2[0] = -v
    change = np.abs(alg3_class_moments(Z)[1] - alg3_class_moments(Z2)[1]).sum()
    paper = sensitivities("classification", P, N_C, class_counts=[N_C])["class_covariance"][0]
    safe = sensitivities("classification", P, N_C, rule="tight", class_counts=[N_C])["class_covariance"][0]
    assert change > paper  # the paper's P^2 a^2/N_C is violated for P <= 3
    assert change <= safe + 1e-12
    # Strict mode's query (unnormalised per-class second moments) stays within its bound on the same pair,
    # including when the replaced record moves to another class.
    strict = sensitivities("classification", P, 2 * N_C, rule="strict")
    same = np.abs(Z.T @ Z - Z2.T @ Z2).sum()
    moved = np.abs(np.outer(v, v)).sum() + np.abs(np.outer(-v, -v)).sum()
    assert max(same, moved) <= strict["class_second_moments"] + 1e-12


# ------------------------------------------------------------------------------------------- modes, PSD, budget
def test_sampling_never_fails_and_logs_the_psd_fix(cancer):
    for mode in ("paper", "strict"):
        est = PCAGauss(5, 0.01, task="classification", pca_source="public", mode=mode, random_state=0,
                       bounds="public", labels=(0, 1)).fit(
            cancer.X_train, cancer.y_train, X_public=cancer.X_public)
        Z, labels = est.sample(500)
        assert Z.shape == (500, 5) and np.all(np.isfinite(Z))
        assert est.psd_fixed_ and est.min_eig_before_fix_ < 0
        assert np.linalg.eigvalsh(est.class_covariances_).min() > -1e-9


def test_clip_and_numpy_samplers_agree_on_a_symmetric_psd_matrix():
    from engine.methods.pca_gauss.sampling import _draw, _sampling_covariance

    A = np.array([[2.0, 0.5, 0.1], [0.5, 1.0, 0.2], [0.1, 0.2, 0.5]])
    c1, e1, f1 = _sampling_covariance(A, "clip")
    c2, e2, f2 = _sampling_covariance(A, "numpy")
    np.testing.assert_allclose(c1, A, atol=1e-12)
    np.testing.assert_allclose(c2, A, atol=1e-12)
    assert not f1 and not f2 and e1 == e2
    for psd in ("clip", "numpy"):
        draws = _draw(np.zeros(3), A, 200_000, psd, np.random.default_rng(0))
        np.testing.assert_allclose(np.cov(draws.T), A, atol=0.03)


@pytest.mark.parametrize("source", ["public", "laplace", "analyze_gauss", "identity"])
@pytest.mark.parametrize("task", ["unsupervised", "regression", "classification"])
def test_strict_budget_equals_the_nominal_total(diabetes, cancer, source, task):
    split = diabetes if task == "regression" else cancer
    eps, delta = 2.0, 1e-6
    est = PCAGauss(2, eps, task=task, pca_source=source, mode="strict", delta=delta, alpha=0.4, bounds="public",
                   y_bounds="public", labels=(0, 1))  # fresh noise (no seed): a proven release
    est.fit(split.X_train, None if task == "unsupervised" else split.y_train, X_public=split.X_public,
            y_public=split.y_public)
    total_eps, total_delta = est.privacy_ledger_.total("basic")
    assert total_eps == pytest.approx(eps)
    assert total_delta == pytest.approx(delta if source == "analyze_gauss" else 0.0)
    assert est.privacy_ledger_.proven
    b = est.budget_summary()
    assert b["epsilon_pca"] + b["epsilon_count"] + b["epsilon_mu"] + b["epsilon_sigma"] == pytest.approx(eps)


def test_parameters_are_checked(cancer):
    assert 1.0 not in ALPHA_GRID and len(ALPHA_GRID) == 9
    X, y, Xp = cancer.X_train, cancer.y_train, cancer.X_public
    with pytest.raises(ValueError, match="alpha"):
        PCAGauss(2, 1.0, task="classification", pca_source="laplace", alpha=1.0).fit(X, y)
    with pytest.raises(ValueError, match="under-noised"):
        PCAGauss(2, 1.0, task="classification", pca_source="laplace", mode="strict", lap_pca_scale="M").fit(X, y, Xp)
    with pytest.raises(ValueError, match="public bounds"):
        PCAGauss(2, 1.0, task="classification", pca_source="laplace", mode="strict").fit(X, y)
    with pytest.raises(ValueError, match="Algorithm 1"):
        PCAGauss(2, 1.0, task="classification", pca_source="nonprivate").fit(X, y)
    with pytest.raises(ValueError, match="X_public"):
        PCAGauss(2, 1.0, task="classification", pca_source="public").fit(X, y)
    with pytest.raises(ValueError, match="exceeds"):
        PCAGauss(31, 1.0, task="classification", pca_source="public").fit(X, y, Xp)


def test_seeded_sampling_transform_and_reconstruction(cancer):
    kw = dict(task="classification", pca_source="public", random_state=7)
    a = PCAGauss(3, 5.0, **kw).fit(cancer.X_train, cancer.y_train, X_public=cancer.X_public)
    b = PCAGauss(3, 5.0, **kw).fit(cancer.X_train, cancer.y_train, X_public=cancer.X_public)
    np.testing.assert_array_equal(a.sample(50)[0], b.sample(50)[0])
    c = PCAGauss(3, 5.0, task="classification", pca_source="public", random_state=8).fit(
        cancer.X_train, cancer.y_train, X_public=cancer.X_public)
    assert not np.allclose(a.class_means_, c.class_means_)
    assert a.transform(cancer.X_test).shape == (len(cancer.X_test), 3)
    # With P = M and W orthonormal, inverse_transform undoes transform (inside the box).
    full = PCAGauss(30, np.inf, **kw).fit(cancer.X_train, cancer.y_train, X_public=cancer.X_public)
    Xin = cancer.X_train[:5]
    np.testing.assert_allclose(full.inverse_transform(full.transform(Xin)), Xin, rtol=1e-8, atol=1e-8)
    alg1 = PCAGauss(2, 1.0, pca_source="nonprivate", random_state=0).fit(cancer.X_train)
    with pytest.raises(ValueError, match="not released"):
        alg1.inverse_transform(np.zeros((1, 2)))


def test_identity_query_baselines(cancer, diabetes):
    est = IdentityQueryRelease(3, 2.0, task="classification", projection="public_pca", random_state=0).fit(
        cancer.X_train, cancer.y_train, X_public=cancer.X_public)
    rel = est.privacy_ledger_.entries[0]
    assert rel.scale == pytest.approx(2 * 3 / 2.0) and "not private" in rel.note
    Z, labels = est.sample()
    assert Z.shape == (len(cancer.X_train), 3)
    np.testing.assert_array_equal(labels, cancer.y_train)
    reg = IdentityQueryRelease(3, 2.0, task="regression", projection="bernoulli", random_state=0).fit(
        diabetes.X_train, diabetes.y_train, X_public=diabetes.X_public)
    assert reg.privacy_ledger_.entries[0].scale == pytest.approx(2 * (3 + 1) / 2.0)


def test_transformer_api_and_y_is_required_for_supervised_tasks(cancer, diabetes):
    """Both estimators are scikit-learn transformers (tests/test_sklearn_checks.py runs check_estimator):
    fit_transform equals fit().transform with the same noise seed, feature names follow the class, and a
    supervised task without y is refused (Li's regression used to crash inside numpy, its classification to
    release the records without their labels)."""
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    kw = dict(task="regression", pca_source="laplace", random_state=3)
    fitted = PCAGauss(3, 2.0, **kw).fit(diabetes.X_train, diabetes.y_train)
    np.testing.assert_array_equal(PCAGauss(3, 2.0, **kw).fit_transform(diabetes.X_train, diabetes.y_train),
                                  fitted.transform(diabetes.X_train))
    assert list(fitted.get_feature_names_out()) == ["pcagauss0", "pcagauss1", "pcagauss2"]
    li = IdentityQueryRelease(2, 1.0, task="regression", projection="bernoulli", random_state=0)
    Z = make_pipeline(StandardScaler(), li).fit_transform(diabetes.X_train, diabetes.y_train)
    assert Z.shape == (len(diabetes.X_train), 2) and list(li.get_feature_names_out()) == [
        "identityqueryrelease0", "identityqueryrelease1"]
    for est in (PCAGauss(2, 1.0, task="regression", pca_source="laplace"),
                IdentityQueryRelease(2, 1.0, task="regression", projection="bernoulli"),
                IdentityQueryRelease(2, 1.0, task="classification", projection="bernoulli")):
        with pytest.raises(ValueError, match="requires y to be passed"):
            est.fit(diabetes.X_train)
    with pytest.raises(ValueError, match="n_features = 3"):
        PCAGauss(4, 1.0).fit(cancer.X_train[:, :3])


# ------------------------------------------------------------------------------------------- utility
def test_utility_inf_matches_real_and_tiny_eps_is_chance(cancer, diabetes):
    rows = utility_sweep(cancer, ["real", "pca_gauss_public"], [0.01, np.inf], [2], n_reps=4, random_state=0,
                         noise_seed=0)
    s = summarise(rows, "svm_accuracy", by=("method", "epsilon")).set_index(["method", "epsilon"])["mean"]
    real = s.loc[("real", np.inf)]
    chance = np.mean(cancer.y_test == np.bincount(cancer.y_train).argmax())
    assert s.loc[("pca_gauss_public", np.inf)] >= real - 0.08
    assert s.loc[("pca_gauss_public", 0.01)] <= chance + 0.12

    rows = utility_sweep(diabetes, ["real", "pca_gauss_public"], [0.01, np.inf], [2], n_reps=4, random_state=0,
                         noise_seed=0)
    s = summarise(rows, "krr_rmse", by=("method", "epsilon")).set_index(["method", "epsilon"])["mean"]
    assert s.loc[("pca_gauss_public", np.inf)] <= s.loc[("real", np.inf)] + 0.05
    assert s.loc[("pca_gauss_public", 0.01)] >= s.loc[("real", np.inf)] + 0.1


def test_utility_improves_with_epsilon_on_average(cancer):
    rows = utility_sweep(cancer, ["pca_gauss_public", "pca_gauss_ag", "liu"], [0.3, 100.0], [2], n_reps=5,
                         random_state=1, noise_seed=1)
    s = summarise(rows, "svm_accuracy", by=("method", "epsilon")).set_index(["method", "epsilon"])["mean"]
    for method in ("pca_gauss_public", "pca_gauss_ag", "liu"):
        assert s.loc[(method, 100.0)] >= s.loc[(method, 0.3)] + 0.1, method


def test_clustering_metrics_alg1(digits_X):
    split = make_split(digits_X, load_digits().target, "unsupervised", random_state=0)
    row = run_method("pca_gauss_alg1", split, P=3, epsilon=np.inf, K=10, random_state=0, real_silhouette=0.19)
    assert {"silhouette", "silhouette_gap", "transfer_ari", "label_ari"} <= set(row)
    assert row["transfer_ari"] > 0.2  # the noise-free blob still partitions the real rows along the PCs


def test_opendp_pca_plus_gaussian_runs(cancer):
    pytest.importorskip("randomgen")
    row = run_method("pca_gauss_opendp", cancer, P=2, epsilon=2.0, alpha=0.5, random_state=0)
    assert 0 <= row["svm_accuracy"] <= 1 and row["epsilon_total"] == pytest.approx(2.0)


# ------------------------------------------------------------------------------------------- data checks
def test_bad_frames_raise_clear_errors():
    df = load_bundled("wine")
    X, y, names = arrays_from_frame(df, "classification", "target", name="wine")
    assert X.shape == (178, 13) and len(names) == 13
    with pytest.raises(DataError, match="needs a target"):
        arrays_from_frame(df, "regression", None, name="wine")
    bad = df.copy()
    bad.iloc[3, 2] = np.nan
    with pytest.raises(DataError, match="row 4"):
        arrays_from_frame(bad, "classification", "target", name="wine")
    with pytest.raises(DataError, match="continuous"):
        arrays_from_frame(load_bundled("diabetes"), "classification", "target", name="diabetes")
    with pytest.raises(DataError, match="at least 20"):
        arrays_from_frame(df.head(10), "unsupervised", None, name="tiny")


def test_release_report_on_a_sample_set():
    from engine.data import load_table

    df = load_table(ROOT / "sample_data" / "value_chain.csv")
    X, y, names = arrays_from_frame(df, "regression", "kpi_1", name="value chain")
    # Declared public bounds, from the generator's documentation (sample_data/README.md): standardised process
    # variables, KPIs with sds of 14 to 34.
    wide = np.array([150.0 if n.startswith("kpi") else 6.0 for n in names])
    out = release_report(X, y, "regression", P=3, pca_source="public", epsilon=5.0, mode="strict",
                         feature_names=names, bounds=(-wide, wide), y_bounds=(-150.0, 150.0))
    assert out["ledger"].proven and out["budget"]["epsilon_ledger_basic"] == pytest.approx(5.0)
    assert list(out["csv_reconstructed"].columns) == names + ["target"]
    assert out["real"].shape[1] == out["synthetic"].shape[1] == 4


# ------------------------------------------------------------------------------------------- page
@pytest.mark.slow  # among the suite's slowest (pytest --durations): out of the fast lane
def test_page_renders_release_and_sweep():
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "pages" / "pca_gauss.py"), default_timeout=60)
    at.run()
    assert not at.exception, at.exception
    at.selectbox(key="pg_bundled").set_value("breast_cancer").run()
    assert not at.exception, at.exception
    labels = {m.label: m.value for m in at.metric}
    assert any(k.startswith("Synthetic → real: SVM accuracy") for k in labels)
    assert float(labels["Total ε (basic composition)"]) == pytest.approx(at.session_state["pl_epsilon"])
    assert charts_in(tab_block(at, "Real vs synthetic")) == 3  # scatter, marginals, correlation heat maps
    # lazy tabs: only the open tab computes; each is opened as a click on it does
    open_tab(at, "pca_gauss_tabs", "Privacy ledger")
    assert any("Guarantee: (ε = " in m.value for m in at.markdown)  # the ledger's headline
    open_tab(at, "pca_gauss_tabs", "Utility vs ε")
    at.multiselect(key="pg_eps_grid").set_value([1.0, 100.0])
    at.number_input(key="pg_reps").set_value(1)
    at.button(key="pg_run_sweep").click().run()
    assert not at.exception, at.exception
    assert charts_in(tab_block(at, "Utility vs ε")) == 1  # utility vs eps
    # the sweep's settings survive a visit to another tab (the tab helper keeps them) and the sweep still shows
    open_tab(at, "pca_gauss_tabs", "Export")
    assert charts_in(open_tab(at, "pca_gauss_tabs", "Utility vs ε")) == 1
    assert at.multiselect(key="pg_eps_grid").value == [1.0, 100.0] and at.number_input(key="pg_reps").value == 1
    open_tab(at, "pca_gauss_tabs", "Real vs synthetic")
    # Lap-PCA in paper mode states the under-noising finding.
    at.radio(key="pca_gauss_mode").set_value("paper").run()
    at.selectbox(key="pg_source_classification").set_value("laplace").run()
    assert not at.exception, at.exception
    assert any("under-noised by a factor M" in w.value for w in at.warning)
    # Bad input: a continuous target for classification gives a message naming it, not a crash.
    at.radio(key="pg_data_kind").set_value("Sample data or upload").run()
    name = at.session_state["pl_dataset"].name
    at.radio(key=f"pg_task_{name}").set_value("classification").run()
    at.selectbox(key=f"pg_target_{name}_classification").set_value("moisture").run()
    assert not at.exception, at.exception
    assert any("No release on this choice" in e.value and "moisture" in e.value for e in at.error)


# --------------------------------------------------------------------------- hostile input (issue #16)
def _digits_frame():
    import pandas as pd

    d = load_digits()
    return pd.DataFrame(d.data, columns=[f"pix{j:02d}" for j in range(64)]), d.target


@pytest.mark.parametrize("kind, value, cause", [("nan", np.nan, "NaN"), ("inf", -np.inf, "-inf"),
                                                ("huge", 1e300, "overflows"), ("text", "n/a", "non-numeric")])
def test_hostile_cell_is_a_value_error_naming_the_column(kind, value, cause):
    X, _ = _digits_frame()
    X = X.astype(object) if kind == "text" else X.copy()
    X.iloc[5, 20] = value
    identity = IdentityQueryRelease(2, 1.0, task="unsupervised", projection="bernoulli", random_state=0)
    for est in (PCAGauss(2, 1.0, random_state=0), identity):
        with pytest.raises(ValueError, match=rf"X column 'pix20'.*{cause}|X column 'pix20' {cause}"):
            est.fit(X)


def test_tiny_column_and_public_slice_and_y_are_checked_by_name():
    import pandas as pd

    X, t = _digits_frame()
    Xt = X.copy()
    Xt["pix20"] = Xt["pix20"] * 1e-300
    with pytest.raises(ValueError, match="X column 'pix20' underflows"):
        PCAGauss(2, 1.0, random_state=0).fit(Xt)
    Xp = X.iloc[:50].copy()
    Xp.iloc[3, 7] = np.nan
    with pytest.raises(ValueError, match="X_public column 'pix07' has NaN"):
        PCAGauss(2, 1.0, pca_source="public", random_state=0).fit(X, X_public=Xp)
    y = pd.Series(t.astype(float), name="digit_value")
    y.iloc[4] = np.inf
    with pytest.raises(ValueError, match="y 'digit_value' has \\+inf in row 4"):
        PCAGauss(2, 1.0, task="regression", pca_source="laplace", random_state=0).fit(X, y)


def test_constant_and_identical_columns_are_legitimate_for_pca_gauss():
    """Digits has three pixels that are always 0 (so also identical to each other): PCA inverts nothing, the
    fit is kept (a refusal would break the PCA-Gauss page), and the constant pixels are constant in the box."""
    X, _ = _digits_frame()
    const = [c for c in X.columns if X[c].nunique() == 1]
    assert len(const) >= 2 and (X[const[0]] == X[const[1]]).all()
    model = PCAGauss(2, np.inf, random_state=0).fit(X)
    idx = [X.columns.get_loc(c) for c in const]
    np.testing.assert_allclose(model.components_[idx], 0.0, atol=1e-12)
    assert np.all(np.isfinite(model.sample(20, random_state=1)))
