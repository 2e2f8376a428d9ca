"""Collaborative VAR forecasting across data owners (features split), central or by ADMM.

Paper: Gonçalves, Bessa & Pinson, "A critical overview of privacy-preserving approaches for
collaborative forecasting" (spec ``/work/shared/spec/var_admm.md``). Every owner holds one
series; a VAR_n(p) of all series needs every owner's lags as covariates of every equation,
so the design matrix is split by features: Z = [Z_A1 .. Z_An], Z_Ai (T x p) owner i's lags.

What is written by hand here (the paper's algorithms, not available in a kept library):

* ``CollaborativeVAR(solver="admm")``: the distributed LASSO-VAR of the paper's (47), which
  is Boyd et al. (2011) section 8.3 "lasso split across features", message by message, with
  the Y-free variant (66)-(71), zero or random initialisation, Boyd's stopping rule or the
  paper's fixed-K mode, and noise on the shared coefficients (73) or messages (74); and an
  Anderson-accelerated scheme at ρ = n (the default for fits, issue #16). The iterations live in
  :mod:`engine.methods.var_admm_solver` (re-exported here).
* The owners' LASSO sub-problems: warm-started cyclic coordinate descent (vectorised over
  owners and targets), also used for the central LASSO so both solve the same problem.
* Numerics (issue #16, :mod:`engine.methods.var_admm_checks`): every solver works on series
  divided by a power of two near their root mean square (exact), so multiplying the series by any
  c in [1e-150, 1e150] gives the same coefficients (intercepts times c, residual covariance times
  c²); hostile series (text, NaN, inf, overflow, underflow, constant) and collinear or duplicated
  series (not identified) are refused with a ValueError naming the series.
* The spec's simulated VAR processes (6.1): VAR_2(2), the VAR_10(3) stand-in and random
  stationary VARs by Ansley & Kohn (1986) as in gmvarkit's ``random_coefmats2``.
* The data-transformation defences of spec section 2 and the forecast evaluation of 6.3.
* The noise defence as a release (issue #15): :func:`add_noise` clips every value into a range
  the user declared public, then adds fresh noise once per value; any centring is
  post-processing (the VAR's intercept is fitted on the noisy values). :func:`defence_ledger`
  decides the status from explicit declarations only (range declared public, noise seed not
  known) and states ε per value (event level) and for one owner's whole series (T values
  composed: the fit's ledger). :func:`shareable_release` / :func:`owner_sheets` are the two kinds
  of export, and :func:`pipeline_audit_case` audits the pipeline end to end.

Kept libraries do the rest: scipy for least squares / linear solves, scikit-learn for input
validation and ``BaseEstimator``. statsmodels is only the tests' oracle (``VAR(Y).fit(p)``).

Layouts. ``coefs_`` (L, n, n) and ``intercept_`` (n,) are laid out as statsmodels'
``VARResults.coefs`` / ``.intercept``: y_t = intercept + sum_l coefs[l-1] @ y_{t-l}, so
``coefs_[l-1][j, i]`` is the weight of lag l of series i in the equation of series j, and
L = max(lags) (for a lag set such as {1, 2, 24} the unused lags are zero matrices). The paper's
row form B^(l) = coefs_[l-1].T (row = source, column = target). Internally the engine is
owner-major: B_om (n p x n), row i*p + q is owner i's lag ``lags[q]`` (spec section 1);
``owner_major_to_lag_major`` / ``lag_major_to_owner_major`` convert.

Penalties (``alpha`` is per row, lambda = alpha * T with T the number of fitted rows):

* ``"none"``: least squares, 1/2 ||Y - Z B||^2.
* ``"lasso"``: 1/2 ||Y - Z B||^2 + lambda ||B||_1 (the paper's (40), no 1/T), i.e. sklearn's
  ``Lasso(alpha=alpha)`` column by column.
* ``"ridge"``: 1/2 ||Y - Z B||^2 + lambda/2 ||B||^2, i.e. sklearn's ``Ridge(alpha=alpha*T)``.

``trend="c"`` fits an unpenalised intercept the way statsmodels' constant does (Frisch-Waugh):
each owner centres its own lag columns and its own target column on their means over the
fitted rows (local work, no data leaves the owner), the model is fitted on centred data, and
the intercept is ybar - zbar B. With ``trend="n"`` there is no intercept (the paper's eta = 0).

No streamlit here.
"""
from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from numbers import Integral, Real

import numpy as np
import pandas as pd
from scipy import linalg
from sklearn.base import BaseEstimator
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.validation import check_array, check_is_fitted
from threadpoolctl import threadpool_limits

from engine.privacy import (
    SEED_KNOWN_CAVEAT,
    PrivacyLedger,
    Release,
    as_generator,
    gaussian_epsilon,
    noise_generator,
)

from .var_admm_checks import (
    CONSTANT_RTOL,
    UNDERFLOW_LIMIT,
    check_finite_columns,
    check_identified,
    check_series,
    label,
    pow2,
    safe_rms,
    series_names,
)
from .var_admm_solver import (
    SCHEME_LABELS,
    SCHEMES,
    AdmmTrace,
    MessageLog,
    lasso_coordinate_descent,
    noise,
    run_anderson,
    run_paper,
)

__all__ = [
    "CollaborativeVAR",
    "SCHEMES",
    "SCHEME_LABELS",
    "AdmmTrace",
    "MessageLog",
    "normalise_lags",
    "lagged_design",
    "owner_major_to_lag_major",
    "lag_major_to_owner_major",
    "coefs_from_owner_major",
    "owner_major_from_coefs",
    "lasso_coordinate_descent",
    "var22_coefs",
    "var10_3_coefs",
    "random_stationary_var",
    "simulate_var",
    "companion_radius",
    "macrodata_growth",
    "add_noise",
    "clip_to_range",
    "range_width",
    "naive_noisy_design",
    "noise_sd",
    "noise_guarantee",
    "noise_ledger",
    "defence_ledger",
    "DefenceLedger",
    "noise_defence",
    "NoiseRelease",
    "RANGE_NOT_DECLARED",
    "PER_VALUE_UNIT",
    "PER_SERIES_UNIT",
    "DP_STATEMENTS",
    "orthogonal_rows_demo",
    "post_multiplication_demo",
    "ForecastEvaluation",
    "evaluate_forecasts",
    "local_ar_forecasts",
    "var_forecasts",
    "prepare_solar",
    "SolarPanel",
    "defence_comparison",
    "noise_sweep",
    "DEFENCES",
    "load_panel",
    "prepare_series",
    "parse_lags",
    "calibrated_noise_scale",
    "neighbourhood",
    "MODEL_FORMAT",
    "RELEASE_FORMAT",
    "NOT_DP_MODEL",
    "NO_DEFENCE_REASON",
    "coef_table",
    "model_from_dict",
    "model_from_release",
    "model_to_dict",
    "owner_sheets",
    "release_refusal",
    "shareable_release",
    "to_json",
    "PIPELINE_BUGS",
    "pipeline_audit_case",
]

PENALTIES = ("none", "ridge", "lasso")


def _one_blas_thread(func):
    """Run ``func`` with one BLAS thread: its products are modest, and on a busy machine
    multi-threaded OpenBLAS makes small products 10-50x slower (oversubscription)."""
    import functools

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        with threadpool_limits(limits=1, user_api="blas"):
            return func(*args, **kwargs)

    return wrapper


SOLVERS = ("central", "admm")
TRENDS = ("c", "n")
INITS = ("zero", "random")
VARIANTS = ("base", "y_free")
NOISE_LAWS = ("laplace", "gaussian", "uniform")


# =============================================================================================
# 1. Layout: lags, design, owner-major <-> lag-major
# =============================================================================================
def normalise_lags(lags) -> tuple:
    """``p`` -> (1, .., p); a sequence -> sorted distinct positive ints (e.g. (1, 2, 24))."""
    if isinstance(lags, (Integral, np.integer)) and not isinstance(lags, (bool, np.bool_)):
        if int(lags) < 1:
            raise ValueError(f"lags must be at least 1, got {lags}")
        return tuple(range(1, int(lags) + 1))
    try:
        values = [int(v) for v in lags]
    except (TypeError, ValueError):
        raise ValueError(f"lags must be a positive int or a sequence of positive ints, got {lags!r}") from None
    if not values or min(values) < 1:
        raise ValueError(f"lags must be positive, got {lags!r}")
    if any(float(v) != float(w) for v, w in zip(values, lags)):
        raise ValueError(f"lags must be whole numbers, got {lags!r}")
    return tuple(sorted(set(values)))


def lagged_design(Y: np.ndarray, lags) -> tuple[np.ndarray, np.ndarray]:
    """Owner-major design of a VAR: Z (T x n p) and targets (T x n), T = T_total - max(lags).

    Column i*p + q of Z is owner i's series at lag ``lags[q]``; row t (0-based) is the target
    time L + t, L = max(lags). Pre-sample values are the first L rows of ``Y``.
    """
    Y = np.asarray(Y, dtype=float)
    lags = normalise_lags(lags)
    L = max(lags)
    T_total, n = Y.shape
    T = T_total - L
    if T < 1:
        raise ValueError(f"{T_total} time steps leave no row to fit with a largest lag of {L}")
    p = len(lags)
    Z = np.empty((T, n * p))
    for q, ell in enumerate(lags):
        Z[:, q::p] = Y[L - ell:T_total - ell, :]
    return Z, Y[L:, :].copy()


def owner_major_to_lag_major(B_om: np.ndarray, n: int, n_lags: int) -> np.ndarray:
    """Row permutation: owner-major (row i*p + q) -> lag-major (row q*n + i), the paper's (38)."""
    B_om = np.asarray(B_om)
    return B_om.reshape(n, n_lags, -1).transpose(1, 0, 2).reshape(n * n_lags, -1)


def lag_major_to_owner_major(B_lm: np.ndarray, n: int, n_lags: int) -> np.ndarray:
    """Inverse of :func:`owner_major_to_lag_major`."""
    B_lm = np.asarray(B_lm)
    return B_lm.reshape(n_lags, n, -1).transpose(1, 0, 2).reshape(n * n_lags, -1)


def coefs_from_owner_major(B_om: np.ndarray, lags) -> np.ndarray:
    """statsmodels-layout coefficients (L, n, n) from owner-major B (n p x n)."""
    lags = normalise_lags(lags)
    p, L = len(lags), max(lags)
    n = B_om.shape[1]
    blocks = B_om.reshape(n, p, n)  # [source, lag index, target]
    coefs = np.zeros((L, n, n))
    for q, ell in enumerate(lags):
        coefs[ell - 1] = blocks[:, q, :].T  # [target, source]
    return coefs


def owner_major_from_coefs(coefs: np.ndarray, lags) -> np.ndarray:
    """Owner-major B (n p x n) from statsmodels-layout coefficients (only the lags in ``lags``)."""
    lags = normalise_lags(lags)
    coefs = np.asarray(coefs, dtype=float)
    n = coefs.shape[1]
    p = len(lags)
    B = np.empty((n, p, n))
    for q, ell in enumerate(lags):
        B[:, q, :] = coefs[ell - 1].T
    return B.reshape(n * p, n)


# =============================================================================================
# 2-3. Solvers, message log and trace: engine.methods.var_admm_solver (re-exported here)
# =============================================================================================
_noise = noise


