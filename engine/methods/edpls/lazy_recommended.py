"""The recommended strict edPLS (``StrictEDPLS``) on Dask collections: its releases summed partition by partition.

``fit_lazy(est, X, y)`` is ``StrictEDPLS.fit`` for a ``dask.dataframe.DataFrame`` X with a dask Series y (or
dask arrays). Everything public is set up on the driver as in memory (``public_setup``: the row-wise chain, the
public axes V, centre c and bounds). Then two passes over the partitions (``engine.privacy.chunked``, each
partition checked: text, NaN and inf name the partition, row and column):

1. the response alone: the row count n and the sum of y~ = clip(y - y_c, +-y_bound) / y_bound. The count is
   released first (its noise drawn as in memory) and sets the released dimension d; when no axis is worth
   releasing (d = 0) the sum of y~ is the private constant predictor's release, and there is no second pass;
2. X and y: per partition the chain's row-wise preprocessing p(x), the projection u = V_d'p(x) - c on the d
   public axes, ``scale_rows`` (clip ||u|| to x_bound, private centring), and the d+1 x d+1 sums Z'Z and Z'y~.

Only those sums reach the driver; the noise (``MomentsRelease`` and the Gaussian on Z'y~), the post-processing
and the ledger are the in-memory path's own code in the same order, so for one ``random_state`` the fit equals
the numpy path to rounding (1e-9 checked by tests/test_dask_recommended.py). ``sample_weight`` is refused.

Written by hand: the glue between ``engine.privacy.chunked.sum_partitions`` and ``StrictEDPLS``'s releases.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from types import SimpleNamespace

import numpy as np

from engine.methods.edpls.recommended_limits import MIN_CHANNELS, NOTES, RELEASES
from engine.privacy import PrivacyLedger, noise_generator
from engine.privacy.chunked import (
    is_lazy,
    lazy_columns,
    lazy_width,
    numeric_part,
    set_lazy_features,
    split_part,
    sum_partitions,
)
from engine.privacy.moments import scale_rows

__all__ = ["fit_lazy"]


@dataclass
class _Sums:
    """Partial sums of one or more partitions: rows n, sum of y~, and (second pass) Z'Z, Z'y~, rows clipped."""

    n: int
    y_sum: float = 0.0
    G: np.ndarray | None = None
    b: np.ndarray | None = None
    n_clipped: int = 0


def _add(parts) -> _Sums | None:
    parts = [p for p in parts if p is not None]
    if not parts:
        return None
    out = _Sums(sum(p.n for p in parts), sum(p.y_sum for p in parts), n_clipped=sum(p.n_clipped for p in parts))
    if parts[0].G is not None:
        out.G, out.b = parts[0].G.copy(), parts[0].b.copy()
        for p in parts[1:]:
            out.G += p.G
            out.b += p.b
    return out


def _yt(y, y_center, y_bound) -> np.ndarray:
    return np.clip(y - y_center, -y_bound, y_bound) / y_bound


def _count_chunk(part, index: int, n_x: int, *, y_center, y_bound, name) -> _Sums | None:
    """First pass, on the response only: the rows and the sum of y~."""
    y = numeric_part(split_part(part, n_x)[0], index, "y", name)[:, 0]
    return _Sums(y.shape[0], float(np.sum(_yt(y, y_center, y_bound)))) if y.shape[0] else None


def _moment_chunk(part, index: int, n_x: int, *, chain, V, centre, x_bound, y_center, y_bound, names):
    """Second pass: p(x) -> u = V'p(x) - c -> ``scale_rows`` -> Z'Z and Z'y~ (module docstring)."""
    xp, yp = split_part(part, n_x)
    X = numeric_part(xp, index, "X", names[0])
    if X.shape[0] == 0:
        return None
    y = numeric_part(yp, index, "y", names[1])[:, 0]
    U = chain.transform(X) @ V - centre
    rows = scale_rows([U], [x_bound], private_centring=True)
    Z = rows.Z
    return _Sums(Z.shape[0], G=Z.T @ Z, b=Z.T @ _yt(y, y_center, y_bound), n_clipped=rows.n_clipped)


