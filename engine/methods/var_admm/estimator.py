"""The collaborative VAR estimator: n owners' series fitted centrally or by the paper's ADMM (47).

Hand-written (the paper's protocol; no kept library fits a features-split VAR): the estimator wraps
the solvers of :mod:`engine.methods.var_admm.solver`, the checks of :mod:`.checks` and the layouts of
:mod:`.layout`. scipy solves the pooled least squares / ridge, scikit-learn gives ``BaseEstimator`` and
input validation. No streamlit here.
"""
from __future__ import annotations

import math
import warnings
from numbers import Integral, Real
from typing import ClassVar

import numpy as np
import pandas as pd
from scipy import linalg
from sklearn.base import BaseEstimator
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_array, check_is_fitted

from engine.methods.constraints import PRIVACY_PARAMETER_CONSTRAINTS
from engine.privacy import as_generator
from engine.threads import one_blas_thread

from .checks import (
    CONSTANT_RTOL,
    UNDERFLOW_LIMIT,
    check_finite_columns,
    check_identified,
    check_series,
    label,
    series_names,
)
from .layout import coefs_from_owner_major, lagged_design, normalise_lags
from .moments import (
    CentredDesign,
    ScaledDesign,
    centred_design,
    centred_lagged,
    least_squares,
    residual_moment,
    scales_and_moments,
)
from .solver import SCHEMES, _paper_start, lasso_coordinate_descent, run_anderson, run_paper
from .trace import AdmmTrace

__all__ = ["INITS", "NOISE_LAWS", "PENALTIES", "SOLVERS", "TRANSPORTS", "TRENDS", "VARIANTS", "CollaborativeVAR"]

PENALTIES = ("none", "ridge", "lasso")
SOLVERS = ("central", "admm")
TRANSPORTS = ("local", "flower")
TRENDS = ("c", "n")
INITS = ("zero", "random")
VARIANTS = ("base", "y_free")
NOISE_LAWS = ("laplace", "gaussian", "uniform")
#: a finite number >= 0 (the right end open: inf is refused)
_FINITE_NONNEGATIVE = Interval(Real, 0, math.inf, closed="left")


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