def _resolve_scheme(est) -> str:
    """The scheme that runs: "auto" is the paper's scheme whenever the run is the paper's experiment
    (messages kept for the attacks, fixed K, noise inside ADMM), else the accelerated one."""
    scheme = est.scheme
    paper_run = int(est.keep_values) > 0 or est.tol is None or est.coef_noise > 0 or est.message_noise > 0
    if scheme == "auto":
        return "paper" if paper_run else "anderson"
    if scheme != "paper":
        if int(est.keep_values) > 0:
            raise ValueError(f"keep_values needs scheme='paper' (the attacks are written for the paper's messages), "
                             f"got scheme={scheme!r}")
        if est.coef_noise > 0 or est.message_noise > 0:
            raise ValueError(f"noise inside ADMM ((73)/(74)) is the paper's experiment: use scheme='paper', "
                             f"got scheme={scheme!r}")
        if scheme in ("balanced", "relaxed") and est.variant != "base":
            raise ValueError(f"scheme={scheme!r} runs the base protocol (47); use variant='base'")
    return scheme


# =============================================================================================
# 4. The estimator
# =============================================================================================
class CollaborativeVAR(BaseEstimator):
    """VAR of n owners' series, fitted centrally or by the paper's distributed ADMM (47).

    Parameters
    ----------
    lags : int or sequence of int. p (lags 1..p) or a lag set such as (1, 2, 24).
    solver : "central" (pooled data: least squares / ridge / LASSO by coordinate descent) or
        "admm" (features-split ADMM, spec 4.2: each owner holds only its own series).
    penalty : "none" | "ridge" | "lasso"; ``alpha`` per row (lambda = alpha T), see module doc.
        ``alpha`` is in the data's squared units, as scikit-learn's: the same penalised fit at data
        times c needs alpha times c².
    trend : "c" (intercept, as statsmodels' default) or "n" (none).
    rho : ADMM penalty parameter of the paper's scheme (spec default 2; the "anderson" scheme runs at
        ρ = n and ignores it; "balanced" starts from it).
    max_iter : ADMM iterations at most (spec: 500).
    tol : relative tolerance of Boyd's stopping rule (default 1e-6); the absolute tolerance is
        ``atol`` (default tol / 100) in units of the data's root mean square (the data are scaled
        internally), so the rule is relative to the problem's own scale. A fit that stops at
        ``max_iter`` without meeting it raises sklearn's ``ConvergenceWarning``. ``tol=None`` is the
        paper's fixed-K mode: exactly ``max_iter`` iterations, no rule, no warning.
    scheme : "auto" (default), "paper", "anderson", "balanced" or "relaxed" (see
        :mod:`engine.methods.var_admm_solver`). "auto" runs the paper's plain scheme when the run is
        the paper's experiment (``keep_values`` > 0 for the attacks, ``tol=None``, noise inside
        ADMM) and the Anderson-accelerated one otherwise. ``scheme_`` says which ran.
    init : "zero" (Boyd's B^1 = U^0 = 0; leaks Y in the first broadcast, spec 5.1) or "random"
        (U^0 ~ N(0, (u0_scale rms(Y))^2), B_Ai^1 ~ N(0, b1_scale^2), the paper's Prop. 3 setting).
    random_state : seed for the random initialisation and the protocol noise.
    variant : "base" (47), the central node holds Y; "y_free" (71), it never receives Y.
    u0_scale : sd of the random U^0 relative to the root mean square of the centred targets (so the
        mask has the data's scale whatever the units).
    coef_noise, message_noise, noise_law : ADMM with noise (spec 4.3): fresh noise of this
        scale each iteration on the shared coefficients (73) (owner sends Z_Ai (B_Ai^k + W_3))
        or on each owner's message (74), the latter in the data's units. Laws: "gaussian"
        (sd = scale), "laplace" (b = scale), "uniform" (U(-scale, scale)).
    noisy_continue : the owner continues from its noisy coefficients (else its clean ones).
    keep_values : keep the values of all messages of the first ``keep_values`` iterations
        (needed by the attacks); shapes are always recorded.
    store_path : keep B^k of every iteration (for convergence plots).
    inner_tol : coordinate-descent tolerance of the LASSO sub-problems (max |dB|).

    Fitted attributes
    -----------------
    coefs_ (L, n, n), intercept_ (n,): statsmodels layout. coef_owner_major_ (n p, n).
    lags_, n_owners_, n_features_in_ (= n), feature_names_in_ (DataFrame input only), n_obs_
    (T fitted rows), lambda_, n_iter_, converged_, scheme_ ("central", "paper", "anderson",
    "balanced", "relaxed"), trace_ (:class:`AdmmTrace`, ADMM only), design_ (Z, targets) actually
    fitted (centred for trend "c"), z_mean_, y_mean_, sigma_u_ (residual covariance, like
    statsmodels' sigma_u), convergence_message_ (None, or why the ADMM is not converged: the text of
    the ``ConvergenceWarning``), series_scale_ (n,) (the power of two each series is divided by inside: every
    solver sees standardised series, so the fit does not depend on the units).

    Raises
    ------
    ValueError naming the series for non-numeric values, NaN, inf, overflow (|value| > 1e153),
    underflow (variation < 1e-153), constant series, and collinear or duplicated series (the
    coefficients are not identified: refused in both solvers, so no answer depends on a seed; a
    ridge penalty identifies them and is accepted).
    """

    def __init__(self, lags=1, solver="central", penalty="none", alpha=0.0, trend="c", rho=2.0, max_iter=500,
                 tol=1e-6, init="random", random_state=None, *, variant="base", atol=None, u0_scale=1.0,
                 b1_scale=1.0, coef_noise=0.0, message_noise=0.0, noise_law="gaussian", noisy_continue=False,
                 keep_values=0, store_path=True, inner_tol=1e-12, owner_names=None, scheme="auto"):
        self.lags = lags
        self.solver = solver
        self.penalty = penalty
        self.alpha = alpha
        self.trend = trend
        self.rho = rho
        self.max_iter = max_iter
        self.tol = tol
        self.init = init
        self.random_state = random_state
        self.variant = variant
        self.atol = atol
        self.u0_scale = u0_scale
        self.b1_scale = b1_scale
        self.coef_noise = coef_noise
        self.message_noise = message_noise
        self.noise_law = noise_law
        self.noisy_continue = noisy_continue
        self.keep_values = keep_values
        self.store_path = store_path
        self.inner_tol = inner_tol
        self.owner_names = owner_names
        self.scheme = scheme

    # ----------------------------------------------------------------------------- checks
    def _check_params(self):
        for name, value, allowed in (("solver", self.solver, SOLVERS), ("penalty", self.penalty, PENALTIES),
                                     ("trend", self.trend, TRENDS), ("init", self.init, INITS),
                                     ("variant", self.variant, VARIANTS), ("noise_law", self.noise_law, NOISE_LAWS),
                                     ("scheme", self.scheme, SCHEMES)):
            if value not in allowed:
                raise ValueError(f"{name} must be one of {allowed}, got {value!r}")
        if not isinstance(self.alpha, Real) or self.alpha < 0 or not math.isfinite(self.alpha):
            raise ValueError(f"alpha must be a finite number >= 0, got {self.alpha!r}")
        if not isinstance(self.rho, Real) or not self.rho > 0 or not math.isfinite(self.rho):
            raise ValueError(f"rho must be a finite number > 0, got {self.rho!r}")
        if not isinstance(self.max_iter, Integral) or self.max_iter < 1:
            raise ValueError(f"max_iter must be a positive int, got {self.max_iter!r}")
        if self.tol is not None and not (isinstance(self.tol, Real) and self.tol > 0 and math.isfinite(self.tol)):
            raise ValueError(f"tol must be > 0 or None (fixed number of iterations), got {self.tol!r}")
        if self.atol is not None and not (isinstance(self.atol, Real) and self.atol >= 0 and math.isfinite(self.atol)):
            raise ValueError(f"atol must be a finite number >= 0 or None, got {self.atol!r}")
        for name in ("coef_noise", "message_noise", "u0_scale", "b1_scale"):
            v = getattr(self, name)
            if not isinstance(v, Real) or v < 0 or not math.isfinite(v):
                raise ValueError(f"{name} must be a finite number >= 0, got {v!r}")
        return normalise_lags(self.lags)

    # ----------------------------------------------------------------------------- fit
    def fit(self, Y, y=None, row_mask=None):
        """Fit on Y (T_total x n): one column per owner, rows in time order.

        The first max(lags) rows are pre-sample values; the targets are the later rows, all of
        them or those where ``row_mask`` (bool, length T_total) is True (e.g. daylight hours;
        the lags still come from the previous clock times). ``fit_rows_`` keeps their indices.
        Raises ValueError naming the series for hostile values (see the class doc).
        """
        lags = self._check_params()
        frame_names = [str(c) for c in Y.columns] if isinstance(Y, pd.DataFrame) else None
        Y, names = check_series(Y, self.owner_names if self.owner_names is not None else frame_names,
                                min_rows=max(lags) + 2, what="Y")
        Z, target = lagged_design(Y, lags)
        rows = np.arange(max(lags), Y.shape[0])
        if row_mask is not None:
            row_mask = np.asarray(row_mask, dtype=bool)
            if row_mask.shape != (Y.shape[0],):
                raise ValueError(f"row_mask must have one entry per row of Y ({Y.shape[0]}), got {row_mask.shape}")
            keep = row_mask[max(lags):]
            Z, target, rows = Z[keep], target[keep], rows[keep]
        self._set_features(Y.shape[1], frame_names)
        self.fit_rows_ = rows
        return self._fit_design(Z, target, lags, frame_names, names)

    def fit_design(self, Z, target, y=None):
        """Fit on a ready owner-major design Z (T x n p) and targets (T x n), e.g. noisy copies
        made independently (the "naive" noise of spec 2.1). ``lags`` names Z's lag order."""
        lags = self._check_params()
        p = len(lags)
        target = np.asarray(target)
        n = target.shape[1] if target.ndim == 2 else 0
        names = series_names(n, self.owner_names)
        target = check_finite_columns(target, "targets", [label(nm) for nm in names])
        Z = check_finite_columns(Z, "Z", [f"{label(names[j // p])} at lag {lags[j % p]}" if j // p < n
                                          else f"column {j}" for j in range(np.asarray(Z).shape[1])])
        if Z.shape[0] != target.shape[0] or Z.shape[1] != target.shape[1] * p:
            raise ValueError(f"Z must be T x n p and targets T x n; got {Z.shape} and {target.shape} with "
                             f"{p} lags")
        self._set_features(n, None)
        self.fit_rows_ = np.arange(Z.shape[0]) + max(lags)
        return self._fit_design(Z, target, lags, None, names)

    def _set_features(self, n, frame_names):
        self.n_features_in_ = int(n)
        if frame_names is not None:
            self.feature_names_in_ = np.array(frame_names, dtype=object)
        elif hasattr(self, "feature_names_in_"):
            del self.feature_names_in_

    def _fit_design(self, Z, target, lags, frame_names, names):
        # Dense products of modest size: one BLAS thread is faster here, and on a busy machine
        # multi-threaded OpenBLAS makes the many small ADMM products 10-50x slower.
        with threadpool_limits(limits=1, user_api="blas"):
            return self._fit_design_inner(Z, target, lags, frame_names, names)

    def _fit_design_inner(self, Z, target, lags, frame_names, names):
        T, n = target.shape
        p = len(lags)
        n_coef = n * p + (1 if self.trend == "c" else 0)
        if T <= n_coef and self.penalty == "none":
            raise ValueError(f"{T} fitted rows cannot identify {n_coef} coefficients per equation "
                             f"({n} series x {p} lags{' + intercept' if self.trend == 'c' else ''}); "
                             "use fewer series or lags, more data, or a penalty")
        scheme = "central" if self.solver == "central" else _resolve_scheme(self)
        if self.trend == "c":
            z_mean, y_mean = Z.mean(axis=0), target.mean(axis=0)
            Zc, Yc = Z - z_mean, target - y_mean
        else:
            z_mean, y_mean = np.zeros(Z.shape[1]), np.zeros(n)
            Zc, Yc = Z, target
        # constant lag columns over the fitted rows (e.g. a row mask keeping one value per series)
        spread = np.max(np.abs(Zc), axis=0) if Zc.size else np.zeros(Z.shape[1])
        level = np.max(np.abs(Z), axis=0) if Z.size else np.zeros(Z.shape[1])
        flat = (spread == 0) | (spread <= CONSTANT_RTOL * level) | (spread < UNDERFLOW_LIMIT)
        if np.any(flat):
            bad = int(np.flatnonzero(flat)[0])
            raise ValueError(f"{label(names[bad // p])} is constant over the fitted rows at lag {lags[bad % p]}: "
                             "its coefficient is not identified")
        # each series divided by a power of two near its root mean square (exact): every solver sees
        # standardised series, whatever their units; coefficients map back as B[i p + q, j] d_j / d_i
        d = np.array([pow2(safe_rms(np.column_stack([Zc[:, i * p:(i + 1) * p], Yc[:, i]]))) for i in range(n)])
        d_col = np.repeat(d, p)
        ratio = d[None, :] / d_col[:, None]
        Zs, Ys = Zc / d_col, Yc / d
        Gfull = Zs.T @ Zs
        if not (self.penalty == "ridge" and self.alpha > 0):
            check_identified(Gfull, n, lags, names)
        self.lags_ = lags
        self.n_owners_ = n
        self.n_obs_ = T
        self.lambda_ = float(self.alpha) * T if self.penalty != "none" else 0.0
        self.owner_names_ = list(names) if (self.owner_names is not None or frame_names is not None) else [
            f"owner {i + 1}" for i in range(n)]
        lam = self.lambda_ if self.penalty != "none" else 0.0
        lasso_w = lam / np.outer(d, d) if self.penalty == "lasso" else None  # owner i's rows, target j
        ridge_w = lam / d ** 2 if self.penalty == "ridge" else None
        G = np.stack([Gfull[i * p:(i + 1) * p, i * p:(i + 1) * p] for i in range(n)])

        def to_data(B_int):
            return B_int * ratio

        if scheme == "central":
            B_std, self.trace_ = self._central(Zs, Ys, Gfull, lasso_w, ridge_w, p), None
            self.n_iter_, self.converged_ = 0, True
        elif scheme == "anderson":
            B_std, self.trace_ = run_anderson(
                Zs, Ys, G, lags=lags, penalty=self.penalty, lasso_w=lasso_w, ridge_w=ridge_w,
                max_iter=int(self.max_iter), tol=self.tol, atol=self._atol(), init=self.init,
                rng=as_generator(self.random_state), b1_scale=float(self.b1_scale), variant=self.variant,
                store_path=self.store_path, inner_tol=self.inner_tol, names=self.owner_names_, coef_to_data=to_data)
            self.n_iter_, self.converged_ = self.trace_.n_iter, self.trace_.converged
        else:
            lam_paper = (lasso_w[:, None, :] if self.penalty == "lasso" else ridge_w if self.penalty == "ridge"
                         else 0.0)
            B_std, self.trace_ = run_paper(
                Zs, Ys, G, lags=lags, penalty=self.penalty, lam=lam_paper, rho=float(self.rho),
                max_iter=int(self.max_iter), tol=self.tol, atol=self._atol(), init=self.init,
                rng=as_generator(self.random_state), u0_scale=float(self.u0_scale), b1_scale=float(self.b1_scale),
                variant=self.variant, coef_noise=float(self.coef_noise), message_noise=float(self.message_noise),
                noise_law=self.noise_law, noisy_continue=bool(self.noisy_continue), keep_values=int(self.keep_values),
                store_path=self.store_path, inner_tol=self.inner_tol, names=self.owner_names_, scales=d, scheme=scheme)
            self.n_iter_, self.converged_ = self.trace_.n_iter, self.trace_.converged
        B = to_data(B_std)
        if self.trace_ is not None and self.trend == "c":
            for i in range(n):
                self.trace_.log.add(self.trace_.n_iter, self.owner_names_[i], "central", "zbar_Ai B_Ai", (1, n),
                                    "owner i's lag means times its coefficients, for the intercepts", phase="final")
        self.scheme_ = scheme
        self.series_scale_ = d
        self.coef_owner_major_ = B
        self.coefs_ = coefs_from_owner_major(B, lags)
        self.intercept_ = y_mean - z_mean @ B if self.trend == "c" else np.zeros(n)
        self.z_mean_, self.y_mean_ = z_mean, y_mean
        self.design_ = (Zc, Yc)
        resid = Ys - Zs @ B_std
        dof = max(T - n_coef, 1)
        self.sigma_u_ = (resid.T @ resid / dof) * np.outer(d, d)
        self.convergence_message_ = None
        if self.trace_ is not None and self.tol is not None and not self.converged_:
            self.convergence_message_ = (
                f"The ADMM ({scheme} scheme) stopped after max_iter = {self.max_iter} iterations without meeting "
                f"Boyd's stopping rule (tol = {self.tol:g}, relative to the data's scale): the coefficients are "
                "not converged; raise max_iter")
            warnings.warn(self.convergence_message_, ConvergenceWarning, stacklevel=4)  # the caller of fit
        return self

    def _atol(self) -> float:
        if self.atol is not None:
            return float(self.atol)
        return self.tol / 100.0 if self.tol is not None else 0.0

    # ----------------------------------------------------------------------------- central
    def _central(self, Z, Y, G, lasso_w, ridge_w, p):
        """The pooled fit on standardised data: least squares, ridge with per-owner weights ridge_w (n,),
        LASSO with weights lasso_w (n, n) (owner i's coefficients in target j's equation)."""
        if self.penalty == "lasso" and lasso_w is not None and np.any(lasso_w > 0):
            thr = np.repeat(lasso_w, p, axis=0)  # (n p, n): one weight per coefficient
            B, _ = lasso_coordinate_descent(G, Z.T @ Y, thr, tol=self.inner_tol)
            return B
        if self.penalty == "ridge" and ridge_w is not None and np.any(ridge_w > 0):
            return linalg.solve(G + np.diag(np.repeat(ridge_w, p)), Z.T @ Y, assume_a="pos")
        B, *_ = linalg.lstsq(Z, Y, lapack_driver="gelsd")
        return B

    # ----------------------------------------------------------------------------- use
    def predict_design(self, Z) -> np.ndarray:
        """Fitted values for an owner-major design Z (rows x n p), uncentred scale."""
        check_is_fitted(self, "coefs_")
        return np.asarray(Z, dtype=float) @ self.coef_owner_major_ + self.intercept_

    def forecast(self, Y_recent, steps: int = 1) -> np.ndarray:
        """Forecast ``steps`` ahead from the last max(lags) rows of ``Y_recent`` (as statsmodels'
        ``VARResults.forecast(y, steps)``). Returns (steps, n)."""
        check_is_fitted(self, "coefs_")
        L = self.coefs_.shape[0]
        Y_recent = check_array(Y_recent, dtype=float, ensure_min_samples=L, input_name="Y_recent")
        if Y_recent.shape[1] != self.n_owners_:
            raise ValueError(f"Y_recent has {Y_recent.shape[1]} series, the model {self.n_owners_}")
        if not isinstance(steps, Integral) or steps < 1:
            raise ValueError(f"steps must be a positive int, got {steps!r}")
        hist = list(Y_recent[-L:])
        out = np.empty((steps, self.n_owners_))
        for h in range(steps):
            y = self.intercept_.copy()
            for ell in self.lags_:
                y += self.coefs_[ell - 1] @ hist[-ell]
            out[h] = y
            hist.append(y)
        return out


