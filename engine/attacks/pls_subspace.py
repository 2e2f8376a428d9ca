"""What shared PLS components reveal: the edPLS paper's subspace attack (spec ``edpls.md`` Sec. 5).

Threat model (Nikzad-Langerodi et al., Sec. 3): two data holders send their rows to a trusted
server that fits one PLS1 model on the stacked data and sends the model components (weights W,
loadings P, y-loadings c) back to both. Party i fits a local, non-private PLS on its own
(X_i, y_i) with the same number of latent variables k, and projects the global components off
the span of its local ones (paper Eq. 5):

    W_perp = W - W_i (W_i^T W_i)^-1 W_i^T W,      P_perp = P - P_i (P_i^T P_i)^-1 P_i^T P.

What is left lies in the global row space but outside party i's own: the other party's unique
source of variability. Column k (LV 3 in the paper) of W_perp or P_perp is the reconstruction.

Success measures (the paper only shows plots; spec Sec. 5.2 fixes these):

- ``hit``: argmax_j |v_j| lies within +-``tolerance`` (2) channels of the secret band's centre;
- ``cosine``: |cos| between v and the secret component after projecting the secret off the
  attacker's local span (the part of the secret the attack can possibly recover);
- ``correlation``: |Pearson correlation| between v and the secret component itself (the number
  users read at once, used in the verdict sentence).

On an uploaded data set the secret is unknown. The reference is then what the same attacker
recovers from the *non-private* PLS model (the leak), and the measures say how much of that
leak survives the privacy noise; ``leak_exclusivity`` says whether the leaked direction is
really the other party's variation (its variance there relative to the attacker's own data).

Noise (issue #15): every private global model draws fresh noise unless the caller fixes a noise
seed (``random_state``); then each fit's ledger carries
:data:`engine.privacy.noise.SEED_KNOWN_CAVEAT` and reads "not proven". Simulated data keep their
own seed (``data_random_state``): data are not a release. Every sweep row carries the ``status``
of the ledger of the fit it comes from ("no privacy" for plain PLS, "proven", "not proven"), and
the verdict sentence puts the private model's RMSEP beside any claim that the attack fails.

Written by hand: the attack is the paper's experiment. Local models are scikit-learn's
``PLSRegression(scale=False)``; the projection uses ``scipy.linalg.lstsq``; the private global
models are ``engine.methods.edpls.EDPLS``.
"""
from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import pandas as pd
from scipy.linalg import lstsq
from sklearn.cross_decomposition import PLSRegression
from sklearn.utils.validation import check_X_y

from engine.data.attack_sim import TwoPartySpectra, make_attack_spectra, max_row_norm_bound
from engine.privacy import as_generator
from engine.privacy.noise import SEED_KNOWN_CAVEAT, FreshGenerator, noise_generator

__all__ = [
    "COMPONENTS",
    "SETTINGS",
    "AttackOutcome",
    "AttackProblem",
    "AttackSetupError",
    "SimulationScenario",
    "attack_success_sweep",
    "fit_global_model",
    "leak_exclusivity",
    "local_components",
    "make_global_model",
    "orient",
    "project_off_span",
    "reconstruct",
    "run_attack",
    "simulation_problem",
    "split_parties",
    "success_measures",
    "summarise_sweep",
    "verdict",
]

#: The shared components the attack is run on: weights and X-loadings.
COMPONENTS = {"W": "weights W", "P": "loadings P"}

#: The models compared. Keys are used in tables and by the page; values are the labels.
SETTINGS = {
    "plain": "Plain PLS (no privacy)",
    "paper_sigma_squared": "edPLS paper mode, noise std σ² (authors' code)",
    "paper_sigma": "edPLS paper mode, noise std σ",
    "strict": "edPLS strict mode",
}
#: The guarantee labels a sweep row can carry (from the ledger of the fit behind it), weakest first.
STATUSES = ("not proven", "proven", "no privacy")


class AttackSetupError(ValueError):
    """The attack cannot be set up on these data (the message names the problem)."""