def _check_flower(est, scheme: str) -> None:
    """What the Flower transport runs: the accelerated scheme with the distributed stopping rule
    (:mod:`.flower_anderson`), or the paper's scheme with fixed K (:mod:`.flower_roles`: no observer sees every
    owner's Gram there, so Boyd's rule is not run), with the noise defence inside ADMM if asked (each owner draws
    its own fresh noise in its own process); no kept values."""
    if est.solver != "admm":
        raise ValueError("transport='flower' runs the ADMM: use solver='admm'")
    if scheme not in ("anderson", "paper") or (scheme == "paper" and est.tol is not None):
        raise ValueError("transport='flower' runs the accelerated scheme (scheme='anderson' or 'auto') or the "
                         "paper's scheme with a fixed number of iterations (scheme='paper', tol=None); got "
                         f"scheme={est.scheme!r}, tol={est.tol!r}")
    if int(est.keep_values) > 0:
        raise ValueError("transport='flower' keeps no message values (no observer sees every owner's messages "
                         "there): use keep_values=0")


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
        :mod:`engine.methods.var_admm.solver`). "auto" runs the paper's plain scheme when the run is
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
    transport : "local" (the owners and the central node as objects in this process) or "flower" (the
        central node a Flower ServerApp, each owner a ClientApp on its own SuperNode process reading only
        its own series). The accelerated scheme (the default) runs with the distributed stopping rule over the
        run's channel after one Flower round (:mod:`engine.methods.var_admm.flower_anderson`): the same
        converged coefficients as in process (1e-8 at tol 1e-10), its own messages (each owner's Gram pieces
        instead of its Anderson history). The paper's scheme (``scheme="paper", tol=None``) runs one Flower
        round per iteration (:mod:`engine.methods.var_admm.flower_roles`): the same messages and, from the
        same ``random_state``, the same coefficients (1e-9).
    superlink : None (start a SuperLink and one SuperNode per owner on 127.0.0.1, insecure loopback, and
        stop them after the fit) or "host:port" of a local federation started in this process with parties
        "0" .. "n-1" (:func:`engine.federation.flower.driver.federation`).
    flower_timeout : seconds the central node waits for the owners' answers in one round.

    Fitted attributes
    -----------------
    coefs_ (L, n, n), intercept_ (n,): statsmodels layout. coef_owner_major_ (n p, n).
    lags_, n_owners_, n_features_in_ (= n), feature_names_in_ (DataFrame input only), n_obs_
    (T fitted rows), lambda_, n_iter_, converged_, scheme_ ("central", "paper", "anderson",
    "balanced", "relaxed"), trace_ (:class:`AdmmTrace`, ADMM only), design_ (Z, targets) actually
    fitted (centred for trend "c"), z_mean_, y_mean_, sigma_u_ (residual covariance, like
    statsmodels' sigma_u), convergence_message_ (None, or why the ADMM is not converged: the text of
    the ``ConvergenceWarning``), flower_ (transport "flower" only: wire bytes down/up, wall time, its
    start (federation up) and run (``flwr run`` to the result) parts, processes left behind),
    series_scale_ (n,) (the power of two each series is divided by inside: every solver sees
    standardised series, so the fit does not depend on the units).

    Raises
    ------
    ValueError naming the series for non-numeric values, NaN, inf, overflow (|value| > 1e153),
    underflow (variation < 1e-153), constant series, and collinear or duplicated series (the
    coefficients are not identified: refused in both solvers, so no answer depends on a seed; a
    ridge penalty identifies them and is accepted).
    """

    _parameter_constraints: ClassVar[dict] = {
        # the shared entry plus numpy Generators: the defences pass one generator on to the ADMM's start
        "random_state": [*PRIVACY_PARAMETER_CONSTRAINTS["random_state"], np.random.Generator],
        "lags": [Interval(Integral, 1, None, closed="left"), "array-like"],
        "solver": [StrOptions(set(SOLVERS))],
        "penalty": [StrOptions(set(PENALTIES))],
        "alpha": [_FINITE_NONNEGATIVE],
        "trend": [StrOptions(set(TRENDS))],
        "rho": [Interval(Real, 0, math.inf, closed="neither")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, math.inf, closed="neither"), None],
        "init": [StrOptions(set(INITS))],
        "variant": [StrOptions(set(VARIANTS))],
        "atol": [_FINITE_NONNEGATIVE, None],
        "u0_scale": [_FINITE_NONNEGATIVE],
        "b1_scale": [_FINITE_NONNEGATIVE],
        "coef_noise": [_FINITE_NONNEGATIVE],
        "message_noise": [_FINITE_NONNEGATIVE],
        "noise_law": [StrOptions(set(NOISE_LAWS))],
        "noisy_continue": ["boolean"],
        "keep_values": [Interval(Integral, 0, None, closed="left")],
        "store_path": ["boolean"],
        "inner_tol": [_FINITE_NONNEGATIVE],
        "owner_names": ["array-like", None],
        "scheme": [StrOptions(set(SCHEMES))],
        "transport": [StrOptions(set(TRANSPORTS))],
        "superlink": [str, None],
        "flower_timeout": [Interval(Real, 0, math.inf, closed="neither")],
    }

    def __init__(self, lags=1, solver="central", penalty="none", alpha=0.0, trend="c", rho=2.0, max_iter=500,
                 tol=1e-6, init="random", random_state=None, *, variant="base", atol=None, u0_scale=1.0,
                 b1_scale=1.0, coef_noise=0.0, message_noise=0.0, noise_law="gaussian", noisy_continue=False,
                 keep_values=0, store_path=True, inner_tol=1e-12, owner_names=None, scheme="auto",
                 transport="local", superlink=None, flower_timeout=120.0):
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
        self.transport = transport
        self.superlink = superlink
        self.flower_timeout = flower_timeout

    # ----------------------------------------------------------------------------- checks
    def _check_params(self):
        """Every parameter by its declared constraint; lags by :func:`normalise_lags` (an int or a lag set)."""
        if self.scheme not in SCHEMES:  # before the declarative check: the message the page and tests rely on
            raise ValueError(f"scheme must be one of {SCHEMES}, got {self.scheme!r}")
        self._validate_params()
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
        rows = np.arange(max(lags), Y.shape[0])
        centre = self.trend == "c"
        design = centred_lagged(Y, lags, centre) if row_mask is None else None
        if design is None:
            Z, target = lagged_design(Y, lags)
            if row_mask is not None:
                row_mask = np.asarray(row_mask, dtype=bool)
                if row_mask.shape != (Y.shape[0],):
                    raise ValueError(f"row_mask must have one entry per row of Y ({Y.shape[0]}), got {row_mask.shape}")
                keep = row_mask[max(lags):]
                Z, target, rows = Z[keep], target[keep], rows[keep]
            design = centred_design(Z, target, centre)
        self._set_features(Y.shape[1], frame_names)
        self.fit_rows_ = rows
        return self._fit_design(design, lags, frame_names, names)

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
        return self._fit_design(centred_design(Z, target, self.trend == "c"), lags, None, names)

    def _set_features(self, n, frame_names):
        self.n_features_in_ = int(n)
        if frame_names is not None:
            self.feature_names_in_ = np.array(frame_names, dtype=object)
        elif hasattr(self, "feature_names_in_"):
            del self.feature_names_in_

    def _fit_design(self, design: CentredDesign, lags, frame_names, names):
        # Dense products of modest size: one BLAS thread is faster here, and on a busy machine
        # multi-threaded OpenBLAS makes the many small ADMM products 10-50x slower.
        with one_blas_thread():
            return self._fit_design_inner(design, lags, frame_names, names)

    def _fit_design_inner(self, design: CentredDesign, lags, frame_names, names):
        T, n = design.Yc.shape
        p = len(lags)
        n_coef = n * p + (1 if self.trend == "c" else 0)
        if T <= n_coef and self.penalty == "none":
            raise ValueError(f"{T} fitted rows cannot identify {n_coef} coefficients per equation "
                             f"({n} series x {p} lags{' + intercept' if self.trend == 'c' else ''}); "
                             "use fewer series or lags, more data, or a penalty")
        scheme = "central" if self.solver == "central" else _resolve_scheme(self)
        if self.transport == "flower":
            _check_flower(self, scheme)
        z_mean, y_mean, spread = design.z_mean, design.y_mean, design.spread
        # constant lag columns over the fitted rows (e.g. a row mask keeping one value per series)
        flat = (spread == 0) | (spread <= CONSTANT_RTOL * design.level) | (spread < UNDERFLOW_LIMIT)
        if np.any(flat):
            bad = int(np.flatnonzero(flat)[0])
            raise ValueError(f"{label(names[bad // p])} is constant over the fitted rows at lag {lags[bad % p]}: "
                             "its coefficient is not identified")
        # each series divided by a power of two near its root mean square (exact): every solver sees
        # standardised series, whatever their units; coefficients map back as B[i p + q, j] d_j / d_i
        d, Gfull, ZtY, YtY = scales_and_moments(design, p)
        d_col = np.repeat(d, p)
        ratio = d[None, :] / d_col[:, None]
        # Zc / d_col and Yc / d through their moments, the arrays formed only where a solver reads them
        scaled = ScaledDesign(design.Zc, design.Yc, d_col, d, (Gfull, ZtY, YtY))
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
            B_std, self.trace_ = self._central(scaled, Gfull, ZtY, lasso_w, ridge_w, p), None
            self.n_iter_, self.converged_ = 0, True
        elif scheme == "anderson" and self.transport == "flower":
            B_std, self.trace_ = self._anderson_flower(*scaled.arrays(), G, lags, lasso_w, ridge_w, z_mean / d_col)
            self.n_iter_, self.converged_ = self.trace_.n_iter, self.trace_.converged
        elif scheme == "anderson":
            B_std, self.trace_ = run_anderson(
                scaled, G, lags=lags, penalty=self.penalty, lasso_w=lasso_w, ridge_w=ridge_w,
                max_iter=int(self.max_iter), tol=self.tol, atol=self._atol(), init=self.init,
                rng=as_generator(self.random_state), b1_scale=float(self.b1_scale), variant=self.variant,
                store_path=self.store_path, inner_tol=self.inner_tol, names=self.owner_names_, coef_to_data=to_data)
            self.n_iter_, self.converged_ = self.trace_.n_iter, self.trace_.converged
        else:
            # lasso_w is set for penalty "lasso" only, ridge_w for "ridge" only
            lam_paper = lasso_w[:, None, :] if lasso_w is not None else ridge_w if ridge_w is not None else 0.0
            if self.transport == "flower":
                B_std, self.trace_ = self._paper_flower(*scaled.arrays(), G, lags, lam_paper, z_mean / d_col, d)
            else:
                B_std, self.trace_ = run_paper(
                    *scaled.arrays(), G, lags=lags, penalty=self.penalty, lam=lam_paper, rho=float(self.rho),
                    max_iter=int(self.max_iter), tol=self.tol, atol=self._atol(), init=self.init,
                    rng=as_generator(self.random_state), u0_scale=float(self.u0_scale),
                    b1_scale=float(self.b1_scale), variant=self.variant, coef_noise=float(self.coef_noise),
                    message_noise=float(self.message_noise), noise_law=self.noise_law,
                    noisy_continue=bool(self.noisy_continue), keep_values=int(self.keep_values),
                    store_path=self.store_path, inner_tol=self.inner_tol, names=self.owner_names_, scales=d,
                    scheme=scheme)
            self.n_iter_, self.converged_ = self.trace_.n_iter, self.trace_.converged
        B = to_data(B_std)
        if self.trace_ is not None and self.trend == "c" and self.transport != "flower":  # flower: real messages
            self.trace_.log.add_each(self.owner_names_[:n], "central", "zbar_Ai B_Ai", (1, n),
                                     "owner i's lag means times its coefficients, for the intercepts", phase="final",
                                     step=self.trace_.n_iter)
        self.scheme_ = scheme
        self.series_scale_ = d
        self.coef_owner_major_ = B
        self.coefs_ = coefs_from_owner_major(B, lags)
        self.intercept_ = y_mean - z_mean @ B if self.trend == "c" else np.zeros(n)
        self.z_mean_, self.y_mean_ = z_mean, y_mean
        self.design_ = (design.Zc, design.Yc)
        dof = max(T - n_coef, 1)
        self.sigma_u_ = (residual_moment(scaled, B_std) / dof) * np.outer(d, d)
        self.convergence_message_ = None
        if self.trace_ is not None and self.tol is not None and not self.converged_:
            self.convergence_message_ = (
                f"The ADMM ({scheme} scheme) stopped after max_iter = {self.max_iter} iterations without meeting "
                f"Boyd's stopping rule (tol = {self.tol:g}, relative to the data's scale): the coefficients are "
                "not converged; raise max_iter")
            warnings.warn(self.convergence_message_, ConvergenceWarning, stacklevel=4)  # the caller of fit
        return self

    def _paper_flower(self, Zs, Ys, G, lags, lam, z_mean_scaled, scales):
        """The paper's scheme over a local Flower federation (:mod:`.flower_roles`): B^1 and U^0 drawn as
        the local transport draws them (so a seed gives the same fit), the log rebuilt from real messages."""
        from .flower_roles import records_to_log, run_paper_flower

        T, n = Ys.shape
        p = len(lags)
        B1, U0 = _paper_start(self.init, as_generator(self.random_state), float(self.u0_scale), float(self.b1_scale),
                              Ys, n, p)
        B, info = run_paper_flower(
            Zs, Ys, G, lags=lags, penalty=self.penalty, lam=lam, rho=float(self.rho), max_iter=int(self.max_iter),
            init_B=B1, U0=U0, variant=self.variant, inner_tol=self.inner_tol, names=self.owner_names_,
            z_mean_scaled=z_mean_scaled, intercepts=self.trend == "c", superlink=self.superlink,
            timeout=float(self.flower_timeout), scales=scales,
            noise={"coef": float(self.coef_noise), "message": float(self.message_noise), "law": self.noise_law,
                   "continue": bool(self.noisy_continue)})
        K = int(self.max_iter)
        nan = np.full(K, np.nan)
        trace = AdmmTrace(
            variant=self.variant, init=self.init, rho=float(self.rho), n_owners=n, lags=lags, T=T,
            owner_names=list(self.owner_names_), log=records_to_log(info["records"]),
            primal_residuals=np.array(info["primal"]), dual_residuals=nan, eps_primal=nan, eps_dual=nan.copy(),
            coef_path=[], shared_coef_path=[], broadcasts=[], owner_messages=[], u_path=[], converged=False,
            n_iter=K, keep_values=0, coef_noise=float(self.coef_noise), message_noise=float(self.message_noise),
            noise_law=self.noise_law,
            path_iterations=[], scheme="paper", rho_path=[float(self.rho)] * K)
        self.flower_ = {"wire_bytes_down": int(info["wire_down"]), "wire_bytes_up": int(info["wire_up"]),
                        "wall_seconds": float(info["wall"]), "start_seconds": float(info["start"]),
                        "run_seconds": float(info["run"]), "leftover_processes": list(info["leftover"])}
        return B, trace

    def _anderson_flower(self, Zs, Ys, G, lags, lasso_w, ridge_w, z_mean_scaled):
        """The accelerated scheme over Flower and the run's channel (:mod:`.flower_anderson`): the start drawn as
        :func:`~.anderson.run_anderson` draws it, the log rebuilt from the messages that crossed."""
        from .flower_roles import records_to_log, run_anderson_flower

        T, n = Ys.shape
        p = len(lags)
        rng = as_generator(self.random_state)
        B1 = np.zeros((n, p, n)) if self.init == "zero" else rng.normal(0.0, float(self.b1_scale), (n, p, n))
        B, info = run_anderson_flower(
            Zs, Ys, G, lags=lags, penalty=self.penalty, lasso_w=lasso_w, ridge_w=ridge_w,
            max_iter=int(self.max_iter), tol=self.tol, atol=self._atol(), init_B=B1, variant=self.variant,
            inner_tol=self.inner_tol, names=self.owner_names_, z_mean_scaled=z_mean_scaled,
            intercepts=self.trend == "c", superlink=self.superlink, timeout=float(self.flower_timeout))
        K = int(info["n_iter"])
        trace = AdmmTrace(
            variant=self.variant, init=self.init, rho=float(n), n_owners=n, lags=lags, T=T,
            owner_names=list(self.owner_names_), log=records_to_log(info["records"]),
            primal_residuals=np.zeros(K), dual_residuals=np.array(info["dual"]),
            eps_primal=np.array(info["eps_primal"]), eps_dual=np.array(info["eps_dual"]), coef_path=[],
            shared_coef_path=[], broadcasts=[], owner_messages=[], u_path=[], converged=bool(info["converged"]),
            n_iter=K, keep_values=0, path_iterations=[], scheme="anderson", rho_path=[float(n)] * K,
            rejected_steps=int(info["rejected"]))
        self.flower_ = {"wire_bytes_down": int(info["wire_down"]), "wire_bytes_up": int(info["wire_up"]),
                        "wall_seconds": float(info["wall"]), "start_seconds": float(info["start"]),
                        "run_seconds": float(info["run"]), "leftover_processes": list(info["leftover"]),
                        "round_seconds": list(info["round_s"]), "hello_seconds": float(info["hello_s"]),
                        "loop_seconds": float(info["connect_s"]), "stamps": dict(info.get("stamps", {}))}
        return B, trace

    def _atol(self) -> float:
        if self.atol is not None:
            return float(self.atol)
        return self.tol / 100.0 if self.tol is not None else 0.0

    # ----------------------------------------------------------------------------- central
    def _central(self, scaled, G, ZtY, lasso_w, ridge_w, p):
        """The pooled fit on standardised data from its moments G = Z'Z and Z'Y: least squares, ridge with
        per-owner weights ridge_w (n,), LASSO with weights lasso_w (n, n) (owner i's coefficients in target j's
        equation). ``scaled`` gives the standardised design itself, read only by the least-squares refinement."""
        if self.penalty == "lasso" and lasso_w is not None and np.any(lasso_w > 0):
            thr = np.repeat(lasso_w, p, axis=0)  # (n p, n): one weight per coefficient
            B, _ = lasso_coordinate_descent(G, ZtY, thr, tol=self.inner_tol)
            return B
        if self.penalty == "ridge" and ridge_w is not None and np.any(ridge_w > 0):
            return linalg.solve(G + np.diag(np.repeat(ridge_w, p)), ZtY, assume_a="pos")
        return least_squares(scaled.arrays, G, ZtY)

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
