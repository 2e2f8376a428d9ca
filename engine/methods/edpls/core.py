"""edPLS numerics (spec ``edpls.md``): the clean NIPALS path of paper mode.

This module holds no privacy accounting and draws no noise (``prepared`` draws it, ``strict`` holds the
strict release's rows, PLS1 from moments and the post-processing).

The clean path (paper mode) is NIPALS PLS1 computed without forming the deflated residual E:
with unit t, E_j = X_c - sum_{l<j} t_l p_l', so E_j v = X_c v - T (P'v) and E_j' u = X_c' u - P (T'u);
the squared row norms of E (needed for the sample bound xmax) follow ||e_{j+1,i}||^2 = ||e_{j,i}||^2
- 2 t_ji (E_j p_j)_i + t_ji^2 ||p_j||^2. Each component costs two passes over X with about one product each,
the floor of PLS1 (ikpls's improved kernel algorithm does the same two): X_c w_j, and one of X_c' t_j or
X_c' f_{j+1} (``_Loadings``: the other follows from f_{j+1} = f_j - c_j t_j wherever that is as accurate; both
otherwise). X_c p_{j-1}, which the row-norm update needs, comes without a product from the Lanczos structure of
PLS1 (p_{j-1} lies in span(w_0..w_j), and X_c W is kept: ``_score_direction``). One initial pass gives the
column sums, X'y and the row norms. X is never copied or deflated, and centring is implicit for large X
(X_c v = X v - 1 (mu'v)); small X (< ``_COPY_LIMIT`` entries) is centred explicitly for accuracy. The passes
run over ~1 MB row blocks (``_RowPasses``), split across worker threads (single-threaded BLAS each) unless
the caller limited BLAS to one thread (``engine.threads.one_blas_thread``: the server, the benches).

Stability (issue #16). NIPALS PLS1 has orthonormal weights W and scores T in exact arithmetic; the
path keeps them so (two classical Gram-Schmidt sweeps of each new weight against W, one of each new
score against T), and the next weight direction E_{j+1}' f_{j+1} is never taken from the bare recurrence
E_j' f_j - c_j p_j: ``_Loadings`` uses it only while its error bound stays within 4x that of the fresh product
X_c' f_{j+1} (and computes it afresh otherwise). With the bare recurrence, once the Krylov sequence has converged
(X'f at rounding level: the least-squares fit is reached, after ~23 components of a 5000 x 300 Gaussian
matrix) the rounding error of the recurrence became the weight direction, P'W lost its conditioning
(cond 1e17) and the coefficients drifted to 37 % off the least-squares solution at k = 100. With it they
stay within 1e-14 of it for every k <= 300 (scikit-learn's NIPALS drifts to ~1 % there).

Scale. X and y are divided by exact powers of two when their largest value lies outside
[2^-256, 2^256] (``engine.numerics.safe_scale_exponent``), so no square or product over- or underflows,
and the results are multiplied back (P, xmax and the means by the X factor, c and ymax by the y factor):
powers of two are exact in float64, so the path of c X, c' y is the path of X, y in the new units bit for bit (for c a
power of two; to rounding otherwise). Every tolerance is relative to the data's own scale:

- rank: a score E_j w with ||E_j w|| <= ``_RANK_FACTOR`` max(n, m) eps ||X||_F is zero: X has numerical
  rank j (numpy's ``matrix_rank`` rule, with the Frobenius norm of the matrix the products run on),
  a refusal that says so;
- y explained: E_j' f_j = 0 exactly (or not finite): no further weight exists, a refusal that says so.
  When max |f_j| <= 10 eps max |y_c| (scikit-learn's "y residual is constant" test, 10 eps, made relative
  to y's own size) or ||E_j' f_j|| <= 64 eps ||X||_F ||f_j|| (the least-squares fit is reached), the fit
  goes on, as scikit-learn's does, and a ``UserWarning`` says from which component on y was explained:
  the later components follow rounding-level directions, their y-loadings are ~0 and the coefficients
  equal those of fewer components.

The earlier rule ||E_j' f_j|| <= 1e-10 ||X'y|| refused valid components: on well-conditioned data the
Krylov sequence converges geometrically and E_j' f_j falls below 1e-10 of its start after 17 components
of a 5000 x 300 Gaussian matrix, where scikit-learn (and the algebra) still fits every k <= 300; the
message then blamed the rank of X ("X has rank 17").

Written by hand: scikit-learn's and ikpls's PLS form (or copy) the deflated X, drift on long paths (see
above) and report none of the per-component sample bounds the paper's noise needs.
"""
from __future__ import annotations

