"""DP-CCA: the sensitivity of the one release (replace-one), its proof, and the rows that attain it.

The release itself (rows into the unit ball, the noise, the ledger record, private centring) is
``engine.privacy.moments``, shared with edPLS and DP-PCR; its replace-one table
(``replace_one_sensitivity``) holds the four values proven below, under DP-CCA's names in ``SENSITIVITY``.

Noise. Replace-one neighbours with a public N (the poster's setting). The released numbers are
the upper triangle (diagonal included) of the sum G = Z'Z plus symmetric Gaussian noise (upper
triangle i.i.d. N(0, sigma^2), mirrored); dividing by the public N gives C with noise std

    tau = sigma(eps, delta, Delta) / N,

where Delta is the worst-case L2 change of those released numbers (below). For the poster's
construction (one joint bound, no centring column) Delta = sqrt(2), so the classic calibration
gives exactly the poster's tau = sqrt(2)/(N eps) * sqrt(2 ln(1.25/delta)). ``calibration="auto"``
(default) uses the classic formula where it is proven (eps <= 1), as the poster does, and Balle &
Wang's analytic calibration for eps > 1; ``"analytic"`` always uses the analytic one (exact: with
an attained Delta the release's true epsilon IS the claim), ``"classic"`` refuses eps > 1.

Sensitivity of the release (``release_sensitivity``; proof). Replacing row z by z~ changes G by
Delta_G = z z' - z~ z~', and the released upper triangle u(.) changes by

    ||u(Delta_G)||^2 = (||Delta_G||_F^2 + sum_i (Delta_G)_ii^2) / 2.                       (1)

Every construction writes z = s [p, 1] (private centring: a constant column, s = 1/sqrt(m + 1)) or
z = s p (public centre, s = 1/sqrt(m)), with p = [a, b], ||a||, ||b|| <= 1 (per-view bounds, m = 2:
a = clipped (x - c_x) / B_x, b likewise) or p = w, ||w|| <= 1 (joint bound, m = 1). The constant
coordinate is the same in z and z~, so its diagonal entry does not move, and with q the p of z~

    ||u(Delta_G)||^2 / s^4 = ||pp' - qq'||_F^2 / 2 + sum_i (p_i^2 - q_i^2)^2 / 2 + k ||p - q||^2   (2)

(k = 1 with the constant column, 0 without). Two facts bound (2): (i) the diagonal of a symmetric
matrix is bounded by its Frobenius norm, applied per view: sum_{i in x} (p_i^2 - q_i^2)^2 <=
||aa' - a~a~'||_F^2 (this is where per-view bounds gain: the cross block ab' - a~b~' has no
diagonal); (ii) with A = ||a||^2, A~ = ||a~||^2, t = a'a~ (B, B~, v for the y view),
||aa' - a~a~'||_F^2 = A^2 + A~^2 - 2t^2, ||pp' - qq'||_F^2 = (A + B)^2 + (A~ + B~)^2 - 2(t + v)^2 and
||p - q||^2 = A + B + A~ + B~ - 2(t + v). For fixed (t, v) the bound grows with A, B, A~, B~, and
|t| <= sqrt(A A~) <= 1, so its maximum is at unit rows over t, v in [-1, 1]:

- per view, private centring (s^2 = 1/3): (2) <= 10 - (t + v)^2 - t^2 - v^2 - 2(t + v), concave,
  maximal at t = v = -1/3 with value 32/3; times s^4 = 1/9: Delta^2 = 32/27, Delta = sqrt(32/27)
  ~ 1.0887 (on the diagonal t = v this is Delta(t) = sqrt(2) f(t), f(t) = sqrt(10 - 4t - 6t^2) /
  (3 sqrt(2)), maximal at t = -1/3);
- per view, public centre (s^2 = 1/2): (2) <= 6 - (t + v)^2 - t^2 - v^2 <= 6, Delta^2 = 3/2;
- joint, private centring (s^2 = 1/2): by (i) on the whole block, (2) <= 4 - 2g^2 - 2g (g = p'q),
  maximal at g = -1/2: 9/2, Delta^2 = 9/8;
- joint, public centre: (2) <= ||pp' - qq'||_F^2 <= 2, Delta = sqrt(2) (the poster's value).

All four are attained (so the calibration is tight and an audit can approach the claim) by unit
rows with the maximising inner product whose view blocks of Delta_G are diagonal: a = c e_1 - s e_2,
a~ = -s e_1 + c e_2 with -2cs = t (``worst_case_rows``; it needs two columns per view, for a
one-column view the bound holds but is not attained). Before this analysis every construction was
calibrated to sqrt(2) (the sum of unit rows); the construction is unchanged, only the noise now
matches its true sensitivity: sqrt(32/27) / sqrt(2) = 0.77 times the noise std for the page's
default (per-view bounds, private centring). ``tests/test_dp_cca_release.py`` checks every value
by maximising the change over adversarial rows through ``DPCCA._prepare``.

"""
from __future__ import annotations

