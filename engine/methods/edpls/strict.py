"""edPLS strict mode: the clipped, scaled rows, the exact sensitivity of their Z'Z release and the
post-processing of a (noisy) Gram matrix into a PLS1 model (spec ``edpls.md``).

Strict mode: rows are clipped to the public bounds and scaled into the unit ball, the noisy Gram matrix
of the scaled rows is released once and centred (private centring) and PSD-projected as post-processing:
all of this is the shared second-moment release ``engine.privacy.moments`` (rows, sensitivity, noise,
centring, projection). What is edPLS's own: the public centre, the clip notes and the model, computed from
the moments of the scaled rows, in those units, then converted (P and c by S, the means by S, the
coefficients are unit-free since x and y share S): no S^2 factor is formed. The noise itself is drawn by
``prepared._Prepared`` through ``moments.MomentsRelease``.

Written by hand: no kept library computes PLS1 from noisy moments.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from engine.privacy.gram import CentreOverflow, scaled_gram
from engine.privacy.moments import add_remove_sensitivity, centred_moments, psd_project, scale_rows

__all__ = ["STRICT_RELEASE", "pls1_from_moments", "strict_sensitivity"]

#: Name of the one ledger release of a strict fit (the manifest of a shareable release names it).
STRICT_RELEASE = "Z'Z"

#: Project the noisy centred moment matrix onto the PSD cone before PLS (post-processing).
#: It costs one eigendecomposition of the (m+1) x (m+1) matrix per release (~0.05 s at
#: m = 700) and roughly halves the strict-mode RMSEP when the noise is large (our check on
#: synthetic data: median 0.90 -> 0.18 at n = 2000, m = 50, eps = 10, private centring).
_STRICT_PSD = True

#: Strict-mode replicate chunk: at most this many float64 entries per (R, d, d) array.
_STRICT_CHUNK_ENTRIES = 8_000_000


# =============================================================================================
# PLS1 from moments
# =============================================================================================
def pls1_from_moments(XX, Xy, n_components: int) -> dict:
    """PLS1 from the centred moments X'X (m x m) and X'y (m,), batched over leading axes.

    Dayal & MacGregor (1997) improved kernel algorithm #1, PLS1 case: only X'y is deflated,
    w_a = (X'y)_a / ||.||, r_a = w_a - sum_{j<a} (p_j'w_a) r_j, t't = r'X'X r, p = X'X r / t't,
    q = r'(X'y)_a / t't, (X'y)_{a+1} = (X'y)_a - p q t't, b = R q. Noise-free it equals NIPALS.
    A component whose t't is not positive (possible only for an indefinite noisy X'X) is
    dropped (p = q = 0).

    Returns a dict of W (..., m, k), R (..., m, k), P (..., m, k) and q (..., k) in the
    unnormalised-t convention (P = X't/(t't), as sklearn), tt (..., k), and coef (..., m).
    """
    XX = np.asarray(XX, dtype=float)
    Xy = np.array(Xy, dtype=float)  # copy: deflated below
    m = XX.shape[-1]
    lead = XX.shape[:-2]
    k = int(n_components)
    W = np.zeros((*lead, m, k))
    R = np.zeros((*lead, m, k))
    P = np.zeros((*lead, m, k))
    q = np.zeros((*lead, k))
    tt_all = np.zeros((*lead, k))
    for a in range(k):
        nrm = np.linalg.norm(Xy, axis=-1, keepdims=True)
        w = np.divide(Xy, nrm, out=np.zeros_like(Xy), where=nrm > 0)
        r = w.copy()
        if a:
            r -= np.einsum("...mj,...j->...m", R[..., :a], np.einsum("...mj,...m->...j", P[..., :a], w))
        XXr = np.matmul(XX, r[..., None])[..., 0]
        tt = np.einsum("...i,...i->...", r, XXr)
        scale = np.max(np.abs(np.diagonal(XX, axis1=-2, axis2=-1)), axis=-1) * 1e-14
        ok = tt > np.maximum(scale, np.finfo(float).tiny)
        tt_safe = np.where(ok, tt, np.inf)
        p = XXr / tt_safe[..., None]
        qa = np.einsum("...i,...i->...", r, Xy) / tt_safe
        Xy -= XXr * qa[..., None]
        W[..., a], R[..., a], P[..., a], q[..., a] = w, r, p, qa
        tt_all[..., a] = np.where(ok, tt, 0.0)
    coef = np.einsum("...mk,...k->...m", R, q)
    return {"W": W, "R": R, "P": P, "q": q, "tt": tt_all, "coef": coef}




def strict_sensitivity(x_bound: float, y_bound: float, const: float = 0.0) -> float:
    """Exact L2 sensitivity of the strict release (upper triangle of Z'Z) under add/remove-one neighbours.

    Parameters
    ----------
    x_bound, y_bound : float > 0
        Public bounds: ||x_i||_2 <= x_bound and |y_i| <= y_bound (after any public centre).
    const : float >= 0
        The constant column a of private centring (0 without it).

    Returns
    -------
    float
        Delta = sqrt((1 + (Bx^4 + By^4 + a^4) / S^4) / 2), S^2 = Bx^2 + By^2 + a^2, attained by a row at the
        bounds with a single non-zero x entry: ``engine.privacy.moments.add_remove_sensitivity`` with the
        block weights (x_bound, y_bound), where the proof is. With private centring (a^2 = Bx^2 + By^2)
        Delta lies in [sqrt(11/16), sqrt(3)/2] = [0.829, 0.866]; with a public centre or none (a = 0) in
        [sqrt(3)/2, 1). The generic Analyze-Gauss bound ||z||^2 <= 1 over-estimates it by 1 / Delta.

    Examples
    --------
    >>> round(strict_sensitivity(1.0, 1.0, 2.0**0.5), 4)  # private centring, Bx = By
    0.8292
    >>> round(strict_sensitivity(1.0, 1.0), 4)  # public centre, Bx = By: sqrt(3)/2
    0.866
    """
    return add_remove_sensitivity([x_bound, y_bound], const)


@dataclass
class _StrictState:
    """The Gram matrix of the clipped, scaled rows and what is needed to turn a (noisy) one back into a model.

    The rows themselves (``Z``) are built only when asked for (the sample-size curve resamples them):
    a fit needs only their Gram matrix, which ``scaled_gram`` computes without forming them.
    """

    gram: np.ndarray | None  # (d, d) Z'Z of the rows z_i, ||z_i|| <= 1 (None: summed by chunks, kept beside)
    scale: float  # S: z = [x, y, a] / S
    const: float  # a (0 without private centring)
    m: int
    x_center: np.ndarray  # public centre (zeros if none)
    y_center: float
    private_centring: bool
    centring: bool  # EDPLS's ``centering`` parameter
    n_clipped: int
    n_clipped_x: int
    n_clipped_y: int
    clip_notes: tuple
    sensitivity: float  # exact L2 sensitivity of the released upper triangle (strict_sensitivity)
    rows: Callable | None = field(repr=False, default=None)  # () -> ScaledRows of the same rows
    _Z: np.ndarray | None = field(repr=False, default=None, init=False)

    @property
    def Z(self) -> np.ndarray:  # noqa: N802 - the rows' usual name
        """(n, d) the clipped, scaled rows (built on first access, same formulas as the Gram matrix)."""
        if self._Z is None:
            assert self.rows is not None, "a _StrictState keeps its rows' factory"
            self._Z = self.rows().Z
        return self._Z

    @property
    def d(self) -> int:
        assert self.gram is not None, "a chunked fit's state keeps no Gram matrix"
        return self.gram.shape[0]


def _strict_state(X, y, *, x_bound, y_bound, centering, x_center, y_center, x_names=None,
                  private_intercept=False) -> _StrictState:
    """Rows clipped to the public bounds and scaled into the unit ball: z = [x f_i, y g_i, a] / S, and their
    Gram matrix (``engine.privacy.gram.scaled_gram`` with the blocks x and y weighted by their bounds: one
    fused block pass, Z itself is not formed).

    f_i = min(1, x_bound / ||x_i||), g_i = min(1, y_bound / |y_i|) (after the public centre, if any),
    a = hypot(x_bound, y_bound) with private centring (else no column), S = hypot(x_bound, y_bound, a).
    Norms and S are computed without squaring overflow, so data and bounds in any units work.
    ``centering`` and ``private_intercept`` are EDPLS's parameters of those names (with a public centre and
    ``private_intercept`` the rows are centred by it and privately around it too: the constant column rides along).
    """
    m = X.shape[1]
    public = centering and x_center is not None
    if public:
        xc, yc = np.broadcast_to(np.asarray(x_center, dtype=float), (m,)).copy(), float(y_center)
    else:
        xc, yc = np.zeros(m), 0.0
    private = centering and (not public or bool(private_intercept))
    bounds = [float(x_bound), float(y_bound)]
    try:  # the public centre is subtracted inside the block pass: no centred copy of X
        g = scaled_gram([X, y[:, None]], bounds, private_centring=private,
                        centres=[xc, np.array([yc])] if public else None)
    except CentreOverflow as err:
        raise _centre_overflow(err.block, err.column, x_names) from None

    def rows():
        Xs, ys = _minus_public_centre(X, y, xc, yc, x_names) if public else (X, y)
        return scale_rows([Xs, ys[:, None]], bounds, private_centring=private)

    rep_x, rep_y = g.clip_reports
    return _StrictState(g.G, g.scale, g.const, m, xc, yc, private, centering, g.n_clipped,
                        rep_x.n_clipped, rep_y.n_clipped, (rep_x.describe("x rows"), rep_y.describe("y values")),
                        add_remove_sensitivity(g.weights, g.const), rows=rows)


def _centre_overflow(block: int, j: int, x_names) -> ValueError:
    """The message of an overflowing public centre: X's column (named) or y."""
    if block == 0:
        name = f"'{x_names[j]}'" if x_names is not None else str(j)
        return ValueError(f"X column {name} minus the public centre x_center overflows float64: rescale the "
                          "data and the centre (other units)")
    return ValueError("y minus the public centre y_center overflows float64: rescale y and the centre")


