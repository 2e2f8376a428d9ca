"""A private range of a response with no bounds to guess: a noisy histogram over a public log-spaced grid.

``private_range(y, epsilon, delta, rng)`` releases one Gaussian histogram of y over the public grid
``LOG_GRID`` (0, then +-10^(k/16) for k = -96..144: 1e-6 to 1e9 in steps of 15 %, values beyond the ends
counted in the end bins). Adding or removing one row changes one bin count by 1, so the L2 sensitivity is 1.
Post-processing, level by level (window widths k = 1, 2, 4, ..., 64 adjacent bins): the windows whose
summed noisy count exceeds tau_k = sigma sqrt(k) Phi^-1(1 - 0.001 / (n_bins n_levels)) (a window with no row
passes with probability <= 0.001 / (n_bins n_levels), so every empty one stays below with probability >= 99.9 %;
at 5 % a spurious bin far from the data stretched the range to the declared bound in 3 of 600 fits of the edPLS
page's default sample, and the model then scored up to 3.5 sigma_y)
are the occupied ones; the range is [lowest edge, highest edge] of them at the finest level where any window
passes (few rows spread over many bins pass only at a coarser level; when none passes, the 2-bin window of the
largest noisy count). Then the
range grows into its tails: a window of k <= 8 bins right next to it (below or above, ``GROW_LEVELS``) whose noisy
sum exceeds sigma sqrt(k) Phi^-1(1 - 0.01 / (2 n_grow_levels)) is added, again until none is (``GROW_RATE``: an
empty neighbour passes a step with probability <= 1 %, and then widens the range by at most 8 bins, a factor
1.155^8 = 3.2; with 64-bin windows a false step stretched it up to 10^4 times in 0.2 % of draws). Why: a
response spread thinly over many bins has tails no single window holds enough rows of to pass the family-wide
threshold, and clipping them biases the fit: scikit-learn's diabetes (354 rows, 28 % below 100) at epsilon = 2
got [115, 274], an intercept 0.43 sigma_y off and RMSEP 1.076 sigma_y against the private constant's 1.005; with
the growth 1.005 (median of 20 splits; NIR spectra unchanged, the range there is one or two dense bins). Rows
beyond the range are clipped by the fit that uses it, which costs bias in the tails only.

Zoom (analytic calibration): the histogram is drawn in two halves, each with sigma sqrt(2) times the whole's, so
that their Gaussian-DP mu compose exactly to the whole's (mu^2 = mu_1^2 + mu_2^2; Dong, Roth & Su). The first half
is read alone. When a window of 1 or 2 bins passes its threshold there and the range it gives, grown (at the
stricter ``ZOOM_GROW_RATE``), spans at most ``ZOOM_MAX_SPAN`` log bins (a compact response), the second half is a
histogram over ``ZOOM_BINS`` equal bins of that range widened by one log bin on each side (a public grid by then:
post-processing of the first half), with y clipped into it, read by the same windows and growth (threshold of its
own bins) and widened by one zoom bin on each side (``ZOOM_MARGIN``): the tails that pass no threshold are clipped
by less. Otherwise the second half is drawn over the log grid again and the two halves' mean is the whole histogram,
exactly as one draw (the same law, the same reading above). Why: the log grid's 15 % bins are wide for a response
far from 0 with a small spread: corn's starch (sd 0.8 around 65) landed in [56.2, 75.0], a half-width of 9.4, and the
private constant's error is that half-width times the noise of its mean. With the classic calibration (basic
composition) the halves would cost more than the whole: one draw.

Written by hand: OpenDP has private quantiles but over a caller's bounded candidate set with its own
accounting; this is the one Gaussian release the strict estimators' ledgers already compose.
"""
from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import ndtri

from .calibration import gaussian_epsilon
from .ledger import PrivacyLedger
from .mechanisms import GaussianMechanism, RandomStateLike

__all__ = ["LOG_GRID", "RANGE_RELEASE", "RANGE_RELEASE_2", "ZOOM_BINS", "ZOOM_RELEASE", "half_mechanism",
           "private_range", "range_counts", "window_threshold", "zoom_counts"]

