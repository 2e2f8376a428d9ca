"""Noise calibration for the Gaussian and Laplace mechanisms.

Written by hand because no kept library exposes these as plain functions with the
numerics we need (log-space for eps up to 700, the exact Theorem 8 condition, the
inverse in epsilon):

- ``classic_gaussian_sigma``: Dwork & Roth's sigma = Delta sqrt(2 ln(1.25/delta)) / eps,
  proven only for eps <= 1.
- ``analytic_gaussian_sigma``: Balle & Wang (ICML 2018), Algorithm 1 (doubling, then
  bisection on the exact condition of their Theorem 8). Tight for every eps > 0.
- ``gaussian_delta``: the exact Theorem 8 left-hand side, i.e. the smallest delta for which
  N(0, sigma^2) noise on a Delta-sensitive query is (eps, delta)-DP.
- ``gaussian_epsilon``: the inverse, the smallest eps at a given delta.
- ``laplace_scale``: b = Delta_1 / eps.

Policy, in one place (every mechanism, method and page calls these two):

- ``resolve_calibration``: which Gaussian calibration a request means ("auto" is classic for
  eps <= 1, where its proof holds, and analytic above; "classic" above eps = 1 is refused).
- ``noise_scale``: the noise scale for (law, eps, delta, sensitivity, calibration): sigma for the
  Gaussian law, b for the Laplace law.

Every function is pure, vectorisation-free (scalars in, float out) and validates its input.
"""
from __future__ import annotations

import functools
import math
import warnings

import numpy as np
from scipy.special import log_ndtr, ndtr

__all__ = [
    "UnprovenCalibrationWarning",
    "analytic_gaussian_sigma",
    "classic_gaussian_sigma",
    "gaussian_delta",
    "gaussian_epsilon",
    "laplace_scale",
    "noise_scale",
    "resolve_calibration",
    "zcdp_rho",
    "zcdp_to_epsilon",
]


class UnprovenCalibrationWarning(UserWarning):
    """A calibration was used outside the range where its privacy proof holds."""


def check_eps_delta(epsilon: float, delta: float, *, allow_zero_delta: bool = False) -> None:
    """ValueError unless 0 < epsilon < inf and delta in (0, 1) (or [0, 1) with ``allow_zero_delta``)."""
    if not (isinstance(epsilon, (int, float, np.floating, np.integer)) and math.isfinite(epsilon)):
        raise ValueError(f"epsilon must be a finite number, got {epsilon!r}")
    if epsilon <= 0:
        raise ValueError(f"epsilon must be > 0, got {epsilon}")
    lo_ok = delta >= 0 if allow_zero_delta else delta > 0
    if not (lo_ok and delta < 1):
        raise ValueError(f"delta must be in (0, 1), got {delta}")


def _check_sensitivity(sensitivity: float) -> None:
    if not (math.isfinite(sensitivity) and sensitivity >= 0):
        raise ValueError(f"sensitivity must be a finite number >= 0, got {sensitivity!r}")


def _exp_times_ndtr(log_factor: float, x: float) -> float:
    """exp(log_factor) * Phi(x), computed in log space so that e^eps never overflows."""
    return math.exp(log_factor + float(log_ndtr(x)))


def gaussian_delta(sigma: float, epsilon: float, sensitivity: float = 1.0) -> float:
    """Exact delta of the Gaussian mechanism (Balle & Wang 2018, Theorem 8).

    N(0, sigma^2 I) noise added to a query of L2 sensitivity ``sensitivity`` is
    (epsilon, delta)-DP if and only if delta >= the returned value::

        Phi(D/(2s) - eps s/D) - e^eps Phi(-D/(2s) - eps s/D)

    Returns 0.0 for a zero-sensitivity query.
    """
    if sigma <= 0:
        raise ValueError(f"sigma must be > 0, got {sigma}")
    _check_sensitivity(sensitivity)
    if epsilon < 0:
        raise ValueError(f"epsilon must be >= 0, got {epsilon}")
    if sensitivity == 0:
        return 0.0
    a = sensitivity / (2.0 * sigma)
    b = epsilon * sigma / sensitivity
    value = float(ndtr(a - b)) - _exp_times_ndtr(epsilon, -a - b)
    return max(value, 0.0)


