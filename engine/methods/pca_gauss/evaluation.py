"""Train on synthetic, test on real: the split and the metrics of PCA-Gauss's utility harness (spec Sec. 5, 7).

Metrics: classification, SVM (RBF, C = 1, gamma "scale") and logistic-regression accuracy; regression,
kernel-ridge (RBF, alpha = 1, gamma = 1/(P var)) and linear RMSE in the scaled units of y (the paper's units);
clustering, the paper's silhouette of the synthetic data with its own K-Means labels, |Delta S.C.| against
the real data, and two transfer metrics (synthetic K-Means centroids assigned to the real projected rows:
ARI against K-Means of the real rows, and ARI against the true labels when there are labels). The spec
shows that the silhouette tracks P, not eps, hence the transfer metrics. Model fitting is scikit-learn's.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from numbers import Integral

import numpy as np
from sklearn.cluster import KMeans
from sklearn.kernel_ridge import KernelRidge
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.metrics import adjusted_rand_score, silhouette_score
from sklearn.svm import SVC

from engine.data import DataError
from engine.data.split import split_indices
from engine.threads import one_blas_thread

from .estimator import PCAGauss

__all__ = ["METRICS", "PRIMARY_METRIC", "UNFAIR_METRICS", "Split", "default_public_size", "default_task",
           "evaluate", "gaussian_reference_silhouette", "make_split", "reference_levels"]


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
        """The number of rows of the train, public and test parts."""
        return {"train": len(self.X_train), "public": len(self.X_public),
                "test": len(self.X_test) if self.task != "unsupervised" else 0}


def default_public_size(n: int) -> int:
    """Spec 7: 100 (digits), 40 (diabetes, breast cancer); smaller sets keep ~1/8 as public."""
    return 100 if n >= 1000 else 40 if n >= 300 else max(8, n // 8)


def _two_parts(n_rows: int, n_second: int, random_state, stratify=None) -> tuple[np.ndarray, np.ndarray]:
    """(first, second) row positions of a shuffled split with ``n_second`` rows in the second part, in
    permutation order: :func:`engine.data.split.split_indices` (scikit-learn's ``train_test_split``
    permutation, so the rows and their order are those the harness has always used)."""
    if not 0 < n_second < n_rows:
        raise ValueError(f"cannot set {n_second} of {n_rows} rows aside (each part needs at least one row)")
    share = n_second / n_rows
    if stratify is not None:  # scikit-learn's stratified split: (train, test) with the second part as test
        return split_indices(n_rows, (1 - share, share), random_state=random_state, stratify=stratify, sort=False)
    # scikit-learn's shuffled split takes the test rows first from the permutation: cut it test-first.
    second, first = split_indices(n_rows, (share, 1 - share), random_state=random_state, sort=False)
    return first, second


def make_split(X, y, task: str, *, test_size: float = 0.2, n_public: int | None = None,
               random_state=0, feature_names=None, public=None) -> Split:
    """20 % test (stratified for classification), then a disjoint public slice out of the rest.

    public : optional (X_public, y_public or None), a separate data set the owner declares public; then no
    slice of X is set aside as "public" and every non-test row is a private training row. For clustering the
    "test" rows are the training rows themselves (there is no held-out set). The test set has
    ceil(test_size n) rows (an int ``test_size`` is a count), as scikit-learn's ``train_test_split`` rounds.
    """
    X = np.asarray(X, dtype=float)
    n = len(X)
    yy = None if y is None else np.asarray(y)
    n_test = int(test_size) if isinstance(test_size, Integral) else math.ceil(float(test_size) * n)
    idx = np.arange(n)
    if task == "unsupervised":
        rest, test = idx, None
    else:
        rest, test = _two_parts(n, n_test, random_state, stratify=yy if task == "classification" else None)
    if public is not None:
        Xp = np.asarray(public[0], dtype=float)
        yp = None if public[1] is None else np.asarray(public[1])
        if Xp.ndim != 2 or Xp.shape[1] != X.shape[1] or len(Xp) < 2:
            raise DataError(f"the public data set must have at least 2 rows and the same {X.shape[1]} feature "
                            f"columns as the private data (it has shape {Xp.shape})")
        train, test = rest, (rest if test is None else test)
        return Split(X[train], None if yy is None else yy[train], Xp, yp, X[test], None if yy is None else yy[test],
                     task, list(feature_names or []))
    n_public = default_public_size(n) if n_public is None else int(n_public)
    if not 2 <= n_public < len(rest) - 2:
        raise DataError(f"public slice of {n_public} rows does not fit in {len(rest)} non-test rows")
    assert task != "classification" or yy is not None, "a classification split needs the labels y"
    try:
        train, public = _two_parts(len(rest), n_public, random_state,
                                   stratify=yy[rest] if task == "classification" and yy is not None else None)
    except ValueError:  # too few rows per class for a stratified public slice
        train, public = _two_parts(len(rest), n_public, random_state)
    train, public = rest[train], rest[public]
    if test is None:
        test = train
    return Split(X[train], None if yy is None else yy[train], X[public], None if yy is None else yy[public],
                 X[test], None if yy is None else yy[test], task, list(feature_names or []))


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
#: The default (fair) metric per task: a model trained on synthetic rows and tested on real rows (held-out test rows,
#: or for clustering the real rows' own K-Means), so the real data are the ceiling a release can only approach.
PRIMARY_METRIC = {"classification": "svm_accuracy", "regression": "krr_rmse", "unsupervised": "transfer_ari"}

#: Metrics that do not compare a release with the real data fairly, and why (the page says so beside them).
UNFAIR_METRICS = {
    "silhouette": "the silhouette scores the synthetic rows against their own K-Means labels: a noisy Gaussian "
                  "model's well-separated blobs score higher than real data, so every synthetic release beats the "
                  "real data on it (it tracks P, not ε)",
}


def _class_column(col) -> bool:
    """A usable class column: 2 to 50 classes of at least 4 rows each, no missing value (as the harness checks)."""
    if col.isna().any():
        return False
    counts = col.astype(str).value_counts()
    return 2 <= counts.size <= 50 and int(counts.min()) >= 4


def default_task(df, response_columns=()) -> tuple[str, str | None]:
    """The task and target a table suggests: (task, target column or None).

    A text column that is a usable class column (e.g. a label or origin; a listed response first) gives
    classification; otherwise a numeric listed response gives regression; otherwise clustering with no target.
    Reads only column types and the set of values (the choice of task, not a released number).
    """
    listed = [c for c in response_columns if c in df.columns]
    text = [c for c in df.columns if not _is_numeric(df[c])]
    for c in [c for c in listed if c in text] + [c for c in text if c not in listed]:
        if _class_column(df[c]):
            return "classification", c
    numeric = [c for c in listed if _is_numeric(df[c])]
    if numeric:
        return "regression", numeric[0]
    return "unsupervised", None


def _is_numeric(col) -> bool:
    return col.dtype.kind in "biuf"


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
        assert split.y_train is not None, "a classification split has labels"
        classes, counts = np.unique(split.y_train, return_counts=True)
        majority = classes[counts.argmax()]
        return {"chance_accuracy": float(np.mean(split.y_test == majority))}
    if task == "regression":
        ref, _, _ = _real_space(split, "train")
        yt = ref.transform_y(split.y_test)
        # E[(y - u)^2] with u ~ U[-1, 1] is y^2 + 1/3.
        return {"random_guess_rmse": float(np.sqrt(np.mean(yt**2) + 1.0 / 3.0))}
    n = len(split.X_train)
    with one_blas_thread(openmp=True):
        return {f"gaussian_silhouette_P{P}": gaussian_reference_silhouette(P, n, K, random_state) for P in components}
