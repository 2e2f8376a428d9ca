"""Utility of DP synthetic data: train on synthetic, test on real held-out data (PCA-Gauss, spec Sec. 5).

One harness for PCA-Gauss and every baseline (spec Sec. 4):

- ``real`` (non-private, full dimension) and ``public_only`` (the public slice alone, non-private);
- ``pca_gauss_public`` / ``pca_gauss_laplace`` / ``pca_gauss_ag`` (Algorithms 2 and 3 with Pub-, Lap-, AG-PCA),
  ``pca_gauss_alg1`` (Algorithm 1, unsupervised, non-private W);
- ``liu`` (the full-dimensional Gaussian, no reduction), ``jiang`` (Pub-PCA + identity query, i.e. input
  perturbation with Laplace noise), ``li`` (Bernoulli random projection + identity query);
- ``pca_gauss_opendp`` (OpenDP's DP PCA for W, then our Gaussian stage; slow and may stall at large eps).

Metrics: classification, SVM (RBF, C = 1, gamma "scale") and logistic-regression accuracy; regression,
kernel-ridge (RBF, alpha = 1, gamma = 1/(P var)) and linear RMSE in the scaled units of y (the paper's units);
clustering, the paper's silhouette of the synthetic data with its own K-Means labels, |Delta S.C.| against
the real data, and two transfer metrics (synthetic K-Means centroids assigned to the real projected rows:
ARI against K-Means of the real rows, and ARI against the true labels when there are labels). The spec
shows that the silhouette tracks P, not eps, hence the transfer metrics.

Also here: scikit-learn's bundled data sets (``load_*``, offline; no ``fetch_*``) with their documented
public ranges and label sets (:func:`documented_public_inputs`, read from each set's own description),
frame-to-array checks with clear messages, the train/public/test split (spec Sec. 7; or a separate public
data set), and sweeps over eps, P and alpha with a progress callback. Every sweep row carries the status of
its own fit's ledger ("proven", "not proven", "no privacy"). Release noise is fresh (``noise_seed=None``)
unless a noise seed is given (then every ledger says "not proven: the noise seed is known"); ``random_state``
seeds only the data split and the evaluation models. Model fitting uses scikit-learn (kept library); nothing
here is DP by itself.
"""
from __future__ import annotations

import math
import re
import time
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from sklearn.cluster import KMeans
from sklearn.kernel_ridge import KernelRidge
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.metrics import adjusted_rand_score, silhouette_score
from sklearn.model_selection import train_test_split
from sklearn.svm import SVC
from threadpoolctl import threadpool_limits

from engine.data import DataError
from engine.privacy import Release

from .pca_gauss import ALPHA_GRID, PCAGauss, _public_bounds, can_map_back
from .pca_gauss_baselines import IdentityQueryRelease

__all__ = [
    "BUNDLED_SETS",
    "METHOD_LABELS",
    "METRICS",
    "PRIMARY_METRIC",
    "correlation_pair",
    "opendp_components",
    "alpha_grid",
    "Split",
    "arrays_from_frame",
    "best_over",
    "build_release",
    "default_methods",
    "documented_public_inputs",
    "evaluate",
    "fit_release",
    "shareable_synthetic_frame",
    "gaussian_reference_silhouette",
    "load_bundled",
    "make_split",
    "reference_levels",
    "released_frames",
    "release_report",
    "SOURCE_METHOD",
    "run_method",
    "summarise",
    "synthetic_frame",
    "utility_sweep",
]

# --------------------------------------------------------------------------------------------- data
@dataclass(frozen=True)
class BundledSet:
    key: str
    title: str
    task: str
    stands_in_for: str
    loader: str
    binarise_at: int | None = None


BUNDLED_SETS = {
    s.key: s for s in (
        BundledSet("digits", "scikit-learn digits (1797 × 64, 10 classes)", "unsupervised",
                   "GFE (clustering, K = 10)", "load_digits"),
        BundledSet("digits_binary", "scikit-learn digits, binary (digit ≥ 5)", "classification",
                   "Realdisp (binary classification)", "load_digits", binarise_at=5),
        BundledSet("breast_cancer", "scikit-learn breast cancer (569 × 30, binary)", "classification",
                   "Realdisp (second stand-in)", "load_breast_cancer"),
        BundledSet("wine", "scikit-learn wine (178 × 13, 3 classes)", "classification", "-", "load_wine"),
        BundledSet("diabetes", "scikit-learn diabetes (442 × 10, regression)", "regression",
                   "Twitter (regression)", "load_diabetes"),
        BundledSet("iris", "scikit-learn iris (150 × 4, 3 classes)", "classification", "-", "load_iris"),
    )
}


def load_bundled(key: str) -> pd.DataFrame:
    """One of scikit-learn's bundled data sets (read from sklearn's own files, no network) as a frame.

    Returns the feature columns and a last column ``target``.
    """
    import sklearn.datasets as skd

    if key not in BUNDLED_SETS:
        raise ValueError(f"unknown bundled set {key!r}; choose from {sorted(BUNDLED_SETS)}")
    spec = BUNDLED_SETS[key]
    bunch = getattr(skd, spec.loader)()
    names = [str(n) for n in getattr(bunch, "feature_names", [f"x{i}" for i in range(bunch.data.shape[1])])]
    df = pd.DataFrame(bunch.data, columns=names)
    target = bunch.target
    if spec.binarise_at is not None:
        target = (target >= spec.binarise_at).astype(int)
    df["target"] = target
    return df


