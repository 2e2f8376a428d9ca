"""The collaborative VAR's distributed solvers: the paper's features-split ADMM and an accelerated one.

Paper: Gonçalves, Bessa & Pinson (spec ``/work/shared/spec/var_admm.md`` 4.2), which is Boyd et al.
(2011) section 8.3, "lasso split across features". Owner i holds its lag block Z_i (T x p) of the
owner-major design Z = [Z_1 .. Z_n] and its coefficient block B_i (p x n); the n targets are the
columns of Y (T x n). Written by hand (no kept library runs a features-split ADMM):

* :func:`run_paper`: (47) and its Y-free form (71), message by message, with Boyd's stopping rule
  (3.3.1) relative to the problem's own scale, and two options of Boyd's section 3.4 measured in
  ``bench/bench_var_admm.py``: residual balancing of ρ (3.4.1, scheme "balanced") and
  over-relaxation (3.4.3, scheme "relaxed").
* :func:`run_anderson`: the same ADMM at ρ = n (then the broadcast m^k = (Y - Z B^k)/n no longer
  depends on the dual, and each owner's step is a majorise-minimise step of the objective, so it
  never increases it), each owner's factorisation cached, and block Anderson acceleration (type II,
  Walker & Ni 2011; as A2DR, Fu, Zhang & Boyd 2020): the central node mixes the last few coefficient
  updates with weights Γ fitted to the owners' update differences, pooled over the n targets (they
  share one operator). A mixed step is kept only when it lowers the objective; otherwise the plain
  step is taken (safeguard). For least squares the pooled history spans the whole coefficient space
  after about p + 1 steps, so the fit is reached in a handful of iterations.
* :func:`lasso_coordinate_descent`: the owners' LASSO sub-problems (and the central LASSO).

Every solver works on internally scaled data (the caller divides by powers of two, which is exact),
so the residuals and thresholds read the same whatever the data's units. Boyd's rule in x-space
(x_i = Z_i B_i the owners' contributions, Boyd 7.3 "sharing"): r^k = sqrt(n) ||xbar - zbar||,
s^k = ρ ||z^k - z^(k-1)|| (all owners' z_i stacked), eps_pri = sqrt(n T n) atol + tol max(||x||, ||z||),
eps_dual = sqrt(n T n) atol + tol ρ ||u|| (u stacked: sqrt(n) ||U||). Stacked norms come from the
owners' Grams, so a check costs no product of size T.

No streamlit here.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from .anderson import anderson_memory, run_anderson
from .lasso import _owner_solver, _quad, lasso_coordinate_descent
from .trace import AdmmTrace, MessageLog, admm_message_log, noise

__all__ = [
    "SCHEMES",
    "SCHEME_LABELS",
    "AdmmTrace",
    "MessageLog",
    "anderson_memory",
    "lasso_coordinate_descent",
    "noise",
    "owner_message",
    "owner_update",
    "run_anderson",
    "run_paper",
]

SCHEMES = ("auto", "paper", "anderson", "balanced", "relaxed")
SCHEME_LABELS = {
    "paper": "the paper's plain ADMM: fixed ρ, owners' factorisations cached",
    "anderson": "ADMM at ρ = n with block Anderson acceleration (safeguarded), owners' factorisations cached",
    "balanced": "the paper's ADMM with residual balancing of ρ (Boyd et al. 2011)",
    "relaxed": "the paper's ADMM with over-relaxation α = 1.6 (Boyd et al. 2011)",
}
#: over-relaxation of the "relaxed" scheme (Boyd 3.4.3 suggests 1.5 to 1.8)
RELAXATION = 1.6
#: residual balancing constants (Boyd 3.4.1)
BALANCE_MU, BALANCE_TAU = 10.0, 2.0


# =============================================================================================
# The paper's scheme (47)/(71), with residual balancing or over-relaxation as options
# =============================================================================================
def run_paper(Z: np.ndarray, Y: np.ndarray, G: np.ndarray, *, lags: tuple, penalty: str, lam, rho: float,
              max_iter: int, tol, atol: float, init: str, rng: np.random.Generator, u0_scale: float,
              b1_scale: float, variant: str, coef_noise: float, message_noise: float, noise_law: str,
              noisy_continue: bool, keep_values: int, store_path: bool, inner_tol: float, names: list,
              scales: np.ndarray, scheme: str = "paper") -> tuple[np.ndarray, AdmmTrace]:
    """The features-split ADMM (47) (variant "base") or (71) ("y_free"), message by message.

    Parameters
    ----------
    Z : (T, n p) owner-major centred design, owner i's columns divided by its scale d_i;
        Y : (T, n) targets, column j divided by d_j. The ADMM is separable over the targets and
        col(Z_i) does not depend on d_i, so with the weights below this run is the data's run with
        every T x n matrix's column j divided by d_j: the kept values are multiplied back exactly.
    G : (n, p, p) owners' Grams Z_i'Z_i (internal units).
    lam : penalty weights in internal units: LASSO (n, 1, n), λ / (d_i d_j) for owner i's
        coefficients in target j's equation; ridge (n,), λ / d_i². rho : ADMM penalty (scale-free).
    tol, atol : Boyd's relative and absolute tolerances (atol in internal units, i.e. relative to
        the data's root mean square); tol None: fixed K = max_iter iterations.
    u0_scale : sd of U^0's column j relative to the root mean square of target j.
    b1_scale : sd of B^1 in internal (standardised) coefficient units.
    coef_noise : sd in the data's coefficient units; message_noise : sd in the data's units.
    scales : (n,) the powers of two d_i the series were divided by.
    scheme : "paper", "balanced" (ρ by residual balancing) or "relaxed" (over-relaxation).

    Returns
    -------
    B (n p, n) owner-major in internal units (data units: B[i p + q, j] d_j / d_i), and the trace
    (messages, broadcasts, U and coefficients in the data's units).
    """
    T, n = Y.shape
    p = len(lags)
    rho = float(rho)
    alpha = RELAXATION if scheme == "relaxed" else 1.0
    keep = int(keep_values)
    y_free = variant == "y_free"
    d = np.asarray(scales, dtype=float)
    ratio = (d[None, :] / d[:, None])[:, None, :]  # (owner, 1, target): internal -> data coefficients
    coef_noise = float(coef_noise)
    noise_args: dict[str, Any] = dict(rng=rng, noise_law=noise_law,
                                      msg_noise=float(message_noise) / d,  # per target column
                                      per_owner=float(message_noise) > 0)
    solve = _owner_solver(G, penalty, lam, rho, inner_tol)
    B, U_prev = _paper_start(init, rng, u0_scale, b1_scale, Y, n, p)
    Zs = Z.reshape(T, n, p).transpose(1, 0, 2)  # (owner, T, p) views of owner i's lag columns
    rec = _PaperRecord(admm_message_log(), n, p, ratio, stride=max(1, math.ceil(n * p * n * int(max_iter) / 5e6)))
    rec.u_path = [U_prev * d] if keep > 0 else []
    converged = False
    k = 0
    tol_or_0 = tol or 0.0
    abs_term = math.sqrt(T * n * n) * atol
    msg_name, what_up = _PAPER_UPLINK[y_free]
    # the previous iteration's pieces and the relaxation's common term: set from iteration 1 on
    a_prev: np.ndarray | None = None
    ZA_prev: np.ndarray | None = None
    c: np.ndarray | None = None
    w_prev: np.ndarray | None = None
    q_prev: np.ndarray | None = None
    for k in range(1, int(max_iter) + 1):
        keep_now = k <= keep
        B_shared = B + noise(rng, noise_law, coef_noise, B.shape) / ratio if coef_noise > 0 else B
        ZB_sum = Z @ B_shared.reshape(n * p, n)  # sum_i Z_Ai B'_Ai (T x n)
        msgs, sum_msgs = _owner_messages(Zs, Y, B_shared, ZB_sum, keep_now=keep_now, y_free=y_free, rho=rho,
                                         **noise_args)
        rec.log.add_each(names[:n], "central", msg_name, (T, n), what_up, step=k)
        # --- owners' (relaxed) contributions: x^_i = Z_i a_i + c (c common to all owners)
        # (ZA: what the central node sums, with any message noise; ZA_res: the owners' clean sum, for
        # the observer's residuals)
        if alpha == 1.0 or k == 1:
            a, ZA, ZA_res, c = B_shared, (sum_msgs if not y_free else ZB_sum), ZB_sum, None
        else:  # relaxed (no noise allowed): x^_i = alpha x_i + (1 - alpha) z_i^(k-1)
            assert a_prev is not None and ZA_prev is not None and w_prev is not None  # k > 1: set by iteration k - 1
            a = alpha * B_shared + (1.0 - alpha) * a_prev
            ZA = ZA_res = alpha * ZB_sum + (1.0 - alpha) * ZA_prev
            c = (1.0 - alpha) * (w_prev if c is None else c + w_prev)
        U, m, w = _central_step(Y, U_prev, ZA, c, sum_msgs, y_free=y_free, rho=rho)
        # --- residuals (Boyd 3.3, sharing form, x-space), computed by the simulator
        q = w if c is None else c + w  # z_i = Z_i a_i + q
        r = math.sqrt(n) * float(np.linalg.norm(w))
        aGa = _quad(a, G)
        zz = aGa + 2.0 * float(np.vdot(ZA_res, q)) + n * float(np.vdot(q, q))
        xx = aGa if alpha == 1.0 else _quad(B_shared, G)
        s = _dual_residual(G, n, rho, a, a_prev, ZA_res, ZA_prev, q, q_prev)
        e_pri = abs_term + tol_or_0 * math.sqrt(max(xx, zz, 0.0))
        e_dual = abs_term + tol_or_0 * rho * math.sqrt(n) * float(np.linalg.norm(U))
        rec.iteration(k, r, s, e_pri, e_dual, rho, B if store_path else None, B_shared, coef_noise > 0)
        if keep_now:
            rec.owner_msgs.append(msgs * d)
            rec.u_path.append(U * d)
        if tol is not None and r <= e_pri and s <= e_dual:
            converged = True
            break
        a_prev, ZA_prev, w_prev, q_prev = a, ZA_res, w, q
        if scheme == "balanced" and math.isfinite(s) and k < int(max_iter):
            new_rho = _balanced_rho(rho, r, s)
            if new_rho != rho:
                U = U * (rho / new_rho)  # the scaled dual u = y / rho follows rho
                m = w - U
                rho = new_rho
                solve = _owner_solver(G, penalty, lam, rho, inner_tol)
                rec.log.add("central", "all owners", "rho^(k+1)", (1,),
                            "the new penalty parameter (residual balancing)", step=k)
        # --- broadcast m^k and the owners' updates (47a)
        rec.log.add("central", "all owners", "m^k = Hbar^k - ZBbar^k - U^k" if c is None else "m^k + c^k", (T, n),
                    "broadcast: everyone's fitted values, the consensus and the scaled dual mixed", step=k)
        if keep_now:
            rec.broadcasts.append(m * d)
        base = a if alpha != 1.0 else (B_shared if noisy_continue else B)
        B = owner_update(G, base, (Z.T @ (m if c is None else m + c)).reshape(n, p, n), solve, B)
        U_prev = U
    final = B.reshape(n * p, n).copy()
    trace = AdmmTrace(
        variant=variant, init=init, rho=float(rec.rhos[0]) if rec.rhos else rho, n_owners=n, lags=lags, T=T,
        owner_names=list(names), log=rec.log, primal_residuals=np.array(rec.prim),
        dual_residuals=np.array(rec.dual), eps_primal=np.array(rec.epsp), eps_dual=np.array(rec.epsd),
        coef_path=rec.coef_path, shared_coef_path=rec.shared_path, broadcasts=rec.broadcasts,
        owner_messages=rec.owner_msgs, u_path=rec.u_path, converged=converged, n_iter=k, keep_values=keep,
        coef_noise=coef_noise, message_noise=float(message_noise), noise_law=noise_law,
        path_iterations=rec.path_its, scheme=scheme, rho_path=rec.rhos,
    )
    return final, trace


#: (message name, what it is) of the owners' uplink, by variant (False: base (47), True: Y-free (71))
_PAPER_UPLINK = {
    False: ("Z_Ai B_Ai^k", "Z_Ai B_Ai^k: owner i's contribution to the fitted values of all n targets"),
    True: ("d_i^k", "d_i^k = (I_YAi - Z_Ai B_Ai^k)/(n + rho): own target column minus own contribution"),
}


def _paper_start(init: str, rng, u0_scale: float, b1_scale: float, Y: np.ndarray, n: int, p: int):
    """B^1 and U^0: zero (Boyd's start) or random (U^0 first, then B^1: the paper's Prop. 3 setting)."""
    T = Y.shape[0]
    if init == "zero":
        return np.zeros((n, p, n)), np.zeros((T, n))
    y_rms = np.sqrt(np.mean(Y * Y, axis=0)) if Y.size else np.ones(n)
    U_prev = rng.normal(0.0, u0_scale * y_rms, (T, n))
    return rng.normal(0.0, b1_scale, (n, p, n)), U_prev


def _owner_messages(Zs, Y, B_shared, ZB_sum, *, keep_now: bool, y_free: bool, rho: float, rng, noise_law: str,
                    msg_noise, per_owner: bool):
    """The owners' messages (n, T, n) when kept for the attacks (else None) and their sum at the central node."""
    T, n = Y.shape
    if keep_now:  # every owner's message, kept for the attacks
        msgs = np.einsum("otp,opn->otn", Zs, B_shared)  # Z_Ai B'_Ai
        if y_free:
            msgs = -msgs
            msgs[np.arange(n), :, np.arange(n)] += Y.T
            msgs /= (n + rho)
        if per_owner:
            msgs += noise(rng, noise_law, msg_noise, msgs.shape)
        return msgs, msgs.sum(axis=0)
    # only the sum reaches the central node's formulas: no (n, T, n) array
    sum_msgs = ZB_sum if not y_free else (Y - ZB_sum) / (n + rho)
    if per_owner:
        for _ in range(n):  # each owner's own noise, same random stream as above
            sum_msgs = sum_msgs + noise(rng, noise_law, msg_noise, (T, n))
    return None, sum_msgs


def owner_message(Z_i: np.ndarray, B_i: np.ndarray, y_i: np.ndarray, i: int, *, y_free: bool,
                  rho: float) -> np.ndarray:
    """One owner's uplink of iteration k, computed from its own data only: (T, n).

    Z_i (T, p) its lag block, B_i (p, n) its coefficients, y_i (T,) its own target column (used by
    the Y-free variant (71) only). Base (47): Z_Ai B_Ai; Y-free: (I_YAi - Z_Ai B_Ai) / (n + ρ).
    The same formula as the batched :func:`_owner_messages` (the local transport), one owner at a time.
    """
    msg = Z_i @ B_i
    if not y_free:
        return msg
    msg = -msg
    msg[:, i] += y_i
    return msg / (B_i.shape[1] + rho)


def owner_update(G: np.ndarray, base: np.ndarray, ZtM: np.ndarray, solve, B_warm: np.ndarray) -> np.ndarray:
    """The owners' coefficient update (47a) from the broadcast: B_i = argmin (G_i base_i + Z_i' m).

    G (k, p, p) the owners' Grams, base and B_warm (k, p, n), ZtM (k, p, n) = Z_i' m^k (or m^k + c^k);
    k = n owners in the local transport, k = 1 in each Flower owner. ``solve`` from ``_owner_solver``.
    """
    C = np.einsum("opq,oqn->opn", G, base) + ZtM
    return solve(C, B_warm)


def _central_step(Y, U_prev, ZA, c, sum_msgs, *, y_free: bool, rho: float):
    """The central node's update: (U^k, the broadcast m^k, w = zbar - xbar as the simulator sees it)."""
    n = Y.shape[1]
    if not y_free:
        xbar = ZA / n if c is None else ZA / n + c
        Hbar = (Y + rho * xbar + rho * U_prev) / (n + rho)  # (47b)
        w = Hbar - xbar  # zbar - xbar
        U = U_prev - w  # (47c)
        return U, w - U, w
    U = (n / (n + rho)) * U_prev - sum_msgs  # (67)
    m = sum_msgs + (rho / (n + rho)) * U_prev - U  # broadcast of (71)
    return U, m, U_prev - U  # w: the simulator's view (the central node cannot split these)


def _dual_residual(G, n: int, rho: float, a, a_prev, ZA_res, ZA_prev, q, q_prev) -> float:
    """Boyd's s^k = ρ ||z^k - z^(k-1)|| from the owners' Grams (inf at the first iteration)."""
    if a_prev is None:
        return math.inf
    dq = q - q_prev
    dz2 = _quad(a - a_prev, G) + 2.0 * float(np.vdot(ZA_res - ZA_prev, dq)) + n * float(np.vdot(dq, dq))
    return rho * math.sqrt(max(dz2, 0.0))


def _balanced_rho(rho: float, r: float, s: float) -> float:
    """Residual balancing (Boyd 3.4.1): ρ times τ when r > μ s, divided by τ when s > μ r."""
    if r > BALANCE_MU * s:
        return rho * BALANCE_TAU
    if s > BALANCE_MU * r:
        return rho / BALANCE_TAU
    return rho


class _PaperRecord:
    """What the observer keeps of one run of the paper's scheme (for :class:`AdmmTrace`)."""

    def __init__(self, log: MessageLog, n: int, p: int, ratio: np.ndarray, stride: int):
        self.log, self.n, self.p, self.ratio, self.stride = log, n, p, ratio, stride
        # residuals, tolerances and penalties per iteration; stored iterates and messages every ``stride``
        self.prim: list[float] = []
        self.dual: list[float] = []
        self.epsp: list[float] = []
        self.epsd: list[float] = []
        self.rhos: list[float] = []
        self.coef_path: list[np.ndarray] = []
        self.shared_path: list[np.ndarray] = []
        self.broadcasts: list[Any] = []
        self.owner_msgs: list[Any] = []
        self.path_its: list[int] = []
        self.u_path: list[np.ndarray] = []

    def to_data(self, B_int: np.ndarray) -> np.ndarray:
        n, p = self.n, self.p
        return (B_int.reshape(n, p, n) * self.ratio).reshape(n * p, n)

    def iteration(self, k, r, s, e_pri, e_dual, rho, B, B_shared, shared_differs: bool) -> None:
        """Residuals of iteration k, and B^k (every iteration up to 50, then every stride-th) unless B is None."""
        self.prim.append(r)
        self.dual.append(s)
        self.epsp.append(e_pri)
        self.epsd.append(e_dual)
        self.rhos.append(rho)
        if B is not None and (k <= 50 or (k - 1) % self.stride == 0):
            self.path_its.append(k)
            self.coef_path.append(self.to_data(B))
            self.shared_path.append(self.to_data(B_shared) if shared_differs else self.coef_path[-1])
