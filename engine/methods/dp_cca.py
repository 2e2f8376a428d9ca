"""DP-CCA: differentially private canonical correlation analysis (spec ``dp_cca.md``).

Imtiaz & Sarwate's poster: the joint second-moment matrix C = (1/N) Z'Z of the rows
z_n = [x_n, y_n] (||z_n||_2 <= 1) is released ONCE with Analyze-Gauss (symmetric Gaussian
noise, upper triangle i.i.d. N(0, tau^2), mirrored), its blocks C_xx, C_xy, C_yy are extracted,
and CCA is computed from them; everything after the release is post-processing, so U, V and the
canonical correlations are (eps, delta)-DP.

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

Fresh noise. Every release draws its noise through ``engine.privacy.noise_generator
(random_state)``: None (the default) is fresh OS entropy; any other ``random_state`` is a known
noise seed, which the ledger records as ``SEED_KNOWN_CAVEAT`` (not proven). Sweeps take the data
seed (row subsets) and the noise seed separately (``random_state`` / ``noise_random_state``).

Two modes, one estimator (``DPCCA``, scikit-learn style):

- ``mode="paper"``: the poster's assumption made concrete. Each view is centred at its sample
  mean and divided by its largest sample row norm (so neither view dominates), then every joint
  row is divided by the largest joint row norm, so max ||z_n|| = 1. Centre and scale come from
  the private data: the ledger marks the release ``sensitivity_source="data"`` (not a proven
  guarantee), and there is no shareable release (the weights and centre carry those numbers;
  ``no_release_reason``). Nothing is clipped.
- ``mode="strict"``: provably (eps, delta)-DP. The rows are bounded by PUBLIC numbers fixed
  before seeing the data: either one bound per view (``x_bound``, ``y_bound``: ||x - c_x|| and
  ||y - c_y||, each view clipped to its own bound, then z = [x/B_x, y/B_y] / sqrt(2)) or one
  joint bound ``row_bound`` on ||[x - c_x, y - c_y]||. Rows beyond a bound are scaled back onto
  it and counted (``n_clipped_``). Centring: with a public centre (``x_center``, ``y_center``)
  rows are centred by it first. Without one (default) the centre is private and comes from the
  SAME release: a constant column is appended to every row (z = [x/B_x, y/B_y, 1] / sqrt(3)),
  so Z'Z also carries the clipped column sums, and the moments are centred at the noisy mean as
  post-processing (N is public under replace-one). No budget is split off; the price is a larger
  row scale (sqrt(3) instead of sqrt(2)) and bounds that apply to the raw rows. The bounds and
  the centre are the user's declarations (the page's defaults depend only on the number of
  columns: ``default_bound``); they enter the shareable release as public inputs.

Regularisation of the noisy blocks (post-processing). C_hat_xx and C_hat_yy may be indefinite.
Each is eigendecomposed, ``lambda`` is added to its eigenvalues and the result is floored at
``lambda`` (and at 1e-12 of the largest eigenvalue, which only matters for singular data):
``lambda`` is a ridge that also replaces every eigenvalue the noise pushed below it.
``regularization="auto"`` (default) sets lambda = 2 sqrt(D) tau (D = Dx + Dy): the spectral norm
of a D x D symmetric Gaussian noise matrix with entry std tau is about 2 sqrt(D) tau (Wigner), so
the noisy blocks become positive definite with high probability. It is computed from public
numbers only and is 0 when eps = inf, so the non-private limit is plain CCA. Our check on
``make_two_views`` data (Dx = 10, Dy = 8, 30 replicates, paper mode): without regularisation
(eigenvalue floor only) the captured held-out correlation at N = 2000, eps = 1 is 0.08; with
lambda = 0.5, 1 and 2 x sqrt(D) tau it is 0.23, 0.29 and 0.33 (at N = 10000, eps = 4: 0.92,
0.94, 0.93), so the factor matters little once it is near the noise size. A number sets lambda
directly, in the units of C (rows of norm <= 1, so trace C <= 1).

CCA from the blocks (the spec's numerically better route): whiten with C_xx^-1/2, C_yy^-1/2,
SVD of C_xx^-1/2 C_xy C_yy^-1/2 = A S B', U = C_xx^-1/2 A_K, V = C_yy^-1/2 B_K, rho = diag(S)_K
(clipped to [0, 1]), batched over replicates. U and V are returned in the units of the input
columns (the preprocessing is undone), normalised so that U' C~_xx U = I in those units, C~_xx the
regularised noisy block (with no noise: (1/N) U'X'XU = I on the centred training rows).

Utility (spec): captured correlation = sum_k corr(X_test u_k, Y_test v_k) of the private U, V on
held-out rows divided by the same sum for non-private CCA of the same training rows; subspace
similarity = mean cosine of the principal angles (``scipy.linalg.subspace_angles``) between the
private and non-private U (and V). Sweeps over eps, N and delta draw R replicates at once
(``sample_symmetric_gaussian(..., n_replicates=R)``) from one prepared data set; every row of a
sweep carries the ``status`` of its own ledger ("proven", "not proven", or "no privacy" at eps = inf).

Numerics and input (issue #16; ``dp_cca_core``). Y may be 1-D (one column). Text, NaN, inf, overflow,
underflow, constant and duplicate columns are refused with a ``ValueError`` naming the view and column;
without noise and regularisation a collinear view is refused naming its columns. Each view is divided
by a power of two before any square is formed, and row norms never overflow, so c X and c' Y give the
same release (same seed) and weights and centres in the new units for c, c' in [1e-150, 1e150]; in strict
mode the public bounds and centre are in the data's units and scale with them.

Exports (issue #15), never mixed: ``shareable_release(model)`` (and ``to_json``) holds the DP outputs
(canonical correlations, weights, the noisy moments and, with private centring, the noisy means:
all post-processing of the one release) and the declared-public inputs (budget, bounds, centre,
K, calibration), built with ``engine.release.build_release`` from an explicit field list;
``owner_sheets(...)`` holds what only the data owner may see (the non-private reference CCA,
correlations on the held-out private rows, clip counts, the exact row counts).

End-to-end audit: ``pipeline_audit_case`` runs the page's default strict pipeline (its data,
split, bounds, private centring and calibration) through ``engine.privacy.audit`` with the
neighbours that attain the sensitivity (``worst_case_rows``).

Written by hand: the poster's algorithm and the batched moment-to-CCA path (no library computes
CCA from a released, possibly indefinite moment matrix, batched over replicates). The privacy
core (calibration, Analyze-Gauss, clipping, ledger) is ``engine.privacy``, used here; the
oracles in the tests are statsmodels' ``CanCorr`` and scikit-learn's ``CCA``.

Not DP: the projections X U of the private training rows (the canonical scores) use each row
itself; showing them to anyone but the data owner is not covered by the guarantee
(``NOT_DP_PROJECTIONS``).
"""
from __future__ import annotations

import dataclasses
import math
from numbers import Integral, Real

import numpy as np
import pandas as pd
from scipy.linalg import subspace_angles
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_array, check_is_fitted, validate_data

from engine.methods.dp_cca_core import (  # noqa: F401  (names re-exported: engine.methods.dp_cca.<name>)
    _REL_FLOOR,
    SENSITIVITY,
    _inv_sqrt,
    _Prepared,
    _prepare_paper,
    _prepare_strict,
    _row_norms,
    as_view,
    cca_from_moments,
    check_identified,
    read_views,
    release_sensitivity,
)
from engine.privacy.wording import ledger_text
from engine.release import Field, build_release, estimator_from_release, release_to_json

from engine.privacy import (
    SEED_KNOWN_CAVEAT,
    GaussianMechanism,
    PrivacyLedger,
    as_generator,
    noise_generator,
    sample_symmetric_gaussian,
)

