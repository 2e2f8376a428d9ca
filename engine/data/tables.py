"""Frame-to-arrays adapters for tabular data, and scikit-learn's bundled data sets with their public inputs.

:func:`arrays_from_frame` turns a checked table into (X, y, feature names) with a :class:`DataError` naming the
data set, column and problem; :func:`load_bundled` reads one of scikit-learn's bundled sets (offline, no
``fetch_*``) as a frame; :func:`documented_public_inputs` reads each set's documented feature ranges and label
set from its own description (never from its rows). Used by PCA-Gauss's harness and page (moved here from
``engine.methods.pca_gauss.utility``, which re-exports them).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .validate import DataError

__all__ = ["BUNDLED_SETS", "BundledSet", "PublicInputs", "arrays_from_frame", "documented_public_inputs",
           "load_bundled"]


@dataclass(frozen=True)
class BundledSet:
    """A data set shipped with the app: its key, title, task, what real data it stands in for, its loader."""

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
    if key not in BUNDLED_SETS:
        raise ValueError(f"unknown bundled set {key!r}; choose from {sorted(BUNDLED_SETS)}")
    import sklearn.datasets as skd  # here: 0.13 s of imports (scipy.io among them) that only these sets need

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
    import sklearn.datasets as skd  # see load_bundled

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
    X, features = _feature_matrix(df, target, features, name)
    y = None if target is None else _target_array(df[target], task, target, name)
    return X, y, features


def _feature_matrix(df: pd.DataFrame, target, features, name: str):
    """(X (n, M) float, feature names) of :func:`arrays_from_frame`: numeric, finite, >= 2 columns, >= 20 rows."""
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
    return X, features


def _target_array(col: pd.Series, task: str, target, name: str) -> np.ndarray:
    """y of :func:`arrays_from_frame`: no missing values; numeric and not constant (regression); 2 to 50
    classes of at least 4 rows each (classification); as it is for clustering (optional labels)."""
    if col.isna().any():
        raise DataError(f"{name}: target {target!r} has {int(col.isna().sum())} missing value(s)")
    if task == "regression":
        if not pd.api.types.is_numeric_dtype(col):
            raise DataError(f"{name}: regression needs a numeric target; {target!r} is text")
        y = col.to_numpy(dtype=float)
        if np.ptp(y) == 0:
            raise DataError(f"{name}: target {target!r} is constant")
        return y
    y = col.to_numpy()
    if task == "classification":
        classes, counts = np.unique(y.astype(str), return_counts=True)
        if classes.size < 2:
            raise DataError(f"{name}: target {target!r} has a single class")
        if classes.size > 50:
            raise DataError(f"{name}: target {target!r} has {classes.size} distinct values; that looks like "
                            "a continuous response (choose the regression task)")
        if counts.min() < 4:
            raise DataError(f"{name}: class {classes[counts.argmin()]!r} of {target!r} has only "
                            f"{counts.min()} row(s); every class needs at least 4")
    return y
