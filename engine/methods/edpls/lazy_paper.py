"""Paper-mode edPLS (Algorithm 1) on Dask collections: the NIPALS path in passes over the partitions.

Algorithm 1 releases per-row scores t (n values per component), so its path cannot be one sum: it needs a
pass over X for the column sums, X'y and the row norms, then two passes per component (X_c w and X_c' t).
``_DaskPasses`` gives ``core._nipals_passes`` the three products it asks of ``core._RowPasses``
(``sums_and_norms``, ``tmul``, ``mul``), each computed partition by partition on the chosen scheduler: only
m-vectors and the n-vectors of the scores come back, never X. So paper mode works on data beyond memory
(the n-vectors y, t and the row norms must fit: 8 bytes a row each), about 2k + 2 times slower than one
pass (every pass reads the data again); the fit's ``notes_`` and a ``UserWarning`` say so.

The first pass also checks every value (text, NaN, inf: ``DataError`` naming partition, row and column),
counts the rows, brings y to the driver and takes the column ranges (constant columns and a constant y are
refused, as in memory; the largest |x| and |y| set the power-of-two rescaling of ``core._nipals_path``).

Written by hand: the glue between Dask partitions and edPLS's own NIPALS passes.
"""
from __future__ import annotations

import math
import warnings

import numpy as np

from engine.data.scheduler import dask_scheduler
from engine.methods.edpls.core import _nipals_passes, _PaperPath
from engine.methods.edpls.prepared import _Prepared
from engine.numerics import safe_scale_exponent
from engine.privacy.chunked import _numeric, lazy_columns, lazy_width, set_lazy_features

__all__ = ["PAPER_ON_DASK_NOTE", "paper_prepare"]

#: What a paper-mode fit on a Dask collection says (warning and ``notes_``).
PAPER_ON_DASK_NOTE = ("paper mode on a Dask collection makes 2k + 2 passes over the data (Algorithm 1 releases "
                      "per-row scores: one pass for the sums, two per component), so it is that much slower than "
                      "strict mode's one pass; y and the scores are held in memory (8 bytes a row each)")


def _partitions(X, y):
    """Delayed partitions of X (pandas frames or arrays with every column) and of y, in the same row order."""
    if hasattr(X, "columns"):
        if not hasattr(y, "divisions") or X.npartitions != y.npartitions:
            raise TypeError("X is a dask DataFrame: give y as a dask Series with the same partitions (ddf[response])")
        return list(X.to_delayed()), list(y.to_delayed())
    if not hasattr(y, "chunks"):
        raise TypeError("X is a dask array: give y as a dask array too")
    if any(math.isnan(c) for c in X.chunks[0]):
        raise ValueError("the row chunks of X are unknown: call X.compute_chunk_sizes() first")
    X = X.rechunk({1: -1})
    y = y.rechunk((X.chunks[0],) if y.ndim == 1 else (X.chunks[0], -1))
    return list(X.to_delayed()[:, 0]), list(y.to_delayed().reshape(X.numblocks[0], -1)[:, 0])


def _first(xp, yp, index, x_names, y_names):
    X = _numeric(xp, index, "X", x_names)
    y = _numeric(yp, index, "y", y_names)[:, 0]
    if y.shape[0] != X.shape[0]:
        raise ValueError(f"partition {index + 1}: X has {X.shape[0]} rows but y has {y.shape[0]}")
    if X.shape[0] == 0:
        return y, np.zeros(X.shape[1]), np.full(X.shape[1], np.inf), np.full(X.shape[1], -np.inf)
    return y, np.abs(X).max(axis=0), X.min(axis=0), X.max(axis=0)


def _values(xp, index, x_names, scale):
    X = _numeric(xp, index, "X", x_names)
    return X if scale == 1.0 else X * scale


def _sn(xp, index, names, scale, U):
    X = _values(xp, index, names, scale)
    return U @ X, np.einsum("ij,ij->i", X, X)


def _tm(xp, index, names, scale, u):
    return u @ _values(xp, index, names, scale)


def _mv(xp, index, names, scale, vs):
    X = _values(xp, index, names, scale)
    return [X @ v for v in vs]


class _Shape:
    def __init__(self, n, m):
        self.shape = (n, m)


