"""The home page's guided demo (issue #10): plain PLS leaks, edPLS protects, at this cost in RMSEP.

A short story for stakeholders, built only from existing engine pieces, in three steps:

1. **Plain PLS leaks.** The edPLS paper's two-party simulation (``engine.data.attack_sim``): two
   data holders share one PLS model; party 1 runs the subspace attack
   (``engine.attacks.pls_subspace``) on the shared components and recovers the spectral band
   only party 2 has. Measured as |correlation| with the true band and the rate at which the
   recovered peak lands on the band (known here because the data are simulated).
2. **Does edPLS (strict mode) stop it, and at what accuracy?** The same attack on edPLS in strict
   mode with public bounds taken from the simulation's parameters (proven (epsilon, delta)-DP when
   its ledger says so: fresh noise): the correlation falls to the level of a random direction
   (``chance``), and the sentence saying so gives the protected model's RMSEP on held-out simulated
   rows beside plain PLS and the mean predictor.
3. **The cost** (the first world: a small set, where privacy can cost everything). RMSEP of strict edPLS with
   the recommended estimator (``make_strict_edpls``, issue #18:
   row-wise preprocessing, a public projection, separate moment releases, ridge; public range of the
   response [0, 100] % w/w, no public spectra) against non-private PLS on the NIR sample set
   (``sample_data/nir_spectra.csv``, response moisture) at the chosen epsilon, beside the private constant
   predictor at the same budget (the baseline a private model must beat) and the test responses' standard
   deviation sigma_y for scale (a model with RMSEP >= sigma_y is no better than predicting the mean), and
   how the cost falls as epsilon grows; a note gives the plain Analyze-Gauss strict fit's numbers.

4. **The second world** (``ui.home.consortium``, issue #31): the same estimator on a consortium's pooled NIR set
   (10,000 simulated spectra from five labs, 500 published unlabelled spectra declared public), where the private
   model at the story's epsilon is within twice the non-private RMSEP (said only when the numbers show it), and a
   sentence saying what makes the difference (rows and public spectra), with the planner's numbers for both worlds.

Every number is a median over several runs (fresh simulated data and fresh privacy noise), not
one lucky draw, and carries a sentence saying which guarantee it has: "none" for plain PLS,
"proven (epsilon, delta)-DP" for strict edPLS only when the ledger of the very fits behind the
number is proven (public bounds, fresh noise), else "not proven" with the ledger's reasons. The
headlines are written from the numbers, so a large epsilon that does not stop the attack is
reported as such, and a sentence saying the attack fails carries the protected model's RMSEP.

Noise (issue #15): the privacy noise is fresh OS entropy by default (``noise_seed=None``), so two
runs differ; ``noise_seed`` (an int) fixes it for teaching, and every strict fit's ledger then says
"not proven: the noise seed is known". ``seed`` fixes only the simulated data (not a release).

``guided_story()`` takes about 1-1.5 s on a 2-core machine (BLAS is limited to one thread while it
runs: the strict-mode eigendecompositions are small, and extra threads only fight over the cores);
``leak_example()`` (the home page's teaser chart) about 20 ms.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from engine.attacks.pls_subspace import (
    SimulationScenario,
    attack_success_sweep,
    run_attack,
    simulation_problem,
)
from engine.data.attack_sim import make_attack_spectra
from engine.data.catalog import SAMPLE_SETS
from engine.data.io import load_table
from engine.data.split import train_test_indices
from engine.methods.baselines import DPConstantRegressor
from engine.methods.edpls import EDPLS, make_strict_edpls
from engine.privacy.noise import noise_generator
from engine.privacy.wording import format_delta
from engine.threads import one_blas_thread
from ui.home.consortium import WITHIN, consortium_world, difference_sentence

__all__ = [
    "DEMO_COST_EPSILONS",
    "DEMO_RESPONSE",
    "GuidedStory",
    "StoryNumber",
    "StoryStep",
    "guided_story",
    "leak_example",
]

#: The epsilons of step 3's cost curve (the chosen epsilon is added).
DEMO_COST_EPSILONS = (1.0, 10.0, 100.0, 1000.0)
#: Step 3's sample set and response (the edPLS page's defaults: first response, no preprocessing).
DEMO_SAMPLE = "nir"
DEMO_RESPONSE = "moisture"
DEMO_UNIT = "% w/w"
#: Step 3's public range of the response: a percentage lies in [0, 100] (the edPLS page's default for it).
DEMO_Y_RANGE = (0.0, 100.0)
#: The attack's model size: 3 latent variables, LV 3 read (the paper's and the attack lab's defaults).
ATTACK_COMPONENTS = 3
#: Step 3's model size and test split (the edPLS page's defaults: 5 LVs, random 30 % held out, seed 0).
NIR_COMPONENTS = 5
NIR_TEST_FRACTION = 0.3
NIR_SPLIT_SEED = 0
#: The attack "no longer works" below these (the attack lab's verdict rule): peak found in at most
#: 30 % of runs and |corr| below 0.5; it "works" when the peak is found in at least 90 % of runs.
BROKEN_HIT_RATE, BROKEN_CORR, WORKS_HIT_RATE = 0.3, 0.5, 0.9

NO_PRIVACY = "Plain PLS: no privacy (ε = ∞), no guarantee."
EVALUATION = ("An evaluation, not a release: it compares the attack with the true band, which only the "
              "simulation knows.")


@dataclass(frozen=True)
class StoryNumber:
    """One headline number: what it is, its value, how to show it, and its guarantee."""

    key: str
    label: str
    value: float
    display: str
    guarantee: str


@dataclass(frozen=True)
class StoryStep:
    """One step of the story: a headline sentence, its numbers, and the data behind its figure."""

    number: int
    key: str  # "leak" | "protect" | "cost"
    title: str
    headline: str
    numbers: tuple  # of StoryNumber
    figure: dict = field(default_factory=dict)
    notes: tuple = ()

    def value(self, key: str) -> float:
        """The value of the number ``key`` of this step."""
        return self.get(key).value

    def get(self, key: str) -> StoryNumber:
        """The number ``key`` of this step; KeyError naming the step's numbers otherwise."""
        for n in self.numbers:
            if n.key == key:
                return n
        raise KeyError(f"step {self.key!r} has no number {key!r}; it has {[n.key for n in self.numbers]}")