def _minus_public_centre(X, y, xc, yc, x_names):
    """X - x_center and y - y_center, or a ValueError naming the column that overflows float64."""
    with np.errstate(over="ignore", invalid="ignore"):
        Xs, ys = X - xc, y - yc
    if not np.isfinite(Xs).all():
        raise _centre_overflow(0, int(np.argwhere(~np.isfinite(Xs))[0][1]), x_names)
    if not np.isfinite(ys).all():
        raise _centre_overflow(1, 0, x_names)
    return Xs, ys


def _strict_postprocess(G: np.ndarray, state: _StrictState, k: int, noisy: bool) -> dict:
    """(R, d, d) Gram matrices of the scaled rows -> PLS1 models (all post-processing).

    The moments stay in the units of the scaled rows (z = v / S); the outputs are converted: the means
    and the unit-t loadings P, c by S, the coefficients are unit-free (x and y share S).
    """
    m = state.m
    S = state.scale
    if state.private_centring:  # the noisy count and mean of z come out of the same release
        C, zmean, _ = centred_moments(G, state.const / S)
    else:
        C = G
        zmean = np.zeros((G.shape[0], m + 1))
    if noisy and _STRICT_PSD:
        C = psd_project(C)
    fit = pls1_from_moments(C[:, :m, :m], C[:, :m, m], k)
    sq = np.sqrt(fit["tt"])
    x_mean = state.x_center[None, :] + S * zmean[:, :m]
    y_mean = state.y_center + S * zmean[:, m]
    coef = fit["coef"]
    intercept = y_mean - np.einsum("rm,rm->r", coef, x_mean)
    P_unit_z = fit["P"] * sq[:, None, :]
    q_unit_z = fit["q"] * sq
    W = fit["W"]
    PtW = np.einsum("rmi,rmj->rij", P_unit_z, W)
    with np.errstate(all="ignore"):
        cond = np.linalg.cond(PtW)
    return {
        "coef": coef, "intercept": intercept, "W": W, "P": P_unit_z * S, "c": q_unit_z * S, "T": None,
        "R": fit["R"], "x_mean": x_mean, "y_mean": y_mean, "cond": cond,
    }

