"""DP-CCA on Dask collections (data beyond memory): the strict release of Z'Z summed chunk by chunk.

``lazy_prepare(est, X, Y)`` is ``DPCCA._prepare`` in strict mode for two dask DataFrames (``ddf[x_cols]``,
``ddf[y_cols]``; a dask Series for a one-column Y) or dask arrays: the public centre is subtracted and the
rows clipped and scaled (``scale_rows``, one joint block or two per-view blocks of weight 1, the constant 1
of private centring) partition by partition (``engine.privacy.chunked``). Only the d x d sum, the row count
N (public under replace-one) and the clip counts come back; ``DPCCA.fit`` draws the noise from the same
``MomentsRelease`` as in memory, so for one noise draw the fit equals the in-memory one to rounding.

Paper mode scales by the private data's own largest row norms (two passes over all rows); on Dask it gathers
the rows into memory with a ``UserWarning`` (``PAPER_ON_DASK_NOTE``): use strict mode for data beyond memory.

Written by hand: the glue between ``chunked_moments`` and DP-CCA's ``_Prepared``.
"""
from __future__ import annotations

import dataclasses
import warnings
from functools import partial

import numpy as np

from engine.methods.dp_cca.core import _centred, _Prepared
from engine.privacy.chunked import RowSpec, chunked_moments, is_lazy, lazy_columns, lazy_width, set_lazy_features
from engine.privacy.moments import replace_one_sensitivity

__all__ = ["PAPER_ON_DASK_NOTE", "lazy_prepare", "paper_inputs"]

PAPER_ON_DASK_NOTE = ("DP-CCA paper mode on a Dask collection gathers the rows into memory (it scales by the "
                      "data's own largest row norms): only for data that fits in memory; strict mode sums the "
                      "release chunk by chunk")


def _cca_rows(X, Y, *, cx, cy, public, joint, names):
    """One chunk's blocks, as ``core._prepare_strict``: [x - c_x, y - c_y] jointly or per view."""
    if public:
        X, Y = _centred(X, cx, "X", names[0]), _centred(Y, cy, "Y", names[1])
    return [np.hstack([X, Y])] if joint else [X, Y]


@dataclasses.dataclass
class _ChunkedPrepared(_Prepared):
    """DP-CCA's ``_Prepared`` with the Gram matrix summed over the partitions. ``Z`` is one row of the largest
    scaled norm (so ``DPCCA._draw``'s unit-ball check still checks every row); ``n`` is the true row count."""

    G: np.ndarray | None = None  # always given (a default only because _Prepared's last fields have one)
    n_rows: int = 0

    @property
    def n(self) -> int:
        return self.n_rows

    def gram(self) -> np.ndarray:
        assert self.G is not None
        return self.G


def paper_inputs(X, Y):
    """Paper mode: the rows gathered into memory, with the warning that says so."""
    warnings.warn(PAPER_ON_DASK_NOTE, UserWarning, stacklevel=3)
    return (X.compute() if is_lazy(X) else X), (Y.compute() if is_lazy(Y) else Y)


def lazy_prepare(est, X, Y, *, scheduler=None, progress=None) -> _Prepared:
    """Strict mode: parameters checked, Z'Z summed over the partitions of X and Y (module docstring)."""
    est._check_params()
    if Y is None or not (is_lazy(X) and is_lazy(Y)):
        raise TypeError("give X and Y both as Dask collections (ddf[x_cols], ddf[y_cols]) or both in memory")
    dx, dy = set_lazy_features(est, X), lazy_width(Y)
    if est.n_components > min(dx, dy):
        raise ValueError(f"n_components={est.n_components} exceeds min(Dx, Dy) = {min(dx, dy)}: X has "
                         f"n_features = {dx}, Y has {dy} column(s)")
    public = est.x_center is not None
    cx, cy = np.zeros(dx), np.zeros(dy)
    if public:
        for name, c, d in (("x_center", est.x_center, dx), ("y_center", est.y_center, dy)):
            arr = np.asarray(c, dtype=float)
            if arr.shape not in ((), (d,)) or not np.all(np.isfinite(arr)):
                raise ValueError(f"{name} must be finite with shape ({d},) or a scalar")
        cx = np.broadcast_to(np.asarray(est.x_center, dtype=float), (dx,)).copy()
        cy = np.broadcast_to(np.asarray(est.y_center, dtype=float), (dy,)).copy()
    x_cols, y_cols = lazy_columns(X), lazy_columns(Y)
    names = (None if x_cols is None else [str(c) for c in x_cols], None if y_cols is None else [str(c) for c in y_cols])
    joint = est.row_bound is not None
    bounds: tuple[float, ...] = (float(est.row_bound),) if joint else (float(est.x_bound), float(est.y_bound))
    spec = RowSpec(partial(_cca_rows, cx=cx, cy=cy, public=public, joint=joint, names=names), bounds,
                   (1.0,) * len(bounds), not public, 1.0, names, ("X", "Y"),
                   None if public else ((dx + dy,) if joint else (dx, dy)))
    mom = chunked_moments(X, Y, spec=spec, scheduler=scheduler, progress=progress)
    if joint:
        x_div = y_div = bounds[0] * mom.scale
        notes: tuple[str, ...] = (mom.clip_reports[0].describe("rows [x, y]"),)
        what = f"joint rows clipped to ||[x, y]|| <= {bounds[0]:g}"
    else:
        x_div, y_div = bounds[0] * mom.scale, bounds[1] * mom.scale
        notes = (mom.clip_reports[0].describe("x rows"), mom.clip_reports[1].describe("y rows"))
        what = f"x rows clipped to norm {bounds[0]:g}, y rows to {bounds[1]:g}"
    centre = "public centre subtracted" if public else "private centring: constant column in the same release"
    Z_check = np.zeros((1, mom.d))
    Z_check[0, 0] = mom.max_z
    prep = _ChunkedPrepared(Z_check, dx, dy, cx, cy, x_div, y_div, not public, mom.const_z, "public",
                            int(mom.n_clipped), notes, f"{what}; {centre}; rows scaled by 1/{mom.scale:.4g}",
                            replace_one_sensitivity(mom.weights, mom.const), G=mom.G, n_rows=mom.n)
    prep.names = names
    return prep