@dataclass(frozen=True)
class GuidedStory:
    """The whole story: the budget it ran at, its data seed, whether the noise was fresh, its three
    steps and how long it took."""

    epsilon: float
    delta: float
    data_seed: int
    steps: tuple  # of StoryStep, in order
    runs: dict  # how many runs each median is over
    seconds: float
    fresh_noise: bool = True

    def step(self, key: str) -> StoryStep:
        """The step ``key`` of the story; KeyError naming the steps otherwise."""
        for s in self.steps:
            if s.key == key:
                return s
        raise KeyError(f"no step {key!r}; steps are {[s.key for s in self.steps]}")

    def as_dict(self) -> dict:
        """Plain nested dict (numbers only, no arrays) for notebooks and JSON."""
        return {
            "epsilon": self.epsilon, "delta": self.delta, "data_seed": self.data_seed,
            "noise": "fresh" if self.fresh_noise else "fixed (teaching: not proven)", "runs": dict(self.runs),
            "seconds": self.seconds,
            "steps": [{"number": s.number, "key": s.key, "title": s.title, "headline": s.headline,
                       "numbers": {n.key: {"label": n.label, "value": n.value, "guarantee": n.guarantee}
                                   for n in s.numbers}} for s in self.steps],
        }


# ---------------------------------------------------------------------------------------------
# The teaser: one simulated data set, what plain PLS leaks
# ---------------------------------------------------------------------------------------------
def _simulated_problem(seed: int):
    """The attack lab's default problem: paper simulation, party 1 attacks, test rows from seed + 1."""
    data = make_attack_spectra(random_state=seed)
    test = make_attack_spectra(random_state=seed + 1)
    return simulation_problem(data, 1, test)


def leak_example(seed: int = 0) -> dict:
    """What party 1 recovers from a plain PLS model shared with party 2, on one simulated data set.

    The attack lab's default picture (seed 0 is its default data set). Returns a dict: axis
    (channels), secret (party 2's unique band) and leaked (the reconstruction from the shared
    loadings P), both scaled to peak 1; correlation (|corr| of the two), hit (peak within 2
    channels of the band's centre), secret_centre, guarantee (plain PLS has none).
    """
    problem = _simulated_problem(seed)
    plain = run_attack(problem, "plain", math.inf, n_components=ATTACK_COMPONENTS)  # no noise: deterministic
    return {
        "axis": np.asarray(problem.axis, dtype=float),
        "secret": plain.secret_display["P"],
        "leaked": plain.display["P"],
        "correlation": float(plain.measures["P"]["correlation"]),
        "hit": bool(plain.measures["P"]["hit"]),
        "secret_centre": float(problem.secret_centre),
        "attacker": problem.attacker_label,
        "other": problem.other_label,
        "guarantee": NO_PRIVACY,
    }


