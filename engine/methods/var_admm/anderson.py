"""The collaborative VAR's accelerated ADMM: features-split ADMM at ρ = n with safeguarded block Anderson mixing.

At ρ = n the broadcast m^k = (Y - Z B^k)/n no longer depends on the dual, and each owner's step is a
majorise-minimise step of the objective, so it never increases it; each owner's factorisation is
cached, and block Anderson acceleration (type II, Walker & Ni 2011; as A2DR, Fu, Zhang & Boyd 2020)
mixes the last few coefficient updates with weights pooled over the n targets. A mixed step is kept
only when it lowers the objective (safeguard). Hand-written: no kept library runs a features-split
ADMM. No streamlit here.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from .lasso import _owner_solver, _quad

if TYPE_CHECKING:
    from .moments import ScaledDesign
    from .trace import AdmmTrace

__all__ = ["anderson_memory", "run_anderson"]


def anderson_memory(p: int) -> int:
    """Iterations kept by the Anderson mixing: p + 2 (the pooled history then spans the coefficient
    space of n p rows: (p + 2) n columns)."""
    return int(p) + 2


def run_anderson(data: ScaledDesign, G: np.ndarray, *, lags: tuple, penalty: str, lasso_w=None, ridge_w=None,
                 max_iter: int, tol, atol: float, init: str, rng: np.random.Generator, b1_scale: float, variant: str,
                 store_path: bool, inner_tol: float, names: list, coef_to_data=None,
                 memory: int | None = None) -> tuple[np.ndarray, AdmmTrace]:
    """The features-split ADMM at ρ = n, accelerated by safeguarded block Anderson mixing.

    At ρ = n the broadcast of (47) is m^k = (Y - Z B^k)/n whatever the dual (the spec's "ρ = n"
    case), so the ADMM is a map B^k -> B^{k+1} of the owners' coefficients alone: owner i solves
    argmin_B 1/2 ||Z_i B_i^k + m^k - Z_i B||² + penalty_i(B)/n, a majorise-minimise step of the
    objective 1/2 ||Y - Z B||² + penalty(B). Anderson (type II) replaces the next point by
    g(B^k) - ΔG Γ, Γ = argmin ||f^k - ΔF Γ|| with f = g(B) - B and ΔF, ΔG the differences of the
    last ``memory`` residuals and steps, pooled over the n targets. A mixed point whose objective is
    above the current one is refused and the plain step is taken instead.

    Parameters
    ----------
    data : the design Z (T, n p) (owner-major, centred, each owner's columns divided by its own power-of-two
        scale) and targets Y (T, n) (divided by the same per-series scales), through their moments Z'Z, Z'Y and
        Y'Y (:class:`~.moments.ScaledDesign`; the arrays are read only for a residual too small for the moments).
    G : (n, p, p) owners' Grams in these units.
    lasso_w : (n, n) λ weights for LASSO, w[i, j] for owner i's coefficients in target j's equation;
        ridge_w : (n,) ridge weight of owner i's coefficients (internal units).
    tol, atol : Boyd's rule (see the module doc); here the dual is eliminated, r^k = 0 and
        s^k = n ||x(g(B^k)) - x(B^k)|| (the owners' contributions' change), eps_dual = sqrt(n T n) atol
        + tol sqrt(n) ||Y - Z B^k||. The run stops when that rule holds and the next Anderson step
        changes no coefficient by more than tol / 10 times the largest one (internal units). tol None: fixed
        K = max_iter iterations.
    coef_to_data : maps internal coefficients (n p, n) to the data's units (for the stored path).

    Returns
    -------
    B (n p, n) owner-major in internal units, and the trace (scheme "anderson", rho = n).
    """
    from .trace import AdmmTrace, admm_message_log  # here: the trace needs pandas, an owner's process does not

    T, n = data.shape
    p = len(lags)
    rho = float(n)
    memory = anderson_memory(p) if memory is None else int(memory)
    solve, lam_arr, ridge = _owner_step(G, penalty, lasso_w, ridge_w, rho, inner_tol)
    to_data = coef_to_data or (lambda Bom: Bom.copy())

    def objective(B, rr):
        val = 0.5 * rr
        if lam_arr is not None:
            val += float(np.sum(lam_arr * np.abs(B)))
        elif ridge is not None:
            val += 0.5 * float(np.sum(ridge[:, None, None] * B * B))
        return val

    evaluate = _evaluator(data, G, solve, objective)

    y_free = variant == "y_free"
    log = admm_message_log()
    msg_name, what_up = (("d_i^k", "d_i^k = (I_YAi - Z_Ai B_Ai^k)/n: own target column minus own contribution")
                         if y_free else ("Z_Ai B_Ai^k", "Z_Ai B_Ai^k: owner i's contribution to the fitted values"))
    cast = "m^k = sum_i d_i^k" if y_free else "m^k = (Y - sum_i Z_Ai B_Ai^k)/n"

    B = np.zeros((n, p, n)) if init == "zero" else rng.normal(0.0, b1_scale, (n, p, n))
    abs_term = math.sqrt(T * n * n) * atol
    prim, dual, epsp, epsd = [], [], [], []
    coef_path, path_its = [], []
    stride = max(1, math.ceil(n * p * n * int(max_iter) / 5e6))
    hist_f: list[np.ndarray] = []
    hist_g: list[np.ndarray] = []
    converged, rejected = False, 0
    point, mixed = B, False
    # the kept point, its plain step and objective: set by the first iteration (never mixed, so never rejected)
    B_cur: np.ndarray | None = None
    g_cur: np.ndarray | None = None
    obj_cur: float | None = None
    k = 0
    for k in range(1, int(max_iter) + 1):
        log.add_each(names[:n], "central", msg_name, (T, n), what_up, step=k)
        log.add("central", "all owners", cast, (T, n), "broadcast: the residual of everyone's fitted values over n",
                step=k)
        g_pt, r_norm, obj_pt = evaluate(point)
        f_pt = g_pt - point
        s = rho * math.sqrt(max(_quad(f_pt, G), 0.0))
        e_dual = abs_term + (tol or 0.0) * math.sqrt(n) * r_norm
        e_pri = abs_term + (tol or 0.0) * math.sqrt(max(_quad(point, G), 0.0))
        prim.append(0.0)  # the dual is eliminated at rho = n: the consensus holds exactly
        dual.append(s)
        epsp.append(e_pri)
        epsd.append(e_dual)
        if mixed and obj_cur is not None and g_cur is not None and obj_pt > obj_cur + 1e-12 * abs(obj_cur):
            # safeguard: the mixed point raised the objective; take the plain step from the current point
            rejected += 1
            hist_f.clear()
            hist_g.clear()
            log.add("central", "all owners", "reject", (1,), "the mixed step raised the objective: take the plain step",
                    step=k)
            point, mixed = g_cur, False
            continue
        B_cur, g_cur, obj_cur = point, g_pt, obj_pt
        if store_path and (k <= 50 or (k - 1) % stride == 0):
            path_its.append(k)
            coef_path.append(to_data(B_cur.reshape(n * p, n)))
        if k == int(max_iter):
            break
        hist_f.append(f_pt)
        hist_g.append(g_pt)
        if len(hist_f) > memory + 1:
            hist_f.pop(0)
            hist_g.pop(0)
        point, width = _anderson_mix(hist_f, hist_g, f_pt, g_pt)
        mixed = width > 0
        # Stop when Boyd's rule holds and the next Anderson step changes no coefficient by more than tol / 10
        # of the largest (standardised units): the accelerated iterates converge superlinearly, so that step
        # estimates the current error; the plain step alone would underestimate it by the conditioning.
        if tol is not None and mixed and s <= e_dual:
            step = float(np.max(np.abs(point - B_cur)))
            if step <= 0.1 * tol * max(float(np.max(np.abs(B_cur))), atol):
                converged = True
                break
        if mixed:
            log.add_each(names[:n], "central", "ΔF_Ai", (p, width),
                         "differences of its last coefficient updates (for the Anderson weights)", step=k)
            log.add("central", "all owners", "Γ^k", (width, n), "Anderson mixing weights", step=k)
    assert g_cur is not None, "max_iter < 1: no iteration ran"
    final = g_cur.reshape(n * p, n).copy()
    trace = AdmmTrace(
        variant=variant, init=init, rho=rho, n_owners=n, lags=lags, T=T, owner_names=list(names), log=log,
        primal_residuals=np.array(prim), dual_residuals=np.array(dual), eps_primal=np.array(epsp),
        eps_dual=np.array(epsd),
        coef_path=coef_path, shared_coef_path=coef_path, broadcasts=[], owner_messages=[], u_path=[],
        converged=converged, n_iter=k, keep_values=0, path_iterations=path_its, scheme="anderson",
        rho_path=[rho] * k, rejected_steps=rejected,
    )
    return final, trace


def _evaluator(data: ScaledDesign, G: np.ndarray, solve, objective):
    """evaluate(B) -> (g(B), ||Y - Z B||, objective at B) for the owners' coefficients B (n, p, n).

    The map needs Z'R and ||R|| of R = Y - Z B only: from the pooled Gram Z'Z, Z'Y and ||Y||^2 (formed once,
    the normal-equations floor) each iteration costs (n p)^2 n flops instead of two T x n p x n products, with
    the same iterates: the owners' messages Z_i B_i are what the log records; the central node's sums follow
    from their moments. ||R||^2 = ||Y||^2 - 2 <B, Z'Y> + <B, Z'Z B> loses digits when R is tiny against Y:
    below 1e-6 ||Y||^2 the residual is formed explicitly (from the arrays, formed then)."""
    n, p = data.shape[1], G.shape[1]
    G_all, ZtY = data.gram, data.zty
    yy = float(np.trace(data.yty))  # ||Y||^2

    def evaluate(B):
        Bf = B.reshape(n * p, n)
        GB = G_all @ Bf
        ZtR = ZtY - GB
        rr = yy - 2.0 * float(np.vdot(Bf, ZtY)) + float(np.vdot(Bf, GB))
        if not rr > 1e-6 * yy:
            Z, Y = data.arrays()
            R = Y - Z @ Bf
            ZtR, rr = Z.T @ R, float(np.vdot(R, R))
        C = np.einsum("opq,oqn->opn", G, B) + (ZtR / n).reshape(n, p, n)
        return solve(C, B), math.sqrt(rr), objective(B, rr)

    return evaluate


def _owner_step(G, penalty: str, lasso_w, ridge_w, rho: float, inner_tol: float):
    """The owners' solve at ρ = n, and the penalty weights of the objective: (solve, LASSO weights
    (owner, 1, target) or None, ridge weights (owner,) or None)."""
    lam_arr = None
    if penalty == "lasso" and lasso_w is not None and np.any(np.asarray(lasso_w) > 0):
        lam_arr = np.asarray(lasso_w, dtype=float)[:, None, :]  # (owner, 1, target)
        solve = _owner_solver(G, "lasso", lam_arr, rho, inner_tol)
    elif penalty == "ridge" and ridge_w is not None and np.any(np.asarray(ridge_w) > 0):
        solve = _owner_solver(G, "ridge", np.asarray(ridge_w, dtype=float), rho, inner_tol)
    else:
        solve = _owner_solver(G, "none", 0.0, rho, inner_tol)
    ridge = None if penalty != "ridge" or ridge_w is None else np.asarray(ridge_w, dtype=float)
    return solve, lam_arr, ridge


def _anderson_mix(hist_f: list, hist_g: list, f_pt: np.ndarray, g_pt: np.ndarray) -> tuple[np.ndarray, int]:
    """The next point: Anderson type II, g - ΔG Γ with Γ = argmin ||f - ΔF Γ|| pooled over the targets, and
    the width of ΔF (0: too little history, the plain step g is returned)."""
    if len(hist_f) < 2:
        return g_pt, 0
    n, p, _ = g_pt.shape
    dF = np.concatenate([(hist_f[j + 1] - hist_f[j]).reshape(n * p, n) for j in range(len(hist_f) - 1)], axis=1)
    dG = np.concatenate([(hist_g[j + 1] - hist_g[j]).reshape(n * p, n) for j in range(len(hist_g) - 1)], axis=1)
    from scipy import linalg  # here: the owners' processes import this module and never mix

    # LAPACK's gelsy (complete orthogonal factorisation) instead of numpy's gelsd (SVD): the same minimum-norm
    # solution to rounding (1e-15 on these shapes) at 2.3-3x less CPU (1.7 -> 0.72 ms at 50 sites, memory 4)
    gamma = linalg.lstsq(dF, f_pt.reshape(n * p, n), cond=1e-12, lapack_driver="gelsy", check_finite=False)[0]
    return (g_pt.reshape(n * p, n) - dG @ gamma).reshape(n, p, n), dF.shape[1]
