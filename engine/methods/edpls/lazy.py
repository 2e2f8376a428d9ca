"""edPLS on Dask collections (data beyond memory): the strict release summed chunk by chunk.

``fit_lazy(est, X, y)`` is ``EDPLS.fit`` for a ``dask.dataframe.DataFrame`` X with a dask Series y (or dask
arrays): strict mode computes Z'Z of the clipped, scaled rows partition by partition
(``engine.privacy.chunked``: the same ``scale_rows`` and the same public-centre subtraction as in memory),
then hands the d x d sum to the in-memory machinery (``prepared._Prepared``), so the noise, the ledger and
the model are the in-memory path's: for the same noise draw the fit equals it to rounding.

Paper mode (Algorithm 1) runs its NIPALS path in 2k + 2 passes over the partitions
(``engine.methods.edpls.lazy_paper``): it works on data beyond memory, more slowly, and says so.

Written by hand: the glue between ``chunked_moments`` and edPLS's own prepared fit.
"""
from __future__ import annotations

import numpy as np

from engine.methods.edpls.prepared import _Prepared
from engine.methods.edpls.strict import _minus_public_centre, _StrictState
from engine.privacy.chunked import (
    RowSpec,
    chunked_moments,
    declared_centres,
    is_lazy,
    lazy_columns,
    lazy_width,
    set_lazy_features,
)
from engine.privacy.moments import add_remove_sensitivity

__all__ = ["fit_lazy", "lazy_prepare", "prepare_lazy"]


def _edpls_rows(X, Y, *, x_center, y_center, public, x_names):
    """The row-wise preprocessing of a strict edPLS fit on one chunk: [x - x_center, y - y_center] or [x, y]."""
    y = Y[:, 0]
    if public:
        X, y = _minus_public_centre(X, y, x_center, y_center, x_names)
    return [X, y[:, None]]


class _ChunkedPrepared(_Prepared):
    """A strict ``_Prepared`` whose Gram matrix was summed chunk by chunk (no rows Z in memory)."""

    def __init__(self, est, state: _StrictState, G: np.ndarray, n: int, K: int, info: dict):
        self.params = est.get_params(deep=False)
        self.mode = est.mode
        self.n, self.m = int(n), state.m
        self.K = int(K)
        self.info = info
        self.path = None
        self.strict = state
        self._clean = {"gram": G}

    def _gram(self) -> np.ndarray:
        return self._clean["gram"]


def lazy_prepare(est, X, y, *, scheduler=None, progress=None, K=None) -> _ChunkedPrepared:
    """The clean part of a strict fit on Dask collections: parameters checked, Z'Z summed over the partitions."""
    est._check_params()
    if y is None:
        raise ValueError("EDPLS requires y to be passed, but the target y is None")
    if not (is_lazy(X) and is_lazy(y)):
        raise TypeError("give X and y both as Dask collections (ddf[x_cols], ddf[response]) or both in memory")
    if lazy_width(y) != 1:
        raise ValueError("EDPLS is PLS1 (one response): y has several columns; fit one model per response")
    m = set_lazy_features(est, X)
    if est.n_components > m:
        raise ValueError(f"n_components={est.n_components} exceeds the rank bound n_features = {m}")
    x_names = None if (x_cols := lazy_columns(X)) is None else [str(c) for c in x_cols]
    y_names = None if (y_cols := lazy_columns(y)) is None else [str(c) for c in y_cols]
    public = bool(est.centering and est.x_center is not None)
    xc, yc = declared_centres(est.x_center, est.y_center, m) if public else (np.zeros(m), 0.0)
    private = bool(est.centering and (not public or est.private_intercept))
    from functools import partial

    spec = RowSpec(partial(_edpls_rows, x_center=xc, y_center=yc, public=public, x_names=x_names),
                   (float(est.x_bound), float(est.y_bound)), None, private, None, (x_names, y_names), ("X", "y"),
                   None if public else (m, 1))
    mom = chunked_moments(X, y, spec=spec, scheduler=scheduler, progress=progress)
    limit = min(mom.n - int(bool(est.centering)), m)
    if mom.n < 2 or est.n_components > limit:
        raise ValueError(f"n_components={est.n_components} exceeds the rank bound min(n_samples"
                         f"{' - 1' if est.centering else ''}, n_features) = {limit}")
    rep_x, rep_y = mom.clip_reports
    state = _StrictState(None, mom.scale, mom.const, m, xc, yc, private, bool(est.centering), mom.n_clipped,
                         rep_x.n_clipped, rep_y.n_clipped, (rep_x.describe("x rows"), rep_y.describe("y values")),
                         add_remove_sensitivity(mom.weights, mom.const))
    y_label = f"y '{y_names[0]}'" if y_names else "y"
    info = {"x_names": x_names, "y_label": y_label, "n_partitions": mom.n_partitions}
    return _ChunkedPrepared(est, state, mom.G, mom.n, est.n_components if K is None else K, info)


def prepare_lazy(est, X, y, K=None, *, scheduler=None):
    """``EDPLS._prepare`` for Dask collections (``sample_releases``, sweeps): strict or paper mode."""
    if est.mode == "paper":
        from engine.methods.edpls.lazy_paper import paper_prepare

        est._check_params()
        if not (is_lazy(X) and is_lazy(y)):
            raise TypeError("give X and y both as Dask collections (ddf[x_cols], ddf[response]) or both in memory")
        return paper_prepare(est, X, y, scheduler=scheduler, K=K)[0]
    return lazy_prepare(est, X, y, scheduler=scheduler, K=K)


def fit_lazy(est, X, y, *, scheduler=None, progress=None):
    """``EDPLS.fit`` on Dask collections (module docstring). Returns the fitted ``est``."""
    if est.mode == "paper":
        from engine.methods.edpls.lazy_paper import PAPER_ON_DASK_NOTE, paper_prepare

        if not (is_lazy(X) and is_lazy(y)):
            raise TypeError("give X and y both as Dask collections (ddf[x_cols], ddf[response]) or both in memory")
        prep, passes = paper_prepare(est, X, y, scheduler=scheduler, progress=progress)
        est._fit_prepared(prep)
        est.notes_ = [PAPER_ON_DASK_NOTE, f"{passes} passes over {prep.info['n_partitions']} partitions (Dask)"]
        return est
    prep = lazy_prepare(est, X, y, scheduler=scheduler, progress=progress)
    est._fit_prepared(prep)
    est.notes_ = [f"strict release summed over {prep.info['n_partitions']} partitions (Dask)"]
    return est
