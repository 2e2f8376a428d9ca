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
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

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
NOISE_LAWS = ("laplace", "gaussian", "uniform")
#: over-relaxation of the "relaxed" scheme (Boyd 3.4.3 suggests 1.5 to 1.8)
RELAXATION = 1.6
#: residual balancing constants (Boyd 3.4.1)
BALANCE_MU, BALANCE_TAU = 10.0, 2.0


# =============================================================================================
# Message log and trace
# =============================================================================================
@dataclass
class MessageLog:
    """Every message of the protocol: iteration, sender, receiver, message, shape, what it is.

    Stored as plain tuples (a few bytes each); the values of the messages are kept in
    :class:`AdmmTrace` only for the first ``keep_values`` iterations.
    """

    records: list = field(default_factory=list)

    COLUMNS = ("iteration", "phase", "sender", "receiver", "message", "shape", "what it is", "values")

    def add(self, iteration, sender, receiver, message, shape, what, phase="iteration"):
        size = int(math.prod(shape)) if shape else 1  # math.prod: np.prod costs ~50 µs per call here
        self.records.append((int(iteration), phase, sender, receiver, message, "x".join(map(str, shape)), what, size))

    def __len__(self) -> int:
        return len(self.records)

    def to_frame(self, max_iteration: int | None = None) -> pd.DataFrame:
        df = pd.DataFrame(self.records, columns=list(self.COLUMNS))
        if max_iteration is not None:
            df = df[(df["iteration"] <= max_iteration) | (df["phase"] != "iteration")]
        return df.reset_index(drop=True)

    def volume(self) -> pd.DataFrame:
        """Number of messages and values sent by each party (all iterations)."""
        df = self.to_frame()
        if df.empty:
            return pd.DataFrame(columns=["sender", "messages", "values sent"])
        out = df.groupby("sender", sort=False).agg(messages=("message", "size"), values_sent=("values", "sum"))
        return out.reset_index().rename(columns={"values_sent": "values sent"})


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
        k = np.arange(1, self.n_iter + 1)
        return pd.DataFrame({"iteration": k, "primal_residual": self.primal_residuals,
                             "dual_residual": self.dual_residuals, "eps_primal": self.eps_primal,
                             "eps_dual": self.eps_dual})

    def coef_error_path(self, B_ref: np.ndarray) -> np.ndarray:
        """max |B^k - B_ref| for the stored iterations ``path_iterations`` (owner-major B_ref)."""
        return np.array([float(np.max(np.abs(B - B_ref))) for B in self.coef_path])


def noise(rng: np.random.Generator, law: str, scale: float, size) -> np.ndarray:
    """Noise of one of the paper's laws: N(0, scale²), L(0, scale), U(-scale, scale)."""
    if law == "gaussian":
        return rng.normal(0.0, scale, size)
    if law == "laplace":
        return rng.laplace(0.0, scale, size)
    if law == "uniform":
        return rng.uniform(-scale, scale, size)
    raise ValueError(f"noise law must be one of {NOISE_LAWS}, got {law!r}")


# =============================================================================================
# LASSO by coordinate descent (central fit and owners' sub-problems)
# =============================================================================================
def _soft(x, t):
    return np.sign(x) * np.maximum(np.abs(x) - t, 0.0)