# ---------------------------------------------------------------------------------------------
# The attack itself
# ---------------------------------------------------------------------------------------------
def project_off_span(G, L) -> np.ndarray:
    """Paper Eq. (5): G - L (L^T L)^-1 L^T G, the part of G's columns outside span(L).

    G : (m, k) global components; L : (m, k_local) local components. Returns (m, k).
    Solved by least squares, which equals the normal-equation form when L has full column
    rank and stays stable when it is nearly rank deficient.
    """
    G = np.asarray(G, dtype=float)
    L = np.asarray(L, dtype=float)
    vector = G.ndim == 1
    G2 = G[:, None] if vector else G
    coef = lstsq(L, G2, cond=None)[0]
    out = G2 - L @ coef
    return out[:, 0] if vector else out


def orient(v) -> np.ndarray:
    """Flip the sign so the largest-|.| entry is positive (PLS signs are arbitrary; the
    attacker can do this without knowing the truth)."""
    v = np.asarray(v, dtype=float)
    if not v.size:
        return v
    j = int(np.argmax(np.abs(v)))
    return -v if v[j] < 0 else v.copy()


def reconstruct(global_components, local_components_, lv: int) -> np.ndarray:
    """Column ``lv`` (1-based) of the global components projected off the local span, (m,)."""
    G = np.asarray(global_components, dtype=float)
    if not 1 <= lv <= G.shape[1]:
        raise ValueError(f"lv must be in 1..{G.shape[1]}, got {lv}")
    return orient(project_off_span(G[:, lv - 1], local_components_))


def local_components(X_own, y_own, n_components: int) -> dict:
    """The attacker's local, non-private PLS1 (sklearn, mean-centred, no scaling).

    Returns {"W": x_weights_ (m, k), "P": x_loadings_ (m, k)}. sklearn's weights are unit
    norm like NIPALS w; its loadings differ from edPLS's by a per-column scale, which does
    not change their span.
    """
    X_own, y_own = check_X_y(X_own, y_own, y_numeric=True)
    model = PLSRegression(n_components=n_components, scale=False).fit(X_own, y_own)
    return {"W": model.x_weights_, "P": model.x_loadings_}


def success_measures(recovered, secret, local_span=None, *, secret_centre=None, tolerance: int = 2) -> dict:
    """How well ``recovered`` (m,) matches ``secret`` (m,).

    Returns {"hit", "cosine", "correlation", "peak"}: hit = argmax|v| within +-tolerance of
    ``secret_centre`` (default: argmax|secret|; a zero or non-finite v never hits); cosine = |cos(v, secret projected off
    ``local_span``)|; correlation = |Pearson r(v, secret)|; peak = argmax|v|.
    """
    v = np.asarray(recovered, dtype=float)
    s = np.asarray(secret, dtype=float)
    centre = float(np.argmax(np.abs(s))) if secret_centre is None else float(secret_centre)
    peak = int(np.argmax(np.abs(v)))
    s_reachable = s if local_span is None else project_off_span(s, local_span)
    recovered_something = bool(np.any(v != 0) and np.all(np.isfinite(v)))  # a zero vector reveals nothing
    return {
        "hit": float(recovered_something and abs(peak - centre) <= tolerance),
        "cosine": _abs_cos(v, s_reachable),
        "correlation": _abs_cos(v - v.mean(), s - s.mean()),
        "peak": peak,
    }


def _abs_cos(a, b) -> float:
    na, nb = np.linalg.norm(a), np.linalg.norm(b)
    if na == 0 or nb == 0 or not (np.isfinite(na) and np.isfinite(nb)):
        return 0.0
    return float(min(1.0, abs(a @ b) / (na * nb)))


def leak_exclusivity(direction, X_own, X_other) -> float:
    """Variance of the other party's (centred) rows along ``direction`` over the attacker's own.

    Much above 1: the direction is variation the other party has and the attacker lacks,
    i.e. the leak is about the other party's data. Returns inf when the attacker's own
    variance along it is zero.
    """
    u = np.asarray(direction, dtype=float)
    u = u / np.linalg.norm(u)
    var_other = np.var((X_other - X_other.mean(axis=0)) @ u)
    var_own = np.var((X_own - X_own.mean(axis=0)) @ u)
    return float(var_other / var_own) if var_own > 0 else math.inf