def classic_gaussian_sigma(
    epsilon: float, delta: float, sensitivity: float = 1.0, *, allow_large_epsilon: bool = False
) -> float:
    """Classic Gaussian mechanism: sigma = Delta * sqrt(2 ln(1.25/delta)) / eps.

    The proof (Dwork & Roth 2014, Thm A.1) holds only for eps <= 1. For eps > 1 this
    raises ``ValueError`` unless ``allow_large_epsilon=True``, in which case it returns the
    formula's value with an ``UnprovenCalibrationWarning`` (for comparison tables only:
    such a sigma does not carry an (eps, delta) guarantee).
    """
    check_eps_delta(epsilon, delta)
    _check_sensitivity(sensitivity)
    if epsilon > 1:
        msg = (
            f"the classic Gaussian calibration is proven only for epsilon <= 1 (got {epsilon}); "
            "use analytic_gaussian_sigma"
        )
        if not allow_large_epsilon:
            raise ValueError(msg)
        warnings.warn(msg, UnprovenCalibrationWarning, stacklevel=2)
    return sensitivity * math.sqrt(2.0 * math.log(1.25 / delta)) / epsilon


def analytic_gaussian_sigma(
    epsilon: float, delta: float, sensitivity: float = 1.0, *, tol: float = 1e-14
) -> float:
    """Smallest sigma making the Gaussian mechanism (epsilon, delta)-DP (Balle & Wang 2018).

    Their Algorithm 1: with delta0 = Phi(0) - e^eps Phi(-sqrt(2 eps)),
    if delta >= delta0 find v* = sup{v >= 0: B+(v) <= delta}, alpha = sqrt(1 + v*/2) - sqrt(v*/2);
    else find u* = inf{u >= 0: B-(u) <= delta}, alpha = sqrt(1 + u*/2) + sqrt(u*/2);
    sigma = alpha * Delta / sqrt(2 eps). The search doubles the bracket [0, 1] until the
    predicate flips, then bisects until the bracket is ``tol`` relative wide (or stops
    shrinking), which is tighter than a tolerance on |B - delta| when delta is tiny.
    e^eps is handled in log space, so eps up to several hundred is fine.

    Parameters
    ----------
    epsilon : float > 0
    delta : float in (0, 1)
    sensitivity : float >= 0, the L2 sensitivity Delta. sigma is linear in it.

    Returns
    -------
    sigma : float
    """
    check_eps_delta(epsilon, delta)
    _check_sensitivity(sensitivity)
    if sensitivity == 0:
        return 0.0
    eps = float(epsilon)

    def b_plus(v: float) -> float:
        return float(ndtr(math.sqrt(eps * v))) - _exp_times_ndtr(eps, -math.sqrt(eps * (v + 2.0)))

    def b_minus(u: float) -> float:
        return float(ndtr(-math.sqrt(eps * u))) - _exp_times_ndtr(eps, -math.sqrt(eps * (u + 2.0)))

    delta0 = b_plus(0.0)
    if delta == delta0:
        alpha = 1.0
    else:
        if delta > delta0:
            # B+ increases in v; v* is where it crosses delta from below.
            below = lambda s: b_plus(s) <= delta  # noqa: E731
            to_alpha = lambda s: math.sqrt(1.0 + s / 2.0) - math.sqrt(s / 2.0)  # noqa: E731
        else:
            # B- decreases in u; u* is where it crosses delta from above.
            below = lambda s: b_minus(s) > delta  # noqa: E731
            to_alpha = lambda s: math.sqrt(1.0 + s / 2.0) + math.sqrt(s / 2.0)  # noqa: E731
        lo, hi = 0.0, 1.0
        while below(hi):
            lo, hi = hi, 2.0 * hi
            if hi > 1e300:  # pragma: no cover - cannot happen for delta in (0, 1)
                raise RuntimeError("analytic Gaussian calibration did not bracket")
        for _ in range(2000):
            mid = lo + (hi - lo) / 2.0
            if mid in (lo, hi) or (hi - lo) <= tol * max(hi, 1e-300):
                break
            if below(mid):
                lo = mid
            else:
                hi = mid
        # Take the side that is guaranteed private: for case A the largest v still <= delta
        # (lo); for case B the smallest u already <= delta (hi).
        alpha = to_alpha(lo if delta > delta0 else hi)
    return alpha * sensitivity / math.sqrt(2.0 * eps)


def gaussian_epsilon(sigma: float, delta: float, sensitivity: float = 1.0) -> float:
    """Smallest epsilon for which N(0, sigma^2) noise on a Delta-sensitive query is (eps, delta)-DP.

    The exact inverse of ``gaussian_delta`` in epsilon (bisection; gaussian_delta
    decreases in epsilon). Returns 0.0 when even eps = 0 satisfies delta, and for
    zero sensitivity.
    """
    check_eps_delta(1.0, delta)
    if sensitivity == 0 or gaussian_delta(sigma, 0.0, sensitivity) <= delta:
        return 0.0
    lo, hi = 0.0, 1.0
    while gaussian_delta(sigma, hi, sensitivity) > delta:
        lo, hi = hi, 2.0 * hi
        if hi > 1e6:
            return math.inf
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):
            break
        if gaussian_delta(sigma, mid, sensitivity) > delta:
            lo = mid
        else:
            hi = mid
    return hi


