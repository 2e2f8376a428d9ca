"""Metrics beside RMSEP, predictions outside a y range, and the "no better than the mean" check (issue #19).

For a model's predictions p on the test rows with reference values y (n rows):

- RMSEP = sqrt(mean((p - y)^2));
- R² = 1 - sum((y - p)^2) / sum((y - mean(y))^2) (scikit-learn's ``r2_score``);
- RPD = SD(y) / RMSEP, SD the sample standard deviation of the reference values (ddof = 1), the ratio of
  performance to deviation (Williams); written by hand;
- bias = mean(p - y) (positive: the model over-predicts on average).

All of them are computed on the owner's test rows without noise: the owner's view, not private.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
from sklearn.metrics import r2_score

__all__ = ["DP_MEAN_LABEL", "TRAIN_MEAN_LABEL", "mean_baseline", "means_not_beaten", "metrics_table",
           "no_better_than_mean", "range_check", "regression_metrics"]

DP_MEAN_LABEL = "the private constant predictor (a DP mean of y, same budget)"
TRAIN_MEAN_LABEL = "the training mean of y (owner's view, not private)"
DECLARED_RANGE = "the declared public y range"
TRAIN_RANGE = "the training y range (owner's view, not private)"


def _pair(y_true, y_pred) -> tuple[np.ndarray, np.ndarray]:
    y, p = np.asarray(y_true, dtype=float).ravel(), np.asarray(y_pred, dtype=float).ravel()
    if y.shape != p.shape or y.size < 2:
        raise ValueError(f"need two equal-length vectors of at least 2 values, got {y.size} and {p.size}")
    return y, p


def regression_metrics(y_true, y_pred) -> dict:
    """{"RMSEP", "R²", "RPD", "bias"} of predictions ``y_pred`` against reference values ``y_true``."""
    y, p = _pair(y_true, y_pred)
    rmsep = math.sqrt(float(np.mean((p - y) ** 2)))
    sd = float(np.std(y, ddof=1))
    rpd = sd / rmsep if rmsep > 0 else math.inf
    r2 = float(r2_score(y, p)) if sd > 0 else math.nan
    return {"RMSEP": rmsep, "R²": r2, "RPD": rpd, "bias": float(np.mean(p - y))}


def metrics_table(y_true, predictions: dict) -> pd.DataFrame:
    """One row of :func:`regression_metrics` per model: ``predictions`` maps a model's label to its predictions."""
    return pd.DataFrame([{"model": str(name), **regression_metrics(y_true, pred)}
                         for name, pred in predictions.items()])


def range_check(y_pred, *, declared=None, y_train=None) -> dict:
    """Which predictions lie outside a y range: the declared public range (low, high) when there is one, else the
    training rows' range (owner's view). Returns {"range", "source", "outside" (bool mask), "n_outside"} and, with
    both a declared range and ``y_train``, "n_outside_train": the count outside the training range too."""
    p = np.asarray(y_pred, dtype=float).ravel()
    out: dict[str, object] = {}
    if y_train is not None:
        yt = np.asarray(y_train, dtype=float).ravel()
        train = (float(yt.min()), float(yt.max()))
    if declared is not None:
        lo, hi = (float(v) for v in declared)
        if not hi > lo:
            raise ValueError(f"the y range must have low < high, got {declared!r}")
        source = DECLARED_RANGE
        if y_train is not None:
            out["n_outside_train"] = int(np.sum((p < train[0]) | (p > train[1])))
            out["train_range"] = train
    elif y_train is not None:
        (lo, hi), source = train, TRAIN_RANGE
    else:
        raise ValueError("give a declared y range or the training y values")
    outside = (p < lo) | (p > hi)
    return {"range": (lo, hi), "source": source, "outside": outside, "n_outside": int(outside.sum()), **out}


def mean_baseline(y_test, *, dp_pred=None, y_train=None) -> tuple[float, str]:
    """(RMSEP, label) of predicting the mean: the private constant predictor's predictions ``dp_pred`` when the
    page has them (the DP mean), else the training mean of ``y_train`` (owner's view)."""
    y = np.asarray(y_test, dtype=float).ravel()
    if dp_pred is not None:
        pred, label = np.asarray(dp_pred, dtype=float).ravel(), DP_MEAN_LABEL
    elif y_train is not None:
        pred, label = np.full(y.shape, float(np.mean(np.asarray(y_train, dtype=float)))), TRAIN_MEAN_LABEL
    else:
        raise ValueError("give the DP mean's predictions or the training y values")
    return math.sqrt(float(np.mean((pred - y) ** 2))), label


def no_better_than_mean(rmsep_private: float, rmsep_mean: float) -> bool:
    """True when the private model's test RMSEP is at least that of predicting the mean."""
    return float(rmsep_private) >= float(rmsep_mean)


def means_not_beaten(y_test, pred_private, *, dp_pred=None, y_train=None) -> list[tuple[str, float]]:
    """The ways of predicting the mean that the private model does not beat on the test rows: [(label, RMSEP)],
    from the DP mean (``dp_pred``, when the page has one) and the training mean (``y_train``, owner's view).
    Empty when the private model beats every one given."""
    y = np.asarray(y_test, dtype=float).ravel()
    rmsep = math.sqrt(float(np.mean((np.asarray(pred_private, dtype=float).ravel() - y) ** 2)))
    out = []
    for kwargs in ({"dp_pred": dp_pred}, {"y_train": y_train}):
        if next(iter(kwargs.values())) is not None:
            base, label = mean_baseline(y, **kwargs)
            if no_better_than_mean(rmsep, base):
                out.append((label, base))
    return out