# =============================================================================================
# 5. Simulated VAR processes (spec 6.1) and macrodata (8.2)
# =============================================================================================
def _row_form_to_coefs(B_rows: list) -> np.ndarray:
    return np.stack([np.asarray(b, dtype=float).T for b in B_rows])


def var22_coefs() -> np.ndarray:
    """The paper's VAR_2(2) in statsmodels layout (2, 2, 2): B^(1) = [[.5, .3], [.3, .75]],
    B^(2) = [[-.3, -.05], [-.1, -.4]] in row form (row = source)."""
    return _row_form_to_coefs([[[0.5, 0.3], [0.3, 0.75]], [[-0.3, -0.05], [-0.1, -0.4]]])


def var10_3_coefs() -> np.ndarray:
    """The spec's stand-in for the paper's VAR_10(3) (Fig. 4 is an image), statsmodels layout
    (3, 10, 10): own lags .5, -.2 (and .1 at lag 3 for odd owners), 26 cross terms; targets
    8-10 are pure AR. 42 nonzeros of 300."""
    B = np.zeros((3, 10, 10))  # row form B[lag][source, target], 0-based
    for i in range(10):
        B[0, i, i] = 0.5
        B[1, i, i] = -0.2
    for i in (1, 3, 5, 7, 9):
        B[2, i - 1, i - 1] = 0.1
    cross = {1: [(2, 1, .40), (3, 1, .30), (4, 2, .25)], 2: [(1, 1, .20), (5, 1, .15)],
             3: [(2, 1, .20), (6, 2, .15)], 4: [(1, 1, .15), (7, 1, .20), (8, 3, .15)],
             5: [(9, 1, .20), (3, 2, .15)], 6: [(10, 1, .25), (5, 1, .15)],
             7: [(8, 1, .20), (9, 2, .15), (6, 3, .10)]}
    for target, terms in cross.items():
        for source, lag, value in terms:
            B[lag - 1, source - 1, target - 1] = value
    return np.stack([B[q].T for q in range(3)])


@_one_blas_thread
def random_stationary_var(p: int, d: int, random_state=None, ar_scale: float = 1.0) -> np.ndarray:
    """A random stationary VAR_d(p) by Ansley & Kohn (1986), as gmvarkit's ``random_coefmats2``
    (spec 6.1). Returns statsmodels-layout coefficients (p, d, d) (column convention A_k)."""
    rng = as_generator(random_state)
    I = np.eye(d)
    P = []
    for _ in range(p):
        A = rng.normal(0.0, ar_scale, (d, d))
        Lc = linalg.cholesky(I + A @ A.T, lower=True)
        P.append(linalg.solve_triangular(Lc, A, lower=True))
    L = Ls = Sigma = Sigmas = I.copy()
    phi, phis = {}, {}
    for s in range(p):
        phi[s + 1, s + 1] = L @ P[s] @ np.linalg.inv(Ls)
        phis[s + 1, s + 1] = Ls @ P[s].T @ np.linalg.inv(L)
        for k in range(1, s + 1):
            phi[s + 1, k] = phi[s, k] - phi[s + 1, s + 1] @ phis[s, s - k + 1]
            phis[s + 1, k] = phis[s, k] - phis[s + 1, s + 1] @ phi[s, s - k + 1]
        if s < p - 1:
            Sigma_new = Sigma - phi[s + 1, s + 1] @ Sigmas @ phi[s + 1, s + 1].T
            Sigmas = Sigmas - phis[s + 1, s + 1] @ Sigma @ phis[s + 1, s + 1].T
            Ls = linalg.cholesky(Sigmas, lower=True)
            Sigma = Sigma_new
            L = linalg.cholesky(Sigma, lower=True)
    return np.stack([phi[p, k] for k in range(1, p + 1)])


def companion_radius(coefs: np.ndarray) -> float:
    """Spectral radius of the companion matrix (stationary iff < 1)."""
    coefs = np.asarray(coefs, dtype=float)
    L, n, _ = coefs.shape
    comp = np.zeros((n * L, n * L))
    comp[:n, :] = np.hstack(list(coefs))
    if L > 1:
        comp[n:, :-n] = np.eye(n * (L - 1))
    return float(np.max(np.abs(np.linalg.eigvals(comp))))


