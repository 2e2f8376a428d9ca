"""AdaSSP: Wang (2018), "Revisiting differentially private linear regression", Algorithm 2.

Rows are clipped to public bounds ||x_i|| <= B_x, |y_i| <= B_y (after an optional public centre). The budget
is split in three equal parts (epsilon / 3, delta / 3 each, basic composition) for three Gaussian releases
under add/remove neighbours:

1. lambda_min(X'X) + N(0, sigma_1^2): adding or removing a row x changes X'X by xx' (PSD, rank one),
   which moves the smallest eigenvalue by at most ||x||^2 <= B_x^2 (Weyl): sensitivity B_x^2. The
   released value is shifted down by sigma_1 * sqrt(2 ln(3 / delta)) (Wang's high-probability lower
   bound, here at the analytic sigma) and clipped at 0: lambda_min~.
2. X'X + E, E symmetric Gaussian on the upper triangle: the released numbers change by the upper
   triangle of xx', whose L2 norm is at most ||xx'||_F = ||x||^2 <= B_x^2: sensitivity B_x^2.
3. X'y + N(0, sigma_3^2 I): the change x y has norm <= B_x B_y.

Issue #30 changes, each measured in ``bench/bench_strict_utility.py``:

- joint calibration (analytic calibration only): the three releases are Gaussian, so they compose exactly to
  one Gaussian with mu^2 = sum (Delta_i / sigma_i)^2 (Dong, Roth & Su); equal shares of mu^2 with mu set by
  (epsilon, delta) (``gaussian_sigmas_for_budget(method="gdp")``) give 35-42 % smaller sigmas than three
  (epsilon / 3, delta / 3) releases. Each record keeps its exact per-release (epsilon_i, delta / 3); the
  ledger's ``accountant`` ("gdp") names the total that meets (epsilon, delta).
- ``fit_intercept=True`` (default): a constant column kappa = x_bound is appended to the clipped rows, so
  the intercept is learned privately (without it a public centre far from the data mean leaves the model
  off by the difference); the rows' bound becomes sqrt(2) x_bound and every sensitivity follows.
- at epsilon = inf the bounds may be None (nothing is clipped): ordinary least squares.

Adaptive ridge (post-processing): lambda = max(0, sigma_2 sqrt(d ln(2 d^2 / rho)) - lambda_min~) with
rho = 0.05 (Wang's failure probability), theta = (X'X~ + lambda I)^-1 X'y~. Wang writes the noise as
sqrt(ln(6/delta)) / (epsilon/3) times the sensitivity; here every sigma is the engine's one calibration
(``engine.privacy.noise_scale``, analytic by default), which is tighter and still (epsilon/3, delta/3)-DP.
With a public centre the model is y = y_center + (x - x_center)' theta; without one there is no intercept
(as in the paper). At epsilon = inf: no noise, lambda = 0, theta is ordinary least squares (a test checks it).

Written by hand: the algorithm is ten lines; no kept library implements it with our ledger.
"""
from __future__ import annotations

import math
from numbers import Real
from typing import ClassVar

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils._param_validation import Interval
from sklearn.utils.validation import check_is_fitted, validate_data

from engine.methods.constraints import CALIBRATION_CONSTRAINT, PRIVACY_PARAMETER_CONSTRAINTS
from engine.privacy import (
    SEED_KNOWN_CAVEAT,
    GaussianMechanism,
    PrivacyLedger,
    gaussian_epsilon,
    gaussian_sigmas_for_budget,
    noise_generator,
    noise_scale,
)
from engine.privacy.clipping import clip_factors, row_norms
from engine.privacy.moments import MomentsRelease

__all__ = ["RELEASES", "AdaSSP"]

RELEASES = ("lambda_min(X'X)", "X'X", "X'y")
#: Their ledger notes.
NOTES = ("smallest eigenvalue of X'X (Weyl: sensitivity B_x^2)", "upper triangle of X'X, sensitivity ||x||^2 <= B_x^2",
         "X'y, sensitivity B_x B_y")