RANGE_RELEASE = "histogram of y (public log grid)"
#: The second half of the log-grid histogram (drawn when the first finds no dense window).
RANGE_RELEASE_2 = "histogram of y (second half on the log grid)"
#: The second half as a zoom over equal bins of the first half's dense window.
ZOOM_RELEASE = "histogram of y (zoom grid)"
#: Equal bins of the zoom grid.
ZOOM_BINS = 32
#: Its window widths.
ZOOM_LEVELS = (1, 2, 4, 8, 16, 32)
#: The widest window of the first half that counts as dense (in log bins).
ZOOM_MAX_LEVEL = 2
#: The widest range (in log bins, grown) of the first half that is zoomed into: a compact response.
ZOOM_MAX_SPAN = 3
#: Zoom bins added on each side of the zoomed range.
ZOOM_MARGIN = 1
_POS = 10.0 ** (np.arange(-96, 145) / 16.0)
#: The public bin edges: symmetric, log-spaced, 0 in the middle.
LOG_GRID = np.concatenate([-_POS[::-1], [0.0], _POS])
#: Window widths (in bins) tried from the finest: 64 bins span a factor 10^4.
LEVELS = (1, 2, 4, 8, 16, 32, 64)
#: The chance that any window holding no row passes its threshold (all bins and levels together).
FALSE_WINDOW_RATE = 0.001
#: The chance that an empty window next to the range passes one growth step (both sides, all levels together).
GROW_RATE = 0.01
#: Window widths a growth step tries: at most 8 bins, so a false step widens the range by a factor <= 3.2.
GROW_LEVELS = (1, 2, 4, 8)
#: ``GROW_RATE`` of the first half's growth, which only decides whether the response is compact enough to zoom
#: into: a false step there skipped the zoom, and the two halves' log-grid read, with a false step of its own,
#: then widened the range 15-fold (3 in 20,000 draws on the edPLS page's default sample, where the fit then scored
#: 1.5 sigma_y against 0.1; at this rate none, and 3 instead of 29 ranges over twice the usual width). A real tail
#: still stops the zoom, at a higher threshold.
ZOOM_GROW_RATE = 0.001


def range_counts(y: ArrayLike) -> np.ndarray:
    """The exact histogram of y over ``LOG_GRID`` (values beyond the ends in the end bins): what the range's
    release perturbs (sensitivity 1: one row changes one bin by 1)."""
    y = np.asarray(y, dtype=float)
    idx = np.clip(np.searchsorted(LOG_GRID, y, side="right") - 1, 0, LOG_GRID.size - 2)
    return np.bincount(idx, minlength=LOG_GRID.size - 1).astype(float)