def simulate_var(coefs: np.ndarray, T: int, intercept=None, noise_cov=None, burn: int = 1000,
                 random_state=None) -> np.ndarray:
    """Simulate y_t = c + sum_l coefs[l-1] y_{t-l} + eps_t, eps_t ~ N(0, noise_cov) (default I).

    Returns (T, n) after ``burn`` discarded steps (spec 6.1: burn-in 1000).
    """
    coefs = np.asarray(coefs, dtype=float)
    L, n, _ = coefs.shape
    rng = as_generator(random_state)
    total = int(T) + int(burn) + L
    eps = rng.standard_normal((total, n))
    if noise_cov is not None:
        eps = eps @ linalg.cholesky(np.asarray(noise_cov, dtype=float), lower=True).T
    c = np.zeros(n) if intercept is None else np.asarray(intercept, dtype=float)
    y = np.zeros((total, n))
    lags = [ell for ell in range(1, L + 1) if np.any(coefs[ell - 1])]
    At = {ell: coefs[ell - 1].T for ell in lags}
    for t in range(L, total):
        v = c + eps[t]
        for ell in lags:
            v = v + y[t - ell] @ At[ell]
        y[t] = v
    return y[-int(T):]


def macrodata_growth(demean: bool = True) -> pd.DataFrame:
    """statsmodels macrodata: 100 diff log(realgdp, realcons, realinv), 202 quarters (spec 8.2)."""
    from statsmodels.datasets import macrodata

    d = macrodata.load_pandas().data
    y = 100.0 * np.diff(np.log(d[["realgdp", "realcons", "realinv"]].to_numpy()), axis=0)
    if demean:
        y = y - y.mean(axis=0)
    idx = pd.PeriodIndex.from_fields(year=d["year"].astype(int).to_numpy()[1:],
                                     quarter=d["quarter"].astype(int).to_numpy()[1:], freq="Q")
    return pd.DataFrame(y, columns=["gdp", "consumption", "investment"], index=idx)


# =============================================================================================
# 6. Defences: additive noise (spec 2.1) and linear transformations (2.2)
# =============================================================================================
def noise_sd(law: str, b: float) -> float:
    """Standard deviation of the paper's noise laws: N(0, b^2), L(0, b), U(-b, b)."""
    return {"gaussian": b, "laplace": math.sqrt(2.0) * b, "uniform": b / math.sqrt(3.0)}[law]


def _check_range(public_range) -> tuple[float, float]:
    """(lo, hi) as floats with lo < hi, both finite (ValueError otherwise)."""
    try:
        lo, hi = (float(v) for v in public_range)
    except (TypeError, ValueError):
        raise ValueError(f"public_range must be a pair (lo, hi) of numbers, got {public_range!r}") from None
    if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
        raise ValueError(f"public_range must have finite lo < hi, got ({lo:g}, {hi:g})")
    return lo, hi


def range_width(public_range) -> float:
    """Δ = hi - lo of a declared range (lo, hi): the sensitivity of one clipped value."""
    lo, hi = _check_range(public_range)
    return hi - lo


def clip_to_range(Y, public_range) -> np.ndarray:
    """Y (any shape) clipped into [lo, hi] (a new float array)."""
    lo, hi = _check_range(public_range)
    return np.clip(np.asarray(Y, dtype=float), lo, hi)


def add_noise(Y, law: str, b: float, random_state=None, *, public_range=None) -> np.ndarray:
    """The noise defence: every series value is clipped into the public range, then noise is added once
    per value, y~ = clip(y, lo, hi) + w (spec 2.1); Z and Y are then built from y~.

    Parameters
    ----------
    Y : array (T, n) (any shape): the owners' values on the scale the range is declared on (raw
        values, never values centred on a private mean).
    law : "laplace" (L(0, b)), "gaussian" (N(0, b²)) or "uniform" (U(-b, b)).
    b : noise scale >= 0.
    random_state : None (fresh OS entropy: the default for a release) or a known seed / generator
        (then the release is not proven; see :func:`engine.privacy.noise.noise_generator`).
    public_range : (lo, hi) declared public. The clipping happens here, inside the release, so one
        value changes the output by at most Δ = hi - lo whatever the data (a value in kW against a
        range declared in [0, 1] is clipped to 1). None: no clipping (the paper's pipeline): then
        no finite ε holds for unbounded values.

    Returns
    -------
    array of Y's shape: the noisy (clipped) values. Any centring is post-processing of this array.
    """
    Y = np.asarray(Y, dtype=float)
    if public_range is not None:
        Y = clip_to_range(Y, public_range)
    if not (b >= 0 and math.isfinite(b)):
        raise ValueError("noise scale b must be a finite number >= 0")
    if b == 0:
        return Y.copy()
    rng, _ = noise_generator(random_state)
    return Y + _noise(rng, law, b, Y.shape)


def naive_noisy_design(Y, lags, law: str, b: float, random_state=None, *,
                       public_range=None) -> tuple[np.ndarray, np.ndarray]:
    """The literal W_1, W_2 of (72): independent noise on every entry of Z and of the targets.

    Each series value then appears p + 1 times with independent noise, and an attacker who
    averages the copies cuts the noise sd by sqrt(p + 1) (spec 2.1): offered only as "naive".
    Values are clipped into ``public_range`` first (as in :func:`add_noise`).
    """
    Y = np.asarray(Y, dtype=float) if public_range is None else clip_to_range(Y, public_range)
    Z, target = lagged_design(Y, lags)
    rng, _ = noise_generator(random_state)
    return Z + _noise(rng, law, b, Z.shape), target + _noise(rng, law, b, target.shape)


DP_STATEMENTS = {
    "laplace": ("Laplace noise once per value is ε-differentially private per value only when every value is "
                "clipped into a range declared public and b is calibrated to its width (ε = Δ/b, Δ = hi − lo). "
                "That protects one value (event level); a whole series of T values composes to ε = T·Δ/b, "
                "which is no meaningful guarantee."),
    "gaussian": ("Gaussian noise once per value is (ε, δ)-DP per value when the values are clipped into a range "
                 "declared public and σ = b is calibrated to its width Δ; over a whole series of T values the T "
                 "releases compose to one Gaussian mechanism with sensitivity Δ·√T."),
    "uniform": ("Uniform noise U(-b, b) is not differentially private for any ε: a value shifted by more than "
                "the noise width produces outputs impossible under the other value."),
    "naive": ("Independent noise on every entry of Z and Y: each value is released p + 1 times, so averaging "
              "the copies cuts the noise by √(p + 1); the per-value ε is (p + 1) times the single-copy ε."),
    "transform": ("Multiplicative and linear transformations are not differentially private: they hide the data "
                  "only as long as the transformation matrix stays secret, and known records reveal it."),
    "admm_noise": ("Noise on ADMM's shared coefficients or messages is not calibrated to any sensitivity here "
                   "and carries no DP guarantee; the attacks below still recover the data (Prop. 4)."),
}

#: The ledger caveat of a range the user did not declare public.
RANGE_NOT_DECLARED = ("not proven: the range Δ is not declared public (declare it only when it comes from the "
                      "plant's rating, not from the data)")
#: Units of privacy of the noise defence.
PER_VALUE_UNIT = "one value of one owner's series (e.g. one hour)"
PER_SERIES_UNIT = "one owner's whole series"


def noise_guarantee(law: str, b: float, sensitivity: float, T: int, delta: float = 1e-5,
                    sensitivity_source: str = "public", copies: int = 1) -> dict:
    """The ε of adding noise of scale b once per value (``copies`` times: naive), for a given Δ.

    sensitivity : Δ, the width of the range one value can take (hi - lo of the declared range
    the values are clipped into; the paper's observed range in its own numbers, not a proof).
    Returns per value and per series (T values, one owner's whole series) epsilons; uniform
    noise: no guarantee. The page's status comes from :func:`defence_ledger`, not from here.
    """
    out = {"law": law, "b": b, "sensitivity": sensitivity, "sensitivity_source": sensitivity_source,
           "T": T, "copies": copies, "delta": None, "eps_per_value": math.inf, "eps_per_series": math.inf,
           "proven": sensitivity_source == "public", "statement": DP_STATEMENTS[law]}
    if b <= 0 or law == "uniform":
        out["proven"] = False
        return out
    if law == "laplace":
        eps1 = copies * sensitivity / b
        out.update(eps_per_value=eps1, eps_per_series=T * eps1, delta=0.0)
    else:
        # c copies of a Gaussian with sd b compose to one Gaussian with sensitivity Δ sqrt(c)
        out.update(eps_per_value=gaussian_epsilon(b, delta, sensitivity * math.sqrt(copies)),
                   eps_per_series=gaussian_epsilon(b, delta, sensitivity * math.sqrt(copies * T)), delta=delta)
    return out


def _defence_release(law: str, b: float, sensitivity: float, delta: float, name: str, source: str,
                     note: str) -> Release:
    if law == "laplace":
        return Release(name=name, mechanism="laplace", sensitivity=sensitivity, scale=b, epsilon=sensitivity / b,
                       delta=0.0, sensitivity_source=source, note=note)
    return Release.gaussian(name, b, sensitivity, delta, sensitivity_source=source, note=note)


@dataclass
class DefenceLedger:
    """The guarantee of the noise defence, per value and per owner's series, from explicit declarations.

    Attributes
    ----------
    law, b, public_range (lo, hi) or None, declared_public, T (values per owner's series),
    n_owners, delta, copies (releases of each value: 1, or p + 1 / p + 2 for the naive design).
    per_value : PrivacyLedger, event level: neighbours differ in one value of one owner (moved
        anywhere, clipping keeps it in the range); replace-one, so T is public.
    per_series : PrivacyLedger, one owner's whole series replaced: the T per-value releases
        composed into one mechanism (Laplace: L1 sensitivity T·c·Δ; Gaussian: L2 Δ√(cT)).
        This is the fit's ledger (``ledger``): its total is the whole-series ε.
    eps_per_value, eps_per_series : the two ε (inf when nothing is private).
    """

    law: str
    b: float
    public_range: tuple | None
    declared_public: bool
    T: int
    n_owners: int
    delta: float
    copies: int
    per_value: PrivacyLedger
    per_series: PrivacyLedger
    eps_per_value: float
    eps_per_series: float

    @property
    def ledger(self) -> PrivacyLedger:
        """The fit's ledger: one owner's whole series (the total is not a per-value number)."""
        return self.per_series

    @property
    def status(self) -> str:
        """ "proven", "not proven" or "no privacy" (from the ledger)."""
        return self.per_series.status

    @property
    def proven(self) -> bool:
        return self.status == "proven"

    def reasons_not_proven(self) -> list:
        """Why the guarantee is not proven (the undeclared range stated once, with what to do)."""
        if self.status == "no privacy":
            return [self.no_privacy_reason()]
        reasons = self.per_series.reasons_not_proven()
        if RANGE_NOT_DECLARED in reasons:  # the generic "sensitivity from the data" says the same thing
            reasons = [r for r in reasons if not r.startswith("not proven: sensitivities computed")]
        return reasons

    def no_privacy_reason(self) -> str:
        if self.law not in ("laplace", "gaussian"):
            return f"{self.law} noise is not differentially private (ε = ∞)"
        if not self.b > 0:
            return "no noise (b = 0): ε = ∞"
        if self.public_range is None:
            return "values are not clipped into a range, so one value can move the output without bound (ε = ∞)"
        return ""

    def delta_text(self) -> str:
        return "" if self.law == "laplace" else f" at δ = {self.delta:.1e}"

    def headline(self) -> str:
        """One sentence: ε per value (event level) and for one owner's whole series, with the status."""
        if self.status == "no privacy":
            return f"No privacy guarantee: {self.no_privacy_reason()}."
        copies = f" (each value released {self.copies} times)" if self.copies > 1 else ""
        text = (f"ε = {self.eps_per_value:.4g} per value (event level: protects {PER_VALUE_UNIT}){copies}; "
                f"ε = {self.eps_per_series:.4g} for {PER_SERIES_UNIT} ({self.T} values composed)"
                f"{self.delta_text()}. ")
        if self.proven:
            return text + ("Proven: the values are clipped into the declared public range and the noise is fresh. "
                           "The per-series ε is the one that protects an owner's data as a whole.")
        reasons = "; ".join(r.removeprefix("not proven: ") for r in self.reasons_not_proven())
        return text + f"**Not proven**: {reasons}."

    def to_frame(self) -> pd.DataFrame:
        """Two rows (per value, per series): unit, ε, δ, status."""
        d = 0.0 if self.law == "laplace" or self.status == "no privacy" else self.delta
        return pd.DataFrame({"unit of privacy": [PER_VALUE_UNIT, f"{PER_SERIES_UNIT} ({self.T} values)"],
                             "epsilon": [self.eps_per_value, self.eps_per_series], "delta": [d, d],
                             "status": [self.per_value.status, self.per_series.status]})


