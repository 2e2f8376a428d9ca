"""What one ADMM run of the collaborative VAR leaves behind: its message log, its trace, and the noise laws.

Hand-written record of the paper's protocol (spec 4.2): residuals, coefficient path and (for the
attacks) the values of the first messages. Every message with its sender, receiver and shape goes to
the project's one :class:`engine.federation.messages.MessageLog` (step column "iteration"; values are
not kept there: the trace keeps them for the first ``keep_values`` iterations).
No streamlit here.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from engine.federation.messages import MessageLog
from engine.privacy.mechanisms import draw_noise

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["NOISE_LAWS", "AdmmTrace", "MessageLog", "admm_message_log", "noise"]

NOISE_LAWS = ("laplace", "gaussian", "uniform")


def admm_message_log() -> MessageLog:
    """An empty log whose step column is named "iteration" (the ADMM's steps)."""
    return MessageLog(step_label="iteration")


@dataclass
class AdmmTrace:
    """What happened in one ADMM run (spec 4.2), iteration by iteration.

    Iteration k (k = 1, 2, ..): every owner sends its message (base (47): Z_Ai B_Ai^k;
    Y-free (71): d_i^k), the central node updates its variables, the residuals r^k, s^k are
    computed, and unless the stopping rule holds the central node broadcasts m^k and every owner
    computes B_Ai^{k+1}.

    Arrays per iteration (length ``n_iter``): ``primal_residuals`` r^k, ``dual_residuals`` s^k
    (inf at k = 1), ``eps_primal``, ``eps_dual``, in the units of the internally scaled data
    (every value divided by a power of two near the data's root mean square), so they read the
    same whatever the data's units. ``coef_path[j]`` = B^k for k = ``path_iterations[j]``
    (owner-major, clean, in the data's units; every iteration of small runs, the first 50 and then
    every s-th of large ones, to stay near 40 MB), ``shared_coef_path[j]`` = the coefficients whose
    products were sent (B^k + W_3 with coefficient noise). For k <= ``keep_values`` (scheme
    "paper" only): ``broadcasts[k-1]`` = m^k (T x n), ``owner_messages[k-1]`` (n, T, n) = what each
    owner sent, ``u_path[k]`` = U^k (u_path[0] = U^0), in the data's units. The residuals are computed
    by the simulator (the observer), not by a party. ``scheme``: which scheme ran; ``rho_path``: ρ
    per iteration (changes only with residual balancing); ``rejected_steps``: Anderson steps the
    safeguard refused.
    """

    variant: str
    init: str
    rho: float
    n_owners: int
    lags: tuple
    T: int
    owner_names: list
    log: MessageLog
    primal_residuals: np.ndarray
    dual_residuals: np.ndarray
    eps_primal: np.ndarray
    eps_dual: np.ndarray
    coef_path: list
    shared_coef_path: list
    broadcasts: list
    owner_messages: list
    u_path: list
    converged: bool
    n_iter: int
    keep_values: int
    coef_noise: float = 0.0
    message_noise: float = 0.0
    noise_law: str = "gaussian"
    path_iterations: list = field(default_factory=list)
    scheme: str = "paper"
    rho_path: list = field(default_factory=list)
    rejected_steps: int = 0

    @property
    def n_broadcasts(self) -> int:
        """Broadcasts m^k actually sent (paper's schemes: n_iter, or n_iter - 1 when the rule stopped the
        run; "anderson": n_iter, its rule is checked after the owners' update)."""
        return self.n_iter - 1 if self.converged and self.scheme != "anderson" else self.n_iter

    def residual_frame(self) -> pd.DataFrame:
        """The primal and dual residuals and their tolerances per iteration."""
        import pandas as pd  # here: an owner's Flower process imports this module, never a frame (0.2-0.5 s)

        k = np.arange(1, self.n_iter + 1)
        return pd.DataFrame({"iteration": k, "primal_residual": self.primal_residuals,
                             "dual_residual": self.dual_residuals, "eps_primal": self.eps_primal,
                             "eps_dual": self.eps_dual})

    def coef_error_path(self, B_ref: np.ndarray) -> np.ndarray:
        """max |B^k - B_ref| for the stored iterations ``path_iterations`` (owner-major B_ref)."""
        return np.array([float(np.max(np.abs(B - B_ref))) for B in self.coef_path])


def noise(rng: np.random.Generator, law: str, scale: float, size) -> np.ndarray:
    """Noise of one of the paper's laws: N(0, scale²), L(0, scale), U(-scale, scale).

    Drawn by ``engine.privacy.mechanisms.draw_noise`` (the one place release noise is drawn)."""
    if law not in NOISE_LAWS:
        raise ValueError(f"noise law must be one of {NOISE_LAWS}, got {law!r}")
    return draw_noise(law, scale, size, rng)