def private_range(y: ArrayLike, epsilon: float, delta: float, rng: RandomStateLike, calibration: str = "analytic",
                  *, ledger: PrivacyLedger | None = None, note: str = "",
                  mechanism: GaussianMechanism | None = None, zoom: bool = True,
                  ) -> tuple[tuple[float, float], float, dict[str, str | float]]:
    """((low, high), sigma, facts): a DP range of y from a noisy histogram (module docstring); sigma is the
    whole histogram's (each half's is sqrt(2) times it).

    ``ledger``: the fit's ``PrivacyLedger``; the histogram records itself there as it is drawn
    (``RANGE_RELEASE``). ``epsilon = inf``: the exact occupied range [min y, max y] (no noise, no record).
    ``mechanism``: the caller's release object for the histogram (``StrictEDPLS.mechanisms``, so that its audit
    samples the same object); None: ``GaussianMechanism(epsilon, delta, 1, calibration)``. ``zoom``: draw it in two
    halves, the second a zoom when the first finds a dense window (module docstring); False: one draw (a caller
    whose fit composes under basic composition, where two halves would cost more than the whole)."""
    y = np.asarray(y, dtype=float)
    if math.isinf(float(epsilon)):
        lo, hi = float(np.min(y)), float(np.max(y))
        if hi <= lo:
            hi = lo + max(abs(lo), 1.0) * 1e-6
        return (lo, hi), 0.0, {"how": "exact min and max of y (epsilon = inf)"}
    mech = GaussianMechanism(epsilon, delta, 1.0, calibration) if mechanism is None else mechanism
    sigma = mech.sigma
    counts = range_counts(y)
    note = note or "Gaussian histogram of y over a public log-spaced grid (sensitivity 1)"
    half = half_mechanism(mech) if zoom else None
    if half is None:  # one draw (module docstring)
        noisy = mech.randomise(counts, rng, ledger=ledger, name=RANGE_RELEASE, note=note)
        rng_hi, facts = _read(noisy, sigma)
        return rng_hi, sigma, facts
    first = half.randomise(counts, rng, ledger=ledger, name=RANGE_RELEASE, note=note + ", first half")
    cum = np.concatenate([[0.0], np.cumsum(first)])
    dense = _occupied(cum, half.sigma, LEVELS[:LEVELS.index(ZOOM_MAX_LEVEL) + 1],
                      window_threshold(half.sigma, 1), grow_rate=ZOOM_GROW_RATE)
    if dense is None or dense[0][1] - dense[0][0] > ZOOM_MAX_SPAN:
        second = half.randomise(counts, rng, ledger=ledger, name=RANGE_RELEASE_2, note=note + ", second half")
        (lo, hi), facts = _read((first + second) / 2.0, sigma)
        facts["how"] = f"{facts['how']} (two halves, no dense window in the first)"
        return (lo, hi), sigma, facts
    (a, b), how, _ = dense
    low, high = float(LOG_GRID[max(a - 1, 0)]), float(LOG_GRID[min(b + 1, LOG_GRID.size - 1)])
    zoomed = half.randomise(zoom_counts(y, low, high), rng, ledger=ledger, name=ZOOM_RELEASE,
                            note=f"Gaussian histogram of y over {ZOOM_BINS} equal bins of the first half's dense "
                                 "window (sensitivity 1)")
    edges = np.linspace(low, high, ZOOM_BINS + 1)
    found = _occupied(np.concatenate([[0.0], np.cumsum(zoomed)]), half.sigma, ZOOM_LEVELS,
                      window_threshold(half.sigma, 1, n_bins=ZOOM_BINS, n_levels=len(ZOOM_LEVELS)))
    if found is None:
        return (float(LOG_GRID[a]), float(LOG_GRID[b])), sigma, {
            "how": f"first half: {how}; no window of its zoom passes", "threshold": window_threshold(half.sigma, 1)}
    (zl, zh), zhow, tau = found
    zl, zh = max(zl - ZOOM_MARGIN, 0), min(zh + ZOOM_MARGIN, ZOOM_BINS)
    return (float(edges[zl]), float(edges[zh])), sigma, {
        "how": f"first half: {how}; zoomed to {ZOOM_BINS} equal bins of [{low:.6g}, {high:.6g}]: {zhow}, "
               f"widened by {ZOOM_MARGIN} bin(s)", "threshold": tau}


def half_mechanism(mech: GaussianMechanism) -> GaussianMechanism | None:
    """A Gaussian mechanism with sigma sqrt(2) times ``mech``'s at half its delta: two of them compose under
    Gaussian DP exactly to ``mech`` (module docstring). None for a calibration other than "analytic"."""
    if mech.calibration != "analytic" or math.isinf(float(mech.epsilon)):
        return None
    d = float(mech.delta) / 2.0
    return GaussianMechanism(gaussian_epsilon(math.sqrt(2.0) * mech.sigma, d, mech.sensitivity), d,
                             mech.sensitivity, "analytic")