import functools
import math
import os
import warnings
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from engine.methods.edpls.strict import pls1_from_moments, strict_sensitivity  # noqa: F401 (old edpls_core names)
from engine.numerics import safe_scale_exponent
from engine.threads import one_blas_thread

__all__ = ["QUANTITIES"]

#: The four released quantities per component of paper mode, in release (and random-draw) order.
QUANTITIES = ("w", "t", "p", "c")

#: X with at most this many entries is centred explicitly (one copy) for accuracy; larger X is
#: centred implicitly (no copy). Tests set it to 0 to exercise the implicit path.
_COPY_LIMIT = 4_000_000

#: Rank rule: a score vector E_j w (w unit) counts as zero when ||E_j w|| <= _RANK_FACTOR max(n, m) eps ||X||_F.
_RANK_FACTOR = 1.0

#: y counts as explained when max |f_j| <= _Y_EXPLAINED eps max |y_c| (scikit-learn's 10 eps, relative).
_Y_EXPLAINED = 10.0

#: X'f counts as zero (y explained as far as X can explain it) when ||E_j' f_j|| <= _G_EXPLAINED eps ||X||_F ||f_j||.
_G_EXPLAINED = 64.0

_EPS = float(np.finfo(float).eps)

#: X_c p_{j-1} is taken from the Lanczos relation when p_{j-1} leaves span(w_0..w_j) by at most
#: _KRYLOV_TOL sqrt(m) ||p_{j-1}||: 16 times the rounding of the product itself (eps sqrt(m) per entry, relative).
_KRYLOV_TOL = 16.0 * _EPS

#: One product X_c' u per component when its rounding bound is within this factor of two products' (``_Loadings``).
_ONE_PRODUCT_SLACK = 4.0


# =============================================================================================
# Calibration helpers
# =============================================================================================
def _per_release_budget(epsilon: float, delta: float, k: int, budget: str) -> tuple[float, float]:
    if budget == "per_release":
        return float(epsilon), float(delta)
    return float(epsilon) / (4 * k), float(delta) / (4 * k)


# =============================================================================================
# The clean NIPALS path (paper mode)
# =============================================================================================
@dataclass
class _PaperPath:
    """Clean NIPALS PLS1 quantities for K components (unit t convention, spec Sec. 2), in data units.

    W (m, K) unit weights, T (n, K) unit scores, P (m, K) = E_j' t_j, c (K,) = f_j' t_j,
    xmax (K,) max row norm of E_j, ymax (K,) max |f_j| (or max f_j when signed), means;
    x_exp, y_exp: the powers of two the data were divided by for the computation (0: none).
    """

    W: np.ndarray
    T: np.ndarray
    P: np.ndarray
    c: np.ndarray
    xmax: np.ndarray
    ymax: np.ndarray
    x_mean: np.ndarray
    y_mean: float
    x_exp: int = 0
    y_exp: int = 0


def _blas_threads() -> int:
    """The BLAS thread limit in force (threadpoolctl): under ``one_blas_thread`` (the server, the benches' CPU-time
    comparisons) the row passes run on the calling thread, since a pool of threads then costs CPU time
    (hand-offs, the GIL between ~1 MB blocks: 5-10 % measured at 20,000 x 500) and the caller asked for one."""
    from threadpoolctl import threadpool_info

    counts = [int(i.get("num_threads") or 1) for i in threadpool_info() if i.get("user_api") == "blas"]
    return max(1, min(counts)) if counts else 1