# ---------------------------------------------------------------------------------------------
# The story
# ---------------------------------------------------------------------------------------------
def _chance_correlation(secret: np.ndarray, rng: np.random.Generator, n: int = 400) -> float:
    """Median |corr| between the secret band and random Gaussian directions (what "no information" scores)."""
    V = rng.standard_normal((n, secret.size))
    V = V - V.mean(axis=1, keepdims=True)
    s = secret - secret.mean()
    r = np.abs(V @ s) / (np.sqrt((V * V).sum(axis=1)) * np.sqrt(s @ s))
    return float(np.median(r))


def _per_run(sweep: pd.DataFrame, setting: str) -> pd.DataFrame:
    """One row per run: the attacker's better of W and P (conservative for the privacy claim)."""
    part = sweep[sweep.setting == setting]
    return part.groupby("replicate").agg(correlation=("correlation", "max"), hit=("hit", "max"),
                                         rmsep=("rmsep", "first"))


ONE_RELEASE = "one Analyze-Gauss release of the clipped second moments"


def _strict_guarantee(epsilon: float, delta: float, status: str, reasons: str, bounds: str,
                      releases: str = ONE_RELEASE) -> str:
    """The guarantee sentence of strict edPLS numbers, from the status of the fits' own ledgers; ``releases``
    says what the fit releases (from its ledger)."""
    if status == "proven":
        return (f"edPLS strict mode: (ε = {epsilon:g}, δ = {format_delta(delta)})-differential privacy per row "
                f"(one row added or removed), proven, for the whole fit ({releases}; public bounds {bounds}; fresh "
                "noise).")
    if status == "no privacy":
        return f"edPLS strict mode at ε = {epsilon:g}: nothing was released with noise, so no privacy."
    return (f"edPLS strict mode at ε = {epsilon:g}, δ = {delta:g}, {reasons or 'not proven'} (public bounds "
            f"{bounds}).")


def _noise_sources(noise_seed):
    """Four independent noise sources (attack sweep, the pictured fit, the cost curve, the consortium).

    None: each release draws fresh OS entropy. An int: generators from ``SeedSequence(noise_seed)``
    (known seed: the ledgers say so; the first three are those of the three-step story)."""
    if noise_seed is None:
        return None, None, None, None
    return tuple(np.random.default_rng(s) for s in np.random.SeedSequence(int(noise_seed)).spawn(4))


def _attack_verdict(hit_rate: float, corr: float) -> str:
    if hit_rate <= BROKEN_HIT_RATE and corr < BROKEN_CORR:
        return "stops"
    if hit_rate >= WORKS_HIT_RATE:
        return "fails"
    return "partly"


def guided_story(epsilon: float = 1.0, delta: float = 1e-5, seed: int = 0, *, noise_seed: int | None = None,
                 n_data_draws: int = 4, noise_per_draw: int = 5, cost_replicates: int = 10,
                 cost_epsilons=DEMO_COST_EPSILONS, calibration: str = "analytic",
                 consortium_replicates: int = 5) -> GuidedStory:
    """Run the four-step story (module docstring) at (epsilon, delta).

    seed : the simulated data (steps 1-2) and the pictured data set; not a release.
    noise_seed : None (default): fresh privacy noise for every release, so two runs differ and the
        strict fits are proven. An int fixes the noise (teaching): every strict fit's ledger then says
        "not proven: the noise seed is known", and so does every guarantee sentence.

    Steps 1-2: ``n_data_draws`` simulated data sets, ``noise_per_draw`` edPLS noise draws on each
    (medians over n_data_draws x noise_per_draw runs). Step 3: ``cost_replicates`` edPLS noise draws
    per epsilon in ``cost_epsilons`` plus ``epsilon`` on one fixed train/test split of the NIR sample
    set. Step 4: ``consortium_replicates`` noise draws on the consortium sample (``ui.home.consortium``).
    Returns a ``GuidedStory``.
    """
    if not (epsilon > 0 and math.isfinite(epsilon)):
        raise ValueError(f"epsilon must be a positive finite number, got {epsilon}")
    if not 0 < delta < 1:
        raise ValueError(f"delta must be in (0, 1), got {delta}")
    start = time.perf_counter()
    sweep_noise, picture_noise, cost_noise, consortium_noise = _noise_sources(noise_seed)
    with one_blas_thread():
        leak, protect = _attack_steps(float(epsilon), float(delta), int(seed), n_data_draws, noise_per_draw,
                                      calibration, sweep_noise, picture_noise)
        cost = _cost_step(float(epsilon), float(delta), cost_replicates, cost_epsilons, calibration, cost_noise)
        scale = _consortium_step(float(epsilon), float(delta), consortium_replicates, calibration, consortium_noise,
                                 cost)
    runs = {"attack_data_sets": int(n_data_draws), "attack_runs": int(n_data_draws * noise_per_draw),
            "cost_replicates": int(cost_replicates), "consortium_replicates": int(consortium_replicates)}
    return GuidedStory(float(epsilon), float(delta), int(seed), (leak, protect, cost, scale), runs,
                       time.perf_counter() - start, fresh_noise=noise_seed is None)