def lasso_coordinate_descent(G: np.ndarray, C: np.ndarray, threshold, B0: np.ndarray | None = None,
                             tol: float = 1e-12, max_sweeps: int = 100_000) -> tuple[np.ndarray, int]:
    """argmin_B 1/2 tr(B'GB) - tr(B'C) + sum threshold * |B| by cyclic coordinate descent.

    Batched: G (m, m) or (k, m, m); C and B0 (m, n) or (k, m, n), k independent problems
    (one per owner) each with n independent targets. ``threshold``: a number, or an array
    broadcastable to C's shape (a weight per coefficient). With G = Z'Z and C = Z'Y this is
    1/2 ||Y - Z B||^2 + threshold ||B||_1. Warm start from ``B0``; stops when a whole sweep
    changes no entry by more than ``tol`` (spec 4.2: 1e-12). Returns (B, sweeps).
    """
    single = G.ndim == 2
    G3 = G[None] if single else G
    C3 = C[None] if single else C
    B = np.zeros_like(C3) if B0 is None else np.array(B0[None] if single else B0, dtype=float, copy=True)
    thr = np.asarray(threshold, dtype=float)
    thr3 = np.broadcast_to(thr[None] if (single and thr.ndim >= 2) else thr, C3.shape)
    diag = np.einsum("kmm->km", G3)
    if np.any(diag <= 0):
        raise ValueError("a covariate column is identically zero: its coefficient is not identified")
    m = G3.shape[1]
    sweeps = 0
    for sweeps in range(1, max_sweeps + 1):
        biggest = 0.0
        for j in range(m):
            old = B[:, j, :].copy()
            # partial residual correlation without coordinate j
            r = C3[:, j, :] - np.einsum("km,kmn->kn", G3[:, j, :], B) + diag[:, j, None] * old
            new = _soft(r, thr3[:, j, :]) / diag[:, j, None]
            B[:, j, :] = new
            change = float(np.max(np.abs(new - old))) if new.size else 0.0
            biggest = max(biggest, change)
        if biggest <= tol:
            break
    return (B[0] if single else B), sweeps


def _quad(A: np.ndarray, G: np.ndarray) -> float:
    """sum_i tr(A_i' G_i A_i) = sum_i ||Z_i A_i||² (owner-local Grams)."""
    return float(np.einsum("opn,opq,oqn->", A, G, A))


def _owner_solver(G, penalty, lam, rho, inner_tol):
    """The owners' update C -> B (cached factorisation: explicit p x p inverses), or LASSO by CD."""
    n, p, _ = G.shape
    lam = np.asarray(lam, dtype=float)
    if penalty == "lasso" and np.any(lam > 0):
        thr = lam / rho

        def solve(C, B_warm):
            return lasso_coordinate_descent(G, C, thr, B0=B_warm, tol=inner_tol)[0]

        return solve
    if penalty == "ridge" and np.any(lam > 0):
        ridge = np.broadcast_to(lam, (n,)) if lam.ndim <= 1 else lam
        mats = np.linalg.inv(G + (np.asarray(ridge, float).reshape(-1, 1, 1) / rho) * np.eye(p)[None])
    else:
        mats = np.linalg.inv(G)

    def solve(C, B_warm):
        return np.einsum("opq,oqn->opn", mats, C)

    return solve


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


# =============================================================================================
# Anderson-accelerated ADMM at rho = n
# =============================================================================================
def anderson_memory(p: int) -> int:
    """Iterations kept by the Anderson mixing: p + 2 (the pooled history then spans the coefficient
    space of n p rows: (p + 2) n columns)."""
    return int(p) + 2


