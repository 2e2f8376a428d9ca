"""The server's global model for each setting, and one attack on one fitted model."""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from sklearn.cross_decomposition import PLSRegression

from engine.methods.edpls import EDPLS
from engine.privacy.noise import SEED_KNOWN_CAVEAT, FreshGenerator

from .attack import COMPONENTS, SETTINGS, AttackSetupError, local_components, reconstruct, success_measures
from .scenario import AttackProblem

__all__ = ["AttackOutcome", "fit_global_model", "make_global_model", "run_attack"]


def make_global_model(setting: str, epsilon: float, *, delta: float = 0.01, n_components: int = 3,
                      x_bound=None, y_bound=None, calibration: str = "analytic", ref_ymax: str = "signed",
                      random_state=None, bounds_public: bool = True):
    """An unfitted server model for ``setting`` (a key of ``SETTINGS``).

    "plain": sklearn ``PLSRegression(scale=False)``; "paper_sigma_squared": edPLS paper mode
    with the authors' noise std σ² and signed y-max (diPLSlib behaviour, ``ref_ymax``);
    "paper_sigma": edPLS paper mode, std σ; "strict": edPLS strict mode with public bounds
    (``bounds_public=False``: bounds read off the rows; the same fit, its ledger marked not proven).
    """
    if setting == "plain" or (setting != "strict" and not np.isfinite(epsilon)):
        return PLSRegression(n_components=n_components, scale=False)
    common = dict(n_components=n_components, epsilon=float(epsilon), delta=float(delta),
                  calibration=calibration, random_state=random_state)
    if setting == "paper_sigma_squared":
        return EDPLS(mode="paper", noise_std="sigma_squared", ymax=ref_ymax, **common)
    if setting == "paper_sigma":
        return EDPLS(mode="paper", noise_std="sigma", **common)
    if setting == "strict":
        if x_bound is None or y_bound is None:
            raise AttackSetupError("strict mode needs public bounds for ||x|| and |y|")
        return EDPLS(mode="strict", x_bound=float(x_bound), y_bound=float(y_bound),
                     sensitivity_source="public" if bounds_public else "data", **common)
    raise ValueError(f"unknown setting {setting!r}; choose from {list(SETTINGS)}")


def fit_global_model(problem: AttackProblem, setting: str, epsilon: float, **kwargs):
    """Fit the server's model on the stacked rows; returns the fitted estimator."""
    kwargs.setdefault("bounds_public", bool(getattr(problem, "bounds_public", True)))
    model = make_global_model(setting, epsilon, x_bound=problem.x_bound, y_bound=problem.y_bound, **kwargs)
    return model.fit(problem.X, problem.y)


def _released(model) -> dict:
    return {"W": np.asarray(model.x_weights_, dtype=float), "P": np.asarray(model.x_loadings_, dtype=float)}


def _seed_known(random_state) -> bool:
    """Whether a noise ``random_state`` is a seed the caller knows (the rule of ``noise_generator``)."""
    return not (random_state is None or isinstance(random_state, FreshGenerator))


def _ledger_status(ledger, seed_known: bool = False) -> tuple[str, str]:
    """(status, reasons) of one fit's ledger; a known noise seed is recorded in that ledger first."""
    if ledger is None or not len(ledger):
        return "no privacy", ""
    if seed_known:
        ledger.add_caveat(SEED_KNOWN_CAVEAT)
    return ledger.status, "; ".join(ledger.reasons_not_proven())


def _rmsep_mean_model(problem: AttackProblem) -> float:
    """RMSEP of predicting the training mean of y on the held-out rows (nan without held-out rows)."""
    if problem.X_test is None or problem.y_test is None or not len(problem.y_test):
        return math.nan
    return float(np.sqrt(np.mean((problem.y_test - problem.y.mean()) ** 2)))


def _rmsep(model, problem: AttackProblem) -> float:
    if problem.X_test is None:
        return math.nan
    with np.errstate(all="ignore"):
        pred = np.asarray(model.predict(problem.X_test), dtype=float).ravel()
        value = float(np.sqrt(np.mean((problem.y_test - pred) ** 2)))
    return value if np.isfinite(value) else math.inf


