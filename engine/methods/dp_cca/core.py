"""DP-CCA numerics (spec ``dp_cca.md``): input checks, rows into the unit ball, CCA from moments.

The estimator (``engine.methods.dp_cca.estimator``) builds on this module; it draws no noise and keeps
no ledger. Old import path: ``engine.methods.dp_cca.core`` (an alias of this module).

Input (issue #16). X and Y are two views of the same rows; Y may be 1-D (one column, as
scikit-learn passes a target). Both are checked column by column (``column_checks``): text, NaN, inf,
overflow, underflow, constant and duplicate columns are refused with a ``ValueError`` naming the view,
the column and the problem. At eps = inf without regularisation the CCA is identified only when each
view has full numerical rank: a view whose centred moment matrix has an eigenvalue below
``_COLLINEAR`` D eps of its largest is refused as collinear, naming the columns of the null direction
(the whitening floor would otherwise return a silently arbitrary answer).

Scale. Paper mode divides each view by a power of two first (exact in float64), then centres, divides
by the largest row norm and by the largest joint norm, all in those units: c X and c' Y give the same
rows z bit for bit when c, c' are powers of two (to rounding otherwise), hence the same noise draw, the
same correlations, and weights and centres in the new units. Before, the squared row norms overflowed
above ~1e154 (every row became 0: correlations [0, 0], zero weights, NaN means) and underflowed below
~1e-154 ("a view is constant"). Strict mode computes row norms the same way (``_row_norms``) and
scales each row by clip factor / bound, so data and public bounds in any units give the same rows z.
"""
from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from sklearn.utils.validation import check_array, check_consistent_length, validate_data

from engine.methods.column_checks import (
    check_columns,
    column_label,
    frame_names,
    pow2_exponent,
    raise_if_non_numeric,
    series_name,
)
from engine.methods.dp_cca.sensitivity import SENSITIVITY, release_sensitivity  # noqa: F401  (old names)
from engine.privacy.clipping import row_norms
from engine.privacy.gram import scaled_gram
from engine.privacy.moments import MomentsRelease, centred_moments, replace_one_sensitivity, scale_rows

#: Relative eigenvalue floor of the whitening (only matters for singular data; 0 noise).
_REL_FLOOR = 1e-12

#: A view's centred moment matrix is collinear when its smallest eigenvalue is <= _COLLINEAR D eps
#: times its largest (D columns): rounding-level, not a property of the data.
_COLLINEAR = 64.0

_EPS = float(np.finfo(float).eps)

# =============================================================================================
# Input: two checked views
# =============================================================================================
@dataclass
class Views:
    """Checked float64 views and what messages need to name their columns."""

    X: np.ndarray  # (n, dx)
    Y: np.ndarray  # (n, dy)
    x_names: list | None
    y_names: list | None


def as_view(Y, what: str = "Y", *, ensure_min_samples: int = 1) -> tuple[np.ndarray, list | None]:
    """A float64 (n, d) view from a 2-D array, a DataFrame, a 1-D array or a Series (one column).

    Non-numeric cells are refused naming the column and row (``raise_if_non_numeric``); NaN and inf
    pass here (``check_columns`` names them).
    """
    if Y is None:
        raise ValueError(f"DPCCA requires y to be passed, but the target y is None ({what}: the second view)")
    names = frame_names(Y)
    if names is None and getattr(Y, "ndim", None) == 1:
        name = series_name(Y)
        names = [name] if name is not None else None
    try:
        arr = check_array(Y, ensure_2d=False, dtype=np.float64, ensure_all_finite=False, input_name=what,
                          ensure_min_samples=ensure_min_samples)
    except (ValueError, TypeError) as exc:
        raise_if_non_numeric(Y, what, names, cause=exc)
        raise
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.ndim != 2:
        raise ValueError(f"{what} must be 1-D (one column) or 2-D (n_samples, n_columns), got shape {arr.shape}")
    return arr, names