def run_anderson(Z: np.ndarray, Y: np.ndarray, G: np.ndarray, *, lags: tuple, penalty: str, lasso_w=None,
                 ridge_w=None, max_iter: int, tol, atol: float, init: str, rng: np.random.Generator,
                 b1_scale: float, variant: str, store_path: bool, inner_tol: float, names: list,
                 coef_to_data=None, memory: int | None = None) -> tuple[np.ndarray, AdmmTrace]:
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
    Z : (T, n p) owner-major centred design, each owner's columns divided by its own power-of-two
        scale; Y : (T, n) targets divided by the same per-series scales.
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
    T, n = Y.shape
    p = len(lags)
    rho = float(n)
    memory = anderson_memory(p) if memory is None else int(memory)
    lam_arr = None
    if penalty == "lasso" and lasso_w is not None and np.any(np.asarray(lasso_w) > 0):
        lam_arr = np.asarray(lasso_w, dtype=float)[:, None, :]  # (owner, 1, target)
        solve = _owner_solver(G, "lasso", lam_arr, rho, inner_tol)
    elif penalty == "ridge" and ridge_w is not None and np.any(np.asarray(ridge_w) > 0):
        solve = _owner_solver(G, "ridge", np.asarray(ridge_w, dtype=float), rho, inner_tol)
    else:
        solve = _owner_solver(G, "none", 0.0, rho, inner_tol)
    ridge = None if penalty != "ridge" or ridge_w is None else np.asarray(ridge_w, dtype=float)
    to_data = coef_to_data or (lambda Bom: Bom.copy())

    def objective(B, R):
        val = 0.5 * float(np.vdot(R, R))
        if lam_arr is not None:
            val += float(np.sum(lam_arr * np.abs(B)))
        elif ridge is not None:
            val += 0.5 * float(np.sum(ridge[:, None, None] * B * B))
        return val

    def evaluate(B):
        R = Y - Z @ B.reshape(n * p, n)
        C = np.einsum("opq,oqn->opn", G, B) + (Z.T @ (R / n)).reshape(n, p, n)
        return solve(C, B), R, objective(B, R)

    y_free = variant == "y_free"
    log = MessageLog()
    msg_name, what_up = (("d_i^k", "d_i^k = (I_YAi - Z_Ai B_Ai^k)/n: own target column minus own contribution")
                         if y_free else ("Z_Ai B_Ai^k", "Z_Ai B_Ai^k: owner i's contribution to the fitted values"))
    cast = "m^k = sum_i d_i^k" if y_free else "m^k = (Y - sum_i Z_Ai B_Ai^k)/n"

    B = np.zeros((n, p, n)) if init == "zero" else rng.normal(0.0, b1_scale, (n, p, n))
    abs_term = math.sqrt(T * n * n) * atol
    prim, dual, epsp, epsd = [], [], [], []
    coef_path, path_its = [], []
    stride = max(1, math.ceil(n * p * n * int(max_iter) / 5e6))
    hist_f, hist_g = [], []
    converged, rejected = False, 0
    point, mixed = B, False
    B_cur = g_cur = obj_cur = None
    k = 0
    for k in range(1, int(max_iter) + 1):
        for i in range(n):
            log.add(k, names[i], "central", msg_name, (T, n), what_up)
        log.add(k, "central", "all owners", cast, (T, n), "broadcast: the residual of everyone's fitted values over n")
        g_pt, R_pt, obj_pt = evaluate(point)
        f_pt = g_pt - point
        s = rho * math.sqrt(max(_quad(f_pt, G), 0.0))
        e_dual = abs_term + (tol or 0.0) * math.sqrt(n) * float(np.linalg.norm(R_pt))
        e_pri = abs_term + (tol or 0.0) * math.sqrt(max(_quad(point, G), 0.0))
        prim.append(0.0)  # the dual is eliminated at rho = n: the consensus holds exactly
        dual.append(s)
        epsp.append(e_pri)
        epsd.append(e_dual)
        if mixed and obj_pt > obj_cur + 1e-12 * abs(obj_cur):
            # safeguard: the mixed point raised the objective; take the plain step from the current point
            rejected += 1
            hist_f.clear()
            hist_g.clear()
            log.add(k, "central", "all owners", "reject", (1,),
                    "the mixed step raised the objective: take the plain step")
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
        if len(hist_f) >= 2:
            dF = np.concatenate([(hist_f[j + 1] - hist_f[j]).reshape(n * p, n) for j in range(len(hist_f) - 1)], axis=1)
            dG = np.concatenate([(hist_g[j + 1] - hist_g[j]).reshape(n * p, n) for j in range(len(hist_g) - 1)], axis=1)
            gamma = np.linalg.lstsq(dF, f_pt.reshape(n * p, n), rcond=1e-12)[0]
            point = (g_pt.reshape(n * p, n) - dG @ gamma).reshape(n, p, n)
            mixed = True
        else:
            point, mixed = g_pt, False
        # Stop when Boyd's rule holds and the next Anderson step changes no coefficient by more than tol / 10
        # of the largest (standardised units): the accelerated iterates converge superlinearly, so that step
        # estimates the current error; the plain step alone would underestimate it by the conditioning.
        if tol is not None and mixed and s <= e_dual:
            step = float(np.max(np.abs(point - B_cur)))
            if step <= 0.1 * tol * max(float(np.max(np.abs(B_cur))), atol):
                converged = True
                break
        if mixed:
            width = dF.shape[1]
            for i in range(n):
                log.add(k, names[i], "central", "ΔF_Ai", (p, width),
                        "differences of its last coefficient updates (for the Anderson weights)")
            log.add(k, "central", "all owners", "Γ^k", (width, n), "Anderson mixing weights")
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