_DESCR_ROW = re.compile(r"^\s*([A-Za-z][^:]*):\s+(-?[\d.]+)\s+(-?[\d.]+)")


@dataclass(frozen=True)
class PublicInputs:
    """Public inputs of a bundled set, as its documentation states them (never computed from its rows).

    bounds : (lower (M,), upper (M,)) or None; bounds_source : where the documentation says so.
    labels : the documented label set (classification) or None. y_bounds : None (no documented range).
    """

    bounds: tuple | None
    bounds_source: str
    labels: tuple | None
    y_bounds: tuple | None = None


def documented_public_inputs(key: str) -> PublicInputs:
    """The feature ranges and label set that scikit-learn's description of a bundled set documents.

    digits: "integer pixels in the range 0..16"; breast cancer, wine, iris: the "Summary Statistics"
    table (Min, Max) of the description, read from the text in feature order; diabetes: "each feature
    is mean-centred and scaled so that its sum of squares is 1", hence |x| <= 1 (no range for the target).
    Labels: the classes the description lists (digits binary: {0, 1} by construction).
    """
    import sklearn.datasets as skd

    spec = BUNDLED_SETS[key]
    bunch = getattr(skd, spec.loader)()
    M = bunch.data.shape[1]
    labels = None
    if spec.task == "classification":
        labels = (0, 1) if spec.binarise_at is not None else tuple(range(len(bunch.target_names)))
    if spec.loader == "load_digits":
        return PublicInputs((np.zeros(M), np.full(M, 16.0)), "scikit-learn's description: 'integer pixels in the "
                            "range 0..16'", labels)
    if spec.loader == "load_diabetes":
        return PublicInputs((np.full(M, -1.0), np.full(M, 1.0)), "scikit-learn's description: every feature is "
                            "mean-centred and scaled to a sum of squares of 1, so |x| ≤ 1", labels)
    rows = [m for m in (_DESCR_ROW.match(line) for line in bunch.DESCR.splitlines()) if m]
    if len(rows) < M:
        raise DataError(f"{spec.title}: its description lists {len(rows)} ranges for {M} features")
    lo = np.array([float(m.group(2)) for m in rows[:M]])
    hi = np.array([float(m.group(3)) for m in rows[:M]])
    return PublicInputs((lo, hi), "scikit-learn's description of the data set (table 'Summary Statistics', "
                        "Min and Max)", labels)


def arrays_from_frame(df: pd.DataFrame, task: str, target: str | None = None, features=None, *, name: str = "data"):
    """Checked arrays for the harness.

    Parameters
    ----------
    df : the table. task : "unsupervised" | "regression" | "classification".
    target : column of y (required for the supervised tasks; optional labels for clustering).
    features : columns of X (default: every numeric column but the target).

    Returns
    -------
    X (n, M) float, y (n,) or None, feature names (list).

    Raises
    ------
    DataError naming the data set, the column and the problem.
    """
    if target is not None and target not in df.columns:
        raise DataError(f"{name}: no column {target!r}")
    if task in ("regression", "classification") and target is None:
        raise DataError(f"{name}: the {task} task needs a target column")
    if features is None:
        features = [c for c in df.columns if c != target and pd.api.types.is_numeric_dtype(df[c])]
    features = list(features)
    if target in features:
        raise DataError(f"{name}: the target {target!r} cannot also be a feature")
    bad = [c for c in features if not pd.api.types.is_numeric_dtype(df[c])]
    if bad:
        raise DataError(f"{name}: feature column(s) {bad[:5]} are not numeric")
    if len(features) < 2:
        raise DataError(f"{name}: need at least two numeric feature columns, found {len(features)}")
    X = df[features].to_numpy(dtype=float)
    rows_bad = ~np.isfinite(X).all(axis=1)
    if rows_bad.any():
        first = int(np.flatnonzero(rows_bad)[0])
        col = features[int(np.flatnonzero(~np.isfinite(X[first]))[0])]
        raise DataError(f"{name}: {int(rows_bad.sum())} row(s) have missing or infinite values "
                        f"(first: row {first + 1}, column {col!r})")
    if X.shape[0] < 20:
        raise DataError(f"{name}: {X.shape[0]} rows; the harness needs at least 20 (train, public and test slices)")
    y = None
    if target is not None:
        col = df[target]
        if col.isna().any():
            raise DataError(f"{name}: target {target!r} has {int(col.isna().sum())} missing value(s)")
        if task == "regression":
            if not pd.api.types.is_numeric_dtype(col):
                raise DataError(f"{name}: regression needs a numeric target; {target!r} is text")
            y = col.to_numpy(dtype=float)
            if np.ptp(y) == 0:
                raise DataError(f"{name}: target {target!r} is constant")
        else:
            y = col.to_numpy()
            classes, counts = np.unique(y.astype(str), return_counts=True)
            if task == "classification":
                if classes.size < 2:
                    raise DataError(f"{name}: target {target!r} has a single class")
                if classes.size > 50:
                    raise DataError(f"{name}: target {target!r} has {classes.size} distinct values; that looks like "
                                    "a continuous response (choose the regression task)")
                if counts.min() < 4:
                    raise DataError(f"{name}: class {classes[counts.argmin()]!r} of {target!r} has only "
                                    f"{counts.min()} row(s); every class needs at least 4")
    return X, y, features


