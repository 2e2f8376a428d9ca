"""Empirical privacy audit: a black-box lower bound on epsilon from many runs of a release.

``epsilon_lower_bound(release, D, D_prime, delta, n_trials, random_state)`` runs a randomised
release ``n_trials`` times on each of two neighbouring data sets (``release(data, rng, n)``
returns n independent outputs, vectorised), reduces every output to a 1-D statistic, and turns
one threshold test on that statistic into a high-confidence lower bound on epsilon.

The test. An (eps, delta)-DP release M satisfies, for every output set R,
P[M(D') in R] <= e^eps P[M(D) in R] + delta (and with D, D' swapped). So any R gives

    eps >= ln((P[M(D') in R] - delta) / P[M(D) in R]).

The samples are split in half. On the first (selection) half the auditor tries a few 1-D
statistics (projection on the mean difference, the Laplace log-likelihood ratio form
||o - med_D||_1 - ||o - med_D'||_1, and the distance from D's mean, which sees a change of noise
scale), every threshold, both tail directions and both orderings of (D, D'), and keeps the test
with the best bound. Only that one test is evaluated on the second half, where one-sided
Clopper-Pearson bounds (scipy.stats.beta) on the two rejection rates, each at level alpha/2,
give a lower bound that holds with probability >= 1 - alpha (the selection never sees the
evaluation half, so there is no multiple-testing inflation).

The selection ranks tests by a much stricter Clopper-Pearson level (``_SELECTION_LEVEL``) than
the evaluation uses, so it prefers thresholds with enough hits to replicate instead of a lucky
handful far in a tail (winner's curse).

What it can and cannot say: a lower bound above the claimed epsilon proves the claim false (up
to alpha); a lower bound below it proves nothing, it only says this attack did not break it. The
bound is loose when the violation lives at output probabilities below ~1/n_trials.

The catalogue (``engine.methods.audit_catalog.audit_cases``) audits every mechanism of ``engine.privacy``
(``mechanism_case`` here) and the noise call of every registered method, on the method's own
preprocessing, with worst-case neighbours (each method's ``audit_case`` module: this module
imports no method). Every case draws through the shipped release: the estimator's own release objects
(the ones its ``fit`` calls), batched over trials; none rebuilds a release from lower-level pieces
(tests/test_audit_production.py replaces each production path by one that raises). Everything a method
computes after its noise call is post-processing, which cannot increase epsilon, so auditing the raw noisy
release is the strongest black-box audit of the method.

Planted bugs live in production: ``planted_bug(kind, factor)`` is a context manager that the one place every
release draws its noise (``engine.privacy.mechanisms.draw_noise``) consults: "noise_scale" draws the noise
times ``factor``, "sensitivity_scale" the noise of a sensitivity understated by ``factor`` (the same draw:
every calibration is linear in the sensitivity), while every ledger keeps its claim. It is a context
variable, so it reaches only the thread that set it (another session's fit never sees it), and costs one
read when off; no page sets it except the audit page's planted-bug menu (``engine.methods.audit_catalog.PAGE_BUGS``).
At eps = 1 and 99 % confidence the factor-4 bugs are caught at 10^5 trials for every strict target (the audit
page's default); the factor-2 bugs need about 10^6 (``bench/audit_all.py``).

What the audits show (``bench/audit_all.py``, eps = 1, delta = 1e-5): every strict-mode release
stays below its claim; both planted bugs are caught for every mechanism and every Gaussian or
Laplace method release; paper mode exceeds its stated per-release epsilon for edPLS (the noise
scale follows the data's xmax * ymax, so an outlier row changes the output distribution's
spread: bound ~10), DP-CCA (the data-dependent centre and scale move every row: bound ~4.5) and
PCA-Gauss's Lap-PCA at the printed scale (true epsilon M eps: bound ~1.95 for M = 2).
Strict edPLS and DP-CCA are calibrated to their exact worst-case sensitivities
(``engine.methods.edpls.strict_sensitivity``: at most sqrt(3)/2 with private centring;
``engine.methods.dp_cca``: sqrt(32/27) for per-view bounds with private centring), so their
worst-case neighbours attain the calibrated sensitivity and the audits can approach the claim.
The end-to-end audits of each page's real pipeline are ``pipeline_audit_case`` in each method's
module (tests/test_*_release.py run them).

Written by hand (no kept library implements a threshold auditor for arbitrary vector releases);
the methods' estimators and the privacy core are used, not re-implemented.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass, field
from typing import Any, TypeAlias, cast

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.stats import beta as beta_dist

from .mechanisms import PLANTED_BUG, GaussianMechanism, LaplaceMechanism, RandomStateLike, as_generator

__all__ = [
    "AUDIT_CONFIDENCE",
    "PLANTED",
    "PLANTED_KINDS",
    "STATISTICS",
    "AuditCase",
    "AuditResult",
    "case_name",
    "check_bug",
    "clopper_pearson",
    "epsilon_lower_bound",
    "expected_verdict",
    "mechanism_case",
    "planted",
    "planted_bug",
    "run_case",
    "upper_triangle",
]

#: The confidence of every audit the app reports (the audit page, its run report, ``bench/audit_all.py`` and the
#: docs' audit table): a correct release is flagged by chance for essentially no seed. ``epsilon_lower_bound``'s own
#: ``alpha`` default (0.05) is kept for the tests' faster audits; the page and the bench pass ``1 - AUDIT_CONFIDENCE``.
AUDIT_CONFIDENCE = 0.99

#: Statistics tried on the selection half ("auto" tries all of them).
STATISTICS = ("projection", "laplace_llr", "spread")

#: At most this many candidate thresholds per statistic (quantiles of the pooled selection half).
_N_THRESHOLDS = 4000

#: Clopper-Pearson level used to rank tests on the selection half. Much stricter than the
#: evaluation level on purpose: it penalises thresholds far in a tail with a handful of hits,
#: whose selection-half bound is mostly luck (winner's curse) and does not replicate.
_SELECTION_LEVEL = 1e-4

#: Statistic values kept per data set for histograms (the evaluation half, subsampled).
_KEEP = 20000

#: ``release(data, rng, n) -> array (n, ...)``: n independent outputs of a randomised release on ``data``.
ReleaseFn: TypeAlias = Callable[[Any, np.random.Generator, int], ArrayLike]
#: A 1-D statistic of the outputs (n, k) -> (n,), fitted on the selection half.
Statistic: TypeAlias = Callable[[np.ndarray], np.ndarray]
#: A test: (threshold, direction 1 or -1, ordering "D'>D" or "D>D'").
Test: TypeAlias = tuple[float, int, str]


# =============================================================================================
# Confidence intervals
# =============================================================================================
def clopper_pearson(k: ArrayLike, n: ArrayLike, level: float, side: str) -> NDArray[np.float64]:
    """One-sided Clopper-Pearson bound on a binomial rate from k successes in n trials.

    side="upper": p_hi with P(p <= p_hi) >= 1 - level; side="lower": p_lo likewise. Vectorised
    over k.
    """
    k = np.asarray(k, dtype=float)
    if side == "upper":
        with np.errstate(all="ignore"):
            out = beta_dist.ppf(1.0 - level, k + 1.0, n - k)
        return np.where(k >= n, 1.0, out)
    if side == "lower":
        with np.errstate(all="ignore"):
            out = beta_dist.ppf(level, k, n - k + 1.0)
        return np.where(k <= 0, 0.0, out)
    raise ValueError("side must be 'upper' or 'lower'")


def _bound(p_num_lo: ArrayLike, p_den_hi: ArrayLike, delta: float) -> NDArray[np.float64]:
    """ln((p_num - delta) / p_den), -inf where the numerator is not above delta."""
    num = np.asarray(p_num_lo, dtype=float) - delta
    den = np.maximum(np.asarray(p_den_hi, dtype=float), 1e-300)
    with np.errstate(all="ignore"):
        return np.where(num > 0, np.log(np.maximum(num, 1e-300) / den), -np.inf)


# =============================================================================================
# Statistics
# =============================================================================================
def _make_statistic(name: str, sel_D: np.ndarray, sel_Dp: np.ndarray) -> Statistic:
    """A 1-D statistic fitted on the selection half only."""
    if name == "projection":
        mu_D, mu_Dp = sel_D.mean(axis=0), sel_Dp.mean(axis=0)
        direction = mu_Dp - mu_D
        # Standardise per coordinate (the Gaussian likelihood ratio for independent coordinates).
        var = 0.5 * (sel_D.var(axis=0) + sel_Dp.var(axis=0))
        var = np.where(var > 0, var, 1.0)
        w = direction / var
        mid = 0.5 * (mu_D + mu_Dp)
        return lambda O: (O - mid) @ w
    if name == "laplace_llr":
        med_D, med_Dp = np.median(sel_D, axis=0), np.median(sel_Dp, axis=0)
        mad = 0.5 * (np.mean(np.abs(sel_D - med_D), axis=0) + np.mean(np.abs(sel_Dp - med_Dp), axis=0))
        mad = np.where(mad > 0, mad, 1.0)
        gap, mid2 = med_Dp - med_D, med_D + med_Dp
        sign, width = np.sign(gap), np.abs(gap)
        # |o - a| - |o - b| = sign(b - a) clip(2o - a - b, -|b - a|, |b - a|), written without the
        # cancellation of the direct form (whose rounding noise on the plateaus a threshold could overfit)
        return lambda O: (sign * np.clip(2 * O - mid2, -width, width) / mad).sum(axis=1)
    if name == "spread":
        mu_D = sel_D.mean(axis=0)
        sd = sel_D.std(axis=0)
        sd = np.where(sd > 0, sd, 1.0)
        return lambda O: np.sqrt((((O - mu_D) / sd) ** 2).sum(axis=1))
    raise ValueError(f"statistic must be one of {STATISTICS} or 'auto', got {name!r}")


def _best_test(s_D: np.ndarray, s_Dp: np.ndarray, delta: float, level: float) -> tuple[float, Test | None]:
    """Best (threshold, direction, ordering) on one half: the bound with CP at ``level`` per rate.

    Rejection region R = {s > t} (direction 1) or {s <= t} (direction -1). ordering "D'>D" bounds
    ln((P_D'(R) - delta) / P_D(R)); "D>D'" bounds ln((P_D(R) - delta) / P_D'(R)).
    """
    n_D, n_Dp = s_D.size, s_Dp.size
    pooled = np.concatenate([s_D, s_Dp])
    if pooled.size > _N_THRESHOLDS:
        qs = np.unique(np.concatenate([np.linspace(0, 1, _N_THRESHOLDS // 2),
                                       np.logspace(-6, 0, _N_THRESHOLDS // 4) * 0.5,
                                       1 - np.logspace(-6, 0, _N_THRESHOLDS // 4) * 0.5]))
        thresholds = np.unique(np.quantile(pooled, np.clip(qs, 0, 1)))
    else:
        thresholds = np.unique(pooled)
    sD, sDp = np.sort(s_D), np.sort(s_Dp)
    # counts strictly above / at-or-below each threshold
    above_D = n_D - np.searchsorted(sD, thresholds, side="right")
    above_Dp = n_Dp - np.searchsorted(sDp, thresholds, side="right")
    best: tuple[float, Test | None] = (-np.inf, None)
    for direction in (1, -1):
        k_D = above_D if direction == 1 else n_D - above_D
        k_Dp = above_Dp if direction == 1 else n_Dp - above_Dp
        for ordering, (k_num, n_num, k_den, n_den) in (("D'>D", (k_Dp, n_Dp, k_D, n_D)),
                                                        ("D>D'", (k_D, n_D, k_Dp, n_Dp))):
            b = _bound(clopper_pearson(k_num, n_num, level, "lower"),
                       clopper_pearson(k_den, n_den, level, "upper"), delta)
            i = int(np.argmax(b))
            if b[i] > best[0]:
                best = (float(b[i]), (float(thresholds[i]), direction, ordering))
    return best


# =============================================================================================
# The auditor
# =============================================================================================
@dataclass
class AuditResult:
    """Outcome of ``epsilon_lower_bound``.

    epsilon_lb : lower bound on epsilon holding with probability >= confidence (0 if no test
        beat the trivial bound). eps_point : the same test's bound from the point estimates of
        the rates (no confidence interval; for display). statistic, threshold, direction,
        ordering : the chosen test. rate_num / rate_den : evaluation-half rejection rates in the
        numerator / denominator of the bound. stat_D, stat_D_prime : the statistic on the
        evaluation half (subsampled to <= 20000 each, for histograms).
    """

    epsilon_lb: float
    eps_point: float
    delta: float
    n_trials: int
    confidence: float
    statistic: str
    threshold: float
    direction: int
    ordering: str
    rate_num: float
    rate_den: float
    stat_D: np.ndarray = field(repr=False)
    stat_D_prime: np.ndarray = field(repr=False)

    def to_dict(self) -> dict[str, Any]:
        """The audit's figures as a plain dict (for JSON and tables)."""
        return {k: getattr(self, k) for k in ("epsilon_lb", "eps_point", "delta", "n_trials", "confidence",
                                               "statistic", "threshold", "direction", "ordering",
                                               "rate_num", "rate_den")}


def _outputs(release: ReleaseFn, data: object, rng: np.random.Generator, n: int) -> np.ndarray:
    out = np.asarray(release(data, rng, n), dtype=float)
    if out.shape[0] != n:
        raise ValueError(f"release(data, rng, n) must return n = {n} outputs along axis 0, got shape {out.shape}")
    return out.reshape(n, -1)


def epsilon_lower_bound(release: ReleaseFn, D: object, D_prime: object, delta: float = 0.0, n_trials: int = 100_000,
                        random_state: RandomStateLike = None, *,
                        statistic: str = "auto", alpha: float = 0.05, chunk: int | None = None,
                        progress: Callable[[float], None] | None = None) -> AuditResult:
    """High-confidence lower bound on the epsilon of ``release`` at ``delta`` (black box).

    Parameters
    ----------
    release : callable ``release(data, rng, n) -> array (n, ...)``: n independent outputs of the
        randomised release on ``data`` (any object; the auditor never looks inside it).
    D, D_prime : two neighbouring data sets (as the release's own neighbouring relation says).
    delta : the delta at which epsilon is bounded (the claim's delta).
    n_trials : releases per data set (half select the test, half evaluate it).
    random_state : None, int or numpy Generator.
    statistic : "auto" (try all of ``STATISTICS`` on the selection half) or one name.
    alpha : 1 - confidence of the bound (split alpha/2 per rejection rate).
    chunk : draw at most this many outputs per call and data set (memory; default 100000).
    progress : optional callback with the fraction done (0..1).

    Returns
    -------
    AuditResult (epsilon_lb >= 0).
    """
    n_trials = int(n_trials)
    if n_trials < 20:
        raise ValueError("n_trials must be at least 20 (half select the test, half evaluate it)")
    if not 0 <= delta < 1:
        raise ValueError(f"delta must be in [0, 1), got {delta}")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    rng = as_generator(random_state)
    step = 100_000 if chunk is None else max(1, int(chunk))
    half = n_trials // 2
    done = [0]

    def draw(total: int, reduce: Statistic) -> tuple[np.ndarray, np.ndarray]:
        """``total`` outputs on D and on D' in chunks, each chunk passed through ``reduce``."""
        parts_D: list[np.ndarray]
        parts_Dp: list[np.ndarray]
        parts_D, parts_Dp = [], []
        got = 0
        while got < total:
            m = min(step, total - got)
            o_D, o_Dp = _outputs(release, D, rng, m), _outputs(release, D_prime, rng, m)
            if o_D.shape[1] != o_Dp.shape[1]:
                raise ValueError(f"outputs on D and D' differ in size ({o_D.shape[1]} vs {o_Dp.shape[1]})")
            parts_D.append(reduce(o_D))
            parts_Dp.append(reduce(o_Dp))
            got += m
            done[0] += m
            if progress is not None:
                progress(0.95 * done[0] / n_trials)
        return np.concatenate(parts_D), np.concatenate(parts_Dp)

    # Selection half: raw outputs (the statistics are fitted on them).
    sel_D, sel_Dp = draw(half, lambda o: o)
    level = alpha / 2
    names = STATISTICS if statistic == "auto" else (statistic,)
    best: tuple[float, str | None, tuple[Statistic, Test | None] | None] = (-np.inf, None, None)
    for name in names:
        stat = _make_statistic(name, sel_D, sel_Dp)
        b, test = _best_test(stat(sel_D), stat(sel_Dp), delta, _SELECTION_LEVEL)
        if b > best[0] or best[1] is None:
            best = (b, name, (stat, test))
    # names is not empty and its first statistic always replaces the initial best: neither is None here
    name = cast(str, best[1])
    stat, test = cast(tuple[Statistic, Test | None], best[2])
    del sel_D, sel_Dp
    # Evaluation half: only the chosen statistic is kept (memory stays O(n) for any output size).
    e_D, e_Dp = draw(n_trials - half, stat)
    if test is None:  # no threshold at all (constant statistic): nothing to reject with
        t, direction, ordering = (float(np.median(e_D)), 1, "D'>D")
    else:
        t, direction, ordering = test
    # the region exactly as _best_test counted it: {s > t} or {s <= t}
    in_D = e_D > t if direction == 1 else e_D <= t
    in_Dp = e_Dp > t if direction == 1 else e_Dp <= t
    k_D, k_Dp, n_D, n_Dp = int(in_D.sum()), int(in_Dp.sum()), in_D.size, in_Dp.size
    if ordering == "D'>D":
        k_num, n_num, k_den, n_den = k_Dp, n_Dp, k_D, n_D
    else:
        k_num, n_num, k_den, n_den = k_D, n_D, k_Dp, n_Dp
    lb = float(_bound(clopper_pearson(k_num, n_num, level, "lower"),
                      clopper_pearson(k_den, n_den, level, "upper"), delta))
    if k_den > 0:
        point = float(_bound(k_num / n_num, k_den / n_den, delta))
    else:
        point = math.inf if k_num / n_num > delta else 0.0
    if progress is not None:
        progress(1.0)
    keep = min(_KEEP, e_D.size)
    return AuditResult(
        epsilon_lb=max(0.0, lb), eps_point=max(0.0, point), delta=float(delta), n_trials=n_trials,
        confidence=1 - alpha, statistic=name, threshold=float(t), direction=int(direction), ordering=ordering,
        rate_num=k_num / n_num, rate_den=k_den / n_den, stat_D=e_D[:keep].copy(), stat_D_prime=e_Dp[:keep].copy(),
    )


# =============================================================================================
# The catalogue: mechanisms and methods with worst-case neighbours
# =============================================================================================
@dataclass
class AuditCase:
    """One audit: a release, two neighbouring data sets and the claim it is checked against.

    expect : "holds" (a proven claim: the bound must stay below claimed_eps), "violated" (a
    planted bug: the bound must exceed it) or "report" (paper mode: reported, not asserted).
    """

    name: str
    method: str
    mode: str
    claimed_eps: float
    delta: float
    release: ReleaseFn = field(repr=False)
    D: object = field(repr=False)
    D_prime: object = field(repr=False)
    neighbours: str
    expect: str
    note: str = ""
    bug: str | None = None
    #: the estimator's parameters of the audited fit, where the case audits a fit (tests rebuild or compare them)
    fit_params: dict[str, Any] | None = field(default=None, repr=False)


#: The named planted bugs (the audit page's menu, ``engine.methods.audit_catalog.PAGE_BUGS``, and the pipeline audits'
#: ``bug`` argument) and what each plants in production: ``planted_bug(kind, factor)``. Halved bugs are subtle
#: (at eps = 1 the 99 % bound needs ~10^6 trials to catch them for every release); quartered bugs are the page's
#: default demonstration (caught at its default trials).
PLANTED = {"noise_quartered": ("noise_scale", 0.25), "sensitivity_quartered": ("sensitivity_scale", 0.25),
           "noise_halved": ("noise_scale", 0.5), "sensitivity_halved": ("sensitivity_scale", 0.5)}


#: The kinds of planted bug ``planted_bug`` takes.
PLANTED_KINDS = ("noise_scale", "sensitivity_scale")


@contextmanager
def planted_bug(kind: str, factor: float) -> Iterator[None]:
    """Plant a bug in every release drawn inside the block (the auditor must catch it).

    Parameters
    ----------
    kind : "noise_scale" (the noise is drawn ``factor`` times its calibrated scale) or "sensitivity_scale"
        (the noise of a sensitivity understated by ``factor``); the ledgers keep their claims either way.
    factor : float > 0 (e.g. 0.25: noise divided by 4).

    Consulted by ``engine.privacy.mechanisms.draw_noise``, the one place release noise is drawn; a context
    variable, so only this thread's draws see it. Blocks nest (the inner one wins until it ends).

    Examples
    --------
    >>> import numpy as np
    >>> from engine.privacy import GaussianMechanism
    >>> mech = GaussianMechanism(1.0, 1e-5)
    >>> with planted_bug("noise_scale", 0.25):
    ...     spread = mech.randomise(np.zeros(20000), 0).std() / mech.sigma
    >>> round(float(spread), 1)
    0.2
    """
    if kind not in PLANTED_KINDS:
        raise ValueError(f"kind must be one of {PLANTED_KINDS}, got {kind!r}")
    factor = float(factor)
    if not (math.isfinite(factor) and factor > 0):
        raise ValueError(f"factor must be a finite number > 0, got {factor}")
    token = PLANTED_BUG.set((kind, factor))
    try:
        yield
    finally:
        PLANTED_BUG.reset(token)


def check_bug(bug: str | None) -> None:
    """Refuse a planted-bug name that ``PLANTED`` does not know (None: no bug)."""
    if bug is not None and bug not in PLANTED:
        raise ValueError(f"bug must be None or one of {tuple(PLANTED)}, got {bug!r}")


def planted(bug: str | None) -> AbstractContextManager[None]:
    """The ``planted_bug`` block of a named bug of ``PLANTED`` (a no-op block for None)."""
    check_bug(bug)
    return nullcontext() if bug is None else planted_bug(*PLANTED[bug])


def expected_verdict(mode: str, bug: str | None) -> str:
    """The verdict an audit should reach: violated with a planted bug, else holds (strict) or report."""
    return "violated" if bug else ("holds" if mode == "strict" else "report")


def case_name(base: str, bug: str | None) -> str:
    """The case's name, with the planted bug appended when there is one."""
    return base if bug is None else f"{base}_bug_{bug}"


def upper_triangle(G: np.ndarray) -> np.ndarray:
    """(n, d, d) symmetric -> (n, d(d+1)/2) upper triangles (a bijection: the released numbers)."""
    iu = np.triu_indices(G.shape[-1])
    return G[:, iu[0], iu[1]]


# ---------------------------------------------------------------------------- mechanisms
def mechanism_case(kind: str, epsilon: float = 1.0, delta: float = 1e-5, sensitivity: float = 1.0) -> AuditCase:
    """A scalar query of sensitivity Delta: D gives 0, D' gives Delta (the worst case).

    kind: "analytic_gaussian", "classic_gaussian" (eps <= 1) or "laplace". The release is the shipped
    mechanism's own ``randomise`` (``GaussianMechanism`` / ``LaplaceMechanism``), batched over trials; planted
    bugs come from ``planted_bug`` (``engine.methods.audit_catalog.make_case``).
    """
    mech: GaussianMechanism | LaplaceMechanism
    if kind in ("analytic_gaussian", "classic_gaussian"):
        mech = GaussianMechanism(epsilon, delta, sensitivity, "analytic" if kind == "analytic_gaussian" else "classic")
        scale_note = f"sigma = {mech.sigma:.4g}"
        claim_delta = delta
    elif kind == "laplace":
        mech = LaplaceMechanism(epsilon, sensitivity)
        scale_note = f"b = {mech.scale:.4g}"
        claim_delta = 0.0
    else:
        raise ValueError("kind must be 'analytic_gaussian', 'classic_gaussian' or 'laplace'")

    def release(value: float, rng: np.random.Generator, n: int) -> NDArray[np.float64]:
        return mech.randomise(np.full((n, 1), float(value)), rng)

    return AuditCase(kind, kind, "strict", float(epsilon), claim_delta, release, 0.0, float(sensitivity),
                     f"scalar query, f(D') - f(D) = {sensitivity:g}", "holds", scale_note)


def run_case(case: AuditCase, n_trials: int = 100_000, random_state: RandomStateLike = None, **kwargs: Any
             ) -> dict[str, Any]:
    """Run one catalogue audit; returns a flat dict (case fields, bound, verdict) and the result."""
    res = epsilon_lower_bound(case.release, case.D, case.D_prime, case.delta, n_trials, random_state, **kwargs)
    exceeded = res.epsilon_lb > case.claimed_eps
    if case.expect == "holds":
        ok = not exceeded
    elif case.expect == "violated":
        ok = exceeded
    else:
        ok = True
    return {"name": case.name, "method": case.method, "mode": case.mode, "bug": case.bug,
            "claimed_eps": case.claimed_eps, "delta": case.delta, "eps_lb": res.epsilon_lb,
            "eps_point": res.eps_point, "trials": res.n_trials, "statistic": res.statistic,
            "exceeds_claim": bool(exceeded), "expect": case.expect, "ok": bool(ok),
            "neighbours": case.neighbours, "note": case.note, "result": res}
