"""What PCA-Gauss and its baselines read: checked records, a checked public slice, and the [-1, 1] box.

:func:`read_records` / :func:`read_public` refuse text, NaN, inf and over/underflow with a named column
(``column_checks``); :class:`_ReleaseTransformer` is the shared scikit-learn transformer behaviour;
:class:`_BoxScaling` is the centre and scale of the box (paper: read off the training data; strict: public
bounds, declared or the range of a declared public data set) with the ledger caveats they imply.
"""
from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.base import ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.utils.validation import check_array, validate_data

from engine.methods.column_checks import (
    check_columns,
    frame_names,
    raise_if_non_numeric,
    read_y,
    series_name,
)

from .sensitivity import CAVEATS


# --------------------------------------------------------------------------------------------
# Input checks (issue #16)
# --------------------------------------------------------------------------------------------
def read_records(est, X, y, task: str):
    """Checked float X (N, M) and y of ``fit`` (PCAGauss and the baselines); sets ``n_features_in_``.

    Refused with a ``ValueError`` that names the column (``column_checks``): text, NaN, inf, overflow
    (squares past 1.8e308) and underflow (a column too small to square), in X and in a regression y.
    Constant and duplicated columns are **accepted**: PCA inverts nothing, a constant feature stays at 0
    in the box (and in the synthetic rows), and identical features only lower the rank of the second
    moment (scikit-learn's digits has constant pixels, some identical to each other).
    """
    x_names = frame_names(X)
    if task != "unsupervised":
        if y is None:
            raise ValueError(f"{type(est).__name__} with task={task!r} requires y to be passed, but the target "
                             "y is None")
        if task == "regression":
            ya = read_y(y, min_samples=1)
            if ya.ndim == 1 or (ya.ndim == 2 and ya.shape[1] == 1):
                check_columns(ya.reshape(-1, 1), "y", [series_name(y)], single=True, constant=False,
                              duplicates=False)
    try:
        if task == "unsupervised":
            X = validate_data(est, X, dtype=float, ensure_all_finite=False, ensure_min_samples=2)
        else:
            X, y = validate_data(est, X, y, dtype=float, ensure_all_finite=False, y_numeric=task == "regression",
                                 ensure_min_samples=2)
    except (ValueError, TypeError) as exc:
        raise_if_non_numeric(X, "X", x_names, cause=exc)
        raise
    check_columns(X, "X", x_names, constant=False, duplicates=False)
    if task == "regression":
        y = np.asarray(y, dtype=float)
    return X, (None if task == "unsupervised" else y)


def read_public(X_public, M: int, what: str = "X_public") -> np.ndarray:
    """A checked public slice (n_pub, M): the values checks of :func:`read_records`, with its own name."""
    names = frame_names(X_public)
    try:
        Xp = check_array(X_public, dtype=float, ensure_all_finite=False, input_name=what)
    except (ValueError, TypeError) as exc:
        raise_if_non_numeric(X_public, what, names, cause=exc)
        raise
    if Xp.shape[1] != M:
        raise ValueError(f"{what} has {Xp.shape[1]} columns, X has {M}")
    check_columns(Xp, what, names, constant=False, duplicates=False)
    return Xp


# --------------------------------------------------------------------------------------------
# Shared estimator behaviour
# --------------------------------------------------------------------------------------------
class _ReleaseTransformer(ClassNamePrefixFeaturesOutMixin, TransformerMixin):
    """Mixin (put before BaseEstimator): what PCA-Gauss and its baselines share as scikit-learn transformers:
    y is required for the supervised tasks, and ``transform`` returns P projected columns named
    ``<class>0 .. <class>P-1``."""

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = self.task in ("regression", "classification")
        return tags

    @property
    def _n_features_out(self) -> int:
        """Number of columns ``transform`` returns (P), for ``get_feature_names_out``."""
        return self.components_.shape[1]