def read_views(est, X, Y, *, reset: bool = True, full: bool = True) -> Views:
    """Validate the two views of ``DPCCA.fit``: X through scikit-learn's ``validate_data`` (n_features_in_,
    feature_names_in_), Y 1-D or 2-D; both checked column by column (``check_columns``). ``full=False``
    skips the constant and duplicate column checks (values are always checked): the privacy analyses
    prepare a few adversarial rows, whose unused columns are constant by construction."""
    x_names = frame_names(X)
    if Y is None:
        raise ValueError("DPCCA requires y to be passed, but the target y is None (Y: the second view)")
    try:
        Xa = validate_data(est, X, dtype=np.float64, ensure_all_finite=False, ensure_min_samples=2, reset=reset)
    except (ValueError, TypeError) as exc:
        raise_if_non_numeric(X, "X", x_names, cause=exc)
        raise
    Ya, y_names = as_view(Y, "Y", ensure_min_samples=2)
    if Ya.shape[0] != Xa.shape[0]:
        raise ValueError(f"X and Y must have the same rows (samples): X has {Xa.shape[0]}, Y has {Ya.shape[0]}")
    check_consistent_length(Xa, Ya)
    check_columns(Xa, "X", x_names, constant=full, duplicates=full)
    check_columns(Ya, "Y", y_names, constant=full, duplicates=full)
    return Views(Xa, Ya, x_names, y_names)


def check_identified(C: np.ndarray, dx: int, names: tuple, n_rows: int) -> None:
    """Refuse a clean (noise-free, unregularised) moment matrix whose view block is singular.

    C : (D, D) centred moments in z units; names : (x_names, y_names).
    Raises ValueError naming the columns of the null direction of the first singular view.
    """
    for what, block, cols, _off in (("X", C[:dx, :dx], names[0], 0), ("Y", C[dx:, dx:], names[1], dx)):
        d = block.shape[0]
        vals, vecs = np.linalg.eigh(0.5 * (block + block.T))
        top = float(vals[-1])
        if not (top > 0 and vals[0] <= _COLLINEAR * d * _EPS * top):
            continue
        rank = int(np.sum(vals > _COLLINEAR * d * _EPS * top))
        v = np.abs(vecs[:, 0])
        involved = [int(j) for j in np.argsort(-v) if v[j] >= 0.1 * v.max()][:4]
        if cols is not None:
            listed = ", ".join(f"'{cols[j]}'" for j in involved)
        else:
            listed = ", ".join(str(j) for j in involved)
        few = f"; only N = {n_rows} rows for {d} columns" if n_rows <= d else ""
        raise ValueError(
            f"{what} columns {listed} are collinear: a linear combination of them is constant on these rows "
            f"(numerical rank {rank} < {d}{few}), so the canonical weights are not identified without noise or "
            "regularisation. Drop a column (or set regularization > 0)")


# =============================================================================================
# CCA from (noisy) moments, batched
# =============================================================================================
def _inv_sqrt(B: np.ndarray, lam: float) -> tuple[np.ndarray, np.ndarray]:
    """B^-1/2 after regularisation (batched); also returns the smallest raw eigenvalue per batch."""
    B = 0.5 * (B + np.swapaxes(B, -1, -2))
    w, Q = np.linalg.eigh(B)
    w_reg = w + lam
    top = np.max(np.abs(w_reg), axis=-1, keepdims=True)
    floor = np.maximum(lam, _REL_FLOOR * np.where(top > 0, top, 1.0))
    w_reg = np.maximum(w_reg, floor)
    return np.matmul(Q * (1.0 / np.sqrt(w_reg))[..., None, :], np.swapaxes(Q, -1, -2)), w[..., 0]


def cca_from_moments(C, dx: int, n_components: int, regularization: float = 0.0) -> dict:
    """CCA from a (batch of) joint second-moment matrices by whitening + SVD.

    Parameters
    ----------
    C : array (D, D) or (R, D, D), D = dx + dy; blocks [[C_xx, C_xy], [C_yx, C_yy]], centred moments.
    dx : number of X variables.
    n_components : K <= min(dx, dy).
    regularization : lambda >= 0 added to the eigenvalues of C_xx and C_yy, which are then
        floored at lambda (module docstring).

    Returns
    -------
    dict with U (.., dx, K), V (.., dy, K), rho (.., K) in [0, 1] (descending), and
    min_eig_x, min_eig_y (..,): smallest eigenvalue of the raw blocks (negative = indefinite).
    Sign convention: the entry of largest magnitude of every u_k is positive (v_k follows).
    """
    C = np.asarray(C, dtype=float)
    single = C.ndim == 2
    if single:
        C = C[None]
    D = C.shape[-1]
    dy = D - int(dx)
    K = int(n_components)
    if not 1 <= K <= min(dx, dy):
        raise ValueError(f"n_components must be in 1..min(dx, dy) = {min(dx, dy)}, got {K}")
    lam = float(regularization)
    if not (math.isfinite(lam) and lam >= 0):
        raise ValueError(f"regularization must be a finite number >= 0, got {regularization!r}")
    Wx, min_x = _inv_sqrt(C[:, :dx, :dx], lam)
    Wy, min_y = _inv_sqrt(C[:, dx:, dx:], lam)
    M = Wx @ C[:, :dx, dx:] @ Wy
    A, S, Bt = np.linalg.svd(M)
    U = Wx @ A[:, :, :K]
    V = Wy @ np.swapaxes(Bt, -1, -2)[:, :, :K]
    idx = np.argmax(np.abs(U), axis=1)  # (R, K)
    signs = np.sign(np.take_along_axis(U, idx[:, None, :], axis=1))
    signs[signs == 0] = 1.0
    U, V = U * signs, V * signs
    out = {"U": U, "V": V, "rho": np.clip(S[:, :K], 0.0, 1.0), "min_eig_x": min_x, "min_eig_y": min_y}
    if single:
        out = {k: v[0] for k, v in out.items()}
    return out