# ---------------------------------------------------------------------------------------------
# The scenario: who holds what
# ---------------------------------------------------------------------------------------------
@dataclass
class AttackProblem:
    """One attack set-up.

    X_own (n_a, m), y_own (n_a,): the attacker's rows; X_other (n_b, m), y_other (n_b,): the
    other party's rows (the server stacks both). secret (m,) or None: the other party's unique
    component when known; secret_centre: its channel. X_test, y_test: held-out rows for RMSEP
    (None: no RMSEP). x_bound, y_bound: public clipping bounds for strict mode, with
    ``bounds_public`` saying whether they were fixed without looking at the data.
    """

    X_own: np.ndarray
    y_own: np.ndarray
    X_other: np.ndarray
    y_other: np.ndarray
    secret: np.ndarray | None = None
    secret_centre: float | None = None
    X_test: np.ndarray | None = None
    y_test: np.ndarray | None = None
    variable_names: list = field(default_factory=list)
    variable_axis: np.ndarray | None = None
    x_bound: float | None = None
    y_bound: float | None = None
    bounds_public: bool = False
    attacker_label: str = "party 1"
    other_label: str = "party 2"

    @property
    def X(self) -> np.ndarray:
        return np.vstack([self.X_own, self.X_other])

    @property
    def y(self) -> np.ndarray:
        return np.concatenate([self.y_own, self.y_other])

    @property
    def axis(self) -> np.ndarray:
        return np.arange(self.X_own.shape[1]) if self.variable_axis is None else self.variable_axis

    def fingerprint(self) -> str:
        """A content hash (for caches): equal data, secret and bounds give equal fingerprints."""
        h = hashlib.sha256()
        for a in (self.X_own, self.y_own, self.X_other, self.y_other, self.secret, self.X_test, self.y_test):
            h.update(b"-" if a is None else np.ascontiguousarray(a, dtype=float).tobytes() + str(np.shape(a)).encode())
        h.update(repr((self.secret_centre, self.x_bound, self.y_bound)).encode())
        return h.hexdigest()


def simulation_problem(data: TwoPartySpectra, attacker: int = 1, test: TwoPartySpectra | None = None) -> AttackProblem:
    """The paper's simulation seen by ``attacker`` (1 or 2); ``test`` (optional) gives RMSEP rows.

    Strict-mode bounds come from the generator's parameters (public): the largest possible
    row norm, and the top of the concentration range for |y|.
    """
    X_own, y_own = data.party_data(attacker)
    X_other, y_other = data.party_data(3 - attacker)
    secret, centre = data.secret_of_other(attacker)
    c_max = max(abs(v) for v in data.params["concentration_range"])
    noise_free = data.params.get("noise", 0.0) == 0
    return AttackProblem(
        X_own, y_own, X_other, y_other, secret=secret, secret_centre=centre,
        X_test=None if test is None else test.X, y_test=None if test is None else test.y,
        variable_names=[f"channel {j}" for j in range(data.n_channels)], variable_axis=data.channels,
        x_bound=max_row_norm_bound(data), y_bound=float(c_max), bounds_public=noise_free,
        attacker_label=f"party {attacker}", other_label=f"party {3 - attacker}",
    )


@dataclass
class SimulationScenario:
    """The paper's simulation, redrawn for every replicate.

    generator: keyword arguments of ``make_attack_spectra`` (paper defaults when empty);
    attacker: 1 or 2; n_test_per_party: held-out rows per party for RMSEP (0: none).
    """

    generator: dict = field(default_factory=dict)
    attacker: int = 1
    n_test_per_party: int = 100

    def draw(self, random_state=None) -> AttackProblem:
        rng = as_generator(random_state)
        data = make_attack_spectra(random_state=rng, **self.generator)
        test = None
        if self.n_test_per_party:
            test = make_attack_spectra(self.n_test_per_party, random_state=rng,
                                       **{k: v for k, v in self.generator.items() if k != "n_per_party"})
        return simulation_problem(data, self.attacker, test)


