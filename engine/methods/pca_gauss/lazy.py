"""PCA-Gauss strict on Dask collections (data beyond memory): every statistic its releases read, in one pass.

``fit_lazy(est, X, y)`` is ``PCAGauss.fit`` for a ``dask.dataframe.DataFrame`` X (with a dask Series y for the
supervised tasks) or dask arrays, in strict mode. Strict mode's box is public (declared bounds, or the range of
a declared public data set held in memory), so each partition is checked (``engine.privacy.chunked``: text, NaN
and inf name the partition, row and column), moved into the [-1, 1] box and summed where it lives:

    G_c = A_c'A_c,  A = [x_box, y_box (regression), 1],  one (d, d) matrix per declared class (one otherwise),

plus the box clip counts. Everything strict mode releases is a function of these sums: the AG-PCA / Lap-PCA
second moment X'X (the sum over classes), and after W is chosen the mean and second moment of
V = [X W / sqrt(M), y] (``W' G W``), or the class counts, sums and second moments. Only the sums reach the
driver; the SAME release code as in memory (``_ReleaseSteps`` with ``_SummedRows`` in place of ``_BoxRows``)
draws the noise once, in the same order, so for one ``random_state`` the fit equals the numpy path to rounding.

Refused on Dask (nothing is read off the private data to fill in a public value): paper mode (its centre and
scale are the training data's), ``bounds="data"`` / ``y_bounds="data"``, and classification without the
declared ``labels``. ``sample(n)`` draws its synthetic rows in memory (n of them; default N, the released count).

Written by hand: the glue between ``engine.privacy.chunked.sum_partitions`` and PCA-Gauss's own releases.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import numpy as np

from engine.data.validate import DataError
from engine.privacy.chunked import is_lazy, lazy_columns, lazy_width, numeric_part, set_lazy_features, split_part
from engine.privacy.chunked import sum_partitions as _sum_partitions
from engine.privacy.clipping import ClipReport

from .inputs import read_public

__all__ = ["fit_lazy"]


@dataclass
class _BoxSums:
    """One partition's (or several partitions') sums: G (L, d, d) = A_c'A_c per class, rows, box clip counts."""

    G: np.ndarray
    n: int
    n_clipped: int
    max_abs: float


def _add(parts) -> _BoxSums | None:
    parts = [p for p in parts if p is not None]
    if not parts:
        return None
    G = parts[0].G.copy()
    for p in parts[1:]:
        G += p.G
    return _BoxSums(G, sum(p.n for p in parts), sum(p.n_clipped for p in parts), max(p.max_abs for p in parts))


def _class_index(yp, index: int, keys: dict, name: str) -> np.ndarray:
    """Each row's position in the declared label set; a label outside it is a DataError naming the row."""
    values = yp.iloc[:, 0].to_numpy() if hasattr(yp, "iloc") else np.asarray(yp).reshape(len(yp), -1)[:, 0]
    text = np.asarray(values).astype(str)
    idx = np.array([keys.get(v, -1) for v in text], dtype=int)
    if (idx < 0).any():
        i = int(np.argmax(idx < 0))
        raise DataError(f"partition {index + 1}: column '{name}' holds the label {values[i]!r} outside the declared "
                        f"label set (data row {i + 1} of that partition): declare every label, or drop those rows",
                        file=f"partition {index + 1}", row=i + 1, column=name)
    return idx


def _box_chunk(part, index: int, n_x: int, *, centre, scale, y_centre, y_scale, keys, names) -> _BoxSums | None:
    """One partition: checked numbers -> the public box -> A'A per class (module docstring)."""
    xp, yp = split_part(part, n_x)
    X = numeric_part(xp, index, "X", names[0])
    n = X.shape[0]
    if n == 0:
        return None
    with np.errstate(over="ignore"):
        S = (X - centre) / scale
    clipped = int((np.abs(S) > 1.0).any(axis=1).sum())
    max_abs = float(np.abs(S).max())
    cols = [np.clip(S, -1.0, 1.0)]
    if y_scale is not None:
        yv = numeric_part(yp, index, "y", names[1])[:, 0]
        cols.append(np.clip((yv - y_centre) / y_scale, -1.0, 1.0)[:, None])
    A = np.column_stack([*cols, np.ones(n)])
    if keys is None:
        G = (A.T @ A)[None]
    else:
        idx = _class_index(yp, index, keys, (names[1] or ["y"])[0])
        G = np.stack([A[idx == c].T @ A[idx == c] for c in range(len(keys))])
    return _BoxSums(G, n, clipped, max_abs)


