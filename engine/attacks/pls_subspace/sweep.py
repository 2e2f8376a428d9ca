"""Attack success over a grid of epsilons (replicated), its summary and the verdict sentence."""
from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pandas as pd
from sklearn.cross_decomposition import PLSRegression

from engine.privacy import as_generator
from engine.privacy.noise import noise_generator

from .attack import COMPONENTS, SETTINGS, STATUSES, local_components, reconstruct, success_measures
from .models import _ledger_status, _references, _rmsep, _rmsep_mean_model, make_global_model
from .scenario import AttackProblem

__all__ = ["attack_success_sweep", "summarise_sweep", "verdict"]


def attack_success_sweep(
    scenario,
    epsilons,
    *,
    settings=("plain", "paper_sigma_squared", "paper_sigma", "strict"),
    n_replicates: int = 20,
    delta: float = 0.01,
    n_components: int = 3,
    lv: int | None = None,
    tolerance: int = 2,
    calibration: str = "analytic",
    random_state=None,
    noise_per_draw: int = 1,
    progress: Callable[[float, str], None] | None = None,
    data_random_state=None,
) -> pd.DataFrame:
    """Attack success for every setting x epsilon x replicate.

    scenario: an ``AttackProblem`` (fixed data: only the privacy noise changes between
    replicates, drawn in one batch per epsilon) or anything with ``draw(rng) -> AttackProblem``
    such as ``SimulationScenario`` (fresh data every replicate, as in spec Sec. 5.3). "plain"
    is fitted once per data set with epsilon = inf.
    noise_per_draw: with a ``draw`` scenario, runs per data set (1 = fresh data every run; more
    is faster since the noise of one data set is drawn in one batch).
    progress: optional callback(fraction_done, text), e.g. for a progress bar.
    random_state: the privacy noise. None (default): fresh OS entropy for every release. An int or a
        generator is a known noise seed: every private fit's ledger then says "not proven" (tests and
        teaching). Without ``data_random_state`` it also seeds the data draws (as before).
    data_random_state: the simulated data draws of a ``draw`` scenario (None: from ``random_state``
        when that is a known seed, else fresh). Two calls with the same data seed see the same data
        sequence whatever settings they run (paired comparison), whatever the noise.

    Returns a long table: setting, epsilon, replicate, component ("W"/"P"), hit, cosine,
    correlation, peak, rmsep, rmsep_mean_model (predicting the training mean), status (the ledger
    status of the fit: "no privacy", "proven", "not proven") and not_proven_because (its reasons).
    """
    # Separate streams for the data draws and the privacy noise.
    base, seed_known = noise_generator(random_state)
    if seed_known:
        data_rng, noise_rng = base.spawn(2)
    else:
        data_rng, noise_rng = np.random.default_rng(), base
    if data_random_state is not None:
        data_rng = as_generator(data_random_state)
    epsilons = [float(e) for e in epsilons]
    settings = list(settings)
    unknown = [s for s in settings if s not in SETTINGS]
    if unknown:
        raise ValueError(f"unknown setting(s) {unknown}; choose from {list(SETTINGS)}")
    if n_replicates < 1:
        raise ValueError("n_replicates must be >= 1")
    lv = n_components if lv is None else int(lv)
    fixed = isinstance(scenario, AttackProblem)
    if fixed:
        problem = scenario
        local = local_components(problem.X_own, problem.y_own, n_components)
        refs = _references(problem, local, n_components, lv)
        return _fixed_data_sweep(problem, local, refs, epsilons, settings, n_replicates, noise_rng, progress,
                                 delta=delta, n_components=n_components, lv=lv, tolerance=tolerance,
                                 calibration=calibration, seed_known=seed_known)
    # Fresh data in blocks: every draw carries ``noise_per_draw`` noise replicates, drawn in
    # one batch per (setting, epsilon); noise_per_draw = 1 is one data set per run.
    block = max(1, min(int(noise_per_draw), n_replicates))
    n_draws = math.ceil(n_replicates / block)
    parts = []
    for d in range(n_draws):
        problem = scenario.draw(data_rng)
        local = local_components(problem.X_own, problem.y_own, n_components)
        refs = _references(problem, local, n_components, lv)
        size = min(block, n_replicates - d * block)
        step = None
        if progress is not None:
            step = lambda f, text, d=d: progress((d + f) / n_draws, f"{text}, data set {d + 1}/{n_draws}")  # noqa: E731
        part = _fixed_data_sweep(problem, local, refs, epsilons, settings, size, noise_rng, step, delta=delta,
                                 n_components=n_components, lv=lv, tolerance=tolerance, calibration=calibration,
                                 seed_known=seed_known)
        part["replicate"] += d * block
        parts.append(part)
    return pd.concat(parts, ignore_index=True)


