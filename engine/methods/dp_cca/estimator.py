"""DP-CCA: the estimator ``DPCCA`` (Imtiaz & Sarwate's Analyze-Gauss CCA, scikit-learn style).

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

"""
from __future__ import annotations

import dataclasses
import math
from numbers import Integral, Real
from typing import ClassVar

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from engine.methods.constraints import CALIBRATION_CONSTRAINT, PRIVACY_PARAMETER_CONSTRAINTS
from engine.methods.dp_cca.core import (
    _prepare_paper,
    _prepare_strict,
    _Prepared,
    _row_norms,
    as_view,
    cca_from_moments,
    check_identified,
    read_views,
)
from engine.methods.dp_cca.metrics import held_out_correlations
from engine.methods.dp_cca.sensitivity import release_sensitivity
from engine.privacy import SEED_KNOWN_CAVEAT, Neighbouring, PrivacyLedger, noise_generator
from engine.privacy.calibration import noise_scale, resolve_calibration
from engine.privacy.chunked import is_lazy
from engine.privacy.moments import MomentsRelease

__all__ = ["DPCCA", "NOT_DP_PROJECTIONS", "RELEASE_NAME", "analyze_gauss_tau", "auto_regularization",
           "resolve_calibration"]

NOT_DP_PROJECTIONS = (
    "The canonical scores X·U and Y·V of the training rows are NOT differentially private: each score "
    "uses that person's row itself. Only U, V and the canonical correlations carry the (ε, δ) "
    "guarantee (post-processing of the noisy moment matrix)."
)


#: Multiple of sqrt(D) tau used by ``regularization="auto"`` (module docstring).
_AUTO_LAMBDA = 2.0

#: At most this many float64 entries per (R, d, d) batch of noisy moment matrices.
_CHUNK_ENTRIES = 8_000_000

#: Name of the one release in the ledger (the dp fields of the shareable release name it).
RELEASE_NAME = "joint second-moment matrix Z'Z"

#: A finite number > 0 (the public bounds).
_POSITIVE = Interval(Real, 0, np.inf, closed="neither")

#: Numeric parameters refused as booleans.
_NUMBERS = ("n_components", "epsilon", "delta", "regularization", "row_bound", "x_bound", "y_bound")


# =============================================================================================
# Calibration
# =============================================================================================
def _mechanism(epsilon: float, delta: float, calibration: str,
               sensitivity: float = math.sqrt(2.0)) -> MomentsRelease:
    """The Gaussian release of the upper triangle of Z'Z (replace-one neighbours, ``engine.privacy.moments``):
    sigma from ``engine.privacy.calibration.noise_scale`` under the one calibration rule."""
    return MomentsRelease(float(epsilon), float(delta), float(sensitivity), calibration,
                          neighbouring=Neighbouring.REPLACE_ONE)


def analyze_gauss_tau(epsilon: float, delta: float, n_samples: int, calibration: str = "auto",
                      sensitivity: float = math.sqrt(2.0)) -> float:
    """Noise std on the entries of C = Z'Z / N (replace-one neighbours, public N).

    With the classic calibration and the poster's sensitivity sqrt(2) this is the poster's
    tau = sqrt(2)/(N eps) sqrt(2 ln(1.25/delta)). ``sensitivity``: ``release_sensitivity(...)`` of
    the construction. Returns 0.0 for eps = inf.
    """
    return noise_scale("gaussian", epsilon, delta, sensitivity, calibration) / int(n_samples)


def auto_regularization(tau: float, dim: int) -> float:
    """lambda of ``regularization="auto"``: 2 sqrt(D) tau, the typical spectral norm of the noise."""
    return _AUTO_LAMBDA * math.sqrt(dim) * float(tau)