@dataclass
class Split:
    """Train / public / test rows (spec Sec. 7). For clustering the test rows are the training rows."""

    X_train: np.ndarray
    y_train: np.ndarray | None
    X_public: np.ndarray
    y_public: np.ndarray | None
    X_test: np.ndarray
    y_test: np.ndarray | None
    task: str
    feature_names: list = field(default_factory=list)

    @property
    def sizes(self) -> dict:
        return {"train": len(self.X_train), "public": len(self.X_public),
                "test": len(self.X_test) if self.task != "unsupervised" else 0}


def default_public_size(n: int) -> int:
    """Spec 7: 100 (digits), 40 (diabetes, breast cancer); smaller sets keep ~1/8 as public."""
    return 100 if n >= 1000 else 40 if n >= 300 else max(8, n // 8)


def make_split(X, y, task: str, *, test_size: float = 0.2, n_public: int | None = None,
               random_state=0, feature_names=None, public=None) -> Split:
    """20 % test (stratified for classification), then a disjoint public slice out of the rest.

    public : optional (X_public, y_public or None), a separate data set the owner declares public; then no
    slice of X is set aside as "public" and every non-test row is a private training row. For clustering the
    "test" rows are the training rows themselves (there is no held-out set).
    """
    X = np.asarray(X, dtype=float)
    n = len(X)
    if public is not None:
        Xp = np.asarray(public[0], dtype=float)
        yp = None if public[1] is None else np.asarray(public[1])
        if Xp.ndim != 2 or Xp.shape[1] != X.shape[1] or len(Xp) < 2:
            raise DataError(f"the public data set must have at least 2 rows and the same {X.shape[1]} feature "
                            f"columns as the private data (it has shape {Xp.shape})")
        yy = None if y is None else np.asarray(y)
        idx = np.arange(n)
        if task == "unsupervised":
            train, test = idx, idx
        else:
            train, test = train_test_split(idx, test_size=test_size, random_state=random_state,
                                           stratify=y if task == "classification" else None)
        return Split(X[train], None if yy is None else yy[train], Xp, yp, X[test], None if yy is None else yy[test],
                     task, list(feature_names or []))
    n_public = default_public_size(n) if n_public is None else int(n_public)
    strat = y if task == "classification" else None
    idx = np.arange(n)
    if task == "unsupervised":
        rest, test = idx, None
    else:
        rest, test = train_test_split(idx, test_size=test_size, random_state=random_state, stratify=strat)
    if not 2 <= n_public < len(rest) - 2:
        raise DataError(f"public slice of {n_public} rows does not fit in {len(rest)} non-test rows")
    strat_rest = y[rest] if task == "classification" else None
    try:
        train, public = train_test_split(rest, test_size=n_public, random_state=random_state, stratify=strat_rest)
    except ValueError:  # too few rows per class for a stratified public slice
        train, public = train_test_split(rest, test_size=n_public, random_state=random_state)
    yy = None if y is None else np.asarray(y)
    if test is None:
        test = train
    return Split(X[train], None if yy is None else yy[train], X[public], None if yy is None else yy[public],
                 X[test], None if yy is None else yy[test], task, list(feature_names or []))


# --------------------------------------------------------------------------------------------- methods
METHOD_LABELS = {
    "real": "Real data (non-private, full dimension)",
    "public_only": "Public slice only (non-private)",
    "pca_gauss_public": "PCA-Gauss, Pub-PCA",
    "pca_gauss_laplace": "PCA-Gauss, Lap-PCA",
    "pca_gauss_ag": "PCA-Gauss, AG-PCA",
    "pca_gauss_alg1": "PCA-Gauss, Alg. 1 (non-private W)",
    "pca_gauss_opendp": "OpenDP DP-PCA + our Gaussian",
    "liu": "Liu: full-dim Gaussian (no reduction)",
    "jiang": "Jiang: Pub-PCA + Laplace input perturbation",
    "li": "Li: random projection + Laplace input perturbation",
}
_PCA_GAUSS_SOURCE = {"pca_gauss_public": "public", "pca_gauss_laplace": "laplace", "pca_gauss_ag": "analyze_gauss",
                     "pca_gauss_alg1": "nonprivate", "liu": "identity"}
_USES_ALPHA = ("pca_gauss_laplace", "pca_gauss_ag", "pca_gauss_opendp")
_NON_PRIVATE = ("real", "public_only")

#: metric -> (label, higher is better)
METRICS = {
    "svm_accuracy": ("SVM accuracy (real test data)", True),
    "logreg_accuracy": ("logistic-regression accuracy (real test data)", True),
    "krr_rmse": ("kernel-ridge RMSE (scaled y, real test data)", False),
    "linear_rmse": ("linear RMSE (scaled y, real test data)", False),
    "silhouette": ("silhouette of the synthetic data (paper's S.C.)", True),
    "silhouette_gap": ("|ΔS.C.| = |S.C.(real) − S.C.(synthetic)|", False),
    "transfer_ari": ("transfer ARI (synthetic centroids on real rows vs real K-Means)", True),
    "label_ari": ("label ARI (synthetic centroids on real rows vs true labels)", True),
}
PRIMARY_METRIC = {"classification": "svm_accuracy", "regression": "krr_rmse", "unsupervised": "transfer_ari"}


def default_methods(task: str) -> tuple:
    if task == "unsupervised":
        return ("real", "pca_gauss_alg1", "pca_gauss_public", "liu", "jiang", "li")
    return ("real", "public_only", "pca_gauss_public", "pca_gauss_laplace", "pca_gauss_ag", "liu", "jiang", "li")


def opendp_components(Xs: np.ndarray, P: int, epsilon: float) -> np.ndarray:
    """W (M, P) from OpenDP's DP PCA (Amin et al. 2019) on rows already in the [-1, 1] box.

    Replace-one neighbours are 2 changes in OpenDP's symmetric distance, so ``n_changes=2``: the fit is
    epsilon-DP for our neighbouring relation. Needs ``opendp`` with its numpy extra (``randomgen``).
    """
    import opendp.prelude as dp
    dp.enable_features("contrib", "honest-but-curious", "idealized-numerics")
    from opendp.extras.sklearn.decomposition import PCA as OpenDPPCA

    N, M = Xs.shape
    model = OpenDPPCA(epsilon=float(epsilon), row_norm=math.sqrt(M), n_samples=N, n_features=M, n_components=P,
                      n_changes=2)
    model.fit(Xs)
    Q, _ = np.linalg.qr(np.asarray(model.components_, dtype=float).T)
    return Q[:, :P]


def fit_release(method: str, split: Split, *, P: int, epsilon: float, alpha: float = 0.5, mode: str = "paper",
                delta: float | None = None, random_state=None, **options):
    """A fitted release object (``PCAGauss`` or ``IdentityQueryRelease``) for one harness method.

    random_state : the release's noise (None: fresh OS entropy; anything else is a known seed and a ledger
    caveat). options : ``PCAGauss`` options (bounds, y_bounds, labels, public_declared, mean_share, ...).
    """
    task = split.task
    y = split.y_train if task != "unsupervised" else None
    common = dict(X_public=split.X_public, y_public=split.y_public)
    if method in _PCA_GAUSS_SOURCE:
        source = _PCA_GAUSS_SOURCE[method]
        est = PCAGauss(P, epsilon, task=task, pca_source=source, mode=mode, random_state=random_state, alpha=alpha,
                       delta=delta, **options)
        return est.fit(split.X_train, y, **common)
    if method in ("jiang", "li"):
        est = IdentityQueryRelease(P, epsilon, task=task, projection="public_pca" if method == "jiang" else "bernoulli",
                                   mode=mode, random_state=random_state,
                                   **{k: v for k, v in options.items()
                                      if k in ("bounds", "y_bounds", "public_declared")})
        return est.fit(split.X_train, y, **common)
    if method == "pca_gauss_opendp":
        eps_pca = alpha * epsilon
        probe = PCAGauss(P, epsilon, task=task, pca_source="public", mode=mode, **options)
        scaling = probe._fit_scaling(split.X_train, None if y is None or task != "regression" else np.asarray(y, float),
                                     split.X_public, split.y_public, mode, task)
        Xs = probe._box(split.X_train, scaling)
        started = time.perf_counter()
        W = opendp_components(Xs, P, eps_pca) if math.isfinite(eps_pca) else \
            PCAGauss(P, np.inf, task="unsupervised", pca_source="nonprivate", mode="paper").fit(Xs).components_
        seconds = time.perf_counter() - started
        est = PCAGauss(P, (1 - alpha) * epsilon, task=task, pca_source="given", components=W, mode=mode,
                       random_state=random_state, delta=delta, **options).fit(split.X_train, y, **common)
        if math.isfinite(eps_pca):
            est.privacy_ledger_.entries.insert(0, Release(
                "OpenDP DP-PCA (mean, eigenvalues, eigenvectors)", "laplace", 1.0, 1.0 / eps_pca, eps_pca, 0.0,
                calibration="opendp", sensitivity_source="data" if mode == "paper" else "public",
                note="pure ε-DP (OpenDP, n_changes = 2 for replace-one); recorded as a Laplace-type release: the "
                     "basic total is exact, other accountants treat it as Laplace"))
        est.opendp_seconds_ = seconds
        return est
    raise ValueError(f"unknown method {method!r}; choose from {sorted(METHOD_LABELS)}")


#: Former name of :func:`fit_release` (the shareable export is :func:`engine.release.build_release`).
build_release = fit_release


def _real_space(split: Split, rows: str):
    """Non-private reference: real (or public) rows in the full-dimensional box, paper scaling."""
    task = split.task
    y = split.y_train if task == "regression" else None
    ref = PCAGauss(2, np.inf, task="regression" if task == "regression" else "unsupervised", pca_source="identity",
                   mode="paper").fit(split.X_train, y)
    X_fit = split.X_train if rows == "train" else split.X_public
    y_fit = split.y_train if rows == "train" else split.y_public
    if task == "regression":
        y_fit = ref.transform_y(y_fit)
    return ref, ref.transform(X_fit), y_fit


# --------------------------------------------------------------------------------------------- metrics
def _accuracy(model_factory, Z_syn, y_syn, Z_test, y_test) -> float:
    classes = np.unique(y_syn)
    if classes.size < 2:  # a degenerate release: the model can only predict its one class
        return float(np.mean(y_test == classes[0])) if classes.size else 0.0
    model = model_factory().fit(Z_syn, y_syn)
    return float(np.mean(model.predict(Z_test) == y_test))


def _rmse(pred, y) -> float:
    return float(np.sqrt(np.mean((np.asarray(pred) - np.asarray(y)) ** 2)))


def _kmeans(K, rng) -> KMeans:
    # Structureless Gaussian blobs make Lloyd crawl: a looser tolerance and two restarts keep sweeps fast and
    # change the silhouette by far less than the replicate spread.
    return KMeans(K, n_init=2, max_iter=100, tol=1e-3, random_state=int(rng.integers(2**31 - 1)))


def _silhouette(Z, K, rng, max_rows=1500) -> tuple[float, KMeans]:
    km = _kmeans(K, rng).fit(Z)
    labels = km.labels_
    if np.unique(labels).size < 2:
        return 0.0, km
    sample = None if len(Z) <= max_rows else max_rows
    return float(silhouette_score(Z, labels, sample_size=sample, random_state=int(rng.integers(2**31 - 1)))), km


def gaussian_reference_silhouette(P: int, n: int, K: int, random_state=0) -> float:
    """S.C. of K-Means on n samples of N(0, I_P): what a structureless blob scores (spec 7, 8.10)."""
    rng = np.random.default_rng(random_state)
    return _silhouette(rng.standard_normal((n, P)), K, rng)[0]


def evaluate(task: str, Z_syn, y_syn, Z_test, y_test, *, K: int = 10, real_silhouette=None, Z_real_train=None,
             labels_real=None, random_state=0) -> dict:
    """Train on (Z_syn, y_syn), test on real (Z_test, y_test). Returns a dict of the task's metrics."""
    rng = np.random.default_rng(random_state)
    Z_syn = np.asarray(Z_syn, dtype=float)
    if not np.all(np.isfinite(Z_syn)):
        raise ValueError("synthetic data contain non-finite values")
    out: dict = {}
    if task == "classification":
        out["svm_accuracy"] = _accuracy(lambda: SVC(kernel="rbf", C=1.0, gamma="scale"), Z_syn, y_syn, Z_test, y_test)
        out["logreg_accuracy"] = _accuracy(lambda: LogisticRegression(max_iter=2000), Z_syn, y_syn, Z_test, y_test)
    elif task == "regression":
        P = Z_syn.shape[1]
        var = float(Z_syn.var()) or 1.0
        krr = KernelRidge(kernel="rbf", alpha=1.0, gamma=1.0 / (P * var)).fit(Z_syn, y_syn)
        out["krr_rmse"] = _rmse(krr.predict(Z_test), y_test)
        out["linear_rmse"] = _rmse(Ridge(alpha=1e-3).fit(Z_syn, y_syn).predict(Z_test), y_test)
    else:
        sc, km = _silhouette(Z_syn, K, rng)
        out["silhouette"] = sc
        if real_silhouette is not None:
            out["silhouette_gap"] = abs(real_silhouette - sc)
        Z_real = np.asarray(Z_test if Z_real_train is None else Z_real_train, dtype=float)
        assigned = km.predict(Z_real)
        real_km = _kmeans(K, rng).fit_predict(Z_real)
        out["transfer_ari"] = float(adjusted_rand_score(real_km, assigned))
        if labels_real is not None:
            out["label_ari"] = float(adjusted_rand_score(labels_real, assigned))
    return out


def reference_levels(split: Split, *, K: int = 10, components=(2,), random_state=0) -> dict:
    """Chance levels: majority-class accuracy, random-guess RMSE (y_hat ~ U[-1, 1]), S.C. of N(0, I_P)."""
    task = split.task
    if task == "classification":
        classes, counts = np.unique(split.y_train, return_counts=True)
        majority = classes[counts.argmax()]
        return {"chance_accuracy": float(np.mean(split.y_test == majority))}
    if task == "regression":
        ref, _, _ = _real_space(split, "train")
        yt = ref.transform_y(split.y_test)
        # E[(y - u)^2] with u ~ U[-1, 1] is y^2 + 1/3.
        return {"random_guess_rmse": float(np.sqrt(np.mean(yt**2) + 1.0 / 3.0))}
    n = len(split.X_train)
    with threadpool_limits(1):
        return {f"gaussian_silhouette_P{P}": gaussian_reference_silhouette(P, n, K, random_state) for P in components}


def run_method(method: str, split: Split, **kwargs) -> dict:
    """Release with one method, evaluate it, and return one row of metrics and budget figures.

    Keyword arguments: P, epsilon, alpha (0.5), mode ("paper"), delta, K (10), random_state (split-independent
    evaluation stream: K-Means, SVM ties), noise_seed (None: fresh release noise; an int: known, "not proven"),
    real_silhouette, n_synthetic, and ``PCAGauss`` options (bounds, y_bounds, labels, public_declared, ...).
    The row's ``status`` is the fit's own ledger status ("no privacy" for the non-private references).
    Runs single-threaded: on small data, BLAS/OpenMP thread start-up
    (K-Means above all) costs far more than it saves, and sweeps are many small fits.
    """
    with threadpool_limits(1):
        return _run_method(method, split, **kwargs)


def _noise_state(noise_seed, rng):
    """The release's random_state: None (fresh OS entropy) or, for a known noise seed, a stream derived from
    it and the cell's evaluation stream (each cell of a sweep gets its own reproducible noise)."""
    if noise_seed is None:
        return None
    return np.random.SeedSequence([int(noise_seed), int(rng.integers(2**32))])


def _run_method(method: str, split: Split, *, P: int, epsilon: float, alpha: float = 0.5, mode: str = "paper",
               delta: float | None = None, K: int = 10, random_state=None, noise_seed=None, real_silhouette=None,
               n_synthetic=None, **options) -> dict:
    task = split.task
    rng = np.random.default_rng(random_state)
    row = {"method": method, "epsilon": float(epsilon), "P": int(P), "alpha": float(alpha), "mode": mode}
    started = time.perf_counter()
    if method in _NON_PRIVATE:
        ref, Z_fit, y_fit = _real_space(split, "train" if method == "real" else "public")
        Z_test = ref.transform(split.X_test)
        y_test = ref.transform_y(split.y_test) if task == "regression" else split.y_test
        row.update(P=split.X_train.shape[1], alpha=float("nan"), epsilon_total=math.inf, delta_total=0.0,
                   status="no privacy", proven=False)
        if task == "unsupervised":
            metrics = evaluate(task, Z_fit, None, Z_test, None, K=K, labels_real=split.y_test, random_state=rng)
        else:
            metrics = evaluate(task, Z_fit, y_fit, Z_test, y_test, random_state=rng)
        row.update(metrics, fit_seconds=time.perf_counter() - started)
        return row
    est = fit_release(method, split, P=P, epsilon=epsilon, alpha=alpha, mode=mode, delta=delta,
                      random_state=_noise_state(noise_seed, rng), **options)
    fit_seconds = time.perf_counter() - started
    drawn = est.sample(n_synthetic) if not isinstance(est, IdentityQueryRelease) else est.sample()
    Z_syn, y_syn = drawn if isinstance(drawn, tuple) else (drawn, None)
    Z_test = est.transform(split.X_test)
    if task == "regression":
        y_test = est.transform_y(split.y_test)
    else:
        y_test = split.y_test
    ledger = est.privacy_ledger_
    eps_total, delta_total = ledger.total("basic") if len(ledger) else (math.inf, 0.0)
    row.update(P=est.components_.shape[1], epsilon_total=eps_total, delta_total=delta_total,
               status=ledger.status, proven=ledger.status == "proven", fit_seconds=fit_seconds,
               psd_fixed=bool(getattr(est, "psd_fixed_", False)))
    if hasattr(est, "opendp_seconds_"):
        row["opendp_seconds"] = est.opendp_seconds_
    if task == "unsupervised":
        metrics = evaluate(task, Z_syn, None, Z_test, None, K=K, real_silhouette=real_silhouette,
                           labels_real=split.y_test, random_state=rng)
    else:
        metrics = evaluate(task, Z_syn, y_syn, Z_test, y_test, random_state=rng)
    row.update(metrics)
    return row


def utility_sweep(split: Split, methods, epsilons, components, *, alphas=(0.5,), n_reps: int = 3,
                  mode: str = "paper", delta: float | None = None, K: int = 10, random_state=0, noise_seed=None,
                  progress=None, **options) -> pd.DataFrame:
    """Every method x eps x P (x alpha for Lap/AG/OpenDP) x replicate, one row each.

    Non-private references (``real``, ``public_only``) are fitted once per replicate and repeated for every eps
    (flat lines in the plots). ``progress(done, total)`` is called after each fit. Evaluation seeds derive from
    (random_state, replicate, grid position); release noise is fresh unless ``noise_seed`` is given (then it
    derives from it too, and every fit is "not proven: the noise seed is known").
    """
    methods = list(methods)
    epsilons = [float(e) for e in epsilons]
    components = [int(p) for p in components]
    alphas = [float(a) for a in alphas] or [0.5]
    real_sc = None
    if split.task == "unsupervised":
        ref, Z_real, _ = _real_space(split, "train")
        with threadpool_limits(1):
            real_sc = _silhouette(Z_real, K, np.random.default_rng(random_state))[0]
    jobs = []
    for r in range(n_reps):
        for mi, m in enumerate(methods):
            if m in _NON_PRIVATE:
                jobs.append((r, mi, m, None, None, None))
                continue
            grid_p = [None] if m == "liu" else components
            for pi, P in enumerate(grid_p):
                for ei, eps in enumerate(epsilons):
                    for ai, a in enumerate(alphas if m in _USES_ALPHA else [0.5]):
                        jobs.append((r, mi, m, (ei, eps), (pi, P), (ai, a)))
    rows = []
    for done, (r, mi, m, e, p, a) in enumerate(jobs, start=1):
        if e is None:
            seed = np.random.SeedSequence(int(random_state), spawn_key=(r, mi))
            base = run_method(m, split, P=2, epsilon=math.inf, mode=mode, K=K, random_state=seed)
            for eps in epsilons:
                rows.append({**base, "epsilon": eps, "rep": r})
        else:
            seed = np.random.SeedSequence(int(random_state), spawn_key=(r, mi, e[0], p[0], a[0]))
            P = p[1] if p[1] is not None else split.X_train.shape[1]
            row = run_method(m, split, P=P, epsilon=e[1], alpha=a[1], mode=mode, delta=delta, K=K,
                             random_state=seed, noise_seed=noise_seed, real_silhouette=real_sc, **options)
            row["rep"] = r
            rows.append(row)
        if progress is not None:
            progress(done, len(jobs))
    df = pd.DataFrame(rows)
    df["label"] = df["method"].map(METHOD_LABELS)
    if real_sc is not None:
        df["real_silhouette"] = real_sc
    return df


def summarise(df: pd.DataFrame, metric: str, by=("method", "epsilon", "P", "alpha")) -> pd.DataFrame:
    """Mean, 95 % CI half-width (1.96 sd/sqrt(R)), median and count of ``metric`` per group, and the
    group's ledger status ("proven", "not proven", "no privacy", or "mixed")."""
    keys = [k for k in by if k in df.columns]
    g = df.groupby(keys, dropna=False)[metric]
    out = g.agg(mean="mean", sd="std", median="median", n="count").reset_index()
    out["ci95"] = 1.96 * out["sd"].fillna(0.0) / np.sqrt(out["n"].clip(lower=1))
    out["label"] = out["method"].map(METHOD_LABELS)
    if "status" in df.columns:  # each fit's own ledger status; a group of mixed statuses says so
        status = df.groupby(keys, dropna=False)["status"].agg(lambda s: s.iloc[0] if s.nunique() == 1 else "mixed")
        out = out.merge(status.reset_index(), on=keys, how="left")
    return out


def best_over(summary: pd.DataFrame, metric: str, over=("P", "alpha")) -> pd.DataFrame:
    """Per (method, eps) the row with the best mean over ``over`` (the paper's "best over P and alpha":
    tuned on test data, which spends privacy never accounted for; spec 9.8)."""
    higher = METRICS[metric][1]
    keys = [c for c in ("method", "epsilon") if c in summary.columns]
    s = summary.sort_values("mean", ascending=not higher)
    return s.groupby(keys, dropna=False, sort=False).head(1).sort_values(keys).reset_index(drop=True)


# --------------------------------------------------------------------------------------------- page helpers
def released_frames(est, split: Split, n: int | None = None, random_state=None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(real, synthetic) frames in the released space, columns c1..cP plus "y" (regression) or "label".

    Real rows (owner's view only) are the held-out test rows mapped by ``est.transform``; for clustering
    there is no test split and they are the private training rows themselves.
    """
    task = split.task
    drawn = est.sample(n, random_state=random_state) if not isinstance(est, IdentityQueryRelease) else est.sample()
    Z_syn, y_syn = drawn if isinstance(drawn, tuple) else (drawn, None)
    P = Z_syn.shape[1]
    cols = [f"c{i + 1}" for i in range(P)]
    real = pd.DataFrame(est.transform(split.X_test), columns=cols)
    syn = pd.DataFrame(Z_syn, columns=cols)
    if task == "regression":
        real["y"] = est.transform_y(split.y_test)
        syn["y"] = y_syn
    elif task == "classification":
        real["label"] = np.asarray(split.y_test).astype(str)
        syn["label"] = np.asarray(y_syn).astype(str)
    return real, syn


def correlation_pair(real: pd.DataFrame, synthetic: pd.DataFrame, max_columns: int = 12):
    """Pearson correlation matrices of the numeric columns (first ``max_columns``) of both frames."""
    cols = [c for c in real.columns if pd.api.types.is_numeric_dtype(real[c])][:max_columns]
    return real[cols].corr().fillna(0.0), synthetic[cols].corr().fillna(0.0)


def synthetic_frame(est, n: int | None = None, *, reconstruct: bool = False, feature_names=None,
                    target_name: str = "target", random_state=None) -> pd.DataFrame:
    """The synthetic data as a table.

    reconstruct=False: released space (c1..cP, plus y in scaled units or the label). reconstruct=True: mapped back
    to the original features (x = centre + scale sqrt(M) W z), refused for Algorithm 1; y is mapped back to its
    units only when its bounds are public (else it stays in the scaled units, column ``<target>_scaled``).
    """
    drawn = est.sample(n, random_state=random_state)
    Z, y = drawn if isinstance(drawn, tuple) else (drawn, None)
    if reconstruct:
        X = est.inverse_transform(Z)
        names = list(feature_names) if feature_names is not None and len(feature_names) == X.shape[1] else \
            [f"x{i + 1}" for i in range(X.shape[1])]
        df = pd.DataFrame(X, columns=names)
        if y is not None:
            if est.task != "regression":
                df[target_name] = y
            elif "y_centre" in est.scaling_ and _public_bounds(est)[1]:
                df[target_name] = est.inverse_transform_y(y)
            else:
                df[f"{target_name}_scaled"] = y
        return df
    df = pd.DataFrame(Z, columns=[f"c{i + 1}" for i in range(Z.shape[1])])
    if y is not None:
        df[target_name] = y
    return df


def shareable_synthetic_frame(est, n: int | None = None, *, feature_names=None, target_name: str = "target",
                              random_state=None) -> pd.DataFrame:
    """The synthetic rows a data owner may share: drawn from the DP model only (post-processing), mapped
    back to the original columns only when W and the box are public (:func:`engine.methods.pca_gauss.can_map_back`),
    else in the released space. n defaults to N (public under replace-one). Nothing else: no seed, no
    index of private rows, no exact statistic.

    Raises ValueError when the fit has nothing to share (ε = ∞, or a label set read from private labels).
    """
    led = est.privacy_ledger_
    if not len(led):
        raise ValueError("nothing was released with noise (ε = ∞: no privacy): no shareable synthetic data")
    if est.task == "classification" and not getattr(est, "labels_declared_", False):
        raise ValueError("the label set was read from the private labels: declare it public to share synthetic rows")
    return synthetic_frame(est, n, reconstruct=can_map_back(est), feature_names=feature_names,
                           target_name=target_name, random_state=random_state)


def alpha_grid() -> tuple:
    """The paper's alpha grid (0.1 .. 0.9; 1.0 excluded)."""
    return ALPHA_GRID


SOURCE_METHOD = {"public": "pca_gauss_public", "laplace": "pca_gauss_laplace", "analyze_gauss": "pca_gauss_ag",
                 "nonprivate": "pca_gauss_alg1"}


def release_report(X, y, task: str, *, P: int, pca_source: str, epsilon: float, mode: str = "paper",
                   delta: float | None = None, alpha: float = 0.5, mean_share: float = 0.1, K: int = 10,
                   random_state=0, noise_seed=None, feature_names=None, n_public: int | None = None,
                   public=None, bounds=None, y_bounds=None, labels=None, public_declared: bool = True) -> dict:
    """Everything the page shows for one release: split, fitted model, frames, utility, ledger, downloads.

    random_state seeds the split and the evaluation models only; noise_seed is the release's noise
    (None: fresh OS entropy). public: a separate public data set (X_public, y_public) instead of a slice of
    X. bounds, y_bounds, labels, public_declared: the public inputs (see ``PCAGauss``).

    Returns a dict with keys split, model, real, synthetic (released-space frames; real rows are the test
    rows, or the training rows for clustering), corr_real, corr_synthetic, utility (this release) and
    utility_real (real data, same metrics), references, ledger, noise_log, budget, csv_released and
    csv_reconstructed (None unless W and the box are public), evaluated_on ("held-out test rows" or
    "training rows").
    """
    if pca_source not in SOURCE_METHOD:
        raise ValueError(f"pca_source must be one of {sorted(SOURCE_METHOD)}")
    split = make_split(X, y, task, n_public=n_public, random_state=random_state, feature_names=feature_names,
                       public=public)
    M = split.X_train.shape[1]
    if not 1 <= P <= M:
        raise DataError(f"k = {P} components, but the data have {M} feature columns")
    method = SOURCE_METHOD[pca_source]
    options = {"mean_share": mean_share, "bounds": bounds, "y_bounds": y_bounds, "public_declared": public_declared}
    if task == "classification":
        options["labels"] = labels
    with threadpool_limits(1):
        model = fit_release(method, split, P=P, epsilon=epsilon, alpha=alpha, mode=mode, delta=delta,
                            random_state=noise_seed, **options)
        # Sampling is post-processing: it continues the fit's own stream (fresh unless the noise seed is known).
        real, synthetic = released_frames(model, split)
        corr_real, corr_syn = correlation_pair(real, synthetic)
        real_sc = None
        if task == "unsupervised":
            real_row = _run_method("real", split, P=P, epsilon=math.inf, K=K, random_state=int(random_state))
            real_sc = real_row["silhouette"]
        else:
            real_row = _run_method("real", split, P=P, epsilon=math.inf, random_state=int(random_state))
        cols = [c for c in synthetic.columns if c.startswith("c")]
        Z_syn = synthetic[cols].to_numpy()
        target = synthetic["y"].to_numpy() if task == "regression" else \
            synthetic["label"].to_numpy() if task == "classification" else None
        y_test = real["y"].to_numpy() if task == "regression" else \
            real["label"].to_numpy() if task == "classification" else None
        utility = evaluate(task, Z_syn, target, real[cols].to_numpy(), y_test, K=K, real_silhouette=real_sc,
                           labels_real=None if split.y_test is None else np.asarray(split.y_test).astype(str),
                           random_state=int(random_state))
        references = reference_levels(split, K=K, components=(P,), random_state=int(random_state))
    reconstructed = None
    if can_map_back(model):
        reconstructed = synthetic_frame(model, reconstruct=True, feature_names=split.feature_names)
    return {
        "split": split, "model": model, "method": method, "real": real, "synthetic": synthetic,
        "corr_real": corr_real, "corr_synthetic": corr_syn, "utility": utility,
        "utility_real": {k: v for k, v in real_row.items() if k in METRICS}, "references": references,
        "ledger": model.privacy_ledger_, "noise_log": model.noise_log_, "budget": model.budget_summary(),
        "csv_released": synthetic, "csv_reconstructed": reconstructed,
        "evaluated_on": "training rows" if task == "unsupervised" else "held-out test rows",
    }
