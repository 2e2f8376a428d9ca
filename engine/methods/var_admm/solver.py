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

import numpy as np

from .anderson import anderson_memory, run_anderson
from .lasso import _owner_solver, _quad, lasso_coordinate_descent
from .trace import NOISE_LAWS, AdmmTrace, MessageLog, noise

__all__ = [
    "SCHEMES",
    "SCHEME_LABELS",
    "MessageLog",
    "AdmmTrace",
    "noise",
    "lasso_coordinate_descent",
    "run_paper",
    "run_anderson",
    "anderson_memory",
]

SCHEMES = ("auto", "paper", "anderson", "balanced", "relaxed")
SCHEME_LABELS = {
    "paper": "the paper's plain ADMM (47)/(71): fixed ρ, owners' factorisations cached",
    "anderson": "ADMM at ρ = n with block Anderson acceleration (safeguarded), owners' factorisations cached",
    "balanced": "ADMM (47) with residual balancing of ρ (Boyd et al. 2011, 3.4.1)",
    "relaxed": "ADMM (47) with over-relaxation α = 1.6 (Boyd et al. 2011, 3.4.3)",
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
    balance = scheme == "balanced"
    keep = int(keep_values)
    y_free = variant == "y_free"
    d = np.asarray(scales, dtype=float)
    ratio = (d[None, :] / d[:, None])[:, None, :]  # (owner, 1, target): internal -> data coefficients
    msg_noise = float(message_noise) / d  # per target column
    coef_noise = float(coef_noise)
    per_owner = float(message_noise) > 0
    solve = _owner_solver(G, penalty, lam, rho, inner_tol)
    y_rms = np.sqrt(np.mean(Y * Y, axis=0)) if Y.size else np.ones(n)

    def to_data(B_int):
        return (B_int.reshape(n, p, n) * ratio).reshape(n * p, n)

    if init == "zero":
        B = np.zeros((n, p, n))
        U_prev = np.zeros((T, n))
    else:
        U_prev = rng.normal(0.0, u0_scale * y_rms, (T, n))
        B = rng.normal(0.0, b1_scale, (n, p, n))

    Zs = Z.reshape(T, n, p).transpose(1, 0, 2)  # (owner, T, p) views of owner i's lag columns
    log = MessageLog()
    prim, dual, epsp, epsd, rhos = [], [], [], [], []
    coef_path, shared_path, broadcasts, owner_msgs, path_its = [], [], [], [], []
    stride = max(1, math.ceil(n * p * n * int(max_iter) / 5e6))
    u_path = [U_prev * d] if keep > 0 else []
    converged = False
    k = 0
    sqrt_n = math.sqrt(n)
    abs_term = math.sqrt(T * n * n) * atol
    what_up = ("Z_Ai B_Ai^k: owner i's contribution to the fitted values of all n targets"
               if not y_free else
               "d_i^k = (I_YAi - Z_Ai B_Ai^k)/(n + rho): own target column minus own contribution")
    msg_name = "Z_Ai B_Ai^k" if not y_free else "d_i^k"
    a_prev = ZA_prev = c = w_prev = q_prev = None
    for k in range(1, int(max_iter) + 1):
        keep_now = k <= keep
        B_shared = B + noise(rng, noise_law, coef_noise, B.shape) / ratio if coef_noise > 0 else B
        B_shared_om = B_shared.reshape(n * p, n)
        ZB_sum = Z @ B_shared_om  # sum_i Z_Ai B'_Ai (T x n)
        msgs = None
        if keep_now:  # every owner's message, kept for the attacks
            msgs = np.einsum("otp,opn->otn", Zs, B_shared)  # Z_Ai B'_Ai
            if y_free:
                msgs = -msgs
                msgs[np.arange(n), :, np.arange(n)] += Y.T
                msgs /= (n + rho)
            if per_owner:
                msgs += noise(rng, noise_law, msg_noise, msgs.shape)
            sum_msgs = msgs.sum(axis=0)
        else:  # only the sum reaches the central node's formulas: no (n, T, n) array
            sum_msgs = ZB_sum if not y_free else (Y - ZB_sum) / (n + rho)
            if per_owner:
                for _ in range(n):  # each owner's own noise, same random stream as above
                    sum_msgs = sum_msgs + noise(rng, noise_law, msg_noise, (T, n))
        for i in range(n):
            log.add(k, names[i], "central", msg_name, (T, n), what_up)
        # --- owners' (relaxed) contributions: x^_i = Z_i a_i + c (c common to all owners)
        # (ZA: what the central node sums, with any message noise; ZA_res: the owners' clean sum, for
        # the observer's residuals)
        if alpha == 1.0 or k == 1:
            a, ZA, ZA_res, c = B_shared, (sum_msgs if not y_free else ZB_sum), ZB_sum, None
        else:  # relaxed (no noise allowed): x^_i = alpha x_i + (1 - alpha) z_i^(k-1)
            a = alpha * B_shared + (1.0 - alpha) * a_prev
            ZA = ZA_res = alpha * ZB_sum + (1.0 - alpha) * ZA_prev
            c = (1.0 - alpha) * (w_prev if c is None else c + w_prev)
        # --- central node
        if not y_free:
            xbar = ZA / n if c is None else ZA / n + c
            Hbar = (Y + rho * xbar + rho * U_prev) / (n + rho)  # (47b)
            w = Hbar - xbar  # zbar - xbar
            U = U_prev - w  # (47c)
            m = w - U
        else:
            U = (n / (n + rho)) * U_prev - sum_msgs  # (67)
            m = sum_msgs + (rho / (n + rho)) * U_prev - U  # broadcast of (71)
            w = U_prev - U  # the simulator's view (the central node cannot split these)
        # --- residuals (Boyd 3.3, sharing form, x-space), computed by the simulator
        q = w if c is None else c + w  # z_i = Z_i a_i + q
        r = sqrt_n * float(np.linalg.norm(w))
        aGa = _quad(a, G)
        zz = aGa + 2.0 * float(np.vdot(ZA_res, q)) + n * float(np.vdot(q, q))
        xx = aGa if alpha == 1.0 else _quad(B_shared, G)
        if a_prev is None:
            s = math.inf
        else:
            dq = q - q_prev
            dz2 = _quad(a - a_prev, G) + 2.0 * float(np.vdot(ZA_res - ZA_prev, dq)) + n * float(np.vdot(dq, dq))
            s = rho * math.sqrt(max(dz2, 0.0))
        e_pri = abs_term + (tol or 0.0) * math.sqrt(max(xx, zz, 0.0))
        e_dual = abs_term + (tol or 0.0) * rho * sqrt_n * float(np.linalg.norm(U))
        prim.append(r)
        dual.append(s)
        epsp.append(e_pri)
        epsd.append(e_dual)
        rhos.append(rho)
        if store_path and (k <= 50 or (k - 1) % stride == 0):
            path_its.append(k)
            coef_path.append(to_data(B))
            shared_path.append(to_data(B_shared) if coef_noise > 0 else coef_path[-1])
        if keep_now:
            owner_msgs.append(msgs * d)
            u_path.append(U * d)
        if tol is not None and r <= e_pri and s <= e_dual:
            converged = True
            break
        a_prev, ZA_prev, w_prev, q_prev = a, ZA_res, w, q
        if balance and math.isfinite(s) and k < int(max_iter):
            new_rho = rho * BALANCE_TAU if r > BALANCE_MU * s else rho / BALANCE_TAU if s > BALANCE_MU * r else rho
            if new_rho != rho:
                U = U * (rho / new_rho)  # the scaled dual u = y / rho follows rho
                m = w - U
                rho = new_rho
                solve = _owner_solver(G, penalty, lam, rho, inner_tol)
                log.add(k, "central", "all owners", "rho^(k+1)", (1,), "the new penalty parameter (residual balancing)")
        # --- broadcast m^k and the owners' updates (47a)
        log.add(k, "central", "all owners", "m^k = Hbar^k - ZBbar^k - U^k" if c is None else "m^k + c^k", (T, n),
                "broadcast: everyone's fitted values, the consensus and the scaled dual mixed")
        if keep_now:
            broadcasts.append(m * d)
        base = a if alpha != 1.0 else (B_shared if noisy_continue else B)
        C = np.einsum("opq,oqn->opn", G, base) + (Z.T @ (m if c is None else m + c)).reshape(n, p, n)
        B = solve(C, B)
        U_prev = U
    final = B.reshape(n * p, n).copy()
    trace = AdmmTrace(
        variant=variant, init=init, rho=float(rhos[0]) if rhos else rho, n_owners=n, lags=lags, T=T,
        owner_names=list(names), log=log, primal_residuals=np.array(prim), dual_residuals=np.array(dual),
        eps_primal=np.array(epsp), eps_dual=np.array(epsd), coef_path=coef_path, shared_coef_path=shared_path,
        broadcasts=broadcasts, owner_messages=owner_msgs, u_path=u_path, converged=converged, n_iter=k,
        keep_values=keep, coef_noise=coef_noise, message_noise=float(message_noise), noise_law=noise_law,
        path_iterations=path_its, scheme=scheme, rho_path=rhos,
    )
    return final, trace
