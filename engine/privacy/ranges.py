"""A private range of a response with no bounds to guess: a noisy histogram over a public log-spaced grid.

``private_range(y, epsilon, delta, rng)`` releases one Gaussian histogram of y over the public grid
``LOG_GRID`` (0, then +-10^(k/16) for k = -96..144: 1e-6 to 1e9 in steps of 15 %, values beyond the ends
counted in the end bins). Adding or removing one row changes one bin count by 1, so the L2 sensitivity is 1.
Post-processing: the bins whose noisy count exceeds tau = sigma * Phi^-1(1 - 0.05 / n_bins) (a bin with no
row passes with probability <= 0.05 / n_bins, so all empty bins stay below with probability >= 95 %) are the
occupied ones; the range is [lowest edge, highest edge] of them (the argmax bin when none passes). Rows
beyond it are clipped by the fit that uses it, which costs bias in the tails only.

Written by hand: OpenDP has private quantiles but over a caller's bounded candidate set with its own
accounting; this is the one Gaussian release the strict estimators' ledgers already compose.
"""
from __future__ import annotations

import math

import numpy as np
from scipy.special import ndtri

from .mechanisms import GaussianMechanism

__all__ = ["LOG_GRID", "RANGE_RELEASE", "private_range"]

RANGE_RELEASE = "histogram of y (public log grid)"
_POS = 10.0 ** (np.arange(-96, 145) / 16.0)
#: The public bin edges: symmetric, log-spaced, 0 in the middle.
LOG_GRID = np.concatenate([-_POS[::-1], [0.0], _POS])


def private_range(y, epsilon: float, delta: float, rng, calibration: str = "analytic", *, ledger=None,
                  note: str = "") -> tuple:
    """((low, high), sigma, facts): a DP range of y from one noisy histogram (module docstring).

    ``ledger``: the fit's ``PrivacyLedger``; the histogram records itself there as it is drawn
    (``RANGE_RELEASE``). ``epsilon = inf``: the exact occupied range [min y, max y] (no noise, no record)."""
    y = np.asarray(y, dtype=float)
    if math.isinf(float(epsilon)):
        lo, hi = float(np.min(y)), float(np.max(y))
        if hi <= lo:
            hi = lo + max(abs(lo), 1.0) * 1e-6
        return (lo, hi), 0.0, {"how": "exact min and max of y (epsilon = inf)"}
    mech = GaussianMechanism(epsilon, delta, 1.0, calibration)
    sigma = mech.sigma
    edges = LOG_GRID
    idx = np.clip(np.searchsorted(edges, y, side="right") - 1, 0, edges.size - 2)
    counts = np.bincount(idx, minlength=edges.size - 1).astype(float)
    noisy = mech.randomise(counts, rng, ledger=ledger, name=RANGE_RELEASE,
                           note=note or "Gaussian histogram of y over a public log-spaced grid (sensitivity 1)")
    tau = sigma * float(ndtri(1.0 - 0.05 / counts.size))
    hit = np.flatnonzero(noisy > tau)
    if hit.size == 0:
        hit = np.array([int(np.argmax(noisy))])
        how = "no bin above the threshold: the bin of the largest noisy count"
    else:
        how = f"bins with a noisy count above {tau:.3g} (sigma {sigma:.3g})"
    return (float(edges[hit.min()]), float(edges[hit.max() + 1])), sigma, {"how": how, "threshold": tau}