__all__ = [
    "DPCCA",
    "FORMAT",
    "NOT_DP_PROJECTIONS",
    "PAGE_DEFAULTS",
    "RELEASE_NAME",
    "SENSITIVITY",
    "SWEEP_PARAMETERS",
    "analyze_gauss_tau",
    "default_bound",
    "no_release_reason",
    "owner_sheets",
    "pipeline_audit_case",
    "pipeline_audit_params",
    "public_parameters",
    "release_sensitivity",
    "shareable_release",
    "AUDIT_CONFIGS",
    "worst_case_rows",
    "auto_regularization",
    "bin_columns",
    "captured_correlation",
    "cca_from_moments",
    "columns_by_prefix",
    "compare_fit",
    "first_pair_weights",
    "sample_size_grid",
    "channel_split_views",
    "held_out_correlations",
    "resolve_calibration",
    "split_rows",
    "subspace_similarity",
    "summarise_sweep",
    "sweep_delta",
    "sweep_epsilon",
    "sweep_n_samples",
    "utility_sweep",
    "views_from_frame",
    "model_from_dict",
    "to_json",
]

NOT_DP_PROJECTIONS = (
    "The canonical scores X·U and Y·V of the training rows are NOT differentially private: each score "
    "uses that person's row itself. Only U, V and the canonical correlations carry the (ε, δ) "
    "guarantee (post-processing of the noisy moment matrix)."
)

#: The three sweep parameters of the poster's figures.
SWEEP_PARAMETERS = ("epsilon", "n_samples", "delta")

#: Multiple of sqrt(D) tau used by ``regularization="auto"`` (module docstring).
_AUTO_LAMBDA = 2.0

#: At most this many float64 entries per (R, d, d) batch of noisy moment matrices.
_CHUNK_ENTRIES = 8_000_000

#: Name of the one release in the ledger (the dp fields of the shareable release name it).
RELEASE_NAME = "joint second-moment matrix Z'Z"

#: Inner product t = a'a~ of the unit rows that attain each sensitivity (module docstring).
_WORST_INNER = {("joint", "public"): 0.0, ("joint", "private"): -0.5,
                ("per_view", "public"): 0.0, ("per_view", "private"): -1.0 / 3.0}


# =============================================================================================
# Calibration
# =============================================================================================
def resolve_calibration(calibration: str, epsilon: float) -> str:
    """The Gaussian calibration actually used: "auto" is classic for eps <= 1, analytic above."""
    if calibration not in ("auto", "analytic", "classic"):
        raise ValueError(f"calibration must be 'auto', 'analytic' or 'classic', got {calibration!r}")
    if calibration == "auto":
        return "classic" if float(epsilon) <= 1.0 else "analytic"
    return calibration


def _mechanism(epsilon: float, delta: float, calibration: str,
               sensitivity: float = math.sqrt(2.0)) -> GaussianMechanism:
    """The Gaussian mechanism on the released upper triangle of Z'Z (replace-one neighbours)."""
    return GaussianMechanism(float(epsilon), float(delta), float(sensitivity),
                             resolve_calibration(calibration, epsilon))


def analyze_gauss_tau(epsilon: float, delta: float, n_samples: int, calibration: str = "auto",
                      sensitivity: float = math.sqrt(2.0)) -> float:
    """Noise std on the entries of C = Z'Z / N (replace-one neighbours, public N).

    With the classic calibration and the poster's sensitivity sqrt(2) this is the poster's
    tau = sqrt(2)/(N eps) sqrt(2 ln(1.25/delta)). ``sensitivity``: ``release_sensitivity(...)`` of
    the construction. Returns 0.0 for eps = inf.
    """
    if math.isinf(float(epsilon)):
        return 0.0
    return _mechanism(epsilon, delta, calibration, sensitivity).sigma / int(n_samples)


def auto_regularization(tau: float, dim: int) -> float:
    """lambda of ``regularization="auto"``: 2 sqrt(D) tau, the typical spectral norm of the noise."""
    return _AUTO_LAMBDA * math.sqrt(dim) * float(tau)