def laplace_scale(epsilon: float, sensitivity: float = 1.0) -> float:
    """Laplace mechanism scale b = Delta_1 / eps (pure eps-DP for an L1-sensitivity Delta_1)."""
    check_eps_delta(epsilon, 0.5)
    _check_sensitivity(sensitivity)
    return sensitivity / float(epsilon)


CALIBRATIONS = ("auto", "analytic", "classic")
NOISE_LAWS = ("gaussian", "laplace")


def resolve_calibration(calibration: str, epsilon: float) -> str:
    """The Gaussian calibration a request means: "analytic" or "classic".

    Parameters
    ----------
    calibration : "auto", "analytic" or "classic"
        "auto" is classic for eps <= 1 (where Dwork & Roth's proof holds, and as the papers print it)
        and analytic above; "analytic" is always analytic; "classic" is classic and refused for
        eps > 1 (its proof does not hold there).
    epsilon : float > 0, or inf (no noise; the answer is then "analytic" for "auto").

    Returns
    -------
    str : "analytic" or "classic".

    Examples
    --------
    >>> resolve_calibration("auto", 0.5), resolve_calibration("auto", 2.0)
    ('classic', 'analytic')
    """
    if calibration not in CALIBRATIONS:
        raise ValueError(f"calibration must be 'auto', 'analytic' or 'classic', got {calibration!r}")
    eps = float(epsilon)
    if calibration == "auto":
        return "classic" if eps <= 1 else "analytic"
    if calibration == "classic" and eps > 1:
        raise ValueError(f"the classic Gaussian calibration is proven only for epsilon <= 1 (got {epsilon}); "
                         "use calibration='auto' or 'analytic'")
    return calibration


@functools.lru_cache(maxsize=8192)
def _cached_scale(law: str, epsilon: float, delta: float, sensitivity: float, calibration: str) -> float:
    if law == "laplace":
        return laplace_scale(epsilon, sensitivity)
    if calibration == "classic":
        return classic_gaussian_sigma(epsilon, delta, sensitivity)
    return analytic_gaussian_sigma(epsilon, delta, sensitivity)


def noise_scale(law: str, epsilon: float, delta: float = 0.0, sensitivity: float = 1.0,
                calibration: str = "analytic") -> float:
    """The one answer to "which noise scale": sigma (Gaussian) or b (Laplace) for a query.

    Parameters
    ----------
    law : "gaussian" or "laplace"
    epsilon : float > 0. ``inf`` gives 0.0 (no noise: a non-private reference).
    delta : float in (0, 1) for the Gaussian law; ignored by the Laplace law.
    sensitivity : float >= 0, L2 (Gaussian) or L1 (Laplace) sensitivity.
    calibration : "auto", "analytic" or "classic" (Gaussian only), resolved by ``resolve_calibration``.

    Returns
    -------
    float : sigma = analytic or classic Gaussian calibration, or b = sensitivity / epsilon.

    Examples
    --------
    >>> round(noise_scale("gaussian", 1.0, 1e-5, 1.0), 6)
    3.730632
    >>> noise_scale("laplace", 2.0, sensitivity=1.0)
    0.5
    """
    if law not in NOISE_LAWS:
        raise ValueError(f"law must be 'gaussian' or 'laplace', got {law!r}")
    eps = float(epsilon)
    if math.isinf(eps) and eps > 0:
        return 0.0
    cal = resolve_calibration(calibration, eps) if law == "gaussian" else "laplace"
    return _cached_scale(law, eps, float(delta), float(sensitivity), cal)


def zcdp_rho(sigma: float, sensitivity: float = 1.0) -> float:
    """rho of the Gaussian mechanism in zero-concentrated DP: rho = Delta^2 / (2 sigma^2)."""
    if sigma <= 0:
        raise ValueError(f"sigma must be > 0, got {sigma}")
    return sensitivity**2 / (2.0 * sigma**2)


def zcdp_to_epsilon(rho: float, delta: float) -> float:
    """(eps, delta) implied by rho-zCDP (Bun & Steinke 2016, Prop. 1.3): eps = rho + 2 sqrt(rho ln(1/delta))."""
    check_eps_delta(1.0, delta)
    if rho < 0:
        raise ValueError(f"rho must be >= 0, got {rho}")
    return rho + 2.0 * math.sqrt(rho * math.log(1.0 / delta))