def _row_block(m: int) -> int:
    """Rows per block so that a block of X (about 1 MB) stays in cache across the products on it."""
    return int(min(4096, max(16, (1 << 20) // (8 * max(m, 1)))))


class _RowPasses:
    """Row-blocked passes over X, split over worker threads (each running single-threaded BLAS).

    The products are numpy's ``einsum`` kernels or BLAS gemv, whichever this machine runs faster
    (``_products_by_blas``). A pass with one product runs it on a whole group of rows at once; a pass with
    several runs them block by block, so that each ~1 MB block is read from memory once and then from cache.
    A gemm with 2 rows packs (copies) each block first and is no faster than two gemv.

    Blocks of ~1 MB are small for a multi-threaded BLAS call (thread start-up per call dominates,
    badly so on a loaded machine), so the parallelism is over contiguous groups of blocks instead:
    numpy releases the GIL inside the products. Results do not depend on timing within a process
    (partial sums are combined in group order, and the kernel is chosen once).
    """

    def __init__(self, X: np.ndarray):
        self.X = X
        self.blas = _products_by_blas()
        n, m = X.shape
        B = _row_block(m)
        blocks = [(i, min(i + B, n)) for i in range(0, n, B)]
        workers = max(1, min(os.cpu_count() or 1, 8, len(blocks), 1 + X.size // 250_000))
        if workers > 1:
            workers = min(workers, _blas_threads())
        per = -(-len(blocks) // workers)
        self.groups = [blocks[i:i + per] for i in range(0, len(blocks), per)]
        self._pool = None
        self._one_thread = None

    def __enter__(self):
        if len(self.groups) > 1:
            self._one_thread = one_blas_thread().__enter__()
            self._pool = ThreadPoolExecutor(len(self.groups))
        return self

    def __exit__(self, *exc):
        if self._pool is not None:
            self._pool.shutdown()
            self._one_thread.__exit__(*exc)
        return False

    def _run(self, fn):
        if self._pool is None:
            return [fn(g) for g in self.groups]
        return list(self._pool.map(fn, self.groups))

    def _spans(self, group, whole: bool):
        """The row ranges a pass visits: the group's blocks, or the whole group at once."""
        return [(group[0][0], group[-1][1])] if whole else group

    def _tmul_into(self, acc, U, Xi, rows: slice, tmp) -> None:
        """acc[r] += U[r, rows] @ Xi for each row r of U (the block Xi is read from memory once)."""
        for r in range(U.shape[0]):
            acc[r] += _tmul_block(self.blas, U[r, rows], Xi, tmp)

    def sums_and_norms(self, U: np.ndarray):
        """(U @ X, squared row norms of X); U has shape (r, n)."""
        X = self.X
        rn2 = np.empty(X.shape[0])

        def work(group):
            acc, tmp = np.zeros((U.shape[0], X.shape[1])), np.empty(X.shape[1])
            for a, b in group:
                Xi = X[a:b]
                self._tmul_into(acc, U, Xi, slice(a, b), tmp)
                _row_norms_block(self.blas, Xi, rn2[a:b])
            return acc

        return sum(self._run(work)), rn2

    def tmul(self, u: np.ndarray) -> np.ndarray:
        """X' u for u of shape (n,), or U X for U of shape (r, n) (one pass for all r rows)."""
        X = self.X
        U = u.reshape(-1, u.shape[-1])
        whole = self.blas and U.shape[0] == 1  # one gemv over the whole group

        def work(group):
            acc, tmp = np.zeros((U.shape[0], X.shape[1])), np.empty(X.shape[1])
            for a, b in self._spans(group, whole):
                self._tmul_into(acc, U, X[a:b], slice(a, b), tmp)
            return acc

        out = sum(self._run(work))
        return out[0] if u.ndim == 1 else out

    def mul(self, *vs):
        """X v for each v, from one pass (each block is reused from cache)."""
        X = self.X
        outs = [np.empty(X.shape[0]) for _ in vs]
        whole = self.blas and len(vs) == 1  # one gemv over the whole group

        def work(group):
            for a, b in self._spans(group, whole):
                Xi = X[a:b]
                for v, o in zip(vs, outs, strict=False):
                    _mul_block(self.blas, Xi, v, o[a:b])

        self._run(work)
        return outs


def _tmul_block(blas: bool, u: np.ndarray, Xi: np.ndarray, out: np.ndarray) -> np.ndarray:
    """u' Xi into ``out``: BLAS gemv or numpy's einsum (``_products_by_blas``)."""
    return np.matmul(u, Xi, out=out) if blas else np.einsum("i,ij->j", u, Xi, out=out)


def _mul_block(blas: bool, Xi: np.ndarray, v: np.ndarray, out: np.ndarray) -> np.ndarray:
    """Xi v into ``out``: BLAS gemv or numpy's einsum."""
    return np.matmul(Xi, v, out=out) if blas else np.einsum("ij,j->i", Xi, v, out=out)


def _row_norms_block(blas: bool, Xi: np.ndarray, out: np.ndarray) -> np.ndarray:
    """The squared row norms of Xi into ``out``: a BLAS dot per row (3.8 ms against einsum's 6.8 at 20,000 x 500
    on the machine where BLAS wins) or numpy's einsum."""
    return np.vecdot(Xi, Xi, out=out) if blas else np.einsum("ij,ij->i", Xi, Xi, out=out)


#: BLAS gemv replaces numpy's einsum in the passes when it takes at most this fraction of einsum's time here
#: (``_products_by_blas``); the margin keeps a machine where the two are close from switching between runs.
_BLAS_MARGIN = 0.85
#: The matrix ``_products_by_blas`` times the kernels on: 64 MB, more than a core's share of the caches on most
#: machines, so that both stream it from memory as they stream a large X. On a matrix that stays in cache (4 MB)
#: the two kernels differed far less than on 80 MB on the machine where BLAS wins (BLAS / einsum 0.68-1.00 against
#: 0.47: too close to the margin to decide reliably); on 64 MB 0.64-0.77.
_CALIBRATION_SHAPE = (8192, 1024)


@functools.cache
def _products_by_blas() -> bool:
    """Whether single-threaded BLAS gemv runs the passes' products faster than numpy's ``einsum`` on this machine.

    It depends on the machine, both ways. One 2-core VM (2026-11-27): u'X at 20,000 x 500 took 2.5 ms with einsum
    (as fast as a sum over X) and 4.3 ms with OpenBLAS's dgemv (X v: 3.7 against 4.0). Another (2026-11-28: a
    Sapphire Rapids VM, numpy 2.4.6, OpenBLAS 0.3.31's SkylakeX kernels): 7.2 ms with einsum in ~1 MB blocks and
    3.4 ms with one dgemv (4.7-5.2 in the blocks); edPLS then cost 1.78x ikpls's CPU time. So it is measured, once
    per process, as a single-product pass runs them: u'X and X v on a ``_CALIBRATION_SHAPE`` matrix, einsum block
    by block and BLAS over the whole matrix; this thread's CPU time, the best of 3 alternating runs of each (about
    60 ms in all, paid by the server's warm-up thread, ``ui.runtime.warmup``). Both kernels give the same products
    to rounding."""
    import time

    n, m = _CALIBRATION_SHAPE
    X, u, v = np.ones((n, m)), np.ones(n), np.ones(m)
    tmp, out = np.empty(m), np.empty(n)
    B = _row_block(m)
    spans = {False: [(a, min(a + B, n)) for a in range(0, n, B)], True: [(0, n)]}  # by blas
    best = {False: math.inf, True: math.inf}
    with one_blas_thread():
        for _ in range(3):
            for blas, rows in spans.items():
                t0 = time.thread_time()
                for a, b in rows:
                    _tmul_block(blas, u[a:b], X[a:b], tmp)
                    _mul_block(blas, X[a:b], v, out[a:b])
                best[blas] = min(best[blas], time.thread_time() - t0)
    return best[True] <= _BLAS_MARGIN * best[False]


def _nipals_path(X: np.ndarray, y: np.ndarray, K: int, *, centring: bool, ymax_rule: str,
                 x_largest: float | None = None, y_largest: float | None = None, y_label: str = "y") -> _PaperPath:
    """NIPALS PLS1 without forming the deflated residuals (see the module docstring).

    Parameters
    ----------
    X : (n, m) float64, finite (checked by the caller).   y : (n,) float64, finite.
    K : number of components.   centring, ymax_rule : EDPLS's ``centering`` and ``ymax``.
    x_largest, y_largest : max |X| and max |y| when the caller knows them (saves a pass).
    y_label : how messages name y.

    Passes over X: one for the column sums, X'y and the squared row norms; then per component one
    row-blocked pass for X_c w_j (and X_c p_{j-1} from the same cached block, for the row-norm
    update) and one for X_c' t_j. X (and y) are divided by a power of two first when their scale is
    extreme (module docstring) and the path is returned in data units.

    Raises ValueError when X runs out of numerical rank or y is explained before K components.
    """
    ex = safe_scale_exponent(float(np.abs(X).max()) if x_largest is None else float(x_largest))
    ey = safe_scale_exponent(float(np.abs(y).max()) if y_largest is None else float(y_largest))
    Xs = X if ex == 0 else np.ldexp(X, -ex)
    ys = y if ey == 0 else np.ldexp(y, -ey)
    explicit_mean = Xs.mean(axis=0) if (centring and Xs.size <= _COPY_LIMIT) else None
    with _RowPasses(Xs if explicit_mean is None else Xs - explicit_mean) as rp:
        path = _nipals_passes(rp, explicit_mean, ys, K, centring=centring, ymax_rule=ymax_rule, y_label=y_label)
    if ex or ey:
        path = _PaperPath(path.W, path.T, np.ldexp(path.P, ex), np.ldexp(path.c, ey), np.ldexp(path.xmax, ex),
                          np.ldexp(path.ymax, ey), np.ldexp(path.x_mean, ex), float(np.ldexp(path.y_mean, ey)),
                          ex, ey)
    return path


class _CentredX:
    """Products with the centred X_c on the row passes: with ``off`` (the column means, implicit centring, no
    copy of X) X_c v = X v - 1 (mu'v) and X_c'u = X'u - mu (1'u); without it rp.X is used as it is."""

    def __init__(self, rp: _RowPasses, off):
        self.rp = rp
        self.off = off

    def tmul(self, u):  # X_c' u (u: (n,) or (r, n) -> (m,) or (r, m))
        out = self.rp.tmul(u)
        if self.off is not None:
            out -= np.multiply.outer(u.sum(axis=-1), self.off) if u.ndim > 1 else self.off * u.sum()
        return out

    def mul(self, *vs):  # X_c v for each v, one pass
        outs = self.rp.mul(*vs)
        if self.off is not None:
            for v, o in zip(vs, outs, strict=False):
                o -= self.off @ v
        return outs


def _first_pass(rp: _RowPasses, explicit_mean, yc, centring):
    """Pass 0: column sums, X'y_c and squared row norms. Returns (X_c products, mu, X_c'y_c, the squared row
    norms, ||X||_F of the matrix the products run on: the raw X on the implicit path, the rank rule's unit)."""
    n, m = rp.X.shape
    U = np.empty((2, n))
    U[0] = 1.0
    U[1] = yc
    acc, rn2 = rp.sums_and_norms(U)
    fro_run = math.sqrt(float(rn2.sum()))
    mu = acc[0] / n if centring else np.zeros(m)
    if centring and explicit_mean is None:
        return _CentredX(rp, mu), mu, acc[1] - mu * yc.sum(), rn2, fro_run
    if explicit_mean is not None:  # rp.X is already centred (its column sums are ~0); keep the true means
        mu = explicit_mean
    return _CentredX(rp, None), mu, acc[1], rn2, fro_run


def _weight_norm(g, W, j: int, y_label: str) -> float:
    """||g|| after re-orthogonalising g against the earlier weights in place (orthonormal in exact
    arithmetic: two Gram-Schmidt sweeps keep them so); refuses when no further weight exists."""
    if j:
        for _ in range(2):
            g -= W[:, :j] @ (W[:, :j].T @ g)
    gn = float(np.linalg.norm(g))
    if j and not (math.isfinite(gn) and gn > 0):
        raise ValueError(
            f"only {j} PLS component(s) can be extracted: {y_label} is explained to machine precision after "
            f"{j} component(s) (its residual is orthogonal to X: X'f = 0), so component {j + 1} does not "
            f"exist; use n_components <= {j}"
        )
    return gn


def _why_explained(f, f_inf: float, gn: float, y_inf: float, fro_run: float) -> str | None:
    """Why y counts as explained at this component (scikit-learn's rule made relative), or None."""
    if f_inf <= _Y_EXPLAINED * _EPS * y_inf:
        return "explained to machine precision (its residual is at rounding level)"
    if gn <= _G_EXPLAINED * _EPS * fro_run * float(np.linalg.norm(f)):
        return ("explained as far as X can explain it: the least-squares fit is reached "
                "(its residual is orthogonal to X to machine precision)")
    return None


def _score_direction(xc: _CentredX, w, j: int, rn2, M: _PathMatrices):
    """E_j w = X_c w - T_{<j} (P_{<j}' w), re-orthogonalised against the earlier scores (w is W[:, j]); stores
    X_c w in S[:, j] and updates the squared row norms rn2 in place to those of E_j.

    The update needs X_c p_{j-1}. PLS1 is a Lanczos (Golub-Kahan) process: p_{j-1} lies in the span of
    w_0..w_j, so X_c p_{j-1} = S a with a = W'p_{j-1}, without a product over X. Where the computed p_{j-1}
    leaves that span by more than ``_KRYLOV_TOL`` (relative; e.g. past the least-squares fit, where the
    weights follow rounding-level directions) X_c p_{j-1} comes from the same pass as X_c w instead."""
    off, W, T, P, S = xc.off, M.W, M.T, M.P, M.S
    if j == 0:
        if off is None:
            (S[:, 0],) = xc.mul(w)
        else:  # ||x_i - mu||^2 = ||x_i||^2 - 2 x_i'mu + ||mu||^2, x_i'mu from the same pass
            S[:, 0], xmu = xc.mul(w, off)
            xmu += off @ off  # undo the centring correction on the second product: raw x_i'mu
            rn2 += float(off @ off) - 2.0 * xmu
        return S[:, 0].copy()
    # ||e_{j,i}||^2 = ||e_{j-1,i}||^2 - 2 t_i (E_{j-1} p)_i + t_i^2 ||p||^2, E_{j-1} p = X_c p - T_{<j-1} P_{<j-1}'p
    pp, tp = P[:, j - 1], T[:, j - 1]
    a = W[:, :j + 1].T @ pp
    if np.linalg.norm(pp - W[:, :j + 1] @ a) <= _KRYLOV_TOL * math.sqrt(W.shape[0]) * np.linalg.norm(pp):
        (S[:, j],) = xc.mul(w)
        Ep = S[:, :j + 1] @ a
    else:
        S[:, j], Ep = xc.mul(w, pp)
    if j > 1:
        Ep -= T[:, :j - 1] @ (P[:, :j - 1].T @ pp)
    rn2 += tp * (tp * float(pp @ pp) - 2.0 * Ep)
    s = S[:, j] - T[:, :j] @ (P[:, :j].T @ w)
    s -= T[:, :j] @ (T[:, :j].T @ s)  # the scores are orthonormal in exact arithmetic
    return s


@dataclass
class _PathMatrices:
    """W (m, K), T (n, K), P (m, K) of the path and S (n, K) = X_c W; column-major, so that T[:, :j] etc. are
    contiguous blocks."""

    W: np.ndarray
    T: np.ndarray
    P: np.ndarray
    S: np.ndarray

    @classmethod
    def empty(cls, n: int, m: int, K: int) -> _PathMatrices:
        return cls(*(np.empty(shape, order="F") for shape in ((m, K), (n, K), (m, K), (n, K))))


class _Loadings:
    """p_j = E_j' t_j and the next weight direction X_c' f_{j+1}, from one product X_c' u per component where
    that is as accurate as computing both (two products from the same pass otherwise).

    With f_{j+1} = f_j - c_j t_j, each follows from the other: X_c' f_{j+1} = X_c' f_j - c_j X_c' t_j (the
    recurrence) and X_c' t_j = (X_c' f_j - X_c' f_{j+1}) / c_j. Their rounding errors, in units of
    u = eps sqrt(n) ||X||_F (a product X_c' v errs by about u ||v||): the fresh X_c' f_{j+1} errs by
    ||f_{j+1}||; the recurrence adds |c_j| (c_j times the error of X_c' t_j) to the error E of X_c' f_j, and
    the derived X_c' t_j errs by (E + ||f_{j+1}||) / |c_j|. ``E`` tracks that bound, and per component:

    - fresh X_c' f_{j+1} and the derived loading when (E + ||f_{j+1}||) / |c_j| <= ``_ONE_PRODUCT_SLACK``;
    - else the loading X_c' t_j and the recurrence when E + |c_j| <= ``_ONE_PRODUCT_SLACK`` ||f_{j+1}||;
    - else both products (one pass over X).

    So X_c' f is never worse than ``_ONE_PRODUCT_SLACK`` times the fresh product (the bare recurrence errs by
    ~||X'y||: the drift described in the module docstring) and each loading never worse than that times its
    own product. (The subtractions' own rounding, eps (||f_j|| + |c_j| + ||X_c' f_j|| / ||X||_F), is added to
    the bounds too.)"""

    def __init__(self, xc: _CentredX, g: np.ndarray, n: int, fro: float):
        self.xc, self.err, self.rn, self.fro = xc, 0.0, math.sqrt(n), fro
        self.raw: np.ndarray | None = g.copy()  # X_c' f_j; None after the last component

    def step(self, t, f, cj: float, fn0: float, j: int, K: int, M: _PathMatrices):
        """(p_j, X_c' f_{j+1} or None after the last component); fn0 = ||f_j||, f is f_{j+1} already."""
        xc, raw, ac, fn1 = self.xc, self.raw, abs(cj), float(np.linalg.norm(f))
        assert raw is not None, "step() after the last component"
        rounding = (fn0 + 2.0 * ac + float(np.linalg.norm(raw)) / self.fro) / self.rn
        if j + 1 == K:
            p, self.raw = xc.tmul(t), None
        elif ac > 0 and self.err + fn1 + rounding <= _ONE_PRODUCT_SLACK * ac:
            nxt = xc.tmul(f)
            p = (raw - nxt) / cj
            self.raw, self.err = nxt, fn1
        elif self.err + ac + rounding <= _ONE_PRODUCT_SLACK * fn1:
            p = xc.tmul(t)
            self.raw, self.err = raw - cj * p, self.err + ac + rounding
        else:
            p, self.raw = xc.tmul(np.vstack([t, f]))
            self.err = fn1
        if j:
            p -= M.P[:, :j] @ (M.T[:, :j].T @ t)
        return p, None if self.raw is None else self.raw.copy()


def _nipals_passes(rp: _RowPasses, explicit_mean, y, K, *, centring, ymax_rule, y_label="y") -> _PaperPath:
    n, m = rp.X.shape
    y_mean = float(y.mean()) if centring else 0.0
    yc = y - y_mean
    xc, mu, g, rn2, fro_run = _first_pass(rp, explicit_mean, yc, centring)
    M = _PathMatrices.empty(n, m, K)
    c, xmax, ymax = np.empty(K), np.empty(K), np.empty(K)
    f = yc.copy()

    y_norm, y_inf = float(np.linalg.norm(yc)), float(np.abs(yc).max())
    rank_tol = _RANK_FACTOR * max(n, m) * _EPS * fro_run
    if not float(np.linalg.norm(g)) > n * _EPS * fro_run * y_norm:
        raise ValueError(f"{y_label} is uncorrelated with every column of X (X'y = 0 after centring, to machine "
                         "precision): there is nothing to fit")
    explained_at, why = None, None
    loads = _Loadings(xc, g, n, fro_run)
    for j in range(K):
        gn = _weight_norm(g, M.W, j, y_label)
        f_inf = float(np.abs(f).max())
        if j and explained_at is None:
            why = _why_explained(f, f_inf, gn, y_inf, fro_run)
            explained_at = j if why is not None else None
        M.W[:, j] = w = g / gn
        ymax[j] = f_inf if ymax_rule == "abs" else float(f.max())
        s = _score_direction(xc, w, j, rn2, M)
        xmax[j] = math.sqrt(max(float(rn2.max()), 0.0))
        sn = float(np.linalg.norm(s))
        if not sn > rank_tol:
            raise ValueError(
                f"X has numerical rank {j} (after centring): its residual after {j} component(s) is zero to machine "
                f"precision, so component {j + 1} does not exist; use n_components <= {j}"
            )
        M.T[:, j] = t = s / sn
        c[j] = cj = float(f @ t)
        fn0 = float(np.linalg.norm(f))
        f -= cj * t
        M.P[:, j], g = loads.step(t, f, cj, fn0, j, K, M)
        if g is not None:
            g -= M.P[:, :j + 1] @ (M.T[:, :j + 1].T @ f)
    if explained_at is not None:
        warnings.warn(
            f"{y_label} is {why} after {explained_at} PLS component(s): components {explained_at + 1}..{K} follow "
            "rounding-level directions (kept orthogonal to the earlier ones; their y-loadings are ~0), so the "
            f"coefficients equal those of n_components = {explained_at} to machine precision", UserWarning,
            stacklevel=4)
    return _PaperPath(M.W, M.T, M.P, c, xmax, ymax, mu, y_mean)


def _batched_solve(M: np.ndarray, b: np.ndarray) -> np.ndarray:
    """solve(M[r], b[r]) for every r; a singular system gives NaN for that replicate only."""
    try:
        return np.linalg.solve(M, b[..., None])[..., 0]
    except np.linalg.LinAlgError:
        out = np.full(b.shape, np.nan)
        for r in range(M.shape[0]):
            try:
                out[r] = np.linalg.solve(M[r], b[r])
            except np.linalg.LinAlgError:
                pass
        return out