# =============================================================================================
# The estimator
# =============================================================================================
class DPCCA(TransformerMixin, BaseEstimator):
    """(eps, delta)-DP canonical correlation analysis by Analyze-Gauss (Imtiaz & Sarwate).

    Input: X (N, Dx) and Y (N, Dy) or Y (N,) (one column, as scikit-learn passes a target). Text, NaN,
    inf, overflow, underflow, constant and duplicate columns are refused with a ``ValueError`` naming the
    view and column; without noise and regularisation a collinear view is refused (``check_identified``).
    ``fit_transform(X, Y)`` returns the X scores, as ``fit(X, Y).transform(X)``; ``transform(X, Y)`` gives
    both views' scores. scikit-learn's ``check_estimator`` passes with ``n_components=1`` (the checks give
    a one-column Y; the default K = 2 needs Dy >= 2, as for ``sklearn.cross_decomposition.CCA``).

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

    _parameter_constraints: ClassVar[dict] = {
        **PRIVACY_PARAMETER_CONSTRAINTS,
        # a numpy Generator is a documented noise seed (``noise_generator``); the shared entry lacks it
        "random_state": [*PRIVACY_PARAMETER_CONSTRAINTS["random_state"], np.random.Generator],
        "n_components": [Interval(Integral, 1, None, closed="left")],
        "mode": [StrOptions({"paper", "strict"})],
        "calibration": CALIBRATION_CONSTRAINT,
        "row_bound": [_POSITIVE, None],
        "x_bound": [_POSITIVE, None],
        "y_bound": [_POSITIVE, None],
        "x_center": ["array-like", Real, None],
        "y_center": ["array-like", Real, None],
        "regularization": [StrOptions({"auto"}), Interval(Real, 0, np.inf, closed="left")],
    }

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
        """scikit-learn's declarative checks (``_parameter_constraints``), then the rules that tie parameters
        together (hand-written: no declaration expresses them)."""
        self._validate_params()
        bools = [n for n in _NUMBERS if isinstance(getattr(self, n), bool)]
        if bools:  # scikit-learn's Interval accepts True/False as numbers; a flag here is always a mistake
            raise ValueError(f"{bools[0]} must be a number, got {getattr(self, bools[0])!r}")
        eps = self.epsilon
        if self.calibration == "classic" and math.isfinite(eps) and eps > 1:
            raise ValueError(f"the classic Gaussian calibration is proven only for epsilon <= 1 (got {eps}); "
                             "use calibration='auto' or 'analytic'")
        bounds = {"row_bound": self.row_bound, "x_bound": self.x_bound, "y_bound": self.y_bound}
        if self.mode == "paper":
            given = [k for k in (*bounds, "x_center", "y_center") if getattr(self, k) is not None]
            if given:
                raise ValueError(f"{', '.join(given)} are public bounds/centres for mode='strict'; paper mode "
                                 "centres and scales with the private data itself")
            return
        per_view = self.x_bound is not None or self.y_bound is not None
        if self.row_bound is not None and per_view:
            raise ValueError("give either row_bound (joint) or x_bound and y_bound (per view), not both")
        if self.row_bound is None and (self.x_bound is None or self.y_bound is None):
            raise ValueError("strict mode needs public bounds fixed before seeing the data: x_bound and y_bound "
                             "(largest ||x - c_x|| and ||y - c_y||) or row_bound (largest joint norm)")
        if (self.x_center is None) != (self.y_center is None):
            raise ValueError("give both x_center and y_center (a public centre) or neither (private centring)")

    def _validate_xy(self, X, Y, *, reset=True, full=True):
        """Checked views (``core.read_views``: Y may be 1-D; text, NaN, inf, overflow, underflow,
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
        return {"mechanism": mech, "sigma": mech.sigma, "tau": mech.sigma / n,
                "calibration": resolve_calibration(self.calibration, eps),
                "epsilon": eps, "delta": dlt, "sensitivity": sens}

    def _lambda(self, tau: float, D: int) -> float:
        return auto_regularization(tau, D) if self.regularization == "auto" else float(self.regularization)

    @staticmethod
    def _new_ledger(seed_known: bool = False) -> PrivacyLedger:
        """An empty ledger for one fit (replace-one neighbours), with the known-seed caveat if any."""
        led = PrivacyLedger(neighbouring=Neighbouring.REPLACE_ONE)
        if seed_known:
            led.add_caveat(SEED_KNOWN_CAVEAT)
        return led

    def _record(self, prep: _Prepared, noise: dict, ledger: PrivacyLedger) -> None:
        """Add the one Analyze-Gauss release to ``ledger`` (called by ``_draw``, right after the draw).

        No exact private count goes into it (the notes reach the shareable report): not the clipped rows.
        """
        mech = noise["mechanism"]
        cols = f"{prep.D}{' + 1 constant' if prep.private_centring else ''} columns"
        note = (f"Analyze-Gauss on the upper triangle of Z'Z ({cols}), replace-one neighbours with N public; "
                f"worst-case change of the released numbers {noise['sensitivity']:.6g} (proof in "
                f"engine.methods.dp_cca); noise std {noise['sigma']:.6g} on Z'Z, {noise['calibration']} calibration. "
                f"Preprocessing: {prep.description}. U, V and the correlations are post-processing.")
        if prep.sensitivity_source == "data":
            note += " The centre and scale come from the private data, so (eps, delta) is claimed, not proven."
        rel = mech.record(RELEASE_NAME, sensitivity_source=prep.sensitivity_source, note=note)
        if prep.sensitivity_source == "data":
            rel = dataclasses.replace(rel, claimed_epsilon=rel.epsilon, claimed_delta=rel.delta)
        ledger.add(rel)

    def _draw(self, prep: _Prepared, noise: dict, n_replicates: int, rng, G=None, *,
              ledger: PrivacyLedger | None = None) -> np.ndarray:
        """(R, d, d) noisy sums Z'Z + E (exactly symmetric). With ``ledger``, the release is recorded in the same
        call (one record: the R replicates of ``sample_fits`` share one guarantee, each is one release)."""
        mech = noise["mechanism"]
        R = int(n_replicates)
        if mech is None:
            return np.repeat((prep.gram() if G is None else G)[None], R, axis=0)
        if abs(prep.sensitivity - noise["sensitivity"]) > 1e-12:  # the estimator and its preparation must agree
            raise RuntimeError("internal error: the noise is calibrated to another construction than the rows")
        by_construction = prep.rows_in_unit_ball_by_construction  # scaled_gram: no Z to check
        worst = float(_row_norms(prep.Z).max()) if prep.n and not by_construction else 0.0
        if worst > 1 + 1e-9:  # the sensitivity assumes rows in the unit ball
            raise ValueError(f"a prepared row has norm {worst:.6g} > 1: clip first")
        G0 = prep.gram() if G is None else G
        # Exactly symmetric noise: upper triangle i.i.d. N(0, sigma^2), mirrored, drawn in chunks of replicates.
        noisy = np.concatenate(list(mech.iter_noisy(G0, R, rng, max_entries=_CHUNK_ENTRIES)))
        if ledger is not None:
            self._record(prep, noise, ledger)
        return noisy

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
    def fit(self, X, Y, *, scheduler=None, progress=None):
        """Fit on X (N, Dx) and Y (N, Dy) (rows = the same samples). Returns self.

        X and Y may be Dask collections (``ddf[x_cols], ddf[y_cols]``): strict mode then sums its release
        partition by partition on ``scheduler`` (``engine.methods.dp_cca.lazy``; ``progress(done, total)``
        as partitions finish); paper mode gathers the rows into memory and warns.
        """
        if is_lazy(X) or is_lazy(Y):
            from engine.methods.dp_cca import lazy

            if self.mode == "paper":
                X, Y = lazy.paper_inputs(X, Y)
                prep = self._prepare(X, Y, full_checks=True)
            else:
                prep = lazy.lazy_prepare(self, X, Y, scheduler=scheduler, progress=progress)
        else:
            prep = self._prepare(X, Y, full_checks=True)
        noise = self._noise(prep.n)
        lam = self._lambda(noise["tau"], prep.D)
        rng, seed_known = noise_generator(self.random_state)
        ledger = self._new_ledger(seed_known)
        G = self._draw(prep, noise, 1, rng, ledger=ledger)
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
        self.privacy_ledger_ = ledger
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
        ledger = self._new_ledger(seed_known)
        Gs = self._draw(prep, noise, n_replicates, rng, G, ledger=ledger)
        out = self._models(prep, Gs, lam, clean=noise["mechanism"] is None)
        C_hat = out.pop("C")
        if return_moments:
            out["C_hat"] = C_hat
            out["C"] = prep.moments(G[None])[0][0]
        out.update({"tau": noise["tau"], "sigma": noise["sigma"], "calibration": noise["calibration"],
                    "regularization": lam, "ledger": ledger,
                    "n_clipped": prep.n_clipped, "sensitivity": noise["sensitivity"]})
        return out

