"""The private constant predictor: the baseline every private regression must beat (issue #18).

``DPConstantRegressor`` predicts one number, a DP estimate of the mean of y, for every row. Under
add/remove neighbours the count n is private too, so the fit makes two Gaussian releases (basic
composition, shares of epsilon and of delta):

1. the count n + N(0, sigma_n^2), sensitivity 1 (share ``count_share``);
2. the sum of y~_i = clip(y_i - y_c, -B, B) / B, with y_c the midpoint and B the half-width of the
   public ``y_range``: adding or removing one row changes the sum by |y~_i| <= 1, so the sensitivity is 1
   (share 1 - ``count_share``).

The mean is sum / max(n_hat, 1), clipped to [-1, 1] (post-processing), so the prediction stays inside
``y_range``. ``noisy_mean`` is the second release and its post-processing.

With the analytic calibration (the default, issue #30) the budget the count leaves is spent under the exact
Gaussian-DP accountant instead (``private_constant``): mu_rest^2 = mu(epsilon, delta)^2 - (1 / sigma_n)^2 buys
a second count (``COUNT_AGAIN``, a third of mu_rest^2) and the sum (the rest), calibrated jointly, and the mean
is the sum over the inverse-variance combination of the two counts. The error of the mean in y~ units is about
sqrt(sigma_S^2 + m^2 sigma_N^2) / n (m the mean of y~): the 5 % count alone has sigma_N ~ 100 at epsilon = 1,
which swamps n = 60 rows and puts the mean on the edge of ``y_range``; a third of mu^2 is the optimum for
|m| = 1/2. ``StrictEDPLS`` calls the same function when no public axis carries enough signal, so its fallback
IS this predictor.

Written by hand: a dozen lines around ``engine.privacy`` (diffprivlib's ``mean`` assumes a public count).
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
    analytic_gaussian_sigma,
    gaussian_epsilon,
    noise_generator,
)

__all__ = ["COUNT_AGAIN", "COUNT_NOTE", "COUNT_RELEASE", "SUM_NOTE", "SUM_RELEASE", "DPConstantRegressor",
           "noisy_count", "noisy_mean", "private_constant", "y_scale"]

COUNT_RELEASE = "count n"
SUM_RELEASE = "sum of y~"
#: The private constant's second count (``private_constant``), calibrated jointly with the sum.
COUNT_AGAIN = "count n (private constant)"
#: Share of mu^2 (what the first count leaves) that buys the second count.
COUNT_AGAIN_WEIGHT = 1.0 / 3.0


def y_scale(y_range) -> tuple[float, float]:
    """(centre, half-width) of a public range (low, high)."""
    lo, hi = (float(v) for v in y_range)
    if not (math.isfinite(lo) and math.isfinite(hi) and hi > lo):
        raise ValueError(f"y_range must be two finite numbers low < high, got {y_range!r}")
    return (lo + hi) / 2.0, (hi - lo) / 2.0


#: Ledger notes of the two releases (``noisy_count``, ``noisy_mean``), unless the caller gives its own.
COUNT_NOTE = "noisy row count, sensitivity 1"
SUM_NOTE = "sum of clip(y - y_c, -B, B) / B (public y_range), sensitivity 1"


def noisy_count(n: int, epsilon: float, delta: float, calibration: str, rng, *, ledger=None,
                note: str = COUNT_NOTE) -> tuple[float, float]:
    """(n + noise, sigma): the count release (sensitivity 1); sigma = 0 at epsilon = inf.

    ``ledger``: the fit's ``PrivacyLedger``; the release is recorded there by the draw itself (``COUNT_RELEASE``).
    """
    mech = GaussianMechanism(epsilon, delta, 1.0, calibration)
    return float(mech.randomise(float(n), rng, ledger=ledger, name=COUNT_RELEASE, note=note)), mech.sigma


def noisy_mean(yt: np.ndarray, n_hat: float, epsilon: float, delta: float, calibration: str, rng,
               weights=None, *, ledger=None, note: str = SUM_NOTE) -> tuple:
    """(mean of y~ in [-1, 1], sigma): the sum release (sensitivity 1) divided by max(n_hat, 1), clipped.

    ``weights``: None or non-negative integer counts (a row counted c times adds c y~_i: the sum of the
    repeated rows, so the sensitivity stays 1 per repeat). ``ledger``: recorded there by the draw itself
    (``SUM_RELEASE``)."""
    mech = GaussianMechanism(epsilon, delta, 1.0, calibration)
    total = np.sum(yt) if weights is None else np.dot(np.asarray(weights, dtype=float), yt)
    s = float(mech.randomise(float(total), rng, ledger=ledger, name=SUM_RELEASE, note=note))
    return float(np.clip(s / max(float(n_hat), 1.0), -1.0, 1.0)), mech.sigma


def private_constant(yt: np.ndarray, n_rows: float, n_hat: float, spent: dict, epsilon: float, delta: float,
                     calibration: str, rng, weights=None, *, ledger=None, notes: dict | None = None) -> tuple:
    """(mean of y~ in [-1, 1], budget, sigmas, accountant): the private constant's releases after ``spent``.

    ``spent``: name -> (epsilon_i, delta_i, sigma_i) of the releases already drawn on these rows (the first
    count, keyed ``COUNT_RELEASE`` or the caller's name as the first entry, and e.g. a private range), each of
    sensitivity 1; ``n_hat`` is that first count. Analytic calibration: the rest of the Gaussian-DP budget buys
    ``COUNT_AGAIN`` and the sum jointly (module docstring; accountant "gdp"); otherwise the sum alone with the
    rest of (epsilon, delta) under basic composition. ``n_rows``: the exact (weighted) row count the second
    count perturbs. ``budget``/``sigmas``: the new releases' (epsilon_i, delta_i) and sigma_i.
    """
    notes = notes or {}
    eps_rest = math.inf if math.isinf(float(epsilon)) else float(epsilon) - sum(v[0] for v in spent.values())
    dl_rest = float(delta) - sum(v[1] for v in spent.values())
    budget, sigmas = {}, {}
    if calibration == "analytic" and not math.isinf(float(epsilon)):
        mu2 = (1.0 / analytic_gaussian_sigma(float(epsilon), float(delta), 1.0)) ** 2
        mu2 -= sum((1.0 / v[2]) ** 2 for v in spent.values())
        cw = COUNT_AGAIN_WEIGHT
        sig_n, sig_s = (1.0 / math.sqrt(max(mu2 * f, 1e-300)) for f in (cw, 1.0 - cw))
        budget[COUNT_AGAIN] = (gaussian_epsilon(sig_n, dl_rest * cw, 1.0), dl_rest * cw)
        n2 = float(GaussianMechanism(*budget[COUNT_AGAIN], 1.0, calibration).randomise(
            float(n_rows), rng, ledger=ledger, name=COUNT_AGAIN, note=notes.get(COUNT_AGAIN, COUNT_NOTE)))
        sigmas[COUNT_AGAIN] = sig_n
        w1, w2 = 1.0 / next(iter(spent.values()))[2] ** 2, 1.0 / sig_n**2
        n_comb = (w1 * n_hat + w2 * n2) / (w1 + w2)
        eps_s, dl_s, accountant = gaussian_epsilon(sig_s, dl_rest * (1 - cw), 1.0), dl_rest * (1 - cw), "gdp"
    else:
        eps_s, dl_s, n_comb, accountant = eps_rest, dl_rest, n_hat, "basic"
    mean, sigma = noisy_mean(yt, n_comb, eps_s, dl_s, calibration, rng, weights=weights, ledger=ledger,
                             note=notes.get(SUM_RELEASE, SUM_NOTE))
    budget[SUM_RELEASE], sigmas[SUM_RELEASE] = (eps_s, dl_s), sigma
    return mean, budget, sigmas, accountant


class DPConstantRegressor(RegressorMixin, BaseEstimator):
    """(epsilon, delta)-DP constant predictor: the noisy mean of y clipped to the public ``y_range``.

    Parameters
    ----------
    epsilon : float > 0 or np.inf (the exact mean, empty ledger).
    delta : float in (0, 1).
    y_range : (low, high), the public range of y.
    count_share : float in (0, 1), the share of the budget spent on the count (default 0.05).
    calibration : "analytic", "classic" or "auto".
    random_state : None (fresh OS entropy) or a known seed (ledger: not proven).

    Attributes
    ----------
    constant_ : float, the prediction.
    privacy_ledger_ : PrivacyLedger (three releases under the "gdp" accountant with the analytic calibration;
        otherwise two, basic composition).
    n_features_in_ : int.

    Examples
    --------
    >>> import numpy as np
    >>> y = np.random.default_rng(0).uniform(2, 4, size=5000)
    >>> model = DPConstantRegressor(1.0, 1e-5, y_range=(0, 10)).fit(np.zeros((5000, 1)), y)
    >>> abs(model.constant_ - 3.0) < 0.1, len(model.privacy_ledger_)
    (True, 3)
    """

    _parameter_constraints: ClassVar[dict] = {
        **PRIVACY_PARAMETER_CONSTRAINTS,
        "y_range": [tuple, list, np.ndarray],
        "count_share": [Interval(Real, 0, 1, closed="neither")],
        "calibration": CALIBRATION_CONSTRAINT,
    }

    def __init__(self, epsilon=1.0, delta=1e-5, *, y_range=(0.0, 1.0), count_share=0.05, calibration="analytic",
                 random_state=None):
        self.epsilon = epsilon
        self.delta = delta
        self.y_range = y_range
        self.count_share = count_share
        self.calibration = calibration
        self.random_state = random_state

    def fit(self, X, y):
        """Fit on X (n, m) (only its row count is used, privately) and y (n,)."""
        self._validate_params()
        X, y = validate_data(self, X, y, dtype=np.float64, y_numeric=True, ensure_min_samples=1)
        yc, yb = y_scale(self.y_range)
        rng, seed_known = noise_generator(self.random_state)
        eps, dlt, cs = float(self.epsilon), float(self.delta), float(self.count_share)
        led = PrivacyLedger()  # each draw records itself (nothing at epsilon = inf)
        n_hat, sig_n = noisy_count(len(y), eps * cs, dlt * cs, self.calibration, rng, ledger=led)
        mean, _, _, accountant = private_constant(np.clip(y - yc, -yb, yb) / yb, len(y), n_hat,
                                                  {COUNT_RELEASE: (eps * cs, dlt * cs, sig_n)}, eps, dlt,
                                                  self.calibration, rng, ledger=led)
        self.constant_ = yc + yb * mean
        if seed_known and len(led):
            led.add_caveat(SEED_KNOWN_CAVEAT)
        led.accountant = accountant
        self.privacy_ledger_ = led
        return self

    def predict(self, X):
        """The constant, shape (n,)."""
        check_is_fitted(self, "constant_")
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return np.full(X.shape[0], self.constant_)