def defence_ledger(law: str, b: float, public_range, declared_public: bool, T: int, n_owners: int,
                   seed_known: bool, *, delta: float = 1e-5, copies: int = 1) -> DefenceLedger:
    """The ledger of the noise defence, decided from explicit declarations only.

    Parameters
    ----------
    law : "laplace", "gaussian" (DP when clipped) or "uniform" (never DP).
    b : the noise scale applied.
    public_range : (lo, hi) the values were clipped into, or None (no clipping: ε = ∞).
    declared_public : the user's declaration that the range is public (the plant's rating, not
        read off the data). Nothing here infers it; without it the ledger says "not proven".
    T : values per owner's series (rows released). n_owners : series released.
    seed_known : the noise came from a known seed (``noise_generator``'s flag): not proven.
    delta : δ of the Gaussian law. copies : releases of each value (naive design: p + 1 or more).

    Returns
    -------
    :class:`DefenceLedger` (per value and per series ledgers, neighbouring "replace").
    """
    T, n_owners, copies = int(T), int(n_owners), int(copies)
    per_value = PrivacyLedger(neighbouring="replace")
    per_series = PrivacyLedger(neighbouring="replace")
    inf = math.inf
    out = DefenceLedger(law, float(b), None if public_range is None else _check_range(public_range),
                        bool(declared_public), T, n_owners, float(delta), copies, per_value, per_series, inf, inf)
    if law not in ("laplace", "gaussian") or not b > 0 or public_range is None:
        return out
    lo, hi = out.public_range
    width = hi - lo
    source = "public" if declared_public else "data"
    # names without commas: a release field names its ledger source by a comma-separated list
    noise = f"Laplace noise b = {b:.4g}" if law == "laplace" else f"Gaussian noise σ = {b:.4g}"
    times = f" ({copies} copies)" if copies > 1 else ""
    v_sens = copies * width if law == "laplace" else width * math.sqrt(copies)
    s_sens = T * copies * width if law == "laplace" else width * math.sqrt(copies * T)
    per_value.add(_defence_release(
        law, b, v_sens, delta, f"each value of the {n_owners} series clipped to [{lo:.4g} .. {hi:.4g}] + {noise}{times}",
        source, f"event level: {PER_VALUE_UNIT}; one value replaced anywhere, clipping keeps it in the range"))
    per_series.add(_defence_release(
        law, b, s_sens, delta, f"one owner's series of {T} values each clipped to [{lo:.4g} .. {hi:.4g}] + {noise}{times}",
        source, f"{PER_SERIES_UNIT} replaced: the {T} per-value releases composed (sensitivity "
                f"{'T·Δ in L1' if law == 'laplace' else 'Δ·√T in L2'}); the {n_owners} owners' series are disjoint"))
    for led in (per_value, per_series):
        if not declared_public:
            led.add_caveat(RANGE_NOT_DECLARED)
        if seed_known:
            led.add_caveat(SEED_KNOWN_CAVEAT)
    out.eps_per_value = per_value.entries[0].epsilon
    out.eps_per_series = per_series.entries[0].epsilon
    return out


def noise_ledger(law: str, b: float, sensitivity: float, n_series: int, delta: float = 1e-5,
                 sensitivity_source: str = "public") -> PrivacyLedger:
    """The per-value (event-level) ledger for a range of width ``sensitivity`` (kept for notebooks;
    the page uses :func:`defence_ledger`, which also states the whole-series guarantee)."""
    return defence_ledger(law, b, (0.0, float(sensitivity)), sensitivity_source == "public", 1, n_series,
                          seed_known=False, delta=delta).per_value


@dataclass
class NoiseRelease:
    """One run of the noise defence: the released noisy series and its ledger.

    noisy : (T, n) clip + noise on the raw scale: the DP release (centring comes after, as
        post-processing). ledger : :class:`DefenceLedger`. n_outside : values outside the range
        before clipping (an exact private count: owner's workbook only, never a release).
    """

    noisy: np.ndarray
    defence: DefenceLedger
    n_outside: int
    naive: bool = False


def noise_defence(Y, law: str, b: float, *, public_range=None, declared_public: bool = False, delta: float = 1e-5,
                  random_state=None, copies: int = 1) -> NoiseRelease:
    """Run the noise defence on Y (T x n, raw scale): clip into ``public_range``, add fresh noise, and
    state the guarantee (:func:`defence_ledger`; ``random_state`` other than None or a fresh
    generator makes it not proven)."""
    Y = np.asarray(Y, dtype=float)
    rng, seed_known = noise_generator(random_state)
    n_outside = 0 if public_range is None else int(np.sum((Y < _check_range(public_range)[0])
                                                          | (Y > _check_range(public_range)[1])))
    noisy = add_noise(Y, law, b, rng, public_range=public_range)
    led = defence_ledger(law, b, public_range, declared_public, Y.shape[0], Y.shape[1], seed_known, delta=delta,
                         copies=copies)
    return NoiseRelease(noisy, led, n_outside)


def _random_orthogonal(rng, size: int) -> np.ndarray:
    Q, R = np.linalg.qr(rng.standard_normal((size, size)))
    return Q * np.sign(np.diag(R))


@_one_blas_thread
def orthogonal_rows_demo(Z, target, lags, *, rows_kept: int | None = None, penalty="none", alpha=0.0,
                         block: int = 256, random_state=None) -> dict:
    """Records-split transformation (5)/(6): fit on (M Z, M Y) instead of (Z, Y).

    Z (T x n p owner-major), target (T x n): a design from :func:`lagged_design` (centred when
    the model has an intercept). rows_kept=None: M orthogonal (T x T; block-diagonal with
    random orthogonal blocks after a random row permutation, orthogonal all the same): LS,
    ridge and LASSO are all unchanged because M'M = I. rows_kept=k < T: a random k x T
    Gaussian compression (Zhou et al.), which changes the fit (same lambda). In a VAR
    (features split) no party can apply M, since each row mixes owners: a centralised what-if.
    """
    Z = np.asarray(Z, dtype=float)
    target = np.asarray(target, dtype=float)
    T = Z.shape[0]
    rng = as_generator(random_state)
    if rows_kept is None:
        perm = rng.permutation(T)
        MZ, MY = np.empty_like(Z), np.empty_like(target)
        for start in range(0, T, block):
            rows = perm[start:start + block]
            Q = _random_orthogonal(rng, len(rows))
            MZ[start:start + len(rows)] = Q @ Z[rows]
            MY[start:start + len(rows)] = Q @ target[rows]
    else:
        k = int(rows_kept)
        if not 1 <= k <= T:
            raise ValueError(f"rows_kept must be in [1, {T}]")
        M = rng.standard_normal((k, T)) / math.sqrt(k)
        MZ, MY = M @ Z, M @ target
    plain = CollaborativeVAR(lags, penalty=penalty, alpha=alpha, trend="n").fit_design(Z, target)
    # the same lambda on the transformed rows: alpha is per row
    masked_alpha = alpha * T / MZ.shape[0] if penalty != "none" else alpha
    masked = CollaborativeVAR(lags, penalty=penalty, alpha=masked_alpha, trend="n").fit_design(MZ, MY)
    return {"coef_plain": plain.coef_owner_major_, "coef_transformed": masked.coef_owner_major_,
            "max_abs_difference": float(np.max(np.abs(plain.coef_owner_major_ - masked.coef_owner_major_)))}


@_one_blas_thread
def post_multiplication_demo(Z, target, lags, *, penalty="none", alpha=0.0, random_state=None) -> dict:
    """Features-split transformation (7)/(8): owner i shares Z_Ai N_i (N_i p x p invertible) and
    c_i y_i; regressing Y N_y on Z N_z gives B' = N_z^-1 B N_y (N_z = blockdiag(N_i),
    N_y = diag(c_i)) for least squares. Recovering B needs N_z and N_y, i.e. every owner's
    secret (exposure). A penalty breaks the identity (the penalty acts on B', not on B).
    Returns B, B', B recovered with the N's, and the identity's error."""
    lags_t = normalise_lags(lags)
    Z = np.asarray(Z, dtype=float)
    target = np.asarray(target, dtype=float)
    n = target.shape[1]
    p = len(lags_t)
    rng = as_generator(random_state)
    blocks = [rng.normal(size=(p, p)) + 2.0 * np.eye(p) for _ in range(n)]
    Nz = linalg.block_diag(*blocks)
    ny = rng.uniform(0.5, 2.0, n) * rng.choice([-1.0, 1.0], n)
    plain = CollaborativeVAR(lags_t, penalty=penalty, alpha=alpha, trend="n").fit_design(Z, target)
    masked = CollaborativeVAR(lags_t, penalty=penalty, alpha=alpha, trend="n").fit_design(Z @ Nz, target * ny)
    B_prime = masked.coef_owner_major_
    B_back = Nz @ B_prime / ny
    return {"coef_plain": plain.coef_owner_major_, "coef_transformed": B_prime, "coef_recovered": B_back,
            "N_z": Nz, "N_y": np.diag(ny),
            "identity_error": float(np.max(np.abs(B_prime - np.linalg.solve(Nz, plain.coef_owner_major_) * ny))),
            "max_abs_difference": float(np.max(np.abs(B_back - plain.coef_owner_major_)))}


# =============================================================================================
# 7. Forecast evaluation (spec 6.3)
# =============================================================================================
def var_forecasts(model: CollaborativeVAR, Y_inputs: np.ndarray, target_rows: np.ndarray, horizon: int = 1) -> np.ndarray:
    """h-step forecasts of the rows ``target_rows`` of Y from inputs up to row t - h (rolling
    origin, fixed coefficients, recursive for h > 1). Returns (len(target_rows), n)."""
    Y_inputs = np.asarray(Y_inputs, dtype=float)
    L = model.coefs_.shape[0]
    rows = np.asarray(target_rows)
    if rows.size and rows.min() - horizon - L + 1 < 0:
        raise ValueError("a forecast target is too early: it needs max(lags) + horizon - 1 earlier rows")
    # buffer[:, s] holds y at time (t - horizon - L + 1 + s) for each target t
    n = Y_inputs.shape[1]
    width = L + horizon
    buf = np.empty((rows.size, width, n))
    for s in range(L):
        buf[:, s, :] = Y_inputs[rows - horizon - L + 1 + s]
    for h in range(horizon):
        pos = L + h
        yhat = np.broadcast_to(model.intercept_, (rows.size, n)).copy()
        for ell in model.lags_:
            yhat += buf[:, pos - ell, :] @ model.coefs_[ell - 1].T
        buf[:, pos, :] = yhat
    return buf[:, -1, :]