class _SummedRows:
    """``_BoxRows``'s statistics from the summed ``A'A`` (no rows): the interface the releases read."""

    def __init__(self, sums: _BoxSums, M: int, regression: bool):
        self.G, self.N, self.M, self.regression = sums.G, int(sums.n), M, regression
        self.W: np.ndarray | None = None  # set by project()
        self.norm: float | None = None

    def xtx(self) -> np.ndarray:
        return self.G[:, :self.M, :self.M].sum(axis=0)

    def ag_gram(self, symmetric: bool = True) -> np.ndarray:
        A = self.xtx() / self.M
        return 0.5 * (A + A.T) if symmetric else A

    def project(self, W, norm) -> None:
        self.W, self.norm = np.asarray(W, dtype=float), float(norm)

    def _projection(self) -> tuple[np.ndarray, float]:
        assert self.W is not None and self.norm is not None, "project() first"
        return self.W, self.norm

    @property
    def P(self) -> int:
        return self._projection()[0].shape[1]

    @property
    def d_v(self) -> int:
        return self.P + int(self.regression)

    def _T(self) -> np.ndarray:
        """Maps [x_box, y_box] to V = [x_box W / norm, y_box]."""
        d = self.M + int(self.regression)
        T = np.zeros((d, self.d_v))
        W, norm = self._projection()
        T[:self.M, :self.P] = W / norm
        if self.regression:
            T[-1, -1] = 1.0
        return T

    def v_gram(self) -> np.ndarray:
        T = self._T()
        return _sym(T.T @ self.G[:, :-1, :-1].sum(axis=0) @ T)

    def v_mean(self) -> np.ndarray:
        return self._T().T @ self.G[:, :-1, -1].sum(axis=0) / self.N

    def class_counts(self, L: int) -> np.ndarray:
        return self.G[:, -1, -1].astype(float).copy()

    def class_rows(self, c: int):
        raise ValueError("paper mode needs the rows in memory")

    def class_sums(self, L: int) -> tuple:
        W, norm = self._projection()
        Wn = W / norm
        sums = self.G[:, :self.M, -1] @ Wn
        seconds = np.stack([Wn.T @ self.G[c, :self.M, :self.M] @ Wn for c in range(L)])
        return sums, seconds


def _sym(A: np.ndarray) -> np.ndarray:
    return 0.5 * (A + A.T)


def _check_inputs(est, p, X, y):
    """The Dask-only refusals (module docstring); returns y (None when unsupervised)."""
    if p["mode"] != "strict":
        raise ValueError("PCA-Gauss on Dask collections runs in strict mode only: paper mode reads its centre and "
                         "scale off the training data; use mode='strict' with declared bounds")
    task = p["task"]
    if task == "unsupervised":
        y = None
    elif y is None:
        raise ValueError(f"PCAGauss with task={task!r} requires y to be passed, but the target y is None")
    if not is_lazy(X) or (y is not None and not is_lazy(y)):
        raise TypeError("give X and y both as Dask collections (ddf[x_cols], ddf[response]) or both in memory")
    if y is not None and lazy_width(y) != 1:
        raise ValueError("y must be one column")
    for name in ("bounds", "y_bounds"):
        if isinstance(getattr(est, name), str) and getattr(est, name) == "data":
            raise ValueError(f"{name}='data' reads the bounds off the private rows: on Dask collections declare "
                             f"{name}=(lower, upper) or {name}='public' with a separate public data set")
    if task == "classification" and est.labels is None:
        raise ValueError("classification on Dask collections needs the declared public label set: labels=[...]")
    return y


def fit_lazy(est, X, y=None, X_public=None, y_public=None, *, scheduler=None, progress=None):
    """``PCAGauss.fit`` on Dask collections, strict mode (module docstring). Returns the fitted ``est``."""
    est._validate_params()
    p = est._resolved()
    task = p["task"]
    y = _check_inputs(est, p, X, y)
    M = set_lazy_features(est, X)
    if X_public is not None:
        X_public = read_public(X_public, M, "X_public")
    P = est._n_released_axes(p, M)
    rng, eps_pca, eps_gauss, cal = est._start(p)
    est._set_scaling(est._fit_scaling(np.empty((0, M)), None, X_public, y_public, "strict", task), p)  # shape only
    sc = est.scaling_
    Xp_s = est._box(X_public, sc) if X_public is not None else None
    labels = keys = None
    if task == "classification":
        meta = np.asarray(getattr(y, "_meta", np.empty(0)))
        classes, _, declared = est._label_set(meta.reshape(-1), "strict")
        labels, keys = (classes, declared), {str(c): i for i, c in enumerate(classes)}
    names = tuple(None if v is None else [str(c) for c in v] for v in
                  (lazy_columns(X), None if y is None else lazy_columns(y)))
    chunk = partial(_box_chunk, centre=sc["centre"], scale=sc["scale"], y_centre=sc.get("y_centre"),
                    y_scale=sc.get("y_scale") if task == "regression" else None, keys=keys, names=names)
    total, n_parts = _sum_partitions(X, y, chunk, _add, scheduler=scheduler, progress=progress)
    if total is None or total.n < 2:
        raise ValueError(f"Found {0 if total is None else total.n} sample(s) while a minimum of 2 is required")
    est.clip_report_ = ClipReport(1.0, int(total.n), int(total.n_clipped), float(total.max_abs))
    rows = _SummedRows(total, M, task == "regression")
    delta_pca = float(est.delta) if est.delta is not None else 1.0 / rows.N
    est._release_from(rows, p, P, Xp_s, (eps_pca, eps_gauss, delta_pca, cal), rng, labels)
    est.n_partitions_ = n_parts
    return est
