"""The paths issue #30 added to ``StrictEDPLS`` (a mixin, to keep ``recommended`` within its size).

- ``_range_share`` / ``_calibrate``: the private range's budget share and the joint calibration of the moment
  releases (exact Gaussian-DP composition: ``gaussian_sigmas_for_budget(method="gdp")``);
- ``_private_y_range``: y's range from one noisy histogram (``engine.privacy.ranges.private_range``), alone
  (``y_range=None``) or inside a declared range (``refine_y_range``);
- ``choose_estimator`` / ``_fit_tukey``: TukeyEM (``engine.methods.tukey_em``) on the first public axes,
  chosen by post-processing of the noisy count.

Every method reads ``self``'s parameters and the public setup ``pub`` of ``StrictEDPLS``; only the releases
they draw (recorded in the fit's ledger as they are drawn) touch the private rows.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from engine.methods.baselines import private_constant
from engine.methods.edpls.recommended_limits import NOTES, RELEASES
from engine.methods.tukey_em import auto_models, tukey_fit
from engine.privacy import analytic_gaussian_sigma, gaussian_epsilon, gaussian_sigmas_for_budget, noise_scale
from engine.privacy.moments import add_remove_sensitivity
from engine.privacy.ranges import RANGE_RELEASE, private_range

__all__ = ["FALLBACK_RANGE_CAP", "RANGE_ROWS", "PathsMixin", "count_lower_bound"]

#: Rows times epsilon the private range needs (``PathsMixin._range_share``).
RANGE_ROWS = 150.0
#: Largest share of the private range when the noisy count implies the private constant (``_fallback_range_share``).
FALLBACK_RANGE_CAP = 0.8


def count_lower_bound(pub: dict, n_hat: float) -> float:
    """n_hat - 2 sigma_n: the lower bound of the noisy count the fit's decisions use (post-processing)."""
    return n_hat - 2.0 * pub["sigmas"][RELEASES[0]]


