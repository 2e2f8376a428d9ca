"""Know before fitting (issue #31): what private accuracy to expect, from public information only.

:func:`plan_private_fit` states, for a data set's shape (training rows n, channels p), the chosen (epsilon, delta)
and what the user declares public (a y range, public spectra), the median RMSEP / sigma_y the recommended strict
estimator (``make_strict_edpls``) reaches on spectra like the NIR benchmark, how many rows it would take to reach
RMSEP / sigma_y = 0.5 at this epsilon, which epsilon would do it with these rows, and what public spectra would
change. It reads no data: its arguments are counts, the budget and two yes/no declarations, so a plan cannot leak
anything about private rows (a test changes y and gets the same plan).

The numbers come from a table measured by ``bench/make_planner_curves.py`` (``planner_curves.CURVES``: median and
quartiles over replicates on the NIR generator, moisture, 350 channels, delta = 1e-5) and are interpolated
linearly in (log n, log epsilon), clamped to the measured grid. A delta other than 1e-5 is mapped to the epsilon
with the same Gaussian noise scale at 1e-5 (sigma grows with sqrt(log(1.25 / delta)) / epsilon): an approximation,
said in the plan. The estimator releases at most a few tens of projected dimensions whatever p is, so the curves
carry over across channel counts (p below the estimator's minimum gets no plan). They are a guide for spectra
like the benchmark's (one well-expressed property): a weaker signal needs more rows.

Written by hand: a lookup and interpolation in a measured table; no kept library plans DP fits.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from engine.methods.edpls.recommended_limits import MIN_CHANNELS

__all__ = ["TARGET", "Plan", "plan_for_problem", "plan_private_fit", "ratio_at", "rows_to_reach"]

#: The accuracy the plan counts rows for: RMSEP / sigma_y = 0.5 (three quarters of the variance explained).
TARGET = 0.5
#: An expected ratio at or above this is "no better than predicting the mean".
USELESS = 0.95


def _table():
    from engine.methods.edpls import planner_curves

    return planner_curves


def _grid_interp(x: float, grid) -> tuple[int, int, float]:
    """Neighbouring grid indices and the weight of the upper one, in log space, x clamped to the grid."""
    lg = np.log(np.asarray(grid, dtype=float))
    lx = min(max(math.log(x), lg[0]), lg[-1])
    j = int(np.searchsorted(lg, lx))
    if j == 0:
        return 0, 0, 0.0
    return j - 1, j, float((lx - lg[j - 1]) / (lg[j] - lg[j - 1]))


def ratio_at(curve: dict, n: float, epsilon: float, which: int = 0) -> float:
    """Interpolated RMSEP / sigma_y of one setting's curve (``which``: 0 median, 1 q25, 2 q75) at (n, epsilon)."""
    ns, eps = sorted(curve), sorted(next(iter(curve.values())))
    i0, i1, wn = _grid_interp(n, ns)
    j0, j1, we = _grid_interp(epsilon, eps)

    def at(i, j):
        return math.log(curve[ns[i]][eps[j]][which])

    low = (1 - we) * at(i0, j0) + we * at(i0, j1)
    high = (1 - we) * at(i1, j0) + we * at(i1, j1)
    return float(math.exp((1 - wn) * low + wn * high))


def rows_to_reach(curve: dict, epsilon: float, target: float = TARGET) -> int | None:
    """The fewest rows (log-log interpolation on the n grid) at which the median reaches ``target`` at
    ``epsilon``; the smallest grid n when it is already there, None when no n on the grid reaches it."""
    ns = sorted(curve)
    r = [ratio_at(curve, n, epsilon) for n in ns]
    for k, (n, v) in enumerate(zip(ns, r, strict=True)):
        if v <= target:
            if k == 0:
                return int(n)
            lo, hi = math.log(r[k - 1]), math.log(v)
            t = (lo - math.log(target)) / (lo - hi)
            return int(round(math.exp(math.log(ns[k - 1]) + t * (math.log(n) - math.log(ns[k - 1])))))
    return None