class AdaSSP(RegressorMixin, BaseEstimator):
    """(epsilon, delta)-DP linear regression by AdaSSP (Wang 2018, Algorithm 2).

    Parameters
    ----------
    epsilon : float > 0 or np.inf (ordinary least squares, empty ledger).
    delta : float in (0, 1).
    x_bound, y_bound : float > 0, public bounds on ||x_i - x_center|| and |y_i - y_center| (rows are clipped);
        None only at epsilon = inf (nothing clipped).
    fit_intercept : bool, learn the intercept privately (a constant column; module docstring).
    x_center : array (m,) or None, y_center : float or None, a public centre (both or neither).
    rho : float in (0, 1), the failure probability of the ridge choice (0.05 in the paper).
    calibration : "analytic", "classic" or "auto".
    random_state : None (fresh OS entropy) or a known seed (ledger: not proven).

    Attributes
    ----------
    coef_ : array (m,); intercept_ : float (y_center + the private intercept - x_center' coef_).
    ridge_lambda_ : float, the adaptive ridge.
    privacy_ledger_ : PrivacyLedger, three releases.
    n_features_in_ : int.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-1, 1, size=(5000, 3))
    >>> y = X @ np.array([0.5, -0.2, 0.1])
    >>> model = AdaSSP(1.0, 1e-5, x_bound=2.0, y_bound=1.0).fit(X, y)
    >>> np.round(model.coef_, 1), len(model.privacy_ledger_)
    (array([ 0.5, -0.2,  0.1]), 3)
    """

    _parameter_constraints: ClassVar[dict] = {
        **PRIVACY_PARAMETER_CONSTRAINTS,
        "x_bound": [Interval(Real, 0, math.inf, closed="neither"), None],
        "y_bound": [Interval(Real, 0, math.inf, closed="neither"), None],
        "fit_intercept": ["boolean"],
        "x_center": ["array-like", None],
        "y_center": [Real, None],
        "rho": [Interval(Real, 0, 1, closed="neither")],
        "calibration": CALIBRATION_CONSTRAINT,
    }

    def __init__(self, epsilon=1.0, delta=1e-5, *, x_bound=1.0, y_bound=1.0, x_center=None, y_center=None,
                 fit_intercept=True, rho=0.05, calibration="analytic", random_state=None):
        self.epsilon = epsilon
        self.delta = delta
        self.x_bound = x_bound
        self.y_bound = y_bound
        self.x_center = x_center
        self.y_center = y_center
        self.fit_intercept = fit_intercept
        self.rho = rho
        self.calibration = calibration
        self.random_state = random_state

    def _sensitivities(self) -> tuple[float, float, float]:
        bx = float(self.x_bound) * (math.sqrt(2.0) if self.fit_intercept else 1.0)  # the constant column's share
        return bx**2, bx**2, bx * float(self.y_bound)

    def _budgets(self) -> list:
        """(epsilon_i, delta_i) of the three releases: jointly calibrated (analytic) or thirds (module docstring)."""
        e, dl = float(self.epsilon), float(self.delta)
        sens = self._sensitivities()
        if self.calibration != "analytic":
            return [(e / 3, dl / 3)] * 3
        sig = gaussian_sigmas_for_budget(e, dl, sens, "gdp")
        return [(gaussian_epsilon(float(sg), dl / 3, d), dl / 3) for sg, d in zip(sig, sens, strict=False)]

    def mechanisms(self) -> tuple:
        """The three release objects (``engine.privacy.mechanisms``: each draws and records in one call):
        lambda_min and X'y Gaussian, X'X symmetric Gaussian (``MomentsRelease``), at ``_budgets``."""
        (e1, d1), (e2, d2), (e3, d3) = self._budgets()
        s1, s2, s3 = self._sensitivities()
        cal = self.calibration
        return (GaussianMechanism(e1, d1, s1, cal), MomentsRelease(e2, d2, s2, cal),
                GaussianMechanism(e3, d3, s3, cal))

    def _sigmas(self) -> tuple[float, float, float]:
        if math.isinf(float(self.epsilon)):
            return 0.0, 0.0, 0.0
        s1, s2, s3 = (noise_scale("gaussian", e, dl, d, self.calibration)
                      for (e, dl), d in zip(self._budgets(), self._sensitivities(), strict=False))
        return s1, s2, s3

    def fit(self, X, y):
        """Fit on X (n, m) and y (n,): three releases, then the adaptive ridge."""
        self._validate_params()
        X, y = validate_data(self, X, y, dtype=np.float64, y_numeric=True, ensure_min_samples=2)
        if (self.x_center is None) != (self.y_center is None):
            raise ValueError("give both x_center and y_center (a public centre) or neither")
        m = X.shape[1]
        noisy = not math.isinf(float(self.epsilon))
        if noisy and (self.x_bound is None or self.y_bound is None):
            raise ValueError("AdaSSP at finite epsilon needs public x_bound and y_bound (None only at epsilon = inf)")
        xc = np.zeros(m) if self.x_center is None else np.broadcast_to(np.asarray(self.x_center, float), (m,))
        yc = 0.0 if self.y_center is None else float(self.y_center)
        Xs, ys = X - xc, y - yc
        if self.x_bound is not None:
            f, _ = clip_factors(row_norms(Xs), float(self.x_bound))
            Xs = Xs * f[:, None]
        if self.y_bound is not None:
            ys = np.clip(ys, -float(self.y_bound), float(self.y_bound))
        kappa = float(self.x_bound) if self.x_bound is not None else 1.0
        if self.fit_intercept:
            Xs = np.hstack([Xs, np.full((X.shape[0], 1), kappa)])
            m += 1
        s1, s2, _s3 = self._sigmas()
        rng, seed_known = noise_generator(self.random_state)
        XX, Xy = Xs.T @ Xs, Xs.T @ ys
        lam_min = float(np.linalg.eigvalsh(XX)[0])
        # each release records itself as it draws; the accountant whose total meets (epsilon, delta)
        led = PrivacyLedger(accountant="gdp" if noisy and self.calibration == "analytic" else "basic")
        if noisy:
            m1, m2, m3 = self.mechanisms()
            shift = s1 * math.sqrt(2.0 * math.log(3.0 / float(self.delta)))
            lam_min = max(0.0, float(m1.randomise(lam_min, rng, ledger=led, name=RELEASES[0], note=NOTES[0])) - shift)
            XX = m2.randomise(XX, 1, rng, ledger=led, name=RELEASES[1], note=NOTES[1])[0]
            Xy = m3.randomise(Xy, rng, ledger=led, name=RELEASES[2], note=NOTES[2])
            if seed_known:
                led.add_caveat(SEED_KNOWN_CAVEAT)
        lam = max(0.0, s2 * math.sqrt(m * math.log(2.0 * m * m / float(self.rho))) - lam_min) if noisy else 0.0
        A = XX + lam * np.eye(m)
        try:
            theta = np.linalg.solve(A, Xy)
        except np.linalg.LinAlgError:
            theta = np.linalg.lstsq(A, Xy, rcond=None)[0]
        b0 = float(theta[-1] * kappa) if self.fit_intercept else 0.0
        theta = theta[:-1] if self.fit_intercept else theta
        self.coef_ = theta
        self.intercept_ = float(yc + b0 - xc @ theta)
        self.ridge_lambda_ = lam
        self.privacy_ledger_ = led
        return self

    def predict(self, X):
        """X @ coef_ + intercept_, shape (n,)."""
        check_is_fitted(self, "coef_")
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return X @ self.coef_ + self.intercept_