def _read(noisy: np.ndarray, sigma: float) -> tuple[tuple[float, float], dict[str, str | float]]:
    """The range one noisy log-grid histogram of per-bin noise ``sigma`` gives (module docstring)."""
    edges = LOG_GRID
    cum = np.concatenate([[0.0], np.cumsum(noisy)])
    found = _occupied(cum, sigma, LEVELS, window_threshold(sigma, 1))
    if found is not None:
        (lo, hi), how, tau = found
        return (float(edges[lo]), float(edges[hi])), {"how": how, "threshold": tau}
    # Nothing passes: the 2-bin window of the largest noisy count (a response of small relative spread often
    # straddles a bin edge; its single argmax bin clipped half of corn's starch, 60 rows at epsilon = 0.5)
    j = int(np.argmax(cum[2:] - cum[:-2]))
    return (float(edges[j]), float(edges[j + 2])), {"how": "no window above its threshold: the two adjacent bins of "
                                                            "the largest noisy count", "threshold": math.inf}


def zoom_counts(y: ArrayLike, low: float, high: float) -> np.ndarray:
    """The exact histogram of y clipped into [low, high] over ``ZOOM_BINS`` equal bins: what the zoom half
    perturbs (sensitivity 1: one row changes one bin by 1)."""
    v = np.clip(np.asarray(y, dtype=float), low, high)
    idx = np.clip(((v - low) / (high - low) * ZOOM_BINS).astype(int), 0, ZOOM_BINS - 1)
    return np.bincount(idx, minlength=ZOOM_BINS).astype(float)


def _occupied(cum: np.ndarray, sigma: float, levels: tuple[int, ...], tau1: float, *,
              grow_rate: float = GROW_RATE) -> tuple[tuple[int, int], str, float] | None:
    """((lo, hi) bin indices, how, threshold) of the occupied windows at the finest passing level of ``levels``,
    grown into the tails (``_grown`` at ``grow_rate``); None when no window passes. ``tau1``: the one-bin
    threshold (k bins: sqrt(k) times)."""
    for k in levels:
        window = cum[k:] - cum[:-k]  # window j covers bins j .. j + k - 1
        tau = tau1 * math.sqrt(k)
        hit = np.flatnonzero(window > tau)
        if hit.size:
            first, last = int(hit.min()), int(hit.max()) + k
            lo, hi = _grown(cum, first, last, sigma, grow_rate)
            how = f"windows of {k} bin(s) with a noisy count above {tau:.3g} (sigma {sigma:.3g} per bin)"
            if (lo, hi) != (first, last):
                how += f", grown by {first - lo} bin(s) below and {hi - last} above into its tails"
            return (lo, hi), how, tau
    return None


def window_threshold(sigma: float, k: int = 1, *, n_bins: int = LOG_GRID.size - 1,
                     n_levels: int = len(LEVELS)) -> float:
    """The noisy count a window of ``k`` bins must exceed to count as occupied (module docstring): a window with
    no row passes with probability <= ``FALSE_WINDOW_RATE`` over all bins and levels together (the log grid's by
    default; the zoom's: ``ZOOM_BINS`` and ``len(ZOOM_LEVELS)``)."""
    z = float(ndtri(1.0 - FALSE_WINDOW_RATE / (n_bins * n_levels)))
    return float(sigma) * math.sqrt(k) * z


def _grown(cum: np.ndarray, lo: int, hi: int, sigma: float, grow_rate: float = GROW_RATE) -> tuple[int, int]:
    """Bins [lo, hi) grown by adjacent windows whose noisy sum passes the growth threshold (module docstring): an
    empty neighbour passes a step with probability <= ``grow_rate``."""
    z = float(ndtri(1.0 - grow_rate / (2 * len(GROW_LEVELS))))
    n_bins = cum.size - 1
    grew = True
    while grew:  # ends: every step adds >= 1 bin and the grid is finite
        grew = False
        for k in GROW_LEVELS:
            tau = sigma * math.sqrt(k) * z
            if lo - k >= 0 and cum[lo] - cum[lo - k] > tau:
                lo, grew = lo - k, True
                break
            if hi + k <= n_bins and cum[hi + k] - cum[hi] > tau:
                hi, grew = hi + k, True
                break
    return lo, hi