@_one_blas_thread
def local_ar_forecasts(Y_train: np.ndarray, Y_inputs: np.ndarray, target_rows, lags, trend="c",
                       horizon: int = 1, row_mask=None) -> tuple[np.ndarray, list]:
    """Each owner's own AR on its own lags (LS on clean training data): forecasts and models."""
    Y_train = np.asarray(Y_train, dtype=float)
    preds, models = [], []
    for i in range(Y_train.shape[1]):
        m = CollaborativeVAR(lags, trend=trend).fit(Y_train[:, [i]], row_mask=row_mask)
        preds.append(var_forecasts(m, np.asarray(Y_inputs, dtype=float)[:, [i]], target_rows, horizon)[:, 0])
        models.append(m)
    return np.column_stack(preds), models


@dataclass
class ForecastEvaluation:
    """Per-owner scores of one forecast run (spec 6.3). ``table`` columns: owner, mae_var,
    rmse_var, mae_ar, rmse_ar, mae_gain_pct, rmse_gain_pct (100 (1 - err_VAR/err_AR))."""

    table: pd.DataFrame
    actual: np.ndarray
    var_pred: np.ndarray
    ar_pred: np.ndarray
    target_rows: np.ndarray
    model: CollaborativeVAR
    release: "NoiseRelease | None" = None  # the noise defence's release, when one ran

    @property
    def median_mae_gain(self) -> float:
        return float(np.median(self.table["mae_gain_pct"]))

    @property
    def median_rmse_gain(self) -> float:
        return float(np.median(self.table["rmse_gain_pct"]))

    def count(self, column="mae_gain_pct", at_least=None, below=None) -> int:
        v = self.table[column].to_numpy()
        if at_least is not None:
            return int(np.sum(v >= at_least))
        return int(np.sum(v < below))


def _scores(actual, pred, score_mask):
    err = pred - actual
    if score_mask is not None:
        err = err[score_mask]
    return np.mean(np.abs(err), axis=0), np.sqrt(np.mean(err**2, axis=0))


@_one_blas_thread
def evaluate_forecasts(Y, lags, train_end: int, *, model: CollaborativeVAR | None = None, Y_fit=None,
                       Y_inputs=None, test_rows=None, score_mask=None, fit_mask=None, horizon: int = 1,
                       ar_trend=None, ar=None, owner_names=None) -> ForecastEvaluation:
    """Fit on rows [0, train_end) and score h-step forecasts of the test rows (spec 6.3).

    Y : clean series (T_total x n), the targets scored. Y_fit : the data the VAR is fitted
    on (default Y; e.g. noisy copies). Y_inputs : the covariates used at forecast time
    (default Y_fit: "noisy inputs"; pass Y for "clean inputs"). ``model``: an unfitted
    CollaborativeVAR (default central LS, trend "c"). score_mask : boolean (len(test_rows),)
    rows that count (solar: target hour in daylight at all sites). fit_mask : boolean
    (T_total,) training rows whose targets are fitted (default all). AR: each owner's LS on its
    own lags, fitted on the same clean training rows (reusable via ``ar=(pred, models)``).
    """
    Y = np.asarray(Y, dtype=float)
    lags = normalise_lags(lags)
    Y_fit = Y if Y_fit is None else np.asarray(Y_fit, dtype=float)
    Y_inputs = Y_fit if Y_inputs is None else np.asarray(Y_inputs, dtype=float)
    L = max(lags)
    if test_rows is None:
        test_rows = np.arange(max(train_end, L + horizon - 1), Y.shape[0])
    test_rows = np.asarray(test_rows)
    model = CollaborativeVAR(lags) if model is None else model
    train_mask = None if fit_mask is None else np.asarray(fit_mask, dtype=bool)[:train_end]
    model.fit(Y_fit[:train_end], row_mask=train_mask)
    var_pred = var_forecasts(model, Y_inputs, test_rows, horizon)
    trend = ar_trend or model.trend
    ar_pred = ar[0] if ar is not None else local_ar_forecasts(Y[:train_end], Y, test_rows, lags, trend, horizon,
                                                              row_mask=train_mask)[0]
    actual = Y[test_rows]
    mae_v, rmse_v = _scores(actual, var_pred, score_mask)
    mae_a, rmse_a = _scores(actual, ar_pred, score_mask)
    names = owner_names or getattr(model, "owner_names_", None) or [f"owner {i + 1}" for i in range(Y.shape[1])]
    table = pd.DataFrame({"owner": names, "mae_var": mae_v, "rmse_var": rmse_v, "mae_ar": mae_a, "rmse_ar": rmse_a,
                          "mae_gain_pct": 100.0 * (1.0 - mae_v / mae_a),
                          "rmse_gain_pct": 100.0 * (1.0 - rmse_v / rmse_a)})
    return ForecastEvaluation(table, actual, var_pred, ar_pred, test_rows, model)


@dataclass
class SolarPanel:
    """Solar series prepared as spec 6.3: centred per site, train/test split, score mask."""

    Y: np.ndarray  # centred (night 0 before centring)
    raw: np.ndarray
    means: np.ndarray
    index: pd.Index
    sites: list
    train_end: int
    test_rows: np.ndarray
    score_mask: np.ndarray
    daylight: np.ndarray
    fit_mask: np.ndarray  # (T_total,) rows whose target hour is daylight at all sites


def prepare_solar(y: pd.DataFrame, daylight: pd.DataFrame | np.ndarray | None = None, *, train_end=None,
                  lags=(1, 2, 24), horizon: int = 1) -> SolarPanel:
    """Spec 6.3 for the solar series: clock-time lags with night = 0, each site centred on its
    own training daytime mean, score the test rows whose target hour is daylight at all sites.
    [ours] The fits use the training rows chosen the same way (``fit_mask``); this reproduces
    the spec's checked numbers (fitting night rows too makes the AR baseline weaker).

    y : (T x n) normalised output, time-indexed. daylight : same shape booleans; default
    ``y > 0`` (the sample file holds 0 exactly at night). train_end : a time stamp (rows
    before it train) or a row count; default the spec's 2012-02-01 when inside the data,
    else 2/3 of the rows.
    """
    raw = y.to_numpy(dtype=float)
    day = (raw > 0) if daylight is None else np.asarray(daylight, dtype=bool)
    if day.shape != raw.shape:
        raise ValueError("daylight must have the shape of y")
    T_total = raw.shape[0]
    if train_end is None:
        cut = pd.Timestamp("2012-02-01")
        if isinstance(y.index, pd.DatetimeIndex) and y.index[0] < cut < y.index[-1]:
            train_end = int(np.searchsorted(y.index, cut))
        else:
            train_end = int(round(T_total * 2 / 3))
    elif not isinstance(train_end, (Integral, np.integer)):
        train_end = int(np.searchsorted(y.index, pd.Timestamp(train_end)))
    L = max(normalise_lags(lags))
    if not (L + 10 < train_end < T_total - 1):
        raise ValueError(f"the training period ({train_end} rows) must leave rows to fit and to test")
    night0 = np.where(day, raw, 0.0)
    means = np.array([night0[:train_end][day[:train_end, j], j].mean() if day[:train_end, j].any()
                      else night0[:train_end, j].mean() for j in range(raw.shape[1])])
    Yc = night0 - means
    test_rows = np.arange(max(train_end, L + horizon - 1), T_total)
    all_day = day.all(axis=1)
    score_mask = all_day[test_rows]
    return SolarPanel(Yc, raw, means, y.index, [str(c) for c in y.columns], train_end, test_rows, score_mask, day,
                      all_day)


# =============================================================================================
# 8. Defences compared on the same forecasts
# =============================================================================================
DEFENCES = {
    "none": "No defence (exact collaborative VAR)",
    "laplace": "Laplace noise on every value, L(0, b)",
    "gaussian": "Gaussian noise on every value, N(0, b²)",
    "uniform": "Uniform noise on every value, U(-b, b)",
    "naive_laplace": "Naive: independent Laplace noise on every entry of Z and Y",
    "coef_noise": "ADMM with noise on the shared coefficients (73), sd b",
    "message_noise": "ADMM with noise on every message (74), sd b",
    "orthogonal_rows": "Orthogonal row mixing M (T x T), records-split transformation (6)",
    "compressed_rows": "Row compression M (k x T, k = T/2), Zhou et al.",
    "post_multiplication": "Post-multiplication Z N_z, Y N_y (features split, (8)), inverted with the N's",
}


def _admm_model(lags, params, **extra):
    kw = dict(solver="admm", tol=None, max_iter=int(params.get("max_iter", 50)))
    kw.update({k: v for k, v in params.items() if k in ("penalty", "alpha", "trend", "rho", "init", "variant",
                                                      "random_state")})
    kw.update(extra)
    return CollaborativeVAR(lags, store_path=False, **kw)