class PathsMixin:
    """``StrictEDPLS``'s private range, joint calibration and TukeyEM path (module docstring)."""

    # StrictEDPLS's parameters and the fitted attributes set here: declared for the type checker only
    y_range: Any
    refine_y_range: bool
    epsilon: float
    delta: float
    range_share: float
    count_share: float
    cross_share: float
    calibration: str
    estimator: str
    tukey_axes: int
    coef_: np.ndarray
    intercept_: float
    choices_: dict[str, Any]
    # StrictEDPLS's methods this mixin calls (defined in engine.methods.edpls.recommended)
    choose_dim: Callable[[dict, float], tuple[int, str]]
    mechanisms: Callable[[dict], dict]

    def _range_share(self, n_hat: float | None = None) -> float:
        """The private range's share of what the count leaves (0 with a declared y_range and
        ``refine_y_range=False``, or with a declared one at epsilon = inf).

        At least ``range_share``; with few rows more (up to 0.5): the histogram finds the occupied bins only
        when n exceeds about 150 / epsilon_range rows (its threshold is 4-5 sigma, sigma ~ 4.8 / epsilon_range
        at delta = 1e-5, over a few bins), so the share is raised to 150 / (epsilon n_hat) (post-processing of
        the noisy count; measured on diabetes, 354 rows: 0.1 finds no range at epsilon = 1, 0.42 does). The same
        rule refines a declared range: at 10 % it found nothing below a few hundred rows, so a wide declared range
        stayed as is (NIR, 300 rows, epsilon = 1, tight range: 0.81 sigma_y at 0.1, 0.64 with the rule; corn, 60
        rows, wide range: 2.1 -> 1.1)."""
        if self.y_range is not None and (not self.refine_y_range or math.isinf(float(self.epsilon))):
            return 0.0
        rs = float(self.range_share)
        if n_hat is None or math.isinf(float(self.epsilon)):
            return rs
        return float(min(0.5, max(rs, RANGE_ROWS / (float(self.epsilon) * max(float(n_hat), 1.0)))))

    def _fallback_range_share(self, pub: dict, n_hat: float) -> float:
        """``_range_share(n_hat)``, raised to min(``FALLBACK_RANGE_CAP``, RANGE_ROWS / (epsilon n_hat)) when the
        noisy count already implies the private constant (no TukeyEM, no axis reaching the threshold).

        The constant's error is the half-width of y's range times the noise of the mean, so a range found
        privately is worth more to it than budget: corn, 60 rows, a wide declared range, epsilon = 1 (20 splits,
        median RMSEP / sigma_y): 3.8 with the refinement at its 10 % share (it finds nothing), 1.9 without
        any refinement, 1.1 with it at the raised share; with y_range=None at epsilon = 0.5 the 0.5 cap finds
        no range (13-78 sigma_y), 0.8 does (1.1-1.6). Post-processing of the noisy count and public settings.

        A declared range is refined whatever the count: the refinement reads its histogram as ``y_range=None``
        does (``_private_y_range``), and corn at 60 rows gained at every epsilon (seeds 0-9, 20 splits, 5
        epsilons, 4 responses, wide range: settings more than 5 % worse than the private constant 4 of 200
        when a count's lower bound below one bin's threshold kept the declared range, 1 of 200 refining)."""
        rs = self._range_share(n_hat)
        if rs == 0:
            return rs
        budget, sigmas, sens, accountant = self._calibrate(rs)
        trial = {**pub, "budget": budget, "sigmas": sigmas, "sensitivities": sens, "accountant": accountant,
                 "range_share": rs}
        if not self.choose_estimator(trial, n_hat)[0] and self.choose_dim(trial, n_hat)[0] == 0:
            need = RANGE_ROWS / (float(self.epsilon) * max(float(n_hat), 1.0))
            rs = float(min(FALLBACK_RANGE_CAP, max(rs, need)))
        return rs

    def release_calibration(self, pub: dict, n_hat: float) -> dict:
        """The public setup calibrated for a fit whose noisy count is ``n_hat`` (a copy): the range's share
        (``_fallback_range_share``, 0 when no histogram is drawn), the budget, sigmas, sensitivities and
        accountant of every release. The one place ``fit``, ``sample_releases`` and the audit case calibrate."""
        rs = self._fallback_range_share(pub, n_hat)
        budget, sigmas, sens, accountant = self._calibrate(rs)
        return {**pub, "budget": budget, "sigmas": sigmas, "sensitivities": sens, "accountant": accountant,
                "range_share": rs}

    def _calibrate(self, rs: float) -> tuple:
        """(budget, sigmas, sensitivities, accountant) of the releases, the range taking share ``rs``.

        The count takes (count_share epsilon, count_share delta) and the range rs of the rest, each calibrated
        alone (they are drawn before the path is chosen). With the analytic calibration the two moment
        releases are then calibrated jointly (``gaussian_sigmas_for_budget(method="gdp")``): the Gaussian
        releases compose exactly to one Gaussian with mu^2 = sum (Delta_i / sigma_i)^2 (Dong, Roth & Su), so
        mu_rest^2 = mu(epsilon, delta)^2 - mu_count^2 - mu_range^2 is split between Z'Z and Z'y~ in the
        ratio of their shares, and the whole fit meets (epsilon, delta) exactly under the "gdp" accountant
        (23-32 % smaller sigmas than calibrating each share alone). Each record's (epsilon_i, delta_i) is the
        exact per-release guarantee of its sigma at its share of delta (their basic sum exceeds epsilon; the
        ledger's ``accountant`` says which total is the fit's). Otherwise basic composition of the shares.
        """
        eps, dlt = float(self.epsilon), float(self.delta)
        cs, xs = float(self.count_share), float(self.cross_share)
        if cs + xs >= 1.0:
            raise ValueError("count_share + cross_share must be < 1 (the X-moments need a share)")
        rest = (1.0 - cs) * (1.0 - rs)
        shares = {RELEASES[0]: cs, RELEASES[1]: rest * (1.0 - cs - xs) / (1.0 - cs),
                  RELEASES[2]: rest * xs / (1.0 - cs)}
        if rs > 0:
            shares = {RANGE_RELEASE: (1.0 - cs) * rs, **shares}
        sens = {RANGE_RELEASE: 1.0, RELEASES[0]: 1.0, RELEASES[1]: add_remove_sensitivity([1.0], 1.0), RELEASES[2]: 1.0}
        sens = {k: sens[k] for k in shares}
        budget = {k: (eps * sh, dlt * sh) for k, sh in shares.items()}
        sigmas = {k: noise_scale("gaussian", e, dl, sens[k], self.calibration) for k, (e, dl) in budget.items()}
        if self.calibration != "analytic" or math.isinf(eps):
            return budget, sigmas, sens, "basic"
        alone = [k for k in shares if k not in (RELEASES[1], RELEASES[2])]
        mu2 = (1.0 / analytic_gaussian_sigma(eps, dlt, 1.0)) ** 2 - sum((sens[k] / sigmas[k]) ** 2 for k in alone)
        joint = gaussian_sigmas_for_budget(1.0, 0.5, [sens[RELEASES[1]], sens[RELEASES[2]]], "gdp",
                                           weights=[shares[RELEASES[1]], shares[RELEASES[2]]])
        # gaussian_sigmas_for_budget(1, 0.5) is calibrated to its own mu; rescale to mu_rest
        moment_sens = (sens[RELEASES[1]], sens[RELEASES[2]])
        mu_joint = math.sqrt(sum((d / sg) ** 2 for d, sg in zip(moment_sens, joint, strict=False)))
        for k, sg in zip((RELEASES[1], RELEASES[2]), joint, strict=False):
            sigmas[k] = float(sg * mu_joint / math.sqrt(max(mu2, 1e-300)))
            budget[k] = (gaussian_epsilon(sigmas[k], budget[k][1], sens[k]), budget[k][1])
        return budget, sigmas, sens, "gdp"

    def _tukey_budget(self, pub: dict) -> tuple[float, float]:
        """(epsilon, delta) after the count and the private range (the share ``pub`` was calibrated with)."""
        share = (1.0 - float(self.count_share)) * (1.0 - float(pub.get("range_share", 0.0)))
        return float(self.epsilon) * share, float(self.delta) * share

    def choose_estimator(self, pub: dict, n_hat: float) -> tuple[bool, str]:
        """TukeyEM or the moments path, from the noisy count and public settings only (post-processing).

        "auto": with public spectra (``X_public``), TukeyEM when n_hat >= p m_min, p = tukey_axes + 1 and m_min its
        fewest models (``tukey_em.auto_models``): then each of at least m_min models gets about p rows or more,
        where the bench measured TukeyEM ahead (NIR, 5 axes, epsilon = 1: 0.035 sigma_y at 5,000 rows against 0.15 for
        the moments path; below p rows per model its models are underdetermined and it falls behind).
        """
        if self.estimator == "moments" or math.isinf(float(self.epsilon)):
            return False, "moments path"
        k = min(int(self.tukey_axes), pub["V"].shape[1])
        eps, dlt = self._tukey_budget(pub)
        need = (k + 1) * auto_models(0.0, k + 1, eps, dlt)
        if self.estimator == "tukey":
            return True, f"TukeyEM on {k} public axes (declared)"
        if pub["eigenvalues"] is None:
            # No public spectra: TukeyEM on the first axes of the data-independent spline basis was erratic (NIR,
            # moisture, 6 fits each: 3,000 rows, epsilon = 2-10, medians 1.4-2.2 sigma_y, up to 5.9; 10,000 rows
            # 0.63-1.16, from 0.33 to 1.83), where the moments path gave the private mean (1.0)
            return False, ("moments path: TukeyEM is chosen on the principal axes of public spectra only (on the "
                           "data-independent basis its fits scattered from 0.3 to 5.9 sigma_y)")
        if n_hat >= need:
            return True, f"TukeyEM on {k} public axes: n_hat = {n_hat:.0f} >= {need} (a DP release)"
        return False, f"moments path: n_hat = {n_hat:.0f} < {need} rows TukeyEM needs (a DP release)"

    def _fit_tukey(self, X, y, w, pub, k, n_hat, rng, ledger) -> dict:
        """TukeyEM (``engine.methods.tukey_em``) on the first k public axes, the rest of the budget; no bounds."""
        U = pub["chain"].transform(X) @ pub["V"][:, :k] - pub["x_center"][:k]
        if np.any(w != 1):
            reps = w.astype(int)
            U, y = np.repeat(U, reps, axis=0), np.repeat(y, reps)
        eps, dlt = self._tukey_budget(pub)
        m = auto_models(n_hat, k + 1, eps, dlt)
        point, facts = tukey_fit(np.hstack([U, np.ones((U.shape[0], 1))]), y, m, eps, dlt, rng, ledger)
        beta, b0 = (point[:-1], point[-1]) if point is not None else (np.zeros(k), pub["y_center"])
        self.coef_ = pub["V"][:, :k] @ beta
        self.intercept_ = float(b0 - pub["x_center"][:k] @ beta)
        self.choices_ = {"ridge_lambda": None, "k": k, "tukey": facts,
                         "model": (f"TukeyEM (Amin et al. 2023) on {k} public axes, {m} models" if point is not None
                                   else "TukeyEM's propose-test-release failed: the centre of y's range")}
        kept = [n for n in (RANGE_RELEASE, RELEASES[0]) if n in pub["budget"]]
        return {**pub, "budget": {**{n: pub["budget"][n] for n in kept}, "TukeyEM": (eps, dlt)},
                "sigmas": {**{n: pub["sigmas"][n] for n in kept}, "TukeyEM": 0.0}, "accountant": "basic"}

    def range_input(self, y, w) -> np.ndarray:
        """The responses the private range's histogram counts: each row repeated by its count, clipped to a
        declared y_range (refinement inside it)."""
        if np.any(w != 1):
            y = np.repeat(y, w.astype(int))
        if self.y_range is None:
            return y
        lo, hi = (float(v) for v in self.y_range)
        return np.clip(y, lo, hi)

    def _private_y_range(self, y, w, pub, rng, ledger, *, zoom: bool = True) -> dict:
        """The noisy histogram of y (``private_range``: two halves, the second a zoom when the first finds a dense
        window) sets y's centre and bound (a copy of pub).

        With a declared y_range (``refine_y_range``) y is clipped to it first and the private range is
        intersected with it, read as with ``y_range=None`` (when no window passes, the two adjacent bins of the
        largest noisy count); when the two do not overlap the declared range stays. ``zoom=False``: one draw
        (``private_range``'s ``zoom``)."""
        e, dl = pub["budget"].get(RANGE_RELEASE, (math.inf, float(self.delta)))
        declared = None if self.y_range is None else tuple(float(v) for v in self.y_range)
        mech = self.mechanisms(pub).get(RANGE_RELEASE)
        (lo, hi), _, facts = private_range(self.range_input(y, w), e, dl, rng, self.calibration, ledger=ledger,
                                           note=NOTES[RANGE_RELEASE], mechanism=mech, zoom=zoom)
        how = f"private range [{lo:.6g}, {hi:.6g}] of a noisy histogram of y: {facts['how']}"
        if declared is not None:
            if min(hi, declared[1]) <= max(lo, declared[0]):
                (lo, hi), how = declared, (f"midpoint and half-width of y_range (its private refinement [{lo:.6g}, "
                                           f"{hi:.6g}] lies outside it: {facts['how']})")
            else:
                lo, hi = max(lo, declared[0]), min(hi, declared[1])
                how = f"y_range refined privately to [{lo:.6g}, {hi:.6g}] ({facts['how']})"
        pub = {**pub, "y_center": (lo + hi) / 2, "y_bound": (hi - lo) / 2, "y_source": how}
        self.y_range_ = (lo, hi)
        return pub


    def _fit_constant(self, y, pub, n_hat, rng, w, total=None, n_rows=None, *, ledger=None) -> dict:
        """No axis worth releasing: the private constant predictor (``baselines.private_constant``) with the
        whole rest of the budget: with the analytic calibration a second count and the sum of y~, calibrated
        jointly under the exact Gaussian-DP accountant with the count (and the private range) already drawn.

        Returns the public setup of this fit (a copy: the kept setup serves the next fit unchanged), with its
        releases, for ``choices_``; the draws record themselves in ``ledger``. ``total``, ``n_rows``: the sum
        of y~ and the row count already summed (the Dask path; ``y`` and ``w`` are then unused).
        """
        if total is None:
            yt = np.clip(y - pub["y_center"], -pub["y_bound"], pub["y_bound"]) / pub["y_bound"]
            n_rows = float(np.sum(w))
        else:
            yt, w = np.array([float(total)]), None
        kept = [k for k in (RELEASES[0], RANGE_RELEASE) if k in pub["budget"]]  # the first count first
        spent = {k: (*pub["budget"][k], pub["sigmas"][k]) for k in kept}
        mean, budget, sigmas, accountant = private_constant(yt, n_rows, n_hat, spent, float(self.epsilon),
                                                            float(self.delta), self.calibration, rng, weights=w,
                                                            ledger=ledger, notes=NOTES)
        budget = {**{k: pub["budget"][k] for k in kept}, **budget}
        pub = {**pub, "budget": budget, "sigmas": {**{k: pub["sigmas"][k] for k in kept}, **sigmas},
               "sensitivities": {k: 1.0 for k in budget}, "accountant": accountant}
        self.coef_ = np.zeros(pub["V"].shape[0])
        self.intercept_ = float(pub["y_center"] + pub["y_bound"] * mean)
        self.choices_ = {"ridge_lambda": None, "k": 0, "model": "private constant predictor (noisy mean of y)",
                         "intercept": "DP mean of y (noisy sum over the noisy count(s)) clipped to y's range"}
        return pub