def _attack_steps(epsilon, delta, seed, n_data_draws, noise_per_draw, calibration, sweep_noise, picture_noise):
    n_runs = int(n_data_draws) * int(noise_per_draw)
    if n_runs < 1:
        raise ValueError("n_data_draws and noise_per_draw must be >= 1")
    sweep = attack_success_sweep(
        SimulationScenario(attacker=1), [epsilon], settings=("plain", "strict"), n_replicates=n_runs,
        noise_per_draw=int(noise_per_draw), delta=delta, n_components=ATTACK_COMPONENTS,
        calibration=calibration, random_state=sweep_noise, data_random_state=seed,
    )
    plain_runs, strict_runs = _per_run(sweep, "plain"), _per_run(sweep, "strict")
    plain_corr, plain_hit = float(plain_runs.correlation.median()), float(plain_runs.hit.mean())
    strict_corr, strict_hit = float(strict_runs.correlation.median()), float(strict_runs.hit.mean())
    plain_rmsep, strict_rmsep = float(plain_runs.rmsep.median()), float(strict_runs.rmsep.median())
    mean_rmsep = float(sweep.rmsep_mean_model.median())
    # The guarantee of the strict numbers: the ledgers of the very fits behind them (weakest wins).
    strict_rows = sweep[sweep.setting == "strict"]
    status = "not proven" if (strict_rows.status != "proven").any() else "proven"
    reasons = "; ".join(dict.fromkeys(r for r in strict_rows.not_proven_because if r))

    # One example data set for the pictures (the attack lab's default: seed 0 is its default view).
    problem = _simulated_problem(seed)
    plain = run_attack(problem, "plain", math.inf, delta=delta, n_components=ATTACK_COMPONENTS,
                       calibration=calibration)
    private = run_attack(problem, "strict", epsilon, delta=delta, n_components=ATTACK_COMPONENTS,
                         calibration=calibration, random_state=picture_noise)
    ledger = private.ledger
    sigma_y_sim = float(np.std(problem.y_test))
    chance = _chance_correlation(problem.secret, np.random.default_rng(seed))
    bounds = f"‖x‖ ≤ {problem.x_bound:.3g}, |y| ≤ {problem.y_bound:g}, from the simulation's parameters"
    strict_label = _strict_guarantee(epsilon, delta, status, reasons, bounds)
    n_sets = int(n_data_draws)

    leak = StoryStep(
        1, "leak", "Plain PLS leaks the other party's secret",
        (f"Two companies pool their spectra into one plain PLS model. From the shared model alone, party 1 "
         f"recovers the band only party 2 measures: median |correlation| {plain_corr:.2f} with the true band, "
         f"and its peak is found in {plain_hit:.0%} of {n_sets} simulated data sets."),
        (
            StoryNumber("leak_corr", "Plain PLS: |corr| with the secret band", plain_corr, f"{plain_corr:.2f}",
                        f"{NO_PRIVACY} Median over {n_sets} simulated data sets. {EVALUATION}"),
            StoryNumber("leak_hit", "Plain PLS: secret peak found", plain_hit, f"{plain_hit:.0%}",
                        f"{NO_PRIVACY} Share of {n_sets} data sets where the recovered peak is within 2 channels "
                        f"of the secret band's centre (channel {problem.secret_centre:g})."),
        ),
        figure={"axis": np.asarray(problem.axis, dtype=float), "secret": plain.secret_display,
                "leaked": plain.display, "secret_centre": float(problem.secret_centre),
                "correlation": float(plain.measures["P"]["correlation"])},
        notes=(f"The picture shows one of the simulated data sets (data seed {seed}); the numbers are medians "
               f"over {n_sets}. The simulation is the edPLS paper's: 100 rows per party, 100 channels, "
               "shared analyte and interferent, one unique interferent per party.",),
    )

    verdict = _attack_verdict(strict_hit, strict_corr)
    useless = not strict_rmsep < mean_rmsep
    utility = (f"the protected model's median RMSEP on held-out simulated rows is {strict_rmsep:.3g} against "
               f"{plain_rmsep:.3g} for plain PLS and {mean_rmsep:.3g} for predicting the mean"
               + (", so at this ε it is no better than predicting the mean" if useless else ""))
    says = {
        "stops": f"The attack no longer works, while {utility}",
        "partly": f"The attack still works some of the time, while {utility}",
        "fails": "The attack still works: this ε does not protect the secret band",
    }[verdict]
    rmseps = f"RMSEP {strict_rmsep:.3g}; plain PLS {plain_rmsep:.3g}, predicting the mean {mean_rmsep:.3g}"
    if verdict != "stops":
        title = f"edPLS (strict mode) at ε = {epsilon:g}: the leak is not closed"
    elif useless:  # a success sentence never hides that the protected model predicts nothing
        title = (f"edPLS (strict mode) at ε = {epsilon:g}: the leak is gone, but the private model predicts no "
                 f"better than the mean ({rmseps})")
    else:
        title = (f"edPLS (strict mode) at ε = {epsilon:g}: the leak is gone, and the private model predicts better "
                 f"than the mean ({rmseps})")
    protect = StoryStep(
        2, "protect", title,
        (f"{says}. The same attack on edPLS in strict mode at ε = {epsilon:g}, δ = {delta:g} recovers a direction "
         f"with median |correlation| {strict_corr:.2f} with the secret band (a random direction scores "
         f"{chance:.2f}) and finds its peak in {strict_hit:.0%} of {n_runs} runs."),
        (
            StoryNumber("strict_corr", f"edPLS strict ε = {epsilon:g}: |corr| with secret", strict_corr,
                        f"{strict_corr:.2f}",
                        f"{strict_label} Median over {n_runs} runs ({n_sets} data sets × {noise_per_draw} noise "
                        f"draws), the better of W and P in each run. {EVALUATION}"),
            StoryNumber("strict_hit", f"edPLS strict, ε = {epsilon:g}: secret peak found", strict_hit,
                        f"{strict_hit:.0%}", f"{strict_label} Share of {n_runs} runs."),
            StoryNumber("chance", "Random direction: |corr| with secret", chance, f"{chance:.2f}",
                        "Reference, no model and no data: median over random Gaussian directions on the same "
                        "100 channels."),
        ),
        figure={"axis": np.asarray(problem.axis, dtype=float), "secret": plain.secret_display,
                "plain": plain.display, "private": private.display, "secret_centre": float(problem.secret_centre),
                "private_label": f"recovered from edPLS strict, ε = {epsilon:g}", "ledger": ledger,
                "sim_rmsep_strict": strict_rmsep, "sim_rmsep_plain": plain_rmsep, "sim_rmsep_mean": mean_rmsep,
                "sigma_y_sim": sigma_y_sim, "status": status, "proven": status == "proven",
                "picture_status": private.status, "verdict": verdict},
        notes=(f"On the same simulated data the protected model's median RMSEP is {strict_rmsep:.3g} against "
               f"{plain_rmsep:.3g} for plain PLS and {mean_rmsep:.3g} for predicting the training mean "
               f"(σ_y = {sigma_y_sim:.3g}; held-out simulated rows).",
               f"Strict mode spends the whole budget once: ε = {epsilon:g}, δ = {delta:g} for the fit. The "
               "guarantee is per row, while the secret band is a property of all of party 2's rows together "
               "(a group of 100 rows gets only the group bound, 100·ε): that the attack fails here is measured "
               "at this ε on this simulation, not implied by the guarantee."),
    )
    return leak, protect