@dataclass
class AttackOutcome:
    """One attack on one fitted model.

    ledger / status: the fitted model's own privacy ledger and its label; rmsep_mean_model: RMSEP of
    predicting the training mean on the held-out rows (what a useless model scores).
    recovered: {"W": (m,), "P": (m,)} reconstructions (sign-oriented); display: the same
    scaled to max |.| = 1; measures: {"W": {...}, "P": {...}} from ``success_measures``;
    secret: {"W": (m,), "P": (m,)} what each is compared with (the true band in the
    simulation, the plain-PLS leak on own data); rmsep of the model on the held-out rows.
    """

    setting: str
    epsilon: float
    recovered: dict
    measures: dict
    secret: dict
    secret_is_truth: bool
    rmsep: float
    model: object = None
    rmsep_mean_model: float = math.nan

    @property
    def ledger(self):
        """The privacy ledger of the fitted model (None for plain PLS: nothing released with noise)."""
        return getattr(self.model, "privacy_ledger_", None)

    @property
    def status(self) -> str:
        """The fit's guarantee from its own ledger: "no privacy", "proven" or "not proven"."""
        return _ledger_status(self.ledger)[0]

    @property
    def display(self) -> dict:
        """The recovered signals, each scaled to a peak of 1 (for plotting)."""
        return {k: _peak_scaled(v) for k, v in self.recovered.items()}

    @property
    def secret_display(self) -> dict:
        """The secret signals, each scaled to a peak of 1 (for plotting)."""
        return {k: _peak_scaled(v) for k, v in self.secret.items()}


def _peak_scaled(v) -> np.ndarray:
    v = np.asarray(v, dtype=float)
    top = np.max(np.abs(v)) if v.size else 0.0
    return v / top if top > 0 else v


def _references(problem: AttackProblem, local: dict, n_components: int, lv: int):
    """What each reconstruction is scored against: the true secret, or the plain-PLS leak."""
    if problem.secret is not None:
        return {k: problem.secret for k in COMPONENTS}, {k: problem.secret_centre for k in COMPONENTS}, True
    plain = PLSRegression(n_components=n_components, scale=False).fit(problem.X, problem.y)
    leak = {k: reconstruct(v, local[k], lv) for k, v in _released(plain).items()}
    return leak, {k: None for k in COMPONENTS}, False


def run_attack(problem: AttackProblem, setting: str, epsilon: float, *, delta: float = 0.01, n_components: int = 3,
               lv: int | None = None, tolerance: int = 2, calibration: str = "analytic", random_state=None,
               _local=None, _refs=None) -> AttackOutcome:
    """Fit the server model for ``setting`` at ``epsilon`` and run the attack on W and P.

    lv: the latent variable read (1-based; default the last, k — LV 3 in the paper).
    random_state: the noise of the private fit. None (default): fresh OS entropy; anything else is a
    known noise seed, and the model's ledger then says "not proven: the noise seed is known".
    """
    lv = n_components if lv is None else int(lv)
    local = _local if _local is not None else local_components(problem.X_own, problem.y_own, n_components)
    refs, centres, truth = _refs if _refs is not None else _references(problem, local, n_components, lv)
    model = fit_global_model(problem, setting, epsilon, delta=delta, n_components=n_components,
                             calibration=calibration, random_state=random_state)
    _ledger_status(getattr(model, "privacy_ledger_", None), _seed_known(random_state))
    released = _released(model)
    recovered, measures = {}, {}
    for comp in COMPONENTS:
        v = reconstruct(released[comp], local[comp], lv)
        recovered[comp] = v
        measures[comp] = success_measures(v, refs[comp], local[comp], secret_centre=centres[comp], tolerance=tolerance)
    eps_out = math.inf if setting == "plain" else float(epsilon)
    return AttackOutcome(setting, eps_out, recovered, measures, refs, truth, _rmsep(model, problem), model,
                         _rmsep_mean_model(problem))