def _fixed_data_sweep(problem, local, refs, epsilons, settings, n_replicates, rng, progress, *, delta,
                      n_components, lv, tolerance, calibration, seed_known) -> pd.DataFrame:
    """The sweep on one data set: the clean PLS path is computed once per (setting, epsilon) and
    the R noisy releases are drawn in one batch (``EDPLS.sample_releases``; replicate r equals
    the r-th of R sequential fits sharing the generator). The status of every row comes from the
    ledger of its fits (``sample_releases``' ledger, which every replicate shares)."""
    refs_, centres, _ = refs
    jobs = [(s, e) for s in settings for e in ([math.inf] if s == "plain" else epsilons)]
    mean_model = _rmsep_mean_model(problem)
    rows = []
    for i, (setting, eps) in enumerate(jobs):
        model = make_global_model(setting, eps, delta=delta, n_components=n_components, x_bound=problem.x_bound,
                                  y_bound=problem.y_bound, calibration=calibration,
                                  bounds_public=bool(getattr(problem, "bounds_public", True)))
        if isinstance(model, PLSRegression) or not hasattr(model, "sample_releases"):
            # Plain PLS is deterministic: one fit stands for every replicate.
            fits = [model.fit(problem.X, problem.y)] if isinstance(model, PLSRegression) else [
                make_global_model(setting, eps, delta=delta, n_components=n_components, x_bound=problem.x_bound,
                                  y_bound=problem.y_bound, calibration=calibration, random_state=rng,
                                  bounds_public=bool(getattr(problem, "bounds_public", True))
                                  ).fit(problem.X, problem.y) for _ in range(n_replicates)]
            W = np.stack([f.x_weights_ for f in fits])
            P = np.stack([f.x_loadings_ for f in fits])
            rmsep = np.array([_rmsep(f, problem) for f in fits])
            status, why = _ledger_status(getattr(fits[0], "privacy_ledger_", None), seed_known)
            if len(fits) == 1:
                W, P = np.repeat(W, n_replicates, 0), np.repeat(P, n_replicates, 0)
                rmsep = np.repeat(rmsep, n_replicates)
        else:
            out = model.sample_releases(problem.X, problem.y, n_replicates, rng)
            status, why = _ledger_status(out.get("ledger"), seed_known)
            W, P = out["W"], out["P"]
            rmsep = np.full(n_replicates, math.nan)
            if problem.X_test is not None:
                with np.errstate(all="ignore"):
                    pred = problem.X_test @ out["coef"].T + out["intercept"]
                    rmsep = np.sqrt(np.mean((problem.y_test[:, None] - pred) ** 2, axis=0))
                rmsep = np.where(np.isfinite(rmsep), rmsep, math.inf)
        for r in range(n_replicates):
            for comp, G in (("W", W[r]), ("P", P[r])):
                v = reconstruct(G, local[comp], lv)
                m = success_measures(v, refs_[comp], local[comp], secret_centre=centres[comp], tolerance=tolerance)
                rows.append(dict(setting=setting, epsilon=eps, replicate=r, component=comp, rmsep=float(rmsep[r]),
                                 **m, rmsep_mean_model=mean_model, status=status, not_proven_because=why))
        if progress is not None:
            progress((i + 1) / len(jobs), f"{SETTINGS[setting]}, ε = {eps:g}")
    return pd.DataFrame(rows)


def summarise_sweep(sweep: pd.DataFrame) -> pd.DataFrame:
    """Per setting, epsilon and component: hit rate, mean/SEM/quartiles of cosine and
    correlation, median/quartiles/mean of RMSEP (heavy-tailed: read the median), the median RMSEP
    of predicting the training mean, and ``status`` / ``not_proven_because`` from the ledgers of
    the fits behind the row (the weakest status when they differ: "not proven" beats "proven")."""
    # pandas' own grouped reductions (cython), not Python lambdas per group: the attack lab summarises its
    # cached sweep on every rerun, and the lambdas took 0.13 of the page's 0.51 CPU s (304 groups x 13 columns).
    # Quantiles: linear interpolation over the non-NaN values (Hyndman-Fan type 7), NaN for a group without any. A
    # failed fit's RMSEP is +inf (the only infinity here: cosines and correlations are bounded): pandas gives NaN
    # between two infs (inf - inf), the quantile is inf there. (np.nanquantile, used before, gave NaN for any step
    # next to an inf, so one failed replicate made the median RMSEP NaN: "not measured".)
    # rmsep_finite: the finite fits' RMSEP, whose mean is reported
    g = sweep.assign(rmsep_finite=sweep["rmsep"].where(np.isfinite(sweep["rmsep"]))).groupby(
        ["setting", "epsilon", "component"], sort=False)
    cols = ["cosine", "correlation", "rmsep"] + (["rmsep_mean_model"] if "rmsep_mean_model" in sweep else [])
    count = g[cols].count()
    q25, q50, q75 = (q.mask(q.isna() & (count > 0), np.inf) for q in (g[cols].quantile(p) for p in (0.25, 0.5, 0.75)))
    mean = g[["hit", "cosine", "correlation", "rmsep_finite"]].mean()
    spread = ["cosine", "correlation"]
    sem = (g[spread].std(ddof=1) / np.sqrt(count[spread])).where(count[spread] > 1, 0.0)  # one value: no spread
    out = pd.DataFrame({
        "n": g.size(), "hit_rate": mean["hit"],
        "cosine_mean": mean["cosine"], "cosine_sem": sem["cosine"],
        "cosine_q25": q25["cosine"], "cosine_q75": q75["cosine"],
        "correlation_mean": mean["correlation"], "correlation_sem": sem["correlation"],
        "correlation_q25": q25["correlation"], "correlation_q75": q75["correlation"],
        "rmsep_median": q50["rmsep"], "rmsep_q25": q25["rmsep"], "rmsep_q75": q75["rmsep"],
        "rmsep_mean": mean["rmsep_finite"],
        **({"rmsep_mean_model": q50["rmsep_mean_model"]} if "rmsep_mean_model" in sweep else {}),
    }).reset_index()
    if "status" in sweep:
        out["status"] = g["status"].agg(lambda v: min(set(v), key=STATUSES.index)).to_numpy()
        out["not_proven_because"] = g["not_proven_because"].agg(
            lambda v: "; ".join(dict.fromkeys(x for x in v if x))).to_numpy()
    # Wilson 95% interval for the hit rate (exact enough for a band, sane at 0 and 1).
    z, n, p = 1.959963984540054, out["n"].to_numpy(float), out["hit_rate"].to_numpy(float)
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    out["hit_low"], out["hit_high"] = np.clip(centre - half, 0, 1), np.clip(centre + half, 0, 1)
    out["label"] = out["setting"].map(SETTINGS)
    return out