def split_parties(
    df: pd.DataFrame,
    feature_columns,
    response_column: str,
    *,
    by: str = "column",
    group_column: str | None = None,
    attacker_groups=None,
    attacker_rows=None,
    test_fraction: float = 0.25,
    n_components: int = 3,
    x_bound: float | None = None,
    y_bound: float | None = None,
    random_state=0,
) -> AttackProblem:
    """Split an uploaded table into the attacker's and the other party's rows.

    by="column": rows whose ``group_column`` value is in ``attacker_groups`` belong to the
    attacker, all other rows to the other party. by="rows": ``attacker_rows`` = (start, stop)
    positional row range (0-based, stop exclusive) or a list of such ranges; the rest is the
    other party. A random ``test_fraction`` of each party's rows is held out for RMSEP.
    Bounds for strict mode (on raw ||x_i|| and |y_i|) default to the data's own maxima (then
    ``bounds_public`` is False: fine for exploring the attack, not a proven guarantee).
    Raises AttackSetupError naming the problem.
    """
    if df is None or len(df) == 0:
        raise AttackSetupError("the data set is empty")
    feature_columns = list(feature_columns)
    missing = [c for c in feature_columns + [response_column] if c not in df.columns]
    if missing:
        raise AttackSetupError(f"column(s) not in the data: {missing}")
    if response_column in feature_columns:
        raise AttackSetupError(f"the response '{response_column}' cannot also be a variable")
    if len(feature_columns) < 2:
        raise AttackSetupError("pick at least 2 variable columns")
    bad = [c for c in feature_columns + [response_column] if not pd.api.types.is_numeric_dtype(df[c])]
    if bad:
        raise AttackSetupError(f"non-numeric column(s): {bad}")
    if by == "column":
        if group_column is None or group_column not in df.columns:
            raise AttackSetupError("choose the column that says which party a row belongs to")
        if group_column in feature_columns or group_column == response_column:
            raise AttackSetupError(f"the party column '{group_column}' cannot also be a variable or the response")
        groups = list(attacker_groups or [])
        if not groups:
            raise AttackSetupError(f"choose which value(s) of '{group_column}' are the attacker's rows")
        own_mask = df[group_column].isin(groups).to_numpy()
        own_label = f"{group_column} ∈ {{{', '.join(map(str, groups))}}}"
        other_label = f"{group_column} ∉ {{{', '.join(map(str, groups))}}}"
    elif by == "rows":
        if attacker_rows is None:
            raise AttackSetupError("choose the attacker's row range")
        ranges = [attacker_rows] if np.isscalar(attacker_rows[0]) else list(attacker_rows)
        own_mask = np.zeros(len(df), dtype=bool)
        for start, stop in ranges:
            start, stop = int(start), int(stop)
            if not 0 <= start < stop <= len(df):
                raise AttackSetupError(f"row range {start}..{stop} is outside 0..{len(df)}")
            own_mask[start:stop] = True
        own_label = "rows " + ", ".join(f"{a}–{b - 1}" for a, b in ranges)
        other_label = "the other rows"
    else:
        raise AttackSetupError(f"by must be 'column' or 'rows', got {by!r}")

    X_all = df[feature_columns].to_numpy(dtype=float)
    y_all = df[response_column].to_numpy(dtype=float)
    finite = np.isfinite(X_all).all(axis=1) & np.isfinite(y_all)
    if not finite.all():
        raise AttackSetupError(
            f"{int((~finite).sum())} row(s) have missing or non-finite values in the chosen columns "
            f"(first: row {int(np.flatnonzero(~finite)[0])})"
        )
    if not 0 <= test_fraction < 0.9:
        raise AttackSetupError(f"test_fraction must be in [0, 0.9), got {test_fraction}")
    rng = as_generator(random_state)
    need = n_components + 2
    parts = {}
    for name, mask, label in (("own", own_mask, own_label), ("other", ~own_mask, other_label)):
        idx = np.flatnonzero(mask)
        n_test = int(round(test_fraction * len(idx)))
        if len(idx) - n_test < need:
            raise AttackSetupError(
                f"the {'attacker' if name == 'own' else 'other party'} ({label}) has {len(idx)} rows; "
                f"{need} training rows are needed for {n_components} latent variables"
            )
        perm = rng.permutation(idx)
        parts[name] = (np.sort(perm[n_test:]), np.sort(perm[:n_test]))
    train_own, test_own = parts["own"]
    train_other, test_other = parts["other"]
    test_idx = np.concatenate([test_own, test_other])
    X_own, y_own = X_all[train_own], y_all[train_own]
    X_other, y_other = X_all[train_other], y_all[train_other]
    for name, X, y in (("attacker", X_own, y_own), ("other party", X_other, y_other)):
        if np.ptp(y) == 0:
            raise AttackSetupError(
                f"the response '{response_column}' is constant in the {name}'s rows; pick another response or split"
            )
        if np.linalg.matrix_rank(X - X.mean(axis=0)) < n_components:
            raise AttackSetupError(
                f"the {name}'s rows span fewer than {n_components} directions; use fewer latent variables"
            )
    X_train = np.vstack([X_own, X_other])
    y_train = np.concatenate([y_own, y_other])
    public = x_bound is not None and y_bound is not None
    # Strict mode (no public centre) clips the raw rows, so the bounds are on raw ||x|| and |y|.
    if x_bound is None:
        x_bound = float(np.linalg.norm(X_train, axis=1).max())
    if y_bound is None:
        y_bound = float(np.abs(y_train).max())
    axis = _numeric_axis(feature_columns)
    return AttackProblem(
        X_own, y_own, X_other, y_other, secret=None, secret_centre=None,
        X_test=X_all[test_idx] if len(test_idx) else None, y_test=y_all[test_idx] if len(test_idx) else None,
        variable_names=[str(c) for c in feature_columns], variable_axis=axis,
        x_bound=float(x_bound), y_bound=float(y_bound), bounds_public=public,
        attacker_label=own_label, other_label=other_label,
    )