class _BoxScaling:
    """Mixin of :class:`PCAGauss`: the centre and scale of the [-1, 1] box and the clipping into it.

    Reads ``self.bounds``, ``self.y_bounds`` and ``self.public_declared`` (the estimator's parameters).
    """

    # PCAGauss's parameters: declared for the type checker only
    bounds: Any
    y_bounds: Any
    public_declared: bool

    def _fit_scaling(self, X, y, X_public, y_public, mode, task) -> dict:
        """Centre and scale of the [-1, 1] box, and where they come from.

        Returns a dict with centre (M,), scale (M,), source (text), bounds_source ("declared",
        "public data", "private data", "paper scaling"), caveats (list of ledger caveats) and, for
        regression, y_centre, y_scale, y_bounds_source.
        """
        caveats: list = []
        out: dict[str, Any]
        if mode == "paper":
            # Spec Sec. 2 pre-processing: centre with the training mean, divide by the max |.| (not private).
            centre = X.mean(axis=0)
            scale = np.abs(X - centre).max(axis=0)
            out = {"source": "training data (centre and max-abs scale; not private)", "bounds_source": "paper scaling"}
            caveats.append(CAVEATS["paper_scaling"])
            if task == "regression":
                yc = float(y.mean())
                ys = float(np.abs(y - yc).max())
                out.update(y_centre=yc, y_scale=ys if ys > 0 else 1.0, y_bounds_source="paper scaling")
        else:
            lo, hi, kind = self._resolve_bounds(self.bounds, X, X_public, "bounds", (X.shape[1],))
            caveats += self._bounds_caveats(kind, "bounds_data")
            centre, scale = (lo + hi) / 2.0, (hi - lo) / 2.0
            out = {"source": {"declared": "public bounds (declared)", "public data": "public bounds (range of the "
                              "declared public data)", "private data": "bounds read off the private data "
                              "(not proven)"}[kind], "bounds_source": kind}
            if task == "regression":
                ylo, yhi, ykind = self._resolve_bounds(self.y_bounds, y, y_public, "y_bounds", ())
                caveats += self._bounds_caveats(ykind, "y_bounds_data")
                ylo, yhi = float(ylo), float(yhi)
                out.update(y_centre=(ylo + yhi) / 2.0, y_scale=(yhi - ylo) / 2.0 or 1.0, y_bounds_source=ykind)
        scale = np.where(scale > 0, scale, 1.0)  # a constant feature stays at 0
        out.update(centre=np.asarray(centre, dtype=float), scale=np.asarray(scale, dtype=float), caveats=caveats)
        return out

    def _bounds_caveats(self, kind, key) -> list:
        if kind == "private data":
            return [CAVEATS[key]]
        if kind == "public data" and not self.public_declared:
            return [CAVEATS["public_undeclared"]]
        return []

    @staticmethod
    def _resolve_bounds(spec, private, public, name, shape):
        """(lower, upper, kind) for a bounds parameter (see the class docstring); kind as ``bounds_source_``."""
        what = "y" if name == "y_bounds" else "the features"
        if spec is None:
            raise ValueError(
                f"strict mode needs public bounds of {what}: pass {name}=(lower, upper) with values you declare "
                f"public (documentation, domain knowledge), {name}='public' with a separate public data set, or "
                f"{name}='data' to read them off the private rows (not proven)")
        if isinstance(spec, str):
            if spec == "data":
                arr = np.asarray(private, dtype=float)
                return arr.min(axis=0), arr.max(axis=0), "private data"
            if spec == "public":
                if public is None or len(public) == 0:
                    raise ValueError(f"{name}='public' needs the separate public data set "
                                     f"({'y_public' if name == 'y_bounds' else 'X_public'}) in fit")
                arr = np.asarray(public, dtype=float)
                return arr.min(axis=0), arr.max(axis=0), "public data"
            raise ValueError(f"{name} must be (lower, upper), 'public' or 'data', got {spec!r}")
        try:
            lo, hi = spec
            lo = np.broadcast_to(np.asarray(lo, dtype=float), shape).copy()
            hi = np.broadcast_to(np.asarray(hi, dtype=float), shape).copy()
        except (TypeError, ValueError):
            raise ValueError(f"{name} must be (lower, upper) with scalars or arrays of shape {shape}") from None
        if not (np.all(np.isfinite(lo)) and np.all(np.isfinite(hi))):
            raise ValueError(f"{name}: every bound must be a finite number")
        if np.any(hi < lo):
            raise ValueError(f"{name}: every upper bound must be >= its lower bound")
        return lo, hi, "declared"

    def _box(self, X, scaling) -> np.ndarray:
        return np.clip((X - scaling["centre"]) / scaling["scale"], -1.0, 1.0)