def epsilon_to_reach(curve: dict, n: int, target: float = TARGET) -> float | None:
    """The smallest epsilon on the measured range at which the median reaches ``target`` with n rows, or None."""
    eps = sorted(next(iter(curve.values())))
    for e in np.geomspace(eps[0], eps[-1], 60):
        if ratio_at(curve, n, float(e)) <= target:
            return float(e)
    return None


def equivalent_epsilon(epsilon: float, delta: float, table_delta: float) -> float:
    """The epsilon at ``table_delta`` with the Gaussian noise scale of (epsilon, delta): sigma is proportional to
    sqrt(2 log(1.25 / delta)) / epsilon (the classical calibration; an approximation for the analytic one)."""
    if not 0 < delta < 1:
        return epsilon
    return float(epsilon * math.sqrt(math.log(1.25 / table_delta) / math.log(1.25 / delta)))


@dataclass(frozen=True)
class Plan:
    """What to expect from a private fit, before fitting (public information only).

    expected_ratio : median RMSEP / sigma_y expected (1: as good as predicting the mean; above 1: worse).
    expected_band : (q25, q75) of the measured runs around it.
    rows_to_half_sd : training rows to reach RMSEP / sigma_y = 0.5 at this epsilon (None: more than the largest
        measured n, ``max_rows``).
    epsilon_to_half_sd : epsilon that would reach it with these rows (None: not up to ``max_epsilon``).
    rows_to_half_sd_public : the same rows with public spectra declared (equal to rows_to_half_sd when they are).
    text : the plan in words.
    """

    n_rows: int
    n_features: int
    epsilon: float
    delta: float
    y_range_declared: bool
    public_spectra: bool
    applicable: bool
    expected_ratio: float
    expected_band: tuple
    rows_to_half_sd: int | None
    epsilon_to_half_sd: float | None
    rows_to_half_sd_public: int | None
    max_rows: int
    max_epsilon: float
    text: str

    @property
    def beats_mean(self) -> bool:
        """The expected private model predicts better than the mean (expected_ratio below ``USELESS``)."""
        return self.expected_ratio < USELESS


def _rows_text(rows: int | None, max_rows: int) -> str:
    return f"more than {max_rows:,}" if rows is None else f"about {rows:,}"


def _sentence(p: Plan) -> str:
    head = (f"With {p.n_rows:,} training rows and {p.n_features:,} channels at ε = {p.epsilon:g}, expect a private "
            f"RMSEP of about {p.expected_ratio:.2g} σ_y (middle half of the measured runs "
            f"{p.expected_band[0]:.2g}–{p.expected_band[1]:.2g} σ_y)")
    if p.expected_ratio >= 1.05:
        head += ": worse than predicting the mean"
    elif not p.beats_mean:
        head += ": no better than predicting the mean"
    elif p.expected_ratio <= TARGET:
        head += ": a useful model"
    else:
        head += ": better than the mean, though weak"
    parts = [head + "."]
    if p.expected_ratio > TARGET:
        rows = ("no number of rows up to " f"{p.max_rows:,} would reach RMSEP = {TARGET:g} σ_y at this ε"
                if p.rows_to_half_sd is None else
                f"{_rows_text(p.rows_to_half_sd, p.max_rows)} rows would reach RMSEP = {TARGET:g} σ_y at this ε")
        eps = (f"with these rows no ε up to {p.max_epsilon:g} would" if p.epsilon_to_half_sd is None else
               f"with these rows ε ≈ {p.epsilon_to_half_sd:.2g} would")
        parts.append(f"{rows[0].upper()}{rows[1:]}; {eps}.")
        if not p.public_spectra and p.rows_to_half_sd_public != p.rows_to_half_sd:
            parts.append("Declaring public spectra (unlabelled spectra of the same kind you may publish) would "
                         f"lower that to {_rows_text(p.rows_to_half_sd_public, p.max_rows)} rows.")
    declared = ("a declared y range" if p.y_range_declared else "no y range (a private estimate)") + (
        " and public spectra" if p.public_spectra else ", no public spectra")
    width = (" the measured range is [0, 100] % for a property with σ_y ≈ 0.4 %, about 250 σ_y wide: a tighter "
             "public range does better with few rows;" if p.y_range_declared else "")
    parts.append(f"From the recommended strict estimator's measured curves ({declared};{width} NIR benchmark "
                 "spectra, one property; a weaker signal needs more rows). Computed from the row and channel counts, "
                 "the budget and your declarations only: no private value.")
    return " ".join(parts)