def _utility_clause(row, plain) -> str:
    """The private model's prediction error beside a claim about the attack (same sentence)."""
    private = float(row.get("rmsep_median", math.nan))
    mean_model = float(row.get("rmsep_mean_model", math.nan))
    if math.isnan(private):
        return (", but its prediction error was not measured (no held-out rows), so whether the private model "
                "is still of any use is unknown")
    if math.isinf(private):
        return ", but the private model's fits failed (infinite RMSEP on held-out rows): it predicts nothing"
    text = f", while the private model's median RMSEP on held-out rows is {private:.3g}"
    refs = []
    if plain is not None and math.isfinite(float(plain.get("rmsep_median", math.nan))):
        refs.append(f"{float(plain['rmsep_median']):.3g} for plain PLS")
    if math.isfinite(mean_model):
        refs.append(f"{mean_model:.3g} for predicting the mean")
    if refs:
        text += " (against " + " and ".join(refs) + ")"
    if math.isfinite(mean_model) and not private < mean_model:
        text += ", so at this ε the private model is no better than predicting the mean"
    return text


def _status_clause(best) -> str:
    status = best.get("status") if hasattr(best, "get") else None
    if not isinstance(status, str):
        return ""
    if status == "not proven":
        why = str(best.get("not_proven_because") or "").split("; ")[0].removeprefix("not proven: ")
        return f"; guarantee of these fits: not proven ({why})" if why else "; guarantee of these fits: not proven"
    return f"; guarantee of these fits: {status}"


def verdict(summary: pd.DataFrame, setting: str, epsilon: float, *, secret_is_truth: bool = True) -> str:
    """A plain-language sentence: how well the attack works at ``epsilon`` under ``setting``
    versus without privacy. Uses whichever of W and P leaks more (the attacker picks the better).

    The guarantee named is the ``status`` of the fits' own ledgers (sweep rows carry it), and a
    sentence saying the attack no longer works carries the private model's RMSEP (against plain PLS
    and against predicting the mean) in the same sentence: a model that protects by predicting
    nothing useful is said to do so.
    """
    private = summary[(summary.setting == setting) & np.isclose(summary.epsilon, epsilon)]
    plain = summary[summary.setting == "plain"]
    if private.empty:
        return f"No results for {SETTINGS.get(setting, setting)} at ε = {epsilon:g}; run the sweep for it."
    best = private.loc[private.correlation_mean.idxmax()]
    p = None if plain.empty else plain.loc[plain.correlation_mean.idxmax()]
    what = "the secret component" if secret_is_truth else "what the attacker recovers without privacy"
    text = (
        f"At ε = {epsilon:g} ({SETTINGS[setting]}{_status_clause(best)}), the attacker's best reconstruction "
        f"(from the shared {COMPONENTS[best.component]}) correlates {best.correlation_mean:.2f} with {what} and "
        f"finds its peak in {best.hit_rate:.0%} of {int(best.n)} runs"
    )
    if p is not None and secret_is_truth:
        text += f"; without privacy {p.correlation_mean:.2f} (peak found in {p.hit_rate:.0%})"
    elif not secret_is_truth:
        text += "; without privacy the attacker gets that leak in full"
    text += "."
    chance = 0.3
    if best.hit_rate <= chance and best.correlation_mean < 0.5:
        text += f" The attack no longer works{_utility_clause(best, p)}."
    elif best.hit_rate >= 0.9:
        text += " The attack still works: this ε does not protect the other party's unique component."
    else:
        text += f" The attack works only some of the time{_utility_clause(best, p)}."
    return text