def _nir_split():
    info = SAMPLE_SETS[DEMO_SAMPLE]
    df = load_table(info.path)
    channels = [c for c in df.columns if c not in info.response_columns]
    X = df[channels].to_numpy(dtype=float)
    y = df[DEMO_RESPONSE].to_numpy(dtype=float)
    tr, te = train_test_indices(len(y), NIR_TEST_FRACTION, how="random", random_state=NIR_SPLIT_SEED)
    return X, y, tr, te, info


def _rmsep(pred: np.ndarray, y: np.ndarray) -> float:
    with np.errstate(all="ignore"):
        r = float(np.sqrt(np.mean((pred - y) ** 2)))
    return r if math.isfinite(r) else math.inf


def _weakest(ledgers) -> tuple[str, str]:
    """The status of a set of fits (the weakest of their own ledgers) and the reasons, deduplicated."""
    status = ("no privacy" if all(not len(led) for led in ledgers) else
              "proven" if all(led.status == "proven" for led in ledgers) else "not proven")
    reasons = "; ".join(dict.fromkeys(r for led in ledgers for r in led.reasons_not_proven()))
    return status, reasons


def _strict_cost_curve(X_train, y_train, X_test, y_test, grid, replicates, calibration, delta, y_range, x_bound,
                       noise) -> pd.DataFrame:
    """RMSEP of ``replicates`` fits of the recommended strict estimator (``make_strict_edpls``) per ε, beside
    the private constant predictor and the plain Analyze-Gauss strict fit at the same budget, and the status
    of each ε's own ledgers (the weakest of the recommended fits').

    Columns: epsilon, median, q25, q75, mean (the recommended estimator), nonprivate (plain PLS1, no noise),
    constant (median RMSEP of the private constant predictor), plain_strict (median RMSEP of the plain strict
    edPLS), n_replicates, status, not_proven_because, proven, releases (the recommended fit's ledger names)."""
    rng, _ = noise_generator(noise)  # fresh stays fresh; a known seed is recorded by every fit's ledger
    plain = EDPLS(n_components=NIR_COMPONENTS, epsilon=math.inf).fit(X_train, y_train)
    nonprivate = _rmsep(plain.predict(X_test), y_test)
    y_bound = max(abs(v) for v in y_range)
    rows = []
    for eps in grid:
        rm, rm_const, ledgers = [], [], []
        for _ in range(int(replicates)):
            fit = make_strict_edpls(float(eps), delta, y_range=y_range, random_state=rng,
                                    calibration=calibration).fit(X_train, y_train)
            rm.append(_rmsep(fit.predict(X_test), y_test))
            ledgers.append(fit.privacy_ledger_)
            const = DPConstantRegressor(float(eps), delta, y_range=y_range, calibration=calibration,
                                        random_state=rng).fit(X_train, y_train)
            rm_const.append(_rmsep(const.predict(X_test), y_test))
        old = EDPLS(n_components=NIR_COMPONENTS, mode="strict", epsilon=float(eps), delta=delta, x_bound=x_bound,
                    y_bound=y_bound, calibration=calibration, random_state=rng).sample_releases(
            X_train, y_train, int(replicates))
        with np.errstate(all="ignore"):
            old_rm = np.sqrt(np.mean((X_test @ old["coef"].T + old["intercept"][None, :] - y_test[:, None]) ** 2,
                                     axis=0))
        status, reasons = _weakest(ledgers)
        rm = np.asarray(rm)
        rows.append({"epsilon": float(eps), "median": float(np.median(rm)), "q25": float(np.quantile(rm, 0.25)),
                     "q75": float(np.quantile(rm, 0.75)), "mean": float(np.mean(rm)), "nonprivate": nonprivate,
                     "constant": float(np.median(rm_const)),
                     "plain_strict": float(np.median(np.where(np.isfinite(old_rm), old_rm, np.inf))),
                     "n_replicates": int(replicates), "status": status, "not_proven_because": reasons,
                     "proven": status == "proven", "releases": ", ".join(r.name for r in ledgers[0].entries)})
    return pd.DataFrame(rows)


