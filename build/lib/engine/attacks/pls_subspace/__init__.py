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

Modules: ``attack`` (Eq. 5 and the success measures), ``scenario`` (who holds which rows),
``models`` (the server's model per setting, one attack), ``sweep`` (success over epsilons, verdict).
"""
from __future__ import annotations

from .attack import (
    COMPONENTS,
    SETTINGS,
    STATUSES,
    AttackSetupError,
    leak_exclusivity,
    local_components,
    orient,
    project_off_span,
    reconstruct,
    success_measures,
)
from .models import AttackOutcome, fit_global_model, make_global_model, run_attack
from .scenario import AttackProblem, SimulationScenario, simulation_problem, split_parties
from .sweep import attack_success_sweep, summarise_sweep, verdict

__all__ = [
    "COMPONENTS",
    "SETTINGS",
    "STATUSES",
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