def _numeric_axis(names) -> np.ndarray:
    """Column names as a numeric axis when they all are numbers (e.g. wavelengths), else 0..m-1."""
    try:
        values = np.array([float(str(c).strip().lstrip("xX_").rstrip("nm ")) for c in names])
    except ValueError:
        return np.arange(len(names))
    if np.all(np.isfinite(values)) and np.all(np.diff(values) > 0):
        return values
    return np.arange(len(names))


# ---------------------------------------------------------------------------------------------
# Global models (the server's fit)
# ---------------------------------------------------------------------------------------------
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
    from engine.methods.edpls import EDPLS  # written alongside; imported when first needed

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


# ---------------------------------------------------------------------------------------------
# One attack, and attack success over a grid of epsilons
# ---------------------------------------------------------------------------------------------
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
        return {k: _peak_scaled(v) for k, v in self.recovered.items()}

    @property
    def secret_display(self) -> dict:
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

    def q(p):
        return lambda s: float(np.nanquantile(s, p)) if s.notna().any() else math.nan

    def sem(s):
        return float(s.std(ddof=1) / np.sqrt(s.count())) if s.count() > 1 else 0.0

    def finite_mean(s):
        s = s[np.isfinite(s)]
        return float(s.mean()) if len(s) else math.nan

    g = sweep.groupby(["setting", "epsilon", "component"], sort=False)
    out = g.agg(
        n=("hit", "size"),
        hit_rate=("hit", "mean"),
        cosine_mean=("cosine", "mean"), cosine_sem=("cosine", sem),
        cosine_q25=("cosine", q(0.25)), cosine_q75=("cosine", q(0.75)),
        correlation_mean=("correlation", "mean"), correlation_sem=("correlation", sem),
        correlation_q25=("correlation", q(0.25)), correlation_q75=("correlation", q(0.75)),
        rmsep_median=("rmsep", q(0.5)), rmsep_q25=("rmsep", q(0.25)), rmsep_q75=("rmsep", q(0.75)),
        rmsep_mean=("rmsep", finite_mean),
        **({"rmsep_mean_model": ("rmsep_mean_model", q(0.5))} if "rmsep_mean_model" in sweep else {}),
    ).reset_index()
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