import math

import numpy as np

from engine.privacy.moments import replace_one_sensitivity

__all__ = ["SENSITIVITY", "release_sensitivity", "worst_case_rows"]

#: Block weights and constant of each construction in ``engine.privacy.moments`` terms: equal weights 1 per
#: block (one joint block or two views), the constant column a = 1 with private centring, 0 without.
_CONSTRUCTION = {"joint": (1.0,), "per_view": (1.0, 1.0)}
_CONSTANT = {"public": 0.0, "private": 1.0}

#: Worst-case L2 change of the released upper triangle of Z'Z under replace-one, per construction
#: (bounds: "joint" or "per_view"; centring: "public" or "private"): ``engine.privacy.moments``'s table
#: (``replace_one_sensitivity``) under DP-CCA's names; proof in this module's docstring.
SENSITIVITY = {(b, c): replace_one_sensitivity(w, a) for b, w in _CONSTRUCTION.items() for c, a in _CONSTANT.items()}


def release_sensitivity(bounds: str = "joint", centring: str = "public") -> float:
    """Worst-case L2 change of the released upper triangle of Z'Z when one row is replaced.

    Parameters
    ----------
    bounds : "joint" (one bound on ||[x, y]||, and paper mode) or "per_view" (||x||, ||y|| bounded
        separately, z = [x/B_x, y/B_y, ...] / S).
    centring : "public" (a public centre, or paper mode) or "private" (a constant column in the
        same release).

    Returns
    -------
    float: sqrt(2), sqrt(9/8), sqrt(3/2) or sqrt(32/27) (``engine.privacy.moments.replace_one_sensitivity``;
    proof in the docstring of ``engine.methods.dp_cca.sensitivity``; attained by ``worst_case_rows`` when
    each view has at least two columns).
    """
    key = (bounds, centring)
    if key not in SENSITIVITY:
        raise ValueError(f"bounds must be 'joint' or 'per_view' and centring 'public' or 'private', got {key}")
    return SENSITIVITY[key]


#: Inner product t = a'a~ of the unit rows that attain each sensitivity (module docstring).
_WORST_INNER = {("joint", "public"): 0.0, ("joint", "private"): -0.5,
                ("per_view", "public"): 0.0, ("per_view", "private"): -1.0 / 3.0}


def worst_case_rows(params, dx: int, dy: int) -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """Two raw rows (x, y), (x~, y~) whose exchange attains ``release_sensitivity`` of a strict construction.

    Parameters
    ----------
    params : DPCCA or its parameter dict (strict mode).   dx, dy : columns per view.

    Returns
    -------
    ((x (dx,), y (dy,)), (x~ (dx,), y~ (dy,))) in the units of the input columns: c + B (c_t e_1 - s_t e_2)
    and c + B (-s_t e_1 + c_t e_2) per view (or over the joint coordinates), with -2 c_t s_t = t the
    maximising inner product of the proof (module docstring) and c the public centre (0 with private
    centring, whose bounds apply to the raw rows).
    """
    p = params.get_params(deep=False) if hasattr(params, "get_params") else dict(params)
    if p.get("mode") != "strict":
        raise ValueError("worst-case rows exist for strict mode only (paper mode rescales with the data)")
    joint = p.get("row_bound") is not None
    public = p.get("x_center") is not None
    t = _WORST_INNER[("joint" if joint else "per_view", "public" if public else "private")]
    c, s = (math.sqrt(1 - t) + math.sqrt(1 + t)) / 2, (math.sqrt(1 - t) - math.sqrt(1 + t)) / 2
    cx = np.broadcast_to(np.asarray(p["x_center"] if public else 0.0, dtype=float), (dx,))
    cy = np.broadcast_to(np.asarray(p["y_center"] if public else 0.0, dtype=float), (dy,))

    def pair(dim):
        u, v = np.zeros(dim), np.zeros(dim)
        u[:2], v[:2] = (c, -s), (-s, c)
        return u, v

    if joint:
        u, v = pair(dx + dy)
        B = float(p["row_bound"])
        return (cx + B * u[:dx], cy + B * u[dx:]), (cx + B * v[:dx], cy + B * v[dx:])
    if dx < 2 or dy < 2:
        raise ValueError("per-view bounds attain their sensitivity only with two or more columns per view")
    (ux, vx), (uy, vy) = pair(dx), pair(dy)
    Bx, By = float(p["x_bound"]), float(p["y_bound"])
    return (cx + Bx * ux, cy + By * uy), (cx + Bx * vx, cy + By * vy)
