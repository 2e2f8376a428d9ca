"""DP-PCR on Dask collections (data beyond memory): its one release of Z'Z summed chunk by chunk.

``lazy_prepare(est, X, y)`` is ``DPPCR._prepare`` for a dask DataFrame X with a dask Series y (or dask
arrays): the public centre is subtracted and the rows clipped and scaled (``scale_rows``) partition by
partition (``engine.privacy.chunked``); only the d x d sum comes back, and ``DPPCR.fit`` draws the noise
from it with the same ``MomentsRelease`` as in memory, so for one noise draw the fit equals the in-memory one
to rounding.

Written by hand: the glue between ``chunked_moments`` and DP-PCR's ``PreparedRows``.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import numpy as np

from engine.methods.dp_pcr.rows import PreparedRows
from engine.privacy.chunked import (
    RowSpec,
    chunked_moments,
    declared_centres,
    is_lazy,
    lazy_columns,
    lazy_width,
    set_lazy_features,
)

__all__ = ["lazy_prepare"]


def _pcr_rows(X, Y, *, x_center, y_center, public):
    """One chunk's rows [x - x_center, y - y_center] (public centre) or [x, y], as ``prepare_rows``."""
    y = Y[:, 0]
    if public:
        with np.errstate(over="ignore", invalid="ignore"):
            X, y = X - x_center, y - y_center
        if not (np.isfinite(X).all() and np.isfinite(y).all()):
            raise ValueError("the data minus the public centre overflow float64: rescale the data and the centre")
    return [X, y[:, None]]


@dataclass
class _ChunkedRows(PreparedRows):
    """``PreparedRows`` whose ``rows`` is a ``ChunkedMoments`` (its Gram matrix summed over the partitions)."""

    def gram(self) -> np.ndarray:
        return self.rows.G


def lazy_prepare(est, X, y, *, scheduler=None, progress=None) -> PreparedRows:
    """Parameters checked, Z'Z summed over the partitions of X and y (module docstring)."""
    est._validate_params()
    est._check_cross_params()
    if y is None or not (is_lazy(X) and is_lazy(y)):
        raise TypeError("give X and y both as Dask collections (ddf[x_cols], ddf[response]) or both in memory")
    if lazy_width(y) != 1:
        raise ValueError("DP-PCR has one response: y must be one column")
    m = set_lazy_features(est, X)
    public = bool(est.centring and est.x_center is not None)
    xc, yc = declared_centres(est.x_center, est.y_center, m) if public else (np.zeros(m), 0.0)
    x_cols, y_cols = lazy_columns(X), lazy_columns(y)
    names = (None if x_cols is None else [str(c) for c in x_cols], None if y_cols is None else [str(c) for c in y_cols])
    spec = RowSpec(partial(_pcr_rows, x_center=xc, y_center=yc, public=public),
                   (float(est.x_bound), float(est.y_bound)), None,
                   bool(est.centring and (not public or est.private_intercept)), None,
                   names, ("X", "y"), None if public else (m, 1))
    mom = chunked_moments(X, y, spec=spec, scheduler=scheduler, progress=progress)
    limit = min(mom.n - int(bool(est.centring)), m)
    if mom.n < 2 or (est.n_components is not None and est.n_components > limit):
        raise ValueError(f"n_components={est.n_components} exceeds min(n_samples"
                         f"{' - 1' if est.centring else ''}, n_features) = {limit}")
    est.n_components_ = limit if est.n_components is None else int(est.n_components)
    return _ChunkedRows(mom, xc, yc, bool(est.centring), m)