def plan_private_fit(n_rows: int, n_features: int, epsilon: float, delta: float, *, y_range_declared: bool,
                     public_spectra: bool) -> Plan:
    """The plan for a private fit of ``n_rows`` training rows and ``n_features`` channels at (epsilon, delta).

    Parameters
    ----------
    n_rows : int, training rows (the fit's n). n_features : int, channels p.
    epsilon, delta : the fit's budget (epsilon = inf: no privacy, the plan says so).
    y_range_declared : a public y range is declared (else the estimator spends a share on a private range).
    public_spectra : public spectra are declared.

    Returns
    -------
    Plan

    Examples
    --------
    >>> plan = plan_private_fit(56, 700, 1.0, 1e-5, y_range_declared=True, public_spectra=False)
    >>> plan.beats_mean
    False
    """
    t = _table()
    n, p = int(n_rows), int(n_features)
    curve = t.CURVES[(bool(y_range_declared), bool(public_spectra))]
    eps_eq = equivalent_epsilon(float(epsilon), float(delta), t.DELTA) if math.isfinite(epsilon) else math.inf
    max_rows, max_eps = max(t.N_GRID), max(t.EPS_GRID)
    applicable = p >= MIN_CHANNELS and n >= 1 and epsilon > 0
    if not applicable or not math.isfinite(eps_eq):
        why = (f"The recommended strict estimator needs at least {MIN_CHANNELS} channels; this table has {p}."
               if p < MIN_CHANNELS else "No privacy at ε = ∞: the fit is the non-private one, no plan needed."
               if not math.isfinite(eps_eq) else "No plan for an empty table or a non-positive ε.")
        return Plan(n, p, float(epsilon), float(delta), bool(y_range_declared), bool(public_spectra), False,
                    math.nan, (math.nan, math.nan), None, None, None, max_rows, max_eps, why)
    band = (ratio_at(curve, n, eps_eq, 1), ratio_at(curve, n, eps_eq, 2))
    rows = rows_to_reach(curve, eps_eq)
    rows_pub = rows if public_spectra else rows_to_reach(t.CURVES[(bool(y_range_declared), True)], eps_eq)
    eps_needed = epsilon_to_reach(curve, n)
    if eps_needed is not None and eps_eq != epsilon:  # back from the table's delta to the user's
        eps_needed = eps_needed * epsilon / eps_eq
    plan = Plan(n, p, float(epsilon), float(delta), bool(y_range_declared), bool(public_spectra), True,
                ratio_at(curve, n, eps_eq), band, rows, eps_needed, rows_pub, max_rows, max_eps, "")
    text = _sentence(plan)
    if not math.isclose(eps_eq, epsilon, rel_tol=1e-9):
        text += (f" The curves are measured at δ = {t.DELTA:g}; δ = {delta:g} is read as ε ≈ {eps_eq:.3g} there "
                 "(the same Gaussian noise scale, an approximation).")
    return Plan(**{**plan.__dict__, "text": text})


def plan_for_problem(problem, epsilon: float, delta: float, *, y_range_declared: bool,
                     public_spectra: bool) -> Plan:
    """The plan for a page's problem (``pipeline.page_problem``): it reads the training rows' count and the
    channel count only, never a value."""
    return plan_private_fit(len(problem.train), len(problem.channels), epsilon, delta,
                            y_range_declared=y_range_declared, public_spectra=public_spectra)