class _DaskPasses:
    """``core._RowPasses``'s products, each one pass over the partitions on the given scheduler."""

    def __init__(self, parts, sizes, m, names, scale, scheduler, progress=None, total=None):
        self.parts, self.names, self.scale, self.scheduler = parts, names, float(scale), scheduler
        self.progress, self.total = progress, total
        self.offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(int)
        self.X = _Shape(int(self.offsets[-1]), m)
        self.passes = 0

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def _run(self, fn, per_part):
        import dask

        self.passes += 1
        tasks = [dask.delayed(fn, pure=False)(p, i, self.names, self.scale, per_part(i))
                 for i, p in enumerate(self.parts)]
        with dask_scheduler(self.scheduler) as sched:
            out = dask.compute(*tasks, scheduler=sched)
        if self.progress is not None:  # whole passes: (passes done + the first one) x partitions
            self.progress((self.passes + 1) * len(self.parts), self.total)
        return out

    def _rows(self, a, i):
        return a[..., self.offsets[i]:self.offsets[i + 1]]

    def sums_and_norms(self, U):
        out = self._run(_sn, lambda i: self._rows(U, i))
        return sum(o[0] for o in out), np.concatenate([o[1] for o in out])

    def tmul(self, u):
        return sum(self._run(_tm, lambda i: self._rows(u, i)))

    def mul(self, *vs):
        out = self._run(_mv, lambda i: list(vs))
        return [np.concatenate([o[k] for o in out]) for k in range(len(vs))]


class _PaperPrepared(_Prepared):
    """A paper-mode ``_Prepared`` whose NIPALS path was computed in passes over Dask partitions."""

    def __init__(self, est, path: _PaperPath, n: int, m: int, K: int, info: dict):
        self.params = est.get_params(deep=False)
        self.mode = est.mode
        self.n, self.m, self.K = int(n), int(m), int(K)
        self.info = info
        self.path = path
        self.strict = None
        self._clean = {}


def paper_prepare(est, X, y, *, scheduler=None, K=None, progress=None):
    """The clean part of a paper-mode fit on Dask collections (module docstring). Returns (prep, passes).

    ``progress(done, total)`` is called after each pass, in partitions: total = (2K + 2) x partitions.
    """
    import dask

    est._check_params()
    K = est.n_components if K is None else int(K)
    if lazy_width(y) != 1:
        raise ValueError("EDPLS is PLS1 (one response): y must be one column; fit one model per response")
    warnings.warn(PAPER_ON_DASK_NOTE, UserWarning, stacklevel=4)
    m = set_lazy_features(est, X)
    x_names = None if lazy_columns(X) is None else [str(c) for c in lazy_columns(X)]
    y_names = None if lazy_columns(y) is None else [str(c) for c in lazy_columns(y)]
    xparts, yparts = _partitions(X, y)
    tasks = [dask.delayed(_first, pure=False)(xp, yp, i, x_names, y_names)
             for i, (xp, yp) in enumerate(zip(xparts, yparts, strict=False))]
    with dask_scheduler(scheduler) as sched:
        first = dask.compute(*tasks, scheduler=sched)
    total = (2 * K + 2) * len(xparts)
    if progress is not None:
        progress(len(xparts), total)
    ys = np.concatenate([f[0] for f in first])
    n = ys.shape[0]
    absmax = np.max([f[1] for f in first], axis=0)
    lo, hi = np.min([f[2] for f in first], axis=0), np.max([f[3] for f in first], axis=0)
    limit = min(n - int(bool(est.centering)), m)
    if n < 2 or K > limit:
        raise ValueError(f"n_components={K} exceeds the rank bound min(n_samples"
                         f"{' - 1' if est.centering else ''}, n_features) = {limit}")
    const = np.flatnonzero(lo == hi)
    if const.size:
        name = x_names[const[0]] if x_names else str(const[0])
        raise ValueError(f"X column '{name}' has the same value in every row: remove it")
    y_label = f"y '{y_names[0]}'" if y_names else "y"
    if ys.min() == ys.max():
        raise ValueError(f"{y_label} has the same value in every row: there is nothing to fit")
    ex = safe_scale_exponent(float(absmax.max()))
    ey = safe_scale_exponent(float(np.abs(ys).max()))
    rp = _DaskPasses(xparts, [f[0].shape[0] for f in first], m, x_names, math.ldexp(1.0, -ex), scheduler, progress,
                     total)
    path = _nipals_passes(rp, None, ys if ey == 0 else np.ldexp(ys, -ey), K,
                          centring=est.centering, ymax_rule=est.ymax, y_label=y_label)
    if ex or ey:
        path = _PaperPath(path.W, path.T, np.ldexp(path.P, ex), np.ldexp(path.c, ey), np.ldexp(path.xmax, ex),
                          np.ldexp(path.ymax, ey), np.ldexp(path.x_mean, ex), float(np.ldexp(path.y_mean, ey)),
                          ex, ey)
    info = {"x_names": x_names, "y_label": y_label, "n_partitions": len(xparts)}
    return _PaperPrepared(est, path, n, m, K, info), rp.passes + 1
