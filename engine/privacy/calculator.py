"""Calculator functions behind the 'Noise & budget calculator' page (pure, notebook-usable)."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from .calibration import analytic_gaussian_sigma, classic_gaussian_sigma, laplace_scale
from .ledger import PrivacyLedger, Release, gaussian_sigmas_for_budget

__all__ = ["compose_identical_gaussian", "per_release_sigma_table", "sigma_curve"]


def sigma_curve(epsilons: ArrayLike, delta: float, sensitivity: float = 1.0) -> pd.DataFrame:
    """Noise scale against epsilon for the analytic Gaussian, the classic Gaussian (eps <= 1 only)
    and the Laplace mechanism (same numeric sensitivity, read as L1).

    Returns a DataFrame with columns epsilon, analytic_sigma, classic_sigma (NaN where eps > 1,
    since the formula is unproven there), laplace_scale.
    """
    rows = []
    for eps in np.asarray(epsilons, dtype=float):
        rows.append(
            {
                "epsilon": eps,
                "analytic_sigma": analytic_gaussian_sigma(eps, delta, sensitivity),
                "classic_sigma": classic_gaussian_sigma(eps, delta, sensitivity) if eps <= 1 else math.nan,
                "laplace_scale": laplace_scale(eps, sensitivity),
            }
        )
    return pd.DataFrame(rows)


def compose_identical_gaussian(sigma: float, sensitivity: float, k: int, delta_each: float,
                               delta_total: float) -> dict[str, tuple[float, float]]:
    """Total (eps, delta) of k identical Gaussian releases, every accounting method.

    Returns dict method -> (epsilon, delta), methods basic, zcdp, pld, gdp.
    """
    if k < 1:
        raise ValueError("k must be >= 1")
    ledger = PrivacyLedger([Release.gaussian(name=f"release {i + 1}", sigma=sigma, sensitivity=sensitivity,
                                                delta=delta_each) for i in range(k)])
    return {
        "basic": ledger.total("basic"),
        "zcdp": ledger.total("zcdp", delta_total),
        "pld": ledger.total("pld", delta_total),
        "gdp": ledger.total("gdp", delta_total),
    }


def per_release_sigma_table(epsilon: float, delta: float, sensitivity: float, k: int) -> pd.DataFrame:
    """sigma each of k equal releases needs so that all k together are (epsilon, delta)-DP."""
    rows = []
    for method, label in (("gdp", "exact (Gaussian composition)"), ("zcdp", "zCDP"), ("basic", "basic composition")):
        s = gaussian_sigmas_for_budget(epsilon, delta, [sensitivity] * k, method=method)[0]
        rows.append({"accounting": label, "sigma_per_release": s, "noise_multiplier": s / sensitivity})
    return pd.DataFrame(rows)