@_one_blas_thread
def defence_comparison(Y, lags, train_end: int, defence: str, strength: float, *, params=None, score_mask=None,
                       test_rows=None, fit_mask=None, eval_inputs: str = "noisy", random_state=None, ar=None,
                       owner_names=None, public_range=None, declared_public: bool = False,
                       delta: float = 1e-5) -> ForecastEvaluation:
    """Forecasts of one defence at one strength on the same test rows (spec 2, 4.3, 6.3).

    Y : (T_total x n) the owners' values on the raw scale the public range is declared on (never
    centred on a private mean: centring is the model's intercept, fitted on the noisy values).
    params: CollaborativeVAR settings (penalty, alpha, trend, rho, max_iter, ...). Noise on the
    data (laplace, gaussian, uniform, naive_laplace) is :func:`noise_defence`: clip into
    ``public_range``, fresh noise (``random_state=None``), then the VAR is fitted by the central
    solver, which equals the ADMM fit (spec 4.4); the result's ``release`` holds the noisy series
    and its :class:`DefenceLedger`. Noise inside ADMM runs ``max_iter`` ADMM iterations (fixed K).
    eval_inputs: "noisy" (forecast from the noisy covariates, scored against clean targets) or
    "clean".
    """
    params = dict(params or {})
    Y = np.asarray(Y, dtype=float)
    rng, _ = noise_generator(random_state)  # a fresh generator stays fresh when passed on
    central = dict(penalty=params.get("penalty", "none"), alpha=params.get("alpha", 0.0),
                   trend=params.get("trend", "c"))
    kw = dict(score_mask=score_mask, test_rows=test_rows, ar=ar, owner_names=owner_names, fit_mask=fit_mask)
    if defence == "none" or strength == 0 and defence in ("laplace", "gaussian", "uniform", "naive_laplace",
                                                          "coef_noise", "message_noise"):
        return evaluate_forecasts(Y, lags, train_end, model=CollaborativeVAR(lags, **central), **kw)
    if defence in ("laplace", "gaussian", "uniform"):
        rel = noise_defence(Y, defence, strength, public_range=public_range, declared_public=declared_public,
                            delta=delta, random_state=rng)
        ev = evaluate_forecasts(Y, lags, train_end, model=CollaborativeVAR(lags, **central), Y_fit=rel.noisy,
                                Y_inputs=rel.noisy if eval_inputs == "noisy" else Y, **kw)
        ev.release = rel
        return ev
    if defence == "naive_laplace":
        lags_t = normalise_lags(lags)
        # p + 1 copies in the design, and one more when the forecasts read noisy inputs
        copies = len(lags_t) + (2 if eval_inputs == "noisy" else 1)
        rel = noise_defence(Y, "laplace", strength, public_range=public_range, declared_public=declared_public,
                            delta=delta, random_state=rng, copies=copies)
        rel.naive = True
        Yn = rel.noisy  # inputs at forecast time: one noisy copy
        ev = evaluate_forecasts(Y, lags, train_end, model=CollaborativeVAR(lags, **central), Y_fit=Yn,
                                Y_inputs=Yn if eval_inputs == "noisy" else Y, **kw)
        Z, target = naive_noisy_design(Y[:train_end], lags, "laplace", strength, rng, public_range=public_range)
        if fit_mask is not None:
            keep = np.asarray(fit_mask, dtype=bool)[max(lags_t):train_end]
            Z, target = Z[keep], target[keep]
        ev.model.fit_design(Z, target)
        ev.var_pred = var_forecasts(ev.model, Yn if eval_inputs == "noisy" else Y, ev.target_rows)
        ev.release = rel
        return _rescore(ev, score_mask)
    if defence in ("coef_noise", "message_noise"):
        model = _admm_model(lags, params, random_state=rng, **{defence: strength})
        return evaluate_forecasts(Y, lags, train_end, model=model, **kw)
    if defence in ("orthogonal_rows", "compressed_rows", "post_multiplication"):
        ev = evaluate_forecasts(Y, lags, train_end, model=CollaborativeVAR(lags, **central), **kw)
        m = ev.model
        Zc, Yc = m.design_  # the training design, centred for trend "c"
        lags_t = normalise_lags(lags)
        if defence == "post_multiplication":
            B = post_multiplication_demo(Zc, Yc, lags_t, penalty=central["penalty"], alpha=central["alpha"],
                                         random_state=rng)["coef_recovered"]
        else:
            rows_kept = None if defence == "orthogonal_rows" else max(Zc.shape[0] // 2, Zc.shape[1] + 2)
            B = orthogonal_rows_demo(Zc, Yc, lags_t, rows_kept=rows_kept, penalty=central["penalty"],
                                     alpha=central["alpha"], random_state=rng)["coef_transformed"]
        m.coef_owner_major_ = B
        m.coefs_ = coefs_from_owner_major(B, lags_t)
        m.intercept_ = m.y_mean_ - m.z_mean_ @ B
        ev.var_pred = var_forecasts(m, Y, ev.target_rows)
        return _rescore(ev, score_mask)
    raise ValueError(f"unknown defence {defence!r}; choose one of {list(DEFENCES)}")


def _rescore(ev: ForecastEvaluation, score_mask) -> ForecastEvaluation:
    mae_v, rmse_v = _scores(ev.actual, ev.var_pred, score_mask)
    t = ev.table
    t["mae_var"], t["rmse_var"] = mae_v, rmse_v
    t["mae_gain_pct"] = 100.0 * (1.0 - mae_v / t["mae_ar"].to_numpy())
    t["rmse_gain_pct"] = 100.0 * (1.0 - rmse_v / t["rmse_ar"].to_numpy())
    return ev


@_one_blas_thread
def noise_sweep(Y, lags, train_end: int, law: str, strengths, *, params=None, score_mask=None, test_rows=None,
                fit_mask=None, eval_inputs="noisy", public_range=None, declared_public: bool = False, delta=1e-5,
                random_state=None, progress=None, owner_names=None) -> pd.DataFrame:
    """Accuracy against privacy of the noise defence: one row per b (b = 0 is the clean VAR).

    Y : raw-scale series (T_total x n), clipped into ``public_range`` before the noise (see
    :func:`defence_comparison`). Each b is a separate fit with its own fresh noise
    (``random_state=None``) and its own :class:`DefenceLedger`.

    Columns: b, eps_per_value (event level), eps_per_series (one owner's whole series), status
    (from that fit's ledger: "proven", "not proven", or "no privacy" for b = 0 and uniform noise),
    median MAE/RMSE gain over AR, owners worse than AR (MAE, RMSE), owners gaining >= 10 % (MAE),
    mean MAE of the VAR. ``progress(i, total)`` is called after each point.
    """
    Y = np.asarray(Y, dtype=float)
    lags = normalise_lags(lags)
    rng, _ = noise_generator(random_state)
    L = max(lags)
    rows = np.arange(max(train_end, L), Y.shape[0]) if test_rows is None else np.asarray(test_rows)
    ar = local_ar_forecasts(Y[:train_end], Y, rows, lags, (params or {}).get("trend", "c"),
                            row_mask=None if fit_mask is None else np.asarray(fit_mask, dtype=bool)[:train_end])
    out = []
    strengths = list(strengths)
    for j, b in enumerate(strengths):
        ev = defence_comparison(Y, lags, train_end, law if b > 0 else "none", b, params=params, score_mask=score_mask,
                                test_rows=rows, fit_mask=fit_mask, eval_inputs=eval_inputs, random_state=rng, ar=ar,
                                owner_names=owner_names, public_range=public_range,
                                declared_public=declared_public, delta=delta)
        if ev.release is not None:
            led = ev.release.defence
            eps_v, eps_s, status = led.eps_per_value, led.eps_per_series, led.status
        else:
            eps_v, eps_s, status = math.inf, math.inf, "no privacy"
        out.append({"b": b, "eps_per_value": eps_v, "eps_per_series": eps_s, "status": status,
                    "median_mae_gain_pct": ev.median_mae_gain, "median_rmse_gain_pct": ev.median_rmse_gain,
                    "owners_worse_mae": ev.count(below=0.0), "owners_worse_rmse": ev.count("rmse_gain_pct", below=0.0),
                    "owners_gain_10pct_mae": ev.count(at_least=10.0), "mean_mae_var": float(ev.table["mae_var"].mean())})
        if progress is not None:
            progress(j + 1, len(strengths))
    return pd.DataFrame(out)


# =============================================================================================
# 9. Helpers for notebooks and the page
# =============================================================================================
def parse_lags(text: str) -> tuple:
    """"1, 2, 24" -> (1, 2, 24); "3" -> (1, 2, 3). Raises ValueError with a readable message."""
    parts = [t for t in str(text).replace(";", ",").replace(" ", ",").split(",") if t]
    if not parts:
        raise ValueError("give at least one lag, e.g. '1, 2, 24' or '2'")
    try:
        values = [int(t) for t in parts]
    except ValueError:
        raise ValueError(f"lags must be whole numbers separated by commas, got {text!r}") from None
    if len(values) == 1:
        return normalise_lags(values[0])
    return normalise_lags(values)


def load_panel(df: pd.DataFrame, name: str = "data.csv"):
    """A (T x sites) panel from a wide or long table already read by ``load_table``, via
    ``engine.data.load_timeseries`` (the project's checked loader; it sorts by time and rejects
    duplicate stamps, holes in a long table and constant series)."""
    from engine.data import check_constant_columns, check_min_rows, load_timeseries
    from engine.data.io import TimeSeriesData

    stem = str(name).rsplit(".", 1)[0] or "data"
    # Fast path for the common wide file (a 'time' column of increasing ISO stamps, numeric sites);
    # anything else goes through the full loader.
    time_cols = [c for c in df.columns if str(c).strip().lower() in ("time", "date", "datetime", "timestamp")]
    if len(time_cols) == 1:
        tc = time_cols[0]
        sites = [c for c in df.columns if c != tc]
        if sites and all(pd.api.types.is_numeric_dtype(df[c]) for c in sites):
            try:
                times = pd.DatetimeIndex(pd.to_datetime(df[tc], format="ISO8601"), name=str(tc))
            except (ValueError, TypeError):
                times = None
            if times is not None and not times.hasnans and times.is_monotonic_increasing and times.is_unique:
                Y = df[sites].astype(float)
                Y.index = times
                check_min_rows(len(Y), 3, name, "a time-series model")
                check_constant_columns(Y, name)
                return TimeSeriesData(Y=Y, sites=[str(c) for c in sites], file=name, time_column=str(tc), layout="wide")
    return load_timeseries(df.to_csv(index=False).encode("utf-8"), name=f"{stem}.csv")


def neighbourhood(Y: pd.DataFrame, centre, k: int, rows: int | None = None) -> list:
    """The ``k`` series most correlated with ``centre`` (itself first) over the first ``rows`` rows:
    for sites, its spatial neighbours, which is where the lead-lag links of a VAR are."""
    part = Y.iloc[:rows] if rows else Y
    corr = part.corr()[centre].fillna(-np.inf).sort_values(ascending=False, kind="stable")
    names = [centre] + [c for c in corr.index if c != centre]
    return names[:int(k)]


def prepare_series(y: pd.DataFrame, *, solar: bool, lags, train_fraction: float = 2 / 3, train_end=None) -> SolarPanel:
    """Spec 6.3 preparation of any panel: solar series go through :func:`prepare_solar` (night = 0,
    daytime centring, daylight rows fitted and scored); other series are centred on their training
    means and every row is fitted and scored."""
    if train_end is None and not (isinstance(y.index, pd.DatetimeIndex) and y.index[0] < pd.Timestamp("2012-02-01")
                                  < y.index[-1] and solar):
        train_end = int(round(len(y) * train_fraction))
    if solar:
        return prepare_solar(y, None, train_end=train_end, lags=lags)
    raw = y.to_numpy(dtype=float)
    L = max(normalise_lags(lags))
    if not (L + 10 < train_end < len(raw) - 1):
        raise ValueError(f"{len(raw)} rows are too few to train and test a model with lag {L}")
    means = raw[:train_end].mean(axis=0)
    test_rows = np.arange(max(train_end, L), len(raw))
    ones = np.ones_like(raw, dtype=bool)
    return SolarPanel(raw - means, raw, means, y.index, [str(c) for c in y.columns], int(train_end), test_rows,
                      np.ones(test_rows.size, dtype=bool), ones, np.ones(len(raw), dtype=bool))


def calibrated_noise_scale(law: str, epsilon: float, delta: float, sensitivity: float) -> float:
    """Noise scale for an (epsilon, delta) guarantee per value with a public range ``sensitivity``:
    Laplace b = Δ/ε; Gaussian σ by the analytic calibration. Uniform noise cannot be calibrated."""
    from engine.privacy import analytic_gaussian_sigma, laplace_scale

    if law == "laplace":
        return float(laplace_scale(epsilon, sensitivity))
    if law == "gaussian":
        return float(analytic_gaussian_sigma(epsilon, delta, sensitivity))
    raise ValueError(f"{law} noise is not differentially private and has no calibration")


# =============================================================================================
# 10. The two kinds of export (issue #15): the shareable release and the owner's sheets
# =============================================================================================
MODEL_FORMAT = "privalab.var_admm/1"
RELEASE_FORMAT = "privalab.var_admm.release/1"
NOT_DP_MODEL = ("The collaborative VAR fitted by ADMM carries no differential-privacy guarantee: the exchanged "
                "matrices let the central node and every owner rebuild the other owners' series (Prop. 2-4).")
NO_DEFENCE_REASON = "no noise defence ran: the coefficients are not differentially private"


def release_refusal(release: NoiseRelease | None) -> str | None:
    """Why there is no shareable release for this run (None: there is one)."""
    if release is None:
        return NO_DEFENCE_REASON
    led = release.defence
    if led.status == "no privacy":
        return f"{NO_DEFENCE_REASON} ({led.no_privacy_reason()})"
    if not led.declared_public:
        return ("the range the values were clipped into is not declared public, so the noise proves nothing and the "
                "range (read off or typed for your data) must stay private: declare it only if it is the plants' "
                "rating")
    return None


def coef_table(model: CollaborativeVAR) -> pd.DataFrame:
    """A fitted VAR's coefficients in long form: lag, source owner, target owner, coefficient (+ intercepts)."""
    names = list(getattr(model, "owner_names_", None) or [f"owner {i + 1}" for i in range(model.n_owners_)])
    rows = [{"lag": ell, "source": names[i], "target": names[j], "coefficient": float(model.coefs_[ell - 1][j, i])}
            for ell in model.lags_ for i in range(len(names)) for j in range(len(names))]
    rows += [{"lag": "intercept", "source": "", "target": names[j], "coefficient": float(model.intercept_[j])}
             for j in range(len(names))]
    return pd.DataFrame(rows)


def shareable_release(release: NoiseRelease, *, owner_names, lags, model: CollaborativeVAR | None = None,
                      calibration: str = "chosen by the user") -> dict:
    """The shareable release of a noise-defence run, built only with :func:`engine.release.build_release`.

    Parameters
    ----------
    release : :class:`NoiseRelease` of a DP law (Laplace, Gaussian) whose range was declared public.
    owner_names : the series' names (schema). lags : the lag set (public setting).
    model : the VAR fitted on ``release.noisy`` with public settings and public rows only (then its
        coefficients are post-processing of the release); None leaves the coefficients out (e.g.
        when the fitted rows, such as daylight hours, were read from the private series).
    calibration : where b came from (public): "calibrated from ε and the declared range" or "chosen
        by the user".

    Returns
    -------
    dict: the noisy series (T x n), the coefficients when given, and the public inputs (law, b,
    declared range, ε per value and per series, δ), with manifest, ledger (one owner's whole
    series) and guarantee. Raises ValueError when :func:`release_refusal` gives a reason.
    """
    from ..privacy.wording import ledger_text
    from ..release import Field, build_release

    why = release_refusal(release)
    if why is not None:
        raise ValueError(f"no shareable release: {why}")
    led = release.defence
    src = led.ledger.entries[0].name
    declared = "user-declared public range (the plants' rating, not the data)"
    fields = [
        Field("noisy_series", np.asarray(release.noisy, dtype=float), "dp", src, role="info"),
        Field("owner_names", [str(s) for s in owner_names], "public", "column names of the shared series (schema)",
              role="info"),
        Field("noise_law", led.law, "public", "defence chosen by the user", role="info"),
        Field("noise_scale_b", float(led.b), "public", f"noise scale {calibration}", role="info"),
        Field("public_range", [float(led.public_range[0]), float(led.public_range[1])], "public", declared,
              role="info"),
        Field("epsilon_per_value", float(led.eps_per_value), "public", "the ledger's per-value (event-level) ε",
              role="info"),
        Field("epsilon_per_series", float(led.eps_per_series), "public", "the ledger's whole-series ε", role="info"),
        Field("delta", 0.0 if led.law == "laplace" else float(led.delta), "public", "δ chosen by the user",
              role="info"),
        Field("lags", list(normalise_lags(lags)), "public", "model setting chosen by the user", role="param"),
    ]
    if release.naive:
        fields.append(Field("releases_of_each_value", int(led.copies), "public",
                            "naive design: p + 1 noisy copies (+ 1 for noisy forecast inputs)", role="info"))
    if model is not None:
        check_is_fitted(model, "coefs_")
        fields += [
            Field("penalty", model.penalty, "public", "model setting chosen by the user", role="param"),
            Field("alpha", float(model.alpha), "public", "model setting chosen by the user", role="param"),
            Field("trend", model.trend, "public", "model setting chosen by the user", role="param"),
            Field("lags_", tuple(int(x) for x in model.lags_), "public", "model setting chosen by the user"),
            Field("n_owners_", int(model.n_owners_), "public", "number of shared series (schema)"),
            Field("coefs_", np.asarray(model.coefs_, dtype=float), "dp", "*"),
            Field("intercept_", np.asarray(model.intercept_, dtype=float), "dp", "*"),
        ]
    notes = [DP_STATEMENTS["naive" if release.naive else led.law],
             "The values were clipped into the declared range and noised once per value before anything else; any "
             "centring and the VAR fit are post-processing of the noisy series."]
    if model is None:
        notes.append("No coefficients: fit the VAR on the noisy series (the page's fit reads which rows to use from "
                     "the private data, so its coefficients are not post-processing of this release).")
    guarantee = (led.headline().replace("**", "") + " Ledger (one owner's whole series): "
                 + ledger_text(led.ledger, None if led.law == "laplace" else led.delta).replace("**", ""))
    return build_release("var_admm", RELEASE_FORMAT, fields, led.ledger, guarantee=guarantee, extra_notes=notes)


def to_json(release: dict, **json_kwargs) -> str:
    """A shareable release (:func:`shareable_release`) as strict JSON text."""
    from ..release import release_to_json

    if not isinstance(release, dict) or release.get("format") != RELEASE_FORMAT:
        raise TypeError("to_json takes a shareable release from shareable_release(...); a fitted model alone is not "
                        "shareable (its coefficients are not differentially private)")
    return release_to_json(release, **json_kwargs)


def model_from_release(data) -> CollaborativeVAR:
    """A CollaborativeVAR rebuilt from a shareable release that holds coefficients (``forecast`` works)."""
    from ..release import estimator_from_release

    return estimator_from_release(data, CollaborativeVAR, RELEASE_FORMAT)


def owner_sheets(*, reference_model: CollaborativeVAR | pd.DataFrame | None = None, skill: pd.DataFrame | None = None,
                 defended_skill: pd.DataFrame | None = None, release: NoiseRelease | None = None,
                 Y=None, owner_names=None, forecasts: pd.DataFrame | None = None) -> dict:
    """The owner's private sheets (workbook): what the guarantee does not cover.

    reference_model : the non-private VAR (central or ADMM) fitted on the clean series, or its
        :func:`coef_table`.
    skill / defended_skill : per-owner errors on the private test rows (clean / with the defence).
    release : the defence run (its range when not declared public, the exact number of values
        clipped, both ε and the status). Y : the clean series (T x n), for the observed ranges.
    forecasts : forecasts on the private test rows.
    """
    sheets: dict = {}
    if reference_model is not None:
        sheets["reference VAR (non-private)"] = (reference_model if isinstance(reference_model, pd.DataFrame)
                                                 else coef_table(reference_model))
    if skill is not None:
        sheets["skill on private rows"] = skill
    if defended_skill is not None:
        sheets["skill with the defence"] = defended_skill
    if forecasts is not None:
        sheets["forecasts (private rows)"] = forecasts
    if Y is not None:
        Y = np.asarray(Y, dtype=float)
        names = list(owner_names) if owner_names is not None else [f"owner {i + 1}" for i in range(Y.shape[1])]
        sheets["observed range (private)"] = pd.DataFrame({"owner": names, "min": Y.min(axis=0), "max": Y.max(axis=0)})
    if release is not None:
        led = release.defence
        sheets["noise defence"] = {
            "noise law": led.law, "noise scale b": led.b,
            "range the values were clipped into": "none" if led.public_range is None else list(led.public_range),
            "range declared public": led.declared_public, "status": led.status,
            "epsilon per value (event level)": led.eps_per_value,
            "epsilon for one owner's whole series": led.eps_per_series,
            "values outside the range before clipping (exact, private)": release.n_outside,
            "statement": led.headline().replace("**", ""),
        }
    return sheets


def model_to_dict(model: CollaborativeVAR, ledger: PrivacyLedger | None = None) -> dict:
    """The owner's full export of a fitted model (every fitted attribute but the training design and the
    trace): private, for notebooks; the page offers :func:`shareable_release` and the owner's workbook."""
    from ..export import estimator_to_dict

    check_is_fitted(model, "coefs_")
    privacy = NOT_DP_MODEL + ((" " + DP_STATEMENTS["admm_noise"]) if (model.coef_noise or model.message_noise) else "")
    return estimator_to_dict(model, MODEL_FORMAT, exclude=("design_", "trace_"), ledger=ledger, privacy=privacy)


def model_from_dict(data) -> CollaborativeVAR:
    """A CollaborativeVAR with the exported params and fitted attributes (``predict`` works; the trace does not)."""
    from ..export import estimator_from_dict

    return estimator_from_dict(data, CollaborativeVAR, MODEL_FORMAT)


# =============================================================================================
# 11. End-to-end audit of the page's defence pipeline
# =============================================================================================
#: Planted bugs of :func:`pipeline_audit_case` (the audit must catch each).
PIPELINE_BUGS = ("noise_halved", "sensitivity_halved", "no_clipping", "private_centring")


def pipeline_audit_case(law: str = "laplace", epsilon: float = 1.0, delta: float = 1e-5, *, public_range=(0.0, 1.0),
                        bug: str | None = None, T: int = 6, n_owners: int = 2, stage: str = "release",
                        outside: float = 88.0):
    """The page's noise defence, end to end, as an :class:`engine.privacy.audit.AuditCase`.

    The release is the page's pipeline on a small panel (T x n_owners) in "kW": values clipped
    into the declared ``public_range`` by :func:`add_noise`, noise of scale b calibrated as the page
    does in strict mode (:func:`calibrated_noise_scale` from ε, δ and Δ = hi - lo), and, with
    ``stage="centred"``, the post-processing the fit applies (each owner's noisy series centred on
    its noisy mean). Worst-case neighbours (event level): one value of owner 1 is ``hi + outside``
    in D (far above the range, as a kW value against a range declared in [0, 1]) and
    ``lo - outside`` in D' (far below): clipping must bring the change back to Δ. The claim is
    :func:`defence_ledger`'s per-value ε.

    bug : None, "noise_halved", "sensitivity_halved" (b calibrated to Δ/2), "no_clipping" (the
        range is not applied: the shipped bug) or "private_centring" (the old pipeline: values
        centred on the private mean, then noised, no clipping). Each must be caught.
    law "uniform": no guarantee (claim ε = ∞; reported, b = Δ).
    """
    from engine.privacy.audit import AuditCase

    if bug is not None and bug not in PIPELINE_BUGS:
        raise ValueError(f"bug must be None or one of {PIPELINE_BUGS}, got {bug!r}")
    if stage not in ("release", "centred"):
        raise ValueError("stage must be 'release' or 'centred'")
    lo, hi = _check_range(public_range)
    width = hi - lo
    if law in ("laplace", "gaussian"):
        b = calibrated_noise_scale(law, epsilon, delta, width * (0.5 if bug == "sensitivity_halved" else 1.0))
        claim = defence_ledger(law, calibrated_noise_scale(law, epsilon, delta, width), (lo, hi), True, T, n_owners,
                               False, delta=delta)
        claimed, mode = claim.eps_per_value, "strict"
    elif law == "uniform":
        b, claimed, mode = width, math.inf, "paper"
    else:
        raise ValueError("law must be 'laplace', 'gaussian' or 'uniform'")
    if bug == "noise_halved":
        b *= 0.5
    base = np.random.default_rng(3).uniform(lo, hi, size=(T, n_owners))
    base[0, 1] = hi + outside  # another kW value outside the range (clipped in both data sets)
    D, D_prime = base.copy(), base.copy()
    D[T // 2, 0] = hi + outside
    D_prime[T // 2, 0] = lo - outside
    clip = None if bug in ("no_clipping", "private_centring") else (lo, hi)

    def release(data, rng, n):
        stack = np.broadcast_to(data, (n,) + data.shape)
        if bug == "private_centring":
            stack = stack - data.mean(axis=0)
        out = add_noise(stack, law, b, rng, public_range=clip)
        if stage == "centred":
            out = out - out.mean(axis=1, keepdims=True)
        return out.reshape(n, -1)

    expect = "violated" if bug else ("holds" if mode == "strict" else "report")
    name = f"var_admm_{law}" + ("" if bug is None else f"_bug_{bug}")
    return AuditCase(name, "var_admm", mode, float(claimed), 0.0 if law != "gaussian" else float(delta), release,
                     D, D_prime, f"one value of one owner moved from {hi + outside:g} to {lo - outside:g} across the "
                     f"declared range [{lo:g}, {hi:g}] (event level)", expect,
                     f"clip to [{lo:g}, {hi:g}] then {law} noise b = {b:.4g}"
                     + (", centred on the noisy mean" if stage == "centred" else ""), bug)