def _cost_step(epsilon, delta, replicates, cost_epsilons, calibration, noise) -> StoryStep:
    X, y, tr, te, info = _nir_split()
    m = X.shape[1]
    x_bound = math.sqrt(m)  # the plain fit's bound: every absorbance in [-1, 1], an assumption about the instrument
    y_range = DEMO_Y_RANGE  # a percentage (w/w) lies in [0, 100]: the property's physical range
    grid = sorted({float(e) for e in cost_epsilons} | {epsilon})
    curve = _strict_cost_curve(X[tr], y[tr], X[te], y[te], grid, replicates, calibration, delta, y_range, x_bound,
                               noise)
    curve.insert(0, "model", "strict edPLS, recommended estimator")
    row = curve[np.isclose(curve.epsilon, epsilon)].iloc[0]
    private, nonprivate, constant = float(row["median"]), float(row["nonprivate"]), float(row["constant"])
    sigma_y = float(np.std(y[te]))
    bounds = (f"y in [{y_range[0]:g}, {y_range[1]:g}] {DEMO_UNIT} (the physical range of a percentage); x: SNV "
              "rows and a data-free bound, no public spectra")
    releases = f"{len(str(row['releases']).split(', '))} Gaussian releases: {row['releases']}"
    strict_label = _strict_guarantee(epsilon, delta, str(row["status"]), str(row["not_proven_because"]), bounds,
                                     releases)
    all_proven = bool(curve.proven.all())
    useful = curve[curve["median"] < sigma_y]
    n_train = len(tr)

    beats = (f"better than the private constant predictor at the same budget ({constant:.3g})" if private < constant
             else f"no better than the private constant predictor at the same budget ({constant:.3g})")
    if private < sigma_y:
        how_bad = (f"so it keeps part of the signal: {1 - (private / sigma_y) ** 2:.0%} of the test variance "
                   f"explained, against {1 - (nonprivate / sigma_y) ** 2:.0%} without privacy")
    else:
        how_bad = (f"so the private model is no better than predicting the mean: at this ε, {n_train} training "
                   "spectra are far too few for strict DP")
    falls = ", ".join(f"{r['median']:.3g} at ε = {r['epsilon']:g}" for _, r in curve.iterrows()
                      if r["epsilon"] != epsilon)
    if useful.empty:
        reach = (f"No ε up to {curve.epsilon.max():g} brings the median below σ_y on these {n_train} rows: the "
                 "noise is fixed by (ε, δ) and the public bounds while the signal grows with the number of rows, "
                 "so strict edPLS needs more rows (or public spectra, or a tighter public range).")
    else:
        first = useful.iloc[0]
        reach = f"The median first drops below σ_y at ε = {first['epsilon']:g} ({first['median']:.3g})."
    headline = (f"Protection has a price in accuracy. On the NIR sample set ({DEMO_RESPONSE}, {n_train} training "
                f"spectra), strict edPLS (the recommended estimator) at ε = {epsilon:g} has a median RMSEP of "
                f"{private:.3g} {DEMO_UNIT} against {nonprivate:.3g} for non-private PLS, {beats}; the responses' "
                f"spread is σ_y = {sigma_y:.3g}, {how_bad}.")
    each = ("Each ε on the curve is its own strict fit with its own proven guarantee; they are alternatives, "
            "not releases to add up." if all_proven else
            "Each ε on the curve is its own strict fit (alternatives, not releases to add up); their guarantees "
            "are not proven: " + "; ".join(dict.fromkeys(r for r in curve.not_proven_because if r)) + ".")
    old = ", ".join(f"{r['plain_strict']:.3g} at ε = {r['epsilon']:g}" for _, r in curve.iterrows())
    return StoryStep(
        3, "cost", f"The cost: RMSEP at ε = {epsilon:g}",
        headline,
        (
            StoryNumber("rmsep_private", f"RMSEP, strict edPLS ε = {epsilon:g}", private, f"{private:.3g}",
                        f"{strict_label} Median over {replicates} noise draws (middle half "
                        f"{row['q25']:.3g}–{row['q75']:.3g}); RMSEP itself is computed on held-out rows."),
            StoryNumber("rmsep_plain", "RMSEP, non-private PLS", nonprivate, f"{nonprivate:.3g}", NO_PRIVACY),
            StoryNumber("rmsep_constant", f"RMSEP, private constant ε = {epsilon:g}", constant, f"{constant:.3g}",
                        f"The baseline a private model must beat: a DP mean of y clipped to [{y_range[0]:g}, "
                        f"{y_range[1]:g}] at the same (ε, δ), median over {replicates} noise draws (a noisy count "
                        "and a noisy sum; a comparison, not part of the model)."),
            StoryNumber("sigma_y", "σ_y (test responses)", sigma_y, f"{sigma_y:.3g}",
                        "Scale reference: the spread of the held-out responses (public sample data; predicting "
                        "their mean gives RMSEP ≈ σ_y)."),
        ),
        figure={"curve": curve, "sigma_y": sigma_y, "epsilon": epsilon, "unit": DEMO_UNIT,
                "response": DEMO_RESPONSE, "sample": info.title, "n_train": n_train, "n_test": len(te),
                "proven": all_proven, "useful_epsilon": None if useful.empty else float(useful.iloc[0]["epsilon"]),
                "n_channels": m},
        notes=(f"How the cost falls with ε (median RMSEP): {falls}. {reach}",
               f"The strict fit of earlier versions (plain Analyze-Gauss on the raw channels, {NIR_COMPONENTS} "
               f"LVs, ‖x‖ ≤ √{m}, |y| ≤ {max(abs(v) for v in y_range):g}) at the same budgets: {old}.",
               f"Same data as the edPLS page's defaults: random {NIR_TEST_FRACTION:.0%} of rows held out (split seed "
               f"{NIR_SPLIT_SEED}), public inputs {bounds}; the recommended estimator picks its own preprocessing, "
               f"projection and model (the edPLS page shows its choices); non-private PLS has {NIR_COMPONENTS} "
               f"latent variables and no preprocessing. {each}"),
    )