# =============================================================================================
# The estimator
# =============================================================================================
class DPCCA(TransformerMixin, BaseEstimator):
    """(eps, delta)-DP canonical correlation analysis by Analyze-Gauss (Imtiaz & Sarwate).

    Parameters
    ----------
    n_components : int K <= min(Dx, Dy), number of canonical pairs.
    epsilon : float > 0, or np.inf for non-private CCA (no noise, empty ledger).
    delta : float in (0, 1).
    mode : "paper" (data-dependent centring and scaling, the poster's assumption; the ledger
        says the guarantee is not proven) or "strict" (public bounds, clipping, proven).
    calibration : "auto" (classic for eps <= 1 as the poster, analytic above; default),
        "analytic" (Balle & Wang, always) or "classic" (refuses eps > 1).
    row_bound : strict mode, public bound on the joint norm ||[x - c_x, y - c_y]||.
    x_bound, y_bound : strict mode, public bounds on ||x - c_x|| and ||y - c_y|| (one per view;
        give these or ``row_bound``). With private centring (no public centre) they bound the
        raw rows.
    x_center, y_center : strict mode, public centres (both or neither); neither = private
        centring from the same release.
    regularization : "auto" (lambda = 2 sqrt(Dx + Dy) tau, 0 without noise; default) or a number
        lambda >= 0 in the units of C (module docstring).
    random_state : None (default: fresh OS entropy per fit) or a noise seed (int, Generator, ...);
        a seed is known to whoever chose it, so the ledger then says "not proven" (SEED_KNOWN_CAVEAT).
        Clones and cross-validation: ``sklearn.base.clone`` copies ``random_state``. With None every fit
        of every clone draws fresh noise (independent folds); with an int or a Generator (deep-copied in
        its current state) every clone draws the SAME noise in every fold: reproducible, not independent,
        and "not proven" in every fit's ledger.

    Input: X (N, Dx) and Y (N, Dy) or Y (N,) (one column, as scikit-learn passes a target). Text, NaN,
    inf, overflow, underflow, constant and duplicate columns are refused with a ``ValueError`` naming the
    view and column; without noise and regularisation a collinear view is refused (``check_identified``).
    ``fit_transform(X, Y)`` returns the X scores, as ``fit(X, Y).transform(X)``; ``transform(X, Y)`` gives
    both views' scores. scikit-learn's ``check_estimator`` passes with ``n_components=1`` (the checks give
    a one-column Y; the default K = 2 needs Dy >= 2, as for ``sklearn.cross_decomposition.CCA``).

    Attributes
    ----------
    canonical_correlations_ : (K,) private canonical correlations (singular values of the
        whitened noisy cross block, in [0, 1]).
    x_weights_ : (Dx, K) U, in the units of the X columns.   y_weights_ : (Dy, K) V.
    x_mean_ : (Dx,), y_mean_ : (Dy,) centres used by ``transform`` (paper: sample means;
        strict: public centre or the privately released mean).
    privacy_ledger_ : PrivacyLedger (one Analyze-Gauss release; empty for eps = inf).
    sensitivity_ : worst-case L2 change of the released upper triangle of Z'Z (``release_sensitivity``).
    tau_ : noise std on the entries of C = Z'Z / N.   sigma_ : noise std on the sum Z'Z.
    calibration_ : "classic" / "analytic" / "none".   regularization_ : lambda used.
    n_clipped_ : rows changed by clipping (strict mode; 0 in paper mode).   clip_report_ : dict.
    n_rows_fit_ : N, the training rows (public under replace-one; owner's workbook only).
    private_scales_ : paper mode's data-derived scales (owner's workbook only; {} in strict mode).
    indefinite_ : whether a noisy diagonal block had a negative eigenvalue before regularisation.
    released_moments_ : (D, D) the private centred moment matrix C_hat (in z units).
    sensitivity_source_ : "public" or "data".   preprocessing_ : text.
    n_features_in_ : Dx.   n_features_y_ : Dy.
    """

    def __init__(self, n_components=2, epsilon=1.0, delta=1e-5, mode="paper", calibration="auto", row_bound=None,
                 x_bound=None, y_bound=None, x_center=None, y_center=None, regularization="auto",
                 random_state=None):
        self.n_components = n_components
        self.epsilon = epsilon
        self.delta = delta
        self.mode = mode
        self.calibration = calibration
        self.row_bound = row_bound
        self.x_bound = x_bound
        self.y_bound = y_bound
        self.x_center = x_center
        self.y_center = y_center
        self.regularization = regularization
        self.random_state = random_state

    # ------------------------------------------------------------------ validation
    def _check_params(self) -> None:
        if self.mode not in ("paper", "strict"):
            raise ValueError(f"mode must be 'paper' or 'strict', got {self.mode!r}")
        if self.calibration not in ("auto", "analytic", "classic"):
            raise ValueError(f"calibration must be 'auto', 'analytic' or 'classic', got {self.calibration!r}")
        K = self.n_components
        if not isinstance(K, Integral) or isinstance(K, bool) or K < 1:
            raise ValueError(f"n_components must be an integer >= 1, got {K!r}")
        eps = self.epsilon
        if not isinstance(eps, Real) or isinstance(eps, bool) or not (eps > 0):
            raise ValueError(f"epsilon must be a number > 0 (np.inf for no privacy), got {eps!r}")
        if not isinstance(self.delta, Real) or not (0 < self.delta < 1):
            raise ValueError(f"delta must be in (0, 1), got {self.delta!r}")
        if self.calibration == "classic" and math.isfinite(eps) and eps > 1:
            raise ValueError(f"the classic Gaussian calibration is proven only for epsilon <= 1 (got {eps}); "
                             "use calibration='auto' or 'analytic'")
        reg = self.regularization
        if not (reg == "auto" or (isinstance(reg, Real) and not isinstance(reg, bool)
                                  and math.isfinite(reg) and reg >= 0)):
            raise ValueError(f"regularization must be 'auto' or a finite number >= 0, got {reg!r}")
        bounds = {"row_bound": self.row_bound, "x_bound": self.x_bound, "y_bound": self.y_bound}
        if self.mode == "paper":
            given = [k for k in (*bounds, "x_center", "y_center") if getattr(self, k) is not None]
            if given:
                raise ValueError(f"{', '.join(given)} are public bounds/centres for mode='strict'; paper mode "
                                 "centres and scales with the private data itself")
            return
        for name, v in bounds.items():
            if v is not None and not (isinstance(v, Real) and not isinstance(v, bool) and math.isfinite(v) and v > 0):
                raise ValueError(f"{name} must be a finite number > 0, got {v!r}")
        per_view = self.x_bound is not None or self.y_bound is not None
        if self.row_bound is not None and per_view:
            raise ValueError("give either row_bound (joint) or x_bound and y_bound (per view), not both")
        if self.row_bound is None and (self.x_bound is None or self.y_bound is None):
            raise ValueError("strict mode needs public bounds fixed before seeing the data: x_bound and y_bound "
                             "(largest ||x - c_x|| and ||y - c_y||) or row_bound (largest joint norm)")
        if (self.x_center is None) != (self.y_center is None):
            raise ValueError("give both x_center and y_center (a public centre) or neither (private centring)")

    def _validate_xy(self, X, Y, *, reset=True, full=True):
        """Checked views (``dp_cca_core.read_views``: Y may be 1-D; text, NaN, inf, overflow, underflow,
        constant and duplicate columns refused, naming the column) and the parameter checks that need
        their shapes."""
        views = read_views(self, X, Y, reset=reset, full=full)
        dx, dy = views.X.shape[1], views.Y.shape[1]
        if self.n_components > min(dx, dy):
            raise ValueError(f"n_components={self.n_components} exceeds min(Dx, Dy) = {min(dx, dy)}: X has "
                             f"n_features = {dx}, Y has {dy} column(s)")
        if self.mode == "strict" and self.x_center is not None:
            for name, c, d in (("x_center", self.x_center, dx), ("y_center", self.y_center, dy)):
                arr = np.asarray(c, dtype=float)
                if arr.shape not in ((), (d,)) or not np.all(np.isfinite(arr)):
                    raise ValueError(f"{name} must be finite with shape ({d},) or a scalar")
        return views

    def _prepare(self, X, Y, *, reset=True, full_checks=False) -> _Prepared:
        """Rows in the unit ball. Values are always checked; ``full_checks`` (every public entry point: fit,
        sample_fits, sweeps) also refuses constant and duplicate columns, which the privacy analyses'
        few adversarial rows have by construction."""
        self._check_params()
        views = self._validate_xy(X, Y, reset=reset, full=full_checks)
        names = (views.x_names, views.y_names)
        if self.mode == "paper":
            prep = _prepare_paper(views.X, views.Y)
        else:
            prep = _prepare_strict(views.X, views.Y, row_bound=self.row_bound, x_bound=self.x_bound,
                                   y_bound=self.y_bound, x_center=self.x_center, y_center=self.y_center, names=names)
        prep.names = names
        return prep

    # ------------------------------------------------------------------ noise and ledger
    def _sensitivity(self) -> float:
        """``release_sensitivity`` of this construction (it depends on the parameters only)."""
        if self.mode != "strict":
            return release_sensitivity("joint", "public")
        return release_sensitivity("joint" if self.row_bound is not None else "per_view",
                                   "public" if self.x_center is not None else "private")

    def _noise(self, n: int, epsilon=None, delta=None) -> dict:
        eps = float(self.epsilon if epsilon is None else epsilon)
        dlt = float(self.delta if delta is None else delta)
        sens = self._sensitivity()
        if math.isinf(eps):
            return {"mechanism": None, "sigma": 0.0, "tau": 0.0, "calibration": "none", "epsilon": eps, "delta": dlt,
                    "sensitivity": sens}
        mech = _mechanism(eps, dlt, self.calibration, sens)
        return {"mechanism": mech, "sigma": mech.sigma, "tau": mech.sigma / n, "calibration": mech.calibration,
                "epsilon": eps, "delta": dlt, "sensitivity": sens}

    def _lambda(self, tau: float, D: int) -> float:
        return auto_regularization(tau, D) if self.regularization == "auto" else float(self.regularization)

    def _ledger(self, prep: _Prepared, noise: dict, seed_known: bool = False) -> PrivacyLedger:
        """The fit's ledger: one release (none for eps = inf), and the known-seed caveat if any.

        No exact private count goes into it (the notes reach the shareable report): not the clipped rows.
        """
        led = PrivacyLedger(neighbouring="replace")
        mech = noise["mechanism"]
        if mech is None:
            return led
        if abs(prep.sensitivity - noise["sensitivity"]) > 1e-12:  # the estimator and its preparation must agree
            raise RuntimeError("internal error: the noise is calibrated to another construction than the rows")
        cols = f"{prep.D}{' + 1 constant' if prep.private_centring else ''} columns"
        note = (f"Analyze-Gauss on the upper triangle of Z'Z ({cols}), replace-one neighbours with N public; "
                f"worst-case change of the released numbers {noise['sensitivity']:.6g} (proof in "
                f"engine.methods.dp_cca); noise std {noise['sigma']:.6g} on Z'Z, {noise['calibration']} calibration. "
                f"Preprocessing: {prep.description}. U, V and the correlations are post-processing.")
        rel = mech.release(RELEASE_NAME, note=note)
        if prep.sensitivity_source == "data":
            rel = dataclasses.replace(
                rel, sensitivity_source="data", claimed_epsilon=rel.epsilon, claimed_delta=rel.delta,
                note=note + " The centre and scale come from the private data, so (eps, delta) is claimed, not proven.")
        led.add(rel)
        if seed_known:
            led.add_caveat(SEED_KNOWN_CAVEAT)
        return led

    def _draw(self, prep: _Prepared, noise: dict, n_replicates: int, rng, G=None) -> np.ndarray:
        """(R, d, d) noisy sums Z'Z + E (exactly symmetric)."""
        mech = noise["mechanism"]
        R = int(n_replicates)
        if mech is None:
            return np.repeat((prep.gram() if G is None else G)[None], R, axis=0)
        worst = float(_row_norms(prep.Z).max()) if prep.n else 0.0
        if worst > 1 + 1e-9:  # the sensitivity assumes rows in the unit ball
            raise ValueError(f"a prepared row has norm {worst:.6g} > 1: clip first")
        G0 = prep.gram() if G is None else G
        d = G0.shape[0]
        chunk = max(1, min(R, _CHUNK_ENTRIES // (d * d)))
        parts = []
        for start in range(0, R, chunk):
            # Exactly symmetric noise: upper triangle i.i.d. N(0, sigma^2), mirrored.
            parts.append(G0[None] + sample_symmetric_gaussian(mech.sigma, d, rng, min(chunk, R - start)))
        return np.concatenate(parts)

    def _models(self, prep: _Prepared, G: np.ndarray, lam: float, clean: bool = False) -> dict:
        """(R, d, d) sums Z'Z (+ noise) -> models. ``clean``: G carries no noise; without regularisation the
        CCA is then identified only for views of full numerical rank (``check_identified`` refuses others)."""
        C, mean_z = prep.moments(G)
        if clean and lam == 0:
            check_identified(C[0], prep.dx, prep.names, prep.n)
        fit = cca_from_moments(C, prep.dx, int(self.n_components), lam)
        out = prep.to_model(fit, mean_z)
        out["C"] = C
        return out

    # ------------------------------------------------------------------ fit / transform
    def fit(self, X, Y):
        """Fit on X (N, Dx) and Y (N, Dy) (rows = the same samples). Returns self."""
        prep = self._prepare(X, Y, full_checks=True)
        noise = self._noise(prep.n)
        lam = self._lambda(noise["tau"], prep.D)
        rng, seed_known = noise_generator(self.random_state)
        G = self._draw(prep, noise, 1, rng)
        out = self._models(prep, G, lam, clean=noise["mechanism"] is None)
        self.canonical_correlations_ = out["rho"][0]
        self.x_weights_ = out["U"][0]
        self.y_weights_ = out["V"][0]
        self.x_mean_ = out["x_mean"][0]
        self.y_mean_ = out["y_mean"][0]
        self.released_moments_ = out["C"][0]
        self.indefinite_ = bool(out["indefinite"][0])
        self.tau_ = float(noise["tau"])
        self.sigma_ = float(noise["sigma"])
        self.sensitivity_ = float(noise["sensitivity"])
        self.n_rows_fit_ = int(prep.n)
        self.private_scales_ = dict(prep.private_scales)
        self.calibration_ = noise["calibration"]
        self.regularization_ = float(lam)
        self.n_clipped_ = int(prep.n_clipped)
        self.clip_report_ = {"n_clipped": int(prep.n_clipped), "notes": list(prep.clip_notes),
                             "private_centring": prep.private_centring}
        self.sensitivity_source_ = prep.sensitivity_source
        self.preprocessing_ = prep.description
        self.n_features_y_ = prep.dy
        self.privacy_ledger_ = self._ledger(prep, noise, seed_known)
        return self

    def _check_y(self, Y) -> np.ndarray:
        Y, _ = as_view(Y, "Y")
        if not np.isfinite(Y).all():
            raise ValueError("Input Y contains NaN or inf: every value must be a finite number")
        if Y.shape[1] != self.n_features_y_:
            raise ValueError(f"Y has {Y.shape[1]} columns; the model was fitted with {self.n_features_y_}")
        return Y

    def transform(self, X, Y=None):
        """Canonical scores: (X - x_mean_) U of shape (n, K), and (Y - y_mean_) V if Y is given.

        Scores of the private training rows are not DP (``NOT_DP_PROJECTIONS``).
        """
        check_is_fitted(self, "x_weights_")
        X = validate_data(self, X, dtype=np.float64, reset=False)
        x_scores = (X - self.x_mean_) @ self.x_weights_
        if Y is None:
            return x_scores
        Y = self._check_y(Y)
        if Y.shape[0] != X.shape[0]:
            raise ValueError("X and Y must have the same number of rows")
        return x_scores, (Y - self.y_mean_) @ self.y_weights_

    def fit_transform(self, X, Y=None, **fit_params):
        """``fit(X, Y).transform(X)``: the X scores (n, K), as every scikit-learn transformer (for the scores
        of both views call ``transform(X, Y)``). The second view may also be passed as ``y=`` (scikit-learn's
        name for the second argument)."""
        if Y is None:
            Y = fit_params.pop("y", None)
        if Y is None:
            raise ValueError("DPCCA requires y to be passed, but the target y is None: fit_transform(X, Y) needs "
                             "the second view Y")
        return self.fit(X, Y).transform(X)

    def score(self, X, Y=None, y=None) -> float:
        """Sum of the held-out correlations corr(X u_k, Y v_k) over the K pairs (``y=`` is accepted for Y,
        scikit-learn's name for the second argument)."""
        check_is_fitted(self, "x_weights_")
        X = validate_data(self, X, dtype=np.float64, reset=False)
        Y = self._check_y(y if Y is None else Y)
        return float(held_out_correlations(self.x_weights_, self.y_weights_, X, Y).sum())

    # ------------------------------------------------------------------ replicates
    def sample_fits(self, X, Y, n_replicates: int, random_state=None, *, return_moments: bool = False) -> dict:
        """R independent private fits on the same data, vectorised over replicates.

        Returns a dict of arrays with a leading R axis: U (R, Dx, K), V (R, Dy, K), rho (R, K),
        x_mean, y_mean, indefinite; with ``return_moments`` also C_hat (R, D, D) and the clean
        C (D, D) (z units), so E = C_hat - C (without private centring) is the noise on C.
        Plus scalars tau, sigma, calibration, regularization and the (shared) ledger.
        """
        if int(n_replicates) < 1:
            raise ValueError("n_replicates must be >= 1")
        prep = self._prepare(X, Y, full_checks=True)
        noise = self._noise(prep.n)
        lam = self._lambda(noise["tau"], prep.D)
        rng, seed_known = noise_generator(self.random_state if random_state is None else random_state)
        G = prep.gram()
        Gs = self._draw(prep, noise, n_replicates, rng, G)
        out = self._models(prep, Gs, lam, clean=noise["mechanism"] is None)
        C_hat = out.pop("C")
        if return_moments:
            out["C_hat"] = C_hat
            out["C"] = prep.moments(G[None])[0][0]
        out.update({"tau": noise["tau"], "sigma": noise["sigma"], "calibration": noise["calibration"],
                    "regularization": lam, "ledger": self._ledger(prep, noise, seed_known),
                    "n_clipped": prep.n_clipped, "sensitivity": noise["sensitivity"]})
        return out


# =============================================================================================
# Utility metrics
# =============================================================================================
def _cov_blocks(X, Y) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    X = check_array(X, dtype=np.float64, ensure_min_samples=2)
    Y = check_array(as_view(Y, "Y")[0], dtype=np.float64, ensure_min_samples=2, input_name="Y")
    if X.shape[0] != Y.shape[0]:
        raise ValueError("X and Y must have the same number of rows")
    Xc, Yc = X - X.mean(0), Y - Y.mean(0)
    n = X.shape[0]
    return Xc.T @ Xc / n, Yc.T @ Yc / n, Xc.T @ Yc / n


def _pair_correlations(U, V, Sxx, Syy, Sxy) -> np.ndarray:
    num = np.einsum("...ik,ij,...jk->...k", U, Sxy, V)
    vx = np.einsum("...ik,ij,...jk->...k", U, Sxx, U)
    vy = np.einsum("...ik,ij,...jk->...k", V, Syy, V)
    with np.errstate(all="ignore"):
        r = num / np.sqrt(vx * vy)
    return np.where(np.isfinite(r), r, 0.0)


def held_out_correlations(U, V, X, Y) -> np.ndarray:
    """corr(X u_k, Y v_k) for every pair k (signed), on rows X (n, Dx), Y (n, Dy).

    U : (Dx, K) or (R, Dx, K); V likewise. Returns (K,) or (R, K).
    """
    Sxx, Syy, Sxy = _cov_blocks(X, Y)
    return _pair_correlations(np.asarray(U, float), np.asarray(V, float), Sxx, Syy, Sxy)


def _weights(model_or_weights):
    if isinstance(model_or_weights, DPCCA):
        check_is_fitted(model_or_weights, "x_weights_")
        return model_or_weights.x_weights_, model_or_weights.y_weights_
    U, V = model_or_weights
    return np.asarray(U, float), np.asarray(V, float)


def captured_correlation(private, reference, X_test, Y_test) -> float:
    """Spec's captured correlation: sum_k corr of the private pairs on held-out rows / same for reference.

    private, reference : fitted DPCCA models or (U, V) tuples (reference = non-private CCA).
    """
    Up, Vp = _weights(private)
    Ur, Vr = _weights(reference)
    num = held_out_correlations(Up, Vp, X_test, Y_test).sum()
    den = held_out_correlations(Ur, Vr, X_test, Y_test).sum()
    return float(num / den)


def _mean_cos(A: np.ndarray, B: np.ndarray) -> float:
    if not (np.all(np.isfinite(A)) and np.all(np.isfinite(B))):
        return math.nan
    return float(np.mean(np.cos(subspace_angles(A, B))))


def subspace_similarity(private, reference) -> dict:
    """Mean cosine of the principal angles between private and reference U, and V, and their mean."""
    Up, Vp = _weights(private)
    Ur, Vr = _weights(reference)
    cx, cy = _mean_cos(Up, Ur), _mean_cos(Vp, Vr)
    return {"angle_cos_x": cx, "angle_cos_y": cy, "angle_cos": 0.5 * (cx + cy)}


# =============================================================================================
# Sweeps (the poster's three figures)
# =============================================================================================
def _evaluate(models: dict, ref: dict, test_cov) -> dict:
    """Per replicate: captured correlation and subspace similarity against the reference fit."""
    Sxx, Syy, Sxy = test_cov
    corr_p = _pair_correlations(models["U"], models["V"], Sxx, Syy, Sxy)  # (R, K)
    corr_r = _pair_correlations(ref["U"][0], ref["V"][0], Sxx, Syy, Sxy)  # (K,)
    R = corr_p.shape[0]
    cx = np.array([_mean_cos(models["U"][r], ref["U"][0]) for r in range(R)])
    cy = np.array([_mean_cos(models["V"][r], ref["V"][0]) for r in range(R)])
    return {
        "captured": corr_p.sum(axis=1) / corr_r.sum(),
        "angle_cos": 0.5 * (cx + cy), "angle_cos_x": cx, "angle_cos_y": cy,
        "corr_sum_private": corr_p.sum(axis=1), "corr_sum_reference": np.full(R, corr_r.sum()),
        "rho1_private": models["rho"][:, 0], "indefinite": models["indefinite"].astype(bool),
    }


def _as_arrays(X, Y, name):
    X = check_array(X, dtype=np.float64, ensure_min_samples=2, input_name=f"X_{name}")
    Y = check_array(as_view(Y, f"Y_{name}")[0], dtype=np.float64, ensure_min_samples=2, input_name=f"Y_{name}")
    if X.shape[0] != Y.shape[0]:
        raise ValueError(f"X_{name} and Y_{name} must have the same number of rows")
    return X, Y


def utility_sweep(X_train, Y_train, X_test, Y_test, parameter: str, values, *, n_replicates: int = 20,
                  epsilon: float = 1.0, delta: float = 1e-5, n_samples: int | None = None, random_state=None,
                  noise_random_state=None, progress=None, **params) -> pd.DataFrame:
    """Utility of R private fits for each value of one parameter (the poster's figures).

    Parameters
    ----------
    X_train (N, Dx), Y_train (N, Dy) : rows the models are fitted on.
    X_test (M, Dx), Y_test (M, Dy) : held-out rows for the captured correlation.
    parameter : "epsilon", "n_samples" or "delta"; ``values`` its grid.
    epsilon, delta, n_samples : the values of the two parameters not swept (n_samples None =
        all training rows). For "n_samples", every replicate fits a fresh random subset of N
        training rows (and its own non-private reference); otherwise one prepared data set is
        reused and the R noise matrices are drawn at once.
    params : DPCCA parameters (n_components, mode, calibration, bounds, regularization).
    random_state : seed of the row subsets (data, not noise).
    noise_random_state : None (fresh OS entropy, the default) or a known noise seed (every row's
        status is then "not proven").
    progress : callable(fraction in [0, 1], message) or None.

    Returns
    -------
    Long DataFrame, one row per value and replicate: parameter, value, replicate, epsilon, delta,
    n_samples, tau, calibration, regularization, captured, angle_cos, angle_cos_x, angle_cos_y,
    corr_sum_private, corr_sum_reference, rho1_private, indefinite, status (the ledger status of
    that fit: "proven", "not proven", or "no privacy" at eps = inf).
    """
    if parameter not in SWEEP_PARAMETERS:
        raise ValueError(f"parameter must be one of {SWEEP_PARAMETERS}, got {parameter!r}")
    X_train, Y_train = _as_arrays(X_train, Y_train, "train")
    X_test, Y_test = _as_arrays(X_test, Y_test, "test")
    if X_test.shape[1] != X_train.shape[1] or Y_test.shape[1] != Y_train.shape[1]:
        raise ValueError("the held-out views must have the same columns as the training views")
    R = int(n_replicates)
    if R < 1:
        raise ValueError("n_replicates must be >= 1")
    values = list(values)
    if not values:
        raise ValueError("values must not be empty")
    n_train = X_train.shape[0]
    n_fixed = n_train if n_samples is None else int(n_samples)
    if parameter == "n_samples":
        bad = [v for v in values if not (2 <= int(v) <= n_train)]
        if bad:
            raise ValueError(f"sample sizes {bad} are outside 2..{n_train} (the training rows available)")
        # the whole training set once (constant, duplicate columns); the row subsets then only get value checks
        DPCCA(**{**params, "random_state": None})._validate_xy(X_train, Y_train)
    elif not 2 <= n_fixed <= n_train:
        raise ValueError(f"n_samples={n_fixed} is outside 2..{n_train}")
    test_cov = _cov_blocks(X_test, Y_test)
    rng = as_generator(random_state)  # row subsets only
    noise_rng, seed_known = noise_generator(noise_random_state)
    base = DPCCA(**{**params, "random_state": None})
    rows = []
    shared = None
    if parameter != "n_samples":
        idx = np.arange(n_train) if n_fixed == n_train else rng.choice(n_train, n_fixed, replace=False)
        est = _with_params(base, epsilon=epsilon, delta=delta)
        prep = est._prepare(X_train[idx], Y_train[idx], full_checks=True)
        G = prep.gram()
        ref = est._models(prep, G[None], est._lambda(0.0, prep.D), clean=True)
        shared = (prep, G, ref)
    for i, value in enumerate(values):
        eps = float(value) if parameter == "epsilon" else float(epsilon)
        dlt = float(value) if parameter == "delta" else float(delta)
        if parameter == "n_samples":
            n_i = int(value)
            est = _with_params(base, epsilon=eps, delta=dlt)
            results = []
            for r in range(R):
                sub = np.arange(n_train) if n_i == n_train else rng.choice(n_train, n_i, replace=False)
                prep = est._prepare(X_train[sub], Y_train[sub])
                G = prep.gram()
                noise = est._noise(prep.n)
                ref = est._models(prep, G[None], est._lambda(0.0, prep.D), clean=True)
                models = est._models(prep, est._draw(prep, noise, 1, noise_rng, G), est._lambda(noise["tau"], prep.D))
                results.append(_evaluate(models, ref, test_cov))
                if progress is not None:
                    progress((i + (r + 1) / R) / len(values), f"N = {n_i}: replicate {r + 1}/{R}")
            res = {k: np.concatenate([np.atleast_1d(x[k]) for x in results]) for k in results[0]}
        else:
            prep, G, ref = shared
            est = _with_params(base, epsilon=eps, delta=dlt)
            noise = est._noise(prep.n)
            models = est._models(prep, est._draw(prep, noise, R, noise_rng, G), est._lambda(noise["tau"], prep.D))
            res = _evaluate(models, ref, test_cov)
            n_i = prep.n
            if progress is not None:
                progress((i + 1) / len(values), f"{parameter} = {value:g}")
        noise = est._noise(n_i)
        status = est._ledger(prep, noise, seed_known).status  # this fit's own ledger
        for r in range(R):
            rows.append({
                "parameter": parameter, "value": float(value), "replicate": r, "epsilon": eps, "delta": dlt,
                "n_samples": n_i, "tau": noise["tau"], "calibration": noise["calibration"],
                "regularization": est._lambda(noise["tau"], X_train.shape[1] + Y_train.shape[1]),
                **{k: (bool(v[r]) if k == "indefinite" else float(v[r])) for k, v in res.items()},
                "status": status,
            })
    return pd.DataFrame(rows)


def _with_params(est: DPCCA, **changes) -> DPCCA:
    """A new DPCCA with the same parameters except ``changes`` (sklearn.clone without deep copies)."""
    return DPCCA(**{**est.get_params(deep=False), **changes})


def sweep_epsilon(X_train, Y_train, X_test, Y_test, epsilons=(0.1, 0.25, 0.5, 1, 2, 4, 8), **kwargs) -> pd.DataFrame:
    """``utility_sweep`` over epsilon (spec grid by default)."""
    return utility_sweep(X_train, Y_train, X_test, Y_test, "epsilon", epsilons, **kwargs)


def sweep_n_samples(X_train, Y_train, X_test, Y_test, sample_sizes=(500, 1000, 2000, 5000, 10000, 50000),
                    **kwargs) -> pd.DataFrame:
    """``utility_sweep`` over the number of training rows N (random subsets per replicate)."""
    return utility_sweep(X_train, Y_train, X_test, Y_test, "n_samples", sample_sizes, **kwargs)


def sweep_delta(X_train, Y_train, X_test, Y_test, deltas=(1e-6, 1e-5, 1e-4, 1e-3, 1e-2), **kwargs) -> pd.DataFrame:
    """``utility_sweep`` over delta (spec grid by default)."""
    return utility_sweep(X_train, Y_train, X_test, Y_test, "delta", deltas, **kwargs)


def summarise_sweep(long: pd.DataFrame) -> pd.DataFrame:
    """Mean, sd, quartiles per swept value of captured correlation and subspace similarity.

    Columns: parameter, value, n_replicates, tau, captured_mean, captured_sd, captured_q25,
    captured_q75, angle_cos_mean, angle_cos_sd, angle_cos_q25, angle_cos_q75, indefinite_share, status
    (the fits' ledger status: "proven", "not proven" or "no privacy"; "mixed" if they differ).
    """
    rows = []
    for (param, value), part in long.groupby(["parameter", "value"], sort=True):
        row = {"parameter": param, "value": value, "n_replicates": len(part), "tau": float(part["tau"].iloc[0])}
        for m in ("captured", "angle_cos"):
            x = part[m].to_numpy(dtype=float)
            row[f"{m}_mean"] = float(np.nanmean(x))
            row[f"{m}_sd"] = float(np.nanstd(x, ddof=1)) if len(x) > 1 else 0.0
            row[f"{m}_q25"] = float(np.nanquantile(x, 0.25))
            row[f"{m}_q75"] = float(np.nanquantile(x, 0.75))
        row["indefinite_share"] = float(part["indefinite"].mean())
        statuses = set(part["status"])
        row["status"] = statuses.pop() if len(statuses) == 1 else "mixed"
        rows.append(row)
    return pd.DataFrame(rows)


# =============================================================================================
# Public, data-independent preprocessing
# =============================================================================================
def bin_columns(X, n_bins: int, names=None) -> tuple[np.ndarray, list]:
    """Average consecutive columns into ``n_bins`` bands (e.g. spectral channels).

    Data-independent (depends only on the column order), so it costs no privacy; it makes CCA
    of wide spectra on few samples well posed. Returns (X_binned (n, n_bins), band names).
    """
    X = check_array(X, dtype=np.float64)
    m = X.shape[1]
    n_bins = int(n_bins)
    if not 1 <= n_bins <= m:
        raise ValueError(f"n_bins must be in 1..{m}, got {n_bins}")
    edges = np.linspace(0, m, n_bins + 1).round().astype(int)
    names = [str(c) for c in (names if names is not None else range(m))]
    out = np.column_stack([X[:, a:b].mean(axis=1) for a, b in zip(edges[:-1], edges[1:])])
    labels = [names[a] if b - a == 1 else f"{names[a]}–{names[b - 1]}" for a, b in zip(edges[:-1], edges[1:])]
    return out, labels


def columns_by_prefix(columns, prefix: str) -> list:
    """Column names starting with ``prefix`` (case-sensitive), in table order."""
    prefix = str(prefix)
    return [c for c in columns if prefix and str(c).startswith(prefix)]


def views_from_frame(df: pd.DataFrame, x_columns, y_columns, file: str = "table") -> tuple[pd.DataFrame, pd.DataFrame]:
    """Two views (X, Y) from columns of one table, checked for CCA.

    Raises ``engine.data.DataError`` naming the problem: a column in both views, text columns,
    missing or infinite values, constant or duplicate columns, fewer than 3 rows.
    """
    from engine.data import (
        DataError,
        check_constant_columns,
        check_duplicate_columns,
        check_finite_array,
        check_min_rows,
        require_numeric,
    )

    xc, yc = [str(c) for c in (x_columns or [])], [str(c) for c in (y_columns or [])]
    if not xc or not yc:
        raise DataError(f"{file}: choose at least one column for each view (X and Y).", file=file)
    both = [c for c in xc if c in yc]
    if both:
        raise DataError(f"{file}: column '{both[0]}' is in both views; each column can be in one view only.",
                        file=file, column=both[0])
    X = require_numeric(df, xc, file)
    Y = require_numeric(df, yc, file)
    check_min_rows(len(X), 3, file, "a two-view analysis")
    for view in (X, Y):
        check_finite_array(view, file, "the view")
        check_constant_columns(view, file)
        check_duplicate_columns(view, file)
    return X.reset_index(drop=True), Y.reset_index(drop=True)


def split_rows(n: int, test_fraction: float, random_state=None) -> tuple[np.ndarray, np.ndarray]:
    """Random (train, test) row indices; test holds round(test_fraction n) rows (>= 2, leaving >= 2)."""
    n = int(n)
    if not 0 < float(test_fraction) < 1:
        raise ValueError(f"test_fraction must be in (0, 1), got {test_fraction}")
    n_test = int(round(float(test_fraction) * n))
    if n_test < 2 or n - n_test < 2:
        raise ValueError(f"{n} rows are too few to hold out {test_fraction:.0%} for testing")
    perm = as_generator(random_state).permutation(n)
    return np.sort(perm[n_test:]), np.sort(perm[:n_test])


def compare_fit(X_train, Y_train, X_test, Y_test, **params) -> dict:
    """A private fit and its non-private reference (eps = inf, same preprocessing) on the same rows.

    Returns dict: private (fitted DPCCA), nonprivate (fitted DPCCA), captured (float),
    similarity (dict from ``subspace_similarity``), held_out_private (K,), held_out_nonprivate (K,).
    """
    private = DPCCA(**params).fit(X_train, Y_train)
    reference = DPCCA(**{**params, "epsilon": np.inf}).fit(X_train, Y_train)
    return {
        "private": private,
        "nonprivate": reference,
        "captured": captured_correlation(private, reference, X_test, Y_test),
        "similarity": subspace_similarity(private, reference),
        "held_out_private": held_out_correlations(private.x_weights_, private.y_weights_, X_test, Y_test),
        "held_out_nonprivate": held_out_correlations(reference.x_weights_, reference.y_weights_, X_test, Y_test),
    }


def first_pair_weights(private: DPCCA, reference: DPCCA) -> dict:
    """First canonical weight vectors for display: each scaled to max |.| = 1, and the private
    pair's sign aligned to the reference pair (the sign of a canonical pair is arbitrary).

    Returns dict u_private, u_nonprivate (Dx,), v_private, v_nonprivate (Dy,).
    """
    def unit(a):
        a = np.asarray(a, dtype=float)
        top = np.max(np.abs(a))
        return a / top if top > 0 else a

    up, ur = unit(private.x_weights_[:, 0]), unit(reference.x_weights_[:, 0])
    vp, vr = unit(private.y_weights_[:, 0]), unit(reference.y_weights_[:, 0])
    if float(up @ ur + vp @ vr) < 0:
        up, vp = -up, -vp
    return {"u_private": up, "u_nonprivate": ur, "v_private": vp, "v_nonprivate": vr}


def sample_size_grid(n_train: int, grid=(20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000, 50000)) -> list:
    """Sample sizes for the N sweep: the grid values below n_train, then n_train itself."""
    n_train = int(n_train)
    return [int(v) for v in grid if v < n_train] + [n_train]


def channel_split_views(df: pd.DataFrame, channel_columns, n_bands: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Two views from one block of spectral channels: the first and second half of the range,
    each averaged into ``n_bands`` bands (``bin_columns``; public, data-independent)."""
    cols = [str(c) for c in channel_columns]
    if len(cols) < 2 * int(n_bands):
        raise ValueError(f"{len(cols)} channels cannot be split into two halves of {n_bands} bands each")
    half = len(cols) // 2
    views = []
    for part in (cols[:half], cols[half:]):
        binned, labels = bin_columns(df[part].to_numpy(dtype=float), n_bands, part)
        views.append(pd.DataFrame(binned, columns=labels))
    return views[0], views[1]


# =============================================================================================
# Exports (issue #15): the shareable release and the owner's sheets, never mixed
# =============================================================================================
#: Format tag of the shareable release.
FORMAT = "privalab.dp_cca.release/1"

_PUBLIC_BOUND = "user-declared public bound"
_PUBLIC_CENTRE = "user-declared public centre"
_SETTING = "setting chosen by the user (public)"
_SCHEMA = "the data's schema (number and names of columns: public)"
_CALIBRATION = "calibration from the public epsilon, delta, sensitivity and N (N is public under replace-one)"
_CONSTRUCTION = "the construction and the user-declared public bounds"
_CALLER = "declared public by the caller"


def _fitted(model) -> None:
    if not isinstance(model, DPCCA) or not hasattr(model, "x_weights_") or not hasattr(model, "privacy_ledger_"):
        raise ValueError("a fitted DPCCA is required")


def no_release_reason(model: DPCCA) -> str | None:
    """Why this fitted model has no shareable release (None when it has one).

    eps = inf: nothing was released with noise. Paper mode: the centre is the exact private mean and
    the weights are scaled by the private largest row norms, so the outputs carry those numbers.
    """
    _fitted(model)
    if not len(model.privacy_ledger_):
        return "nothing was released with noise (ε = ∞, no privacy): the model belongs in the owner's workbook"
    if model.mode == "paper":
        return ("paper mode centres at the exact private means and scales by the private largest row norms; the "
                "weights and the centre carry those numbers, so there is nothing to share (use strict mode)")
    return None


def _param_fields(model: DPCCA) -> list[Field]:
    p = model.get_params(deep=False)
    fields = [Field(n, p[n], "public", _SETTING, role="param")
              for n in ("n_components", "epsilon", "delta", "mode", "calibration", "regularization")]
    if model.mode == "strict":
        names = ("row_bound",) if p["row_bound"] is not None else ("x_bound", "y_bound")
        fields += [Field(n, float(p[n]), "public", _PUBLIC_BOUND, role="param") for n in names]
        if p["x_center"] is not None:
            for n in ("x_center", "y_center"):
                c = np.asarray(p[n], dtype=float)
                fields.append(Field(n, c if c.ndim else float(c), "public", _PUBLIC_CENTRE, role="param"))
    return fields


def public_parameters(model: DPCCA, **declared) -> dict:
    """The declared-public parameters of a fit (name -> value) plus ``declared`` public inputs: what a page
    puts in ``RunReport.public_parameters``. Never a seed, never a data-derived number."""
    _fitted(model)
    out = {f.name: f.value for f in _param_fields(model)}
    out.update(declared)
    return out


def shareable_release(model: DPCCA, *, public_inputs: dict | None = None) -> dict:
    """The shareable release of a fitted strict-mode DPCCA, built with ``engine.release.build_release``.

    Fields (manifest provenance in brackets): canonical_correlations_, x_weights_, y_weights_,
    released_moments_ (the noisy centred moment matrix, z units), indefinite_ [dp: post-processing of
    the one release]; x_mean_, y_mean_ [dp: the noisy means of the same release with private centring;
    public: the declared centre otherwise]; sensitivity_, sigma_, tau_, calibration_, regularization_
    [public: calibration from public numbers]; preprocessing_ [public: the construction];
    n_features_in_, n_features_y_ (and feature_names_in_) [public: schema]; the parameters
    n_components, epsilon, delta, mode, calibration, regularization and the declared bounds and centre
    [public]. Never: the noise seed, clip counts, row counts, the non-private reference, held-out values.

    Parameters
    ----------
    model : fitted DPCCA (strict mode, eps < inf).
    public_inputs : dict name -> value the caller declares public (e.g. column names); "info" fields.

    Returns
    -------
    dict (format :data:`FORMAT`).

    Raises
    ------
    ValueError when there is nothing to share (:func:`no_release_reason`).
    """
    _fitted(model)
    why = no_release_reason(model)
    if why is not None:
        raise ValueError(f"no shareable release: {why}")
    src = RELEASE_NAME
    fields = [Field("n_features_in_", int(model.n_features_in_), "public", _SCHEMA),
              Field("n_features_y_", int(model.n_features_y_), "public", _SCHEMA)]
    if hasattr(model, "feature_names_in_"):
        fields.append(Field("feature_names_in_", np.asarray(model.feature_names_in_, dtype=object), "public", _SCHEMA))
    fields += [Field("canonical_correlations_", model.canonical_correlations_, "dp", src),
               Field("x_weights_", model.x_weights_, "dp", src), Field("y_weights_", model.y_weights_, "dp", src),
               Field("released_moments_", model.released_moments_, "dp", src),
               Field("indefinite_", bool(model.indefinite_), "dp", src)]
    private_centre = model.x_center is None
    fields += [Field(n, getattr(model, n), "dp" if private_centre else "public", src if private_centre else
                     _PUBLIC_CENTRE) for n in ("x_mean_", "y_mean_")]
    fields += [Field("sensitivity_", float(model.sensitivity_), "public", _CONSTRUCTION),
               Field("sigma_", float(model.sigma_), "public", _CALIBRATION),
               Field("tau_", float(model.tau_), "public", _CALIBRATION),
               Field("calibration_", str(model.calibration_), "public", _CALIBRATION),
               Field("regularization_", float(model.regularization_), "public", _CALIBRATION),
               Field("preprocessing_", str(model.preprocessing_), "public", _CONSTRUCTION)]
    fields += _param_fields(model)
    for name, value in (public_inputs or {}).items():
        fields.append(Field(str(name), value, "public", _CALLER, role="info"))
    from engine.report import plain_text  # the report module imports the engine: keep the import local

    led = model.privacy_ledger_
    return build_release("dp_cca", FORMAT, fields, led, guarantee=plain_text(ledger_text(led)),
                         extra_notes=[NOT_DP_PROJECTIONS])


def to_json(model: DPCCA, **json_kwargs) -> str:
    """The shareable release of ``model`` as strict JSON text (:func:`shareable_release`)."""
    return release_to_json(shareable_release(model), **json_kwargs)


def model_from_dict(data) -> DPCCA:
    """A DPCCA predictor (``transform``, ``score``) rebuilt from a shareable release (dict or JSON text)."""
    return estimator_from_release(data, DPCCA, FORMAT)


def owner_sheets(private: DPCCA, reference: DPCCA | None = None, *, comparison: dict | None = None,
                 n_test: int | None = None, x_names=None, y_names=None) -> dict:
    """The owner's private sheets of one fit (for ``RunReport.owner_workbook``): never to be shared.

    Parameters
    ----------
    private : the fitted DP model.   reference : the non-private CCA of the same rows (eps = inf).
    comparison : ``compare_fit`` output (held-out correlations, captured correlation, similarity).
    n_test : the exact number of held-out rows.   x_names, y_names : column names of the views.

    Returns
    -------
    dict sheet name -> DataFrame or dict: rows and clipping (exact counts, paper mode's data-derived
    scales), the private weights, the reference CCA (correlations and weights), held-out results.
    """
    _fitted(private)
    dx, dy = private.x_weights_.shape[0], private.y_weights_.shape[0]
    xn = [str(c) for c in (x_names if x_names is not None else [f"x{i + 1}" for i in range(dx)])]
    yn = [str(c) for c in (y_names if y_names is not None else [f"y{i + 1}" for i in range(dy)])]
    pairs = [f"pair {k + 1}" for k in range(private.x_weights_.shape[1])]
    rows = {"training rows N (exact)": int(private.n_rows_fit_), "rows clipped (exact)": int(private.n_clipped_),
            "clipping": " · ".join(private.clip_report_["notes"]) or "none (paper mode)",
            "guarantee of this fit": private.privacy_ledger_.status}
    if n_test is not None:
        rows["held-out rows (exact)"] = int(n_test)
    rows.update({f"{k} (paper mode, from the private rows)": float(v) for k, v in private.private_scales_.items()})
    if private.mode == "paper":
        rows["x_mean (exact private means)"] = private.x_mean_
        rows["y_mean (exact private means)"] = private.y_mean_
    sheets = {"rows and clipping": rows,
              "private U (DP)": pd.DataFrame(private.x_weights_, index=xn, columns=pairs).rename_axis("X column")
              .reset_index(),
              "private V (DP)": pd.DataFrame(private.y_weights_, index=yn, columns=pairs).rename_axis("Y column")
              .reset_index()}
    if reference is not None:
        _fitted(reference)
        sheets["reference correlations"] = pd.DataFrame({
            "pair": pairs, "non-private (training)": reference.canonical_correlations_,
            "private (training)": private.canonical_correlations_})
        sheets["reference U (non-private)"] = pd.DataFrame(reference.x_weights_, index=xn, columns=pairs) \
            .rename_axis("X column").reset_index()
        sheets["reference V (non-private)"] = pd.DataFrame(reference.y_weights_, index=yn, columns=pairs) \
            .rename_axis("Y column").reset_index()
    if comparison is not None:
        sheets["held-out correlations"] = pd.DataFrame({
            "pair": pairs, "private U,V": comparison["held_out_private"],
            "non-private U,V": comparison["held_out_nonprivate"]})
        sim = comparison["similarity"]
        sheets["held-out utility"] = {"captured correlation (held-out)": float(comparison["captured"]),
                                      "subspace similarity": float(sim["angle_cos"]),
                                      "subspace similarity X": float(sim["angle_cos_x"]),
                                      "subspace similarity Y": float(sim["angle_cos_y"])}
    return sheets


# =============================================================================================
# The page's defaults and the end-to-end audit of its strict pipeline
# =============================================================================================
#: The page's defaults (pages/dp_cca.py reads them; ``pipeline_audit_case`` reproduces them).
PAGE_DEFAULTS = {"n_rows": 5000, "data_seed": 3, "test_fraction": 0.3, "split_seed": 0, "n_components": 3,
                 "centring": "private", "calibration": "analytic", "regularization": "auto"}


def default_bound(dim: int) -> float:
    """The page's default public bound on a view's row norm: 3 sqrt(dim), rounded to 0.1.

    It depends on the number of columns only (public), never on the rows; the user overrides it.
    """
    return float(round(3.0 * math.sqrt(int(dim)), 1))


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
    p = params.get_params(deep=False) if isinstance(params, DPCCA) else dict(params)
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


#: Configurations of the end-to-end audit.
AUDIT_CONFIGS = ("default", "classic", "tight")


def _audit_data(config: str):
    if config == "tight":  # two columns per view (the least that attains the bound), rows inside the unit bounds
        rng = np.random.default_rng(17)
        latent = rng.normal(size=(60, 1))
        X = np.hstack([latent, rng.normal(size=(60, 1))]) + 0.3 * rng.normal(size=(60, 2))
        Y = np.hstack([latent, rng.normal(size=(60, 1))]) + 0.3 * rng.normal(size=(60, 2))
        return X / (1.5 * _row_norms(X).max()), Y / (1.5 * _row_norms(Y).max())
    from engine.data.samples import make_two_views

    d = PAGE_DEFAULTS
    tv = make_two_views(n_samples=d["n_rows"], random_state=d["data_seed"])
    train, _ = split_rows(d["n_rows"], d["test_fraction"], d["split_seed"])
    return tv.X[train], tv.Y[train]


def pipeline_audit_params(config: str = "default", epsilon: float = 1.0, delta: float = 1e-5) -> dict:
    """The DPCCA parameters of an audit configuration (the page's ``params`` dict for "default").

    "default": the page at its defaults (synthetic views 10 + 8 columns, K = 3, per-view bounds
    ``default_bound``, private centring, analytic calibration, lambda auto). "classic": the same with the
    page's other calibration choice ("auto": classic for eps <= 1, conservative). "tight": two columns per
    view, unit bounds, private centring, analytic calibration (sensitivity sqrt(32/27) attained, the
    release's true epsilon equals the claim).
    """
    if config not in AUDIT_CONFIGS:
        raise ValueError(f"config must be one of {AUDIT_CONFIGS}, got {config!r}")
    if config == "tight":
        return {"n_components": 1, "epsilon": float(epsilon), "delta": float(delta), "mode": "strict",
                "calibration": "analytic", "regularization": "auto", "x_bound": 1.0, "y_bound": 1.0}
    d = PAGE_DEFAULTS
    return {"n_components": d["n_components"], "epsilon": float(epsilon), "delta": float(delta), "mode": "strict",
            "calibration": "auto" if config == "classic" else d["calibration"], "regularization": d["regularization"],
            "x_bound": default_bound(10), "y_bound": default_bound(8)}


def pipeline_audit_case(config: str = "default", epsilon: float = 1.0, delta: float = 1e-5, *,
                        bug: str | None = None):
    """The page's strict pipeline as an ``engine.privacy.audit.AuditCase`` with worst-case neighbours.

    Parameters
    ----------
    config : "default", "classic" or "tight" (``pipeline_audit_params``).
    epsilon, delta : the claim.
    bug : None, "noise_halved" or "sensitivity_halved" (planted: the same release with half the noise).

    Returns
    -------
    AuditCase. D = the configuration's training rows with the last row replaced by the first row of
    ``worst_case_rows``, D' = the same with the second (replace-one). The release is the estimator's
    own path: ``DPCCA._prepare`` (clipping, scaling, the private-centring column), ``_noise`` (the
    calibrated sigma for ``release_sensitivity``) and ``_draw`` (the noise); the audited output is the
    released upper triangle of Z'Z / N restricted to the coordinates the worst rows touch (x_1, x_2,
    y_1, y_2 and the constant column): every other released number has the same distribution on D and
    D' and independent noise, so dropping it is post-processing and loses no evidence.
    """
    from engine.privacy.audit import _BUG_FACTORS, AuditCase, _check_bug, _expect, _name, _upper

    _check_bug(bug)
    params = pipeline_audit_params(config, epsilon, delta)
    X, Y = _audit_data(config)
    dx, dy = X.shape[1], Y.shape[1]
    (x, y), (xt, yt) = worst_case_rows(params, dx, dy)
    XD, YD, XDp, YDp = X.copy(), Y.copy(), X.copy(), Y.copy()
    XD[-1], YD[-1], XDp[-1], YDp[-1] = x, y, xt, yt
    keep = np.array([0, 1, dx, dx + 1, dx + dy])  # the coordinates the worst rows touch (+ the constant)
    factor = _BUG_FACTORS[bug]
    est = DPCCA(**params)
    sigma = est._noise(X.shape[0])["sigma"]

    def release(data, rng, n):
        prep = est._prepare(*data)
        noise = est._noise(prep.n)
        G0 = prep.gram()
        out = []
        for start in range(0, n, 5000):
            G = est._draw(prep, noise, min(5000, n - start), rng, G0)
            if factor != 1.0:  # planted bug: the same release with the noise scaled by the factor
                G = G0[None] + factor * (G - G0[None])
            out.append(_upper(G[:, keep][:, :, keep] / prep.n))
        return np.concatenate(out)

    sens = est._sensitivity()
    return AuditCase(
        _name(f"dp_cca_pipeline_{config}", bug), "dp_cca", "strict", float(epsilon), float(delta), release,
        (XD, YD), (XDp, YDp),
        f"replace one row by another, both on the public bounds with inner product "
        f"{_WORST_INNER[('per_view', 'private')]:.4g} per view (the rows that attain the sensitivity {sens:.6g})",
        _expect("strict", bug),
        f"page pipeline ({config}): per-view bounds {params['x_bound']:g}, {params['y_bound']:g}, private centring, "
        f"{resolve_calibration(params['calibration'], epsilon)} calibration, sigma = {sigma:.4g} on Z'Z", bug)