def _response_frame(y):
    """y as a one-column dask DataFrame / 2-D array (what ``sum_partitions`` splits)."""
    if hasattr(y, "to_frame"):
        return y.to_frame()
    return y if y.ndim == 2 else y.reshape(-1, 1) if hasattr(y, "reshape") else y[:, None]


def _check(est, X, y, sample_weight) -> int:
    est._validate_params()
    if sample_weight is not None:
        raise ValueError("sample_weight is not supported on Dask collections: repeat the rows in the data set")
    if y is None or not (is_lazy(X) and is_lazy(y)):
        raise TypeError("give X and y both as Dask collections (ddf[x_cols], ddf[response]) or both in memory")
    if lazy_width(y) != 1:
        raise ValueError("the recommended strict edPLS has one response: y must be one column")
    m = set_lazy_features(est, X)
    if m < MIN_CHANNELS:
        raise ValueError(f"the recommended strict fit is for spectra: it needs at least {MIN_CHANNELS} channels, "
                         f"got {m}; use EDPLS(mode='strict') for a few variables")
    return m


def fit_lazy(est, X, y, sample_weight=None, *, scheduler=None, progress=None):
    """``StrictEDPLS.fit`` on Dask collections (module docstring). Returns the fitted ``est``."""
    m = _check(est, X, y, sample_weight)
    if est.y_range is None:
        raise ValueError("y_range=None (a private range of y) is for in-memory data; for a Dask collection declare "
                         "y_range=(low, high), the response's physical range")
    pub = est._kept_public_setup(m)
    names = tuple(None if v is None else [str(c) for c in v] for v in (lazy_columns(X), lazy_columns(y)))
    yc, yb = float(pub["y_center"]), float(pub["y_bound"])
    first, n_parts = sum_partitions(_response_frame(y), None, partial(_count_chunk, y_center=yc, y_bound=yb,
                                                                      name=names[1]),
                                    _add, scheduler=scheduler, progress=progress)
    if first is None or first.n < 2:
        raise ValueError(f"Found {0 if first is None else first.n} sample(s) while a minimum of 2 is required")
    rng, seed_known = noise_generator(est.random_state)
    led = PrivacyLedger()  # every release records itself as it draws (nothing at epsilon = inf)
    mechs = est.mechanisms(pub)
    n_hat = float(mechs[RELEASES[0]].randomise(float(first.n), rng, ledger=led, name=RELEASES[0],
                                               note=NOTES[RELEASES[0]]))
    d, d_why = est.choose_dim(pub, n_hat)
    if d == 0:
        pub = est._fit_constant(None, pub, n_hat, rng, None, total=first.y_sum, n_rows=float(first.n),
                                  ledger=led)
    else:
        chunk = partial(_moment_chunk, chain=pub["chain"], V=pub["V"][:, :d], centre=pub["x_center"][:d],
                        x_bound=pub["x_bound"], y_center=yc, y_bound=yb, names=names)
        sums, _ = sum_partitions(X, y, chunk, _add, scheduler=scheduler, progress=progress)
        Gn = mechs[RELEASES[1]].randomise(0.5 * (sums.G + sums.G.T), 1, rng, ledger=led, name=RELEASES[1],
                                          note=NOTES[RELEASES[1]])[0]
        b = mechs[RELEASES[2]].randomise(sums.b, rng, ledger=led, name=RELEASES[2], note=NOTES[RELEASES[2]])
        # the public scale of the rows (no data): scale_rows on an empty block with the same bound
        scale = scale_rows([np.zeros((0, d))], [pub["x_bound"]], private_centring=True)
        est._post_process(Gn, b, SimpleNamespace(const_z=scale.const_z, scale=scale.scale), pub, d)
        est.n_clipped_ = int(sums.n_clipped)
    est._finish(pub, d, d_why, n_hat, led, seed_known)
    tukey, why = est.choose_estimator(pub, n_hat)  # public: the noisy count and settings (as the in-memory fit)
    est.choices_["path"] = (why if not tukey else
                            f"moments path: a fit on Dask collections has no TukeyEM path (in memory: {why})")
    est.n_partitions_ = n_parts
    return est