def _consortium_step(epsilon, delta, replicates, calibration, noise, cost: StoryStep) -> StoryStep:
    """Step 4: the consortium's pooled set, where the private model is useful, and what makes the difference."""
    w = consortium_world(epsilon, delta, replicates, calibration, noise)
    status, reasons = _weakest(w["ledgers"])
    bounds = (f"y in [{DEMO_Y_RANGE[0]:g}, {DEMO_Y_RANGE[1]:g}] {DEMO_UNIT}; x: the consortium's "
              f"{w['n_public']} published spectra (projection, centre and bound)")
    names = ", ".join(r.name for r in w["ledgers"][0].entries)
    label = _strict_guarantee(epsilon, delta, status, reasons, bounds,
                              f"{len(w['ledgers'][0].entries)} Gaussian releases: {names}")
    ratio = w["private"] / w["nonprivate"]
    verdict = (f"{ratio:.2g}× the non-private RMSEP, within {WITHIN:g}× the non-private RMSEP" if w["within"] else
               f"{ratio:.2g}× the non-private RMSEP, more than {WITHIN:g}× at this ε")
    useful = (f"{1 - (w['private'] / w['sigma_y']) ** 2:.1%} of the test variance explained"
              if w["private"] < w["sigma_y"] else "no better than predicting the mean")
    small_rows = int(cost.figure["n_train"])
    headline = (f"The second world: a consortium of five labs pools {w['n_train'] + w['n_test']:,} NIR spectra "
                f"({w['n_train']:,} for training) and publishes {w['n_public']} unlabelled spectra. The same strict "
                f"edPLS at ε = {epsilon:g} has a median RMSEP of {w['private']:.3g} {DEMO_UNIT} against "
                f"{w['nonprivate']:.3g} for non-private PLS: {verdict}, {useful} (σ_y = {w['sigma_y']:.3g}).")
    return StoryStep(
        4, "consortium", f"The second world: a consortium-size set at ε = {epsilon:g}", headline,
        (
            StoryNumber("rmsep_private", f"Consortium: RMSEP, strict edPLS ε = {epsilon:g}", w["private"],
                        f"{w['private']:.3g}", f"{label} Median over {replicates} noise draws (middle half "
                        f"{w['q25']:.3g}–{w['q75']:.3g}); RMSEP itself is computed on held-out rows."),
            StoryNumber("rmsep_plain", "Consortium: RMSEP, non-private PLS", w["nonprivate"], f"{w['nonprivate']:.3g}",
                        NO_PRIVACY),
            StoryNumber("rmsep_constant", f"Consortium: RMSEP, DP constant ε = {epsilon:g}", w["constant"],
                        f"{w['constant']:.3g}", "The baseline a private model must beat, at the same (ε, δ)."),
            StoryNumber("sigma_y", "Consortium: σ_y (test responses)", w["sigma_y"], f"{w['sigma_y']:.3g}",
                        "Scale reference: predicting the test mean gives RMSEP ≈ σ_y."),
        ),
        figure={k: v for k, v in w.items() if k != "ledgers"},
        notes=(difference_sentence(epsilon, delta, small_rows, int(cost.figure.get("n_channels", 350)), w),
               "Data: simulated, engine.data.sample_generators.make_nir_consortium (five labs' draws of the NIR "
               "generator pooled, and its published spectra); the edPLS page opens on a 5,000-row draw of the same "
               "generator (NIR consortium sample), where the private model is useful too."),
    )