# =============================================================================================
# Preprocessing: rows into the unit ball (paper: data-dependent; strict: public bounds)
# =============================================================================================
@dataclass
class _Prepared:
    """Rows z_n with ||z_n|| <= 1 and what turns (noisy) moments of Z back into a model.

    z = [(x - x_shift) / x_div, (y - y_shift) / y_div (, const)] (after clipping in strict mode). Strict mode
    keeps only Z'Z (``engine.privacy.gram.scaled_gram``: one fused block pass) and builds Z on first
    access (``rows``); paper mode keeps Z.
    """

    _z: np.ndarray | None
    dx: int
    dy: int
    x_shift: np.ndarray
    y_shift: np.ndarray
    x_div: float
    y_div: float
    private_centring: bool
    const: float
    sensitivity_source: str
    n_clipped: int
    clip_notes: tuple
    description: str
    sensitivity: float
    #: Paper mode only: the data-derived scales (private; for the owner's workbook).
    private_scales: dict = dataclasses.field(default_factory=dict)
    #: Column names of the two views (None: 0-based indices), for messages.
    names: tuple = (None, None)
    #: Strict mode: Z'Z (d, d) from ``scaled_gram``, the number of rows and a () -> Z factory (same formulas).
    gram_matrix: np.ndarray | None = None
    n_rows: int | None = None
    rows: Callable[[], np.ndarray] | None = dataclasses.field(default=None, repr=False)

    @property
    def Z(self) -> np.ndarray:  # noqa: N802 - the rows' usual name
        """(n, d) the rows (strict mode: built on first access by ``scale_rows``, the Gram matrix's formulas)."""
        if self._z is None:
            assert self.rows is not None, "a strict _Prepared without Z keeps the rows' factory"
            self._z = self.rows()
        return self._z

    @property
    def rows_in_unit_ball_by_construction(self) -> bool:
        """True when the rows come from ``scaled_gram`` (clipped and scaled into the unit ball there)."""
        return self.gram_matrix is not None

    @property
    def n(self) -> int:
        return self.n_rows if self.n_rows is not None else self.Z.shape[0]

    @property
    def D(self) -> int:
        return self.dx + self.dy

    def gram(self) -> np.ndarray:
        """Z'Z (d, d), exactly symmetric (``engine.privacy.moments``)."""
        return self.gram_matrix if self.gram_matrix is not None else MomentsRelease.gram(self.Z)

    def moments(self, G: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(R, d, d) sums Z'Z (+E) -> centred moments C (R, D, D) and the mean in z units (R, D).

        Private centring: ``engine.privacy.moments.centred_moments`` with N public (replace-one), i.e. the
        moments Z'Z / N centred at the noisy mean of the same release (post-processing).
        """
        if self.private_centring:
            C, mean_z, _ = centred_moments(G, self.const, n_public=self.n)
            return C, mean_z
        return G / self.n, np.zeros((G.shape[0], self.D))

    def to_model(self, fit: dict, mean_z: np.ndarray) -> dict:
        """Undo the scaling: weights and centres in the units of the input columns."""
        dx = self.dx
        return {
            "U": fit["U"] / self.x_div, "V": fit["V"] / self.y_div, "rho": fit["rho"],
            "x_mean": self.x_shift[None, :] + mean_z[:, :dx] * self.x_div,
            "y_mean": self.y_shift[None, :] + mean_z[:, dx:] * self.y_div,
            "indefinite": (fit["min_eig_x"] < 0) | (fit["min_eig_y"] < 0),
        }


#: Euclidean row norms without overflow or underflow (``engine.privacy.clipping.row_norms``).
_row_norms = row_norms


def _prepare_paper(X: np.ndarray, Y: np.ndarray) -> _Prepared:
    """Each view divided by a power of two (exact), centred, divided by its largest row norm; then every
    row divided by the largest joint norm. Shifts and divisors are returned in data units."""
    ex, ey = pow2_exponent(float(np.abs(X).max())), pow2_exponent(float(np.abs(Y).max()))
    Xs, Ys = np.ldexp(X, -ex), np.ldexp(Y, -ey)
    xm, ym = Xs.mean(axis=0), Ys.mean(axis=0)
    Xc, Yc = Xs - xm, Ys - ym
    bx, by = float(_row_norms(Xc).max()), float(_row_norms(Yc).max())
    if not (bx > 0 and by > 0):
        raise ValueError("a view is constant across all rows: CCA needs variation in both views")
    B = np.hstack([Xc / bx, Yc / by])
    s = float(_row_norms(B).max())
    Z = B / s
    bx_d, by_d = math.ldexp(bx, ex), math.ldexp(by, ey)
    # The description goes into the ledger and the report: no data-derived number in it.
    return _Prepared(
        Z, X.shape[1], Y.shape[1], np.ldexp(xm, ex), np.ldexp(ym, ey), bx_d * s, by_d * s, False, 0.0, "data", 0,
        (), "views centred at their sample means and divided by their largest sample row norms, then rows "
        "divided by the largest joint norm: data-dependent (the numbers are private)",
        release_sensitivity("joint", "public"),
        {"largest ||x - mean_x||": bx_d, "largest ||y - mean_y||": by_d, "largest joint norm after scaling": s},
    )


def _centred(A: np.ndarray, centre: np.ndarray, what: str, names) -> np.ndarray:
    with np.errstate(over="ignore", invalid="ignore"):
        out = A - centre
    if not np.isfinite(out).all():
        j = int(np.argwhere(~np.isfinite(out))[0][1])
        raise ValueError(f"{column_label(what, j, names)} minus the public centre overflows float64: rescale the "
                         "data and the centre (other units)")
    return out


def _prepare_strict(X, Y, *, row_bound, x_bound, y_bound, x_center, y_center, names=(None, None)) -> _Prepared:
    """Rows clipped to the public bounds and scaled into the unit ball, Z'Z by ``engine.privacy.gram.scaled_gram``:
    one joint block [x, y] or two blocks x, y of weight 1 each, and the constant column a = 1 with private
    centring (z = [x/B_x, y/B_y, 1] / sqrt(3) for per-view bounds)."""
    dx, dy = X.shape[1], Y.shape[1]
    public = x_center is not None
    if public:
        cx = np.broadcast_to(np.asarray(x_center, dtype=float), (dx,)).copy()
        cy = np.broadcast_to(np.asarray(y_center, dtype=float), (dy,)).copy()
        Xs, Ys = _centred(X, cx, "X", names[0]), _centred(Y, cy, "Y", names[1])
    else:
        cx, cy = np.zeros(dx), np.zeros(dy)
        Xs, Ys = X, Y
    if row_bound is not None:
        Bn = float(row_bound)
        blocks, bounds, weights = [np.hstack([Xs, Ys])], [Bn], [1.0]
        rows = scaled_gram(blocks, bounds, weights=weights, private_centring=not public, const=1.0)
        x_div = y_div = Bn * rows.scale
        notes: tuple[str, ...] = (rows.clip_reports[0].describe("rows [x, y]"),)
        what = f"joint rows clipped to ||[x, y]|| <= {Bn:g}"
    else:
        Bx, By = float(x_bound), float(y_bound)
        blocks, bounds, weights = [Xs, Ys], [Bx, By], [1.0, 1.0]
        rows = scaled_gram(blocks, bounds, weights=weights, private_centring=not public, const=1.0)
        x_div, y_div = Bx * rows.scale, By * rows.scale
        notes = (rows.clip_reports[0].describe("x rows"), rows.clip_reports[1].describe("y rows"))
        what = f"x rows clipped to norm {Bx:g}, y rows to {By:g}"
    centre = ("public centre subtracted" if public else
              "private centring: constant column in the same release")
    sens = replace_one_sensitivity(rows.weights, rows.const)
    def z_rows():
        return scale_rows(blocks, bounds, weights=weights, private_centring=not public, const=1.0).Z

    return _Prepared(None, dx, dy, cx, cy, x_div, y_div, not public, rows.const_z, "public",
                     int(rows.n_clipped), notes, f"{what}; {centre}; rows scaled by 1/{rows.scale:.4g}", sens,
                     gram_matrix=rows.G, n_rows=rows.n, rows=z_rows)
