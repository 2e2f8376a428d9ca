"""What the collaborative VAR's ADMM and the reviewed SMC protocols leak (spec section 5).

Paper: Gonçalves, Bessa & Pinson, "A critical overview of privacy-preserving approaches for
collaborative forecasting", Propositions 1-4 (spec ``/work/shared/spec/var_admm.md``).
Written by hand (the paper's counting arguments made constructive, as the spec's 5.2-5.4):

* :func:`zero_init_leak` (5.1): with Boyd's zero start the first broadcast is m^1 = 2Y/(n+rho).
* :func:`central_node_attack` (Prop. 2, 5.2): the central node of the Y-free variant (71)
  rebuilds a victim's series from the d_i^k it receives.
* :func:`owner_attack` (Prop. 3, 5.3): any owner rebuilds every other owner's series from the
  broadcasts m^k, its own data and the public n and rho, whatever the random U^0.
* Noise (Prop. 4, 5.5): run the attacks on a model fitted with ``coef_noise`` (still exact)
  or ``message_noise`` (approximate, error of the order of the noise-to-signal ratio).
* :func:`structure_solve` (5.4): the lag structure that turns "a vector of a known subspace"
  into the series itself.
* :func:`breach_iterations_central` (58) and :func:`breach_iterations_owner` (61).
* :func:`du_var_attack` (Prop. 1, 5.6) and :func:`karr_var_attack` (5.7): the two-owner SMC
  protocols of Du et al. (2004) and Karr et al. (2009) applied to a VAR.

Each ADMM attack returns an :class:`AttackResult` with the victims' reconstructed series, the
relative error per number of observed iterations K, the predicted K and the singular values
of the attacker's stacked observations (the "rank reached" diagnostic of spec 10.4).
The attacks use only what the attacker legitimately holds; the true series is used for
scoring only. No streamlit here.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np
import pandas as pd
from scipy import linalg

from engine.methods.var_admm import CollaborativeVAR, lagged_design
from engine.threads import one_blas_thread

__all__ = [
    "EXACT",
    "AttackResult",
    "breach_iterations_central",
    "breach_iterations_owner",
    "breach_table",
    "central_node_attack",
    "du_product",
    "du_var_attack",
    "karr_product",
    "karr_var_attack",
    "large_t_central",
    "large_t_owner",
    "owner_attack",
    "owner_attack_needs",
    "structure_solve",
    "zero_init_leak",
]

#: relative error at or below which a reconstruction counts as exact (spec 9.10)
EXACT = 1e-8


# =============================================================================================
# 1. Counting: the paper's (58) and (61)
# =============================================================================================
def breach_iterations_central(T: int, n: int, p: int) -> int | None:
    """(58)/(60): k = ceil(Tp / (Tn - pn)), iterations after which the central node has as many
    equations as unknowns. None when Tn - pn <= 0 (no finite k)."""
    den = T * n - p * n
    if den <= 0:
        return None
    return math.ceil(Fraction(T * p, den))


def breach_iterations_owner(T: int, n: int, p: int) -> int | None:
    """(61)/(65)/(75): k = ceil((Tn + (n-1)(Tp + T)) / (Tn - (n-1)pn)); None unless T > (n-1)p."""
    den = T * n - (n - 1) * p * n
    if den <= 0:
        return None
    return math.ceil(Fraction(T * n + (n - 1) * (T * p + T), den))


def large_t_central(n: int, p: int) -> int:
    """Limit of (58) for large T: floor(p/n) + 1 (the paper writes ceil(p/n))."""
    return p // n + 1


def large_t_owner(n: int, p: int) -> int:
    """Limit of (61) for large T: floor((n + (n-1)(p+1))/n) + 1."""
    return (n + (n - 1) * (p + 1)) // n + 1


def owner_attack_needs(n: int, p: int) -> int:
    """K the constructive owner attack needs: ceil(((n-1)(p+2) + 1)/n) (spec 5.3)."""
    return -(-((n - 1) * (p + 2) + 1) // n)


def breach_table(Ts, ns, ps) -> pd.DataFrame:
    """(58) and (61) over a grid (spec 7, Fig. 10): columns T, n, p, k_central, k_owner."""
    rows = [{"T": T, "n": n, "p": p, "k_central": breach_iterations_central(T, n, p),
             "k_owner": breach_iterations_owner(T, n, p)} for T in Ts for n in ns for p in ps]
    return pd.DataFrame(rows)


# =============================================================================================
# 2. Structure solve (5.4)
# =============================================================================================
def structure_solve(offsets: np.ndarray, V: np.ndarray, lags, constant: bool = False, times=None):
    """Series y at T target times and its other referenced values from y = g + V x and "every
    lag of y lies in span(V)" (spec 5.4).

    offsets : (T, r) known offsets g, one column per victim (same subspace). V : (T, d)
    orthonormal basis. times : the target rows' clock times (ints, increasing; default
    0..T-1, consecutive); a lag value at a time that is not a target row (pre-sample values,
    or night hours left out of the fit) is a free unknown. constant : add the constant vector
    to the subspace (models with an intercept, whose columns were centred); the series is then
    defined up to a constant and returned centred over its T rows. Returns
    (Y_hat (T, r), {time: value row (r,)} of the free values, info) with
    info = {"rank", "unknowns", "singular_values"} of the linear system.
    """
    g = np.asarray(offsets, dtype=float)
    if g.ndim == 1:
        g = g[:, None]
    T, r = g.shape
    lags = np.array(sorted(set(int(v) for v in lags)))
    times = np.arange(T) if times is None else np.asarray(times, dtype=np.int64)
    if times.shape != (T,):
        raise ValueError("times must hold one clock time per target row")
    if constant:
        V = linalg.orth(np.column_stack([V, np.ones(T)]))
    d = V.shape[1]
    lag_times = times[:, None] - lags[None, :]  # (T, p)
    where = np.searchsorted(times, lag_times)
    found = (where < T) & (times[np.minimum(where, T - 1)] == lag_times)
    free_times = np.unique(lag_times[~found])
    nF = free_times.size
    blocks_A, blocks_b = [], []
    rows = np.arange(T)
    for q in range(lags.size):
        ok = found[:, q]
        A = np.zeros((T, nF + d))
        A[rows[~ok], np.searchsorted(free_times, lag_times[~ok, q])] = 1.0
        A[ok, nF:] = V[where[ok, q]]
        b = np.zeros((T, r))
        b[ok] = -g[where[ok, q]]
        A -= V @ (V.T @ A)
        b -= V @ (V.T @ b)
        blocks_A.append(A)
        blocks_b.append(b)
    sol, _, rank, sv = linalg.lstsq(np.vstack(blocks_A), np.vstack(blocks_b), lapack_driver="gelsd")
    free, x = sol[:nF], sol[nF:]
    Y_hat = g + V @ x
    if constant:
        shift = Y_hat.mean(axis=0)
        Y_hat = Y_hat - shift
        free = free - shift
    return Y_hat, dict(zip(free_times.tolist(), free, strict=True)), {"rank": int(rank), "unknowns": nF + d,
                                                         "singular_values": sv}


def _basis(vectors: list, d: int) -> tuple[np.ndarray, np.ndarray, int]:
    """Top-d left singular vectors of the stacked vectors, all singular values, numerical rank."""
    M = np.column_stack(vectors)
    U, s, _ = linalg.svd(M, full_matrices=False)
    rank = int(np.sum(s > s[0] * 1e-9)) if s.size and s[0] > 0 else 0
    return U[:, :min(d, U.shape[1])], s, rank


# =============================================================================================
# 3. Results
# =============================================================================================
@dataclass
class AttackResult:
    """One attack on one ADMM run.

    K : observed iterations tried (broadcasts m^1..m^K for an owner, messages d^1..d^K for the
    central node). relerr : (len(K), r) ||y_hat - y|| / ||y|| per victim over the T fitted rows
    (1.0 where no estimate is possible yet). reconstructions : {K: (T, r)}. truth : (T, r).
    predicted_k : the paper's formula at this T; k_needed : what the constructive attack needs
    (large-T limit); k_exact : first K with every victim's relerr <= 1e-8 (None if never).
    singular_values : of the stacked observations at the largest K (scaled to the largest);
    rank_needed / rank_found : subspace dimension needed and found.
    """

    attacker: str
    victims: list
    K: np.ndarray
    relerr: np.ndarray
    reconstructions: dict
    truth: np.ndarray
    predicted_k: int | None
    k_needed: int
    rank_needed: int
    rank_found: int
    singular_values: np.ndarray
    note: str = ""
    formula: str = ""
    centred: bool = False
    extra: dict = field(default_factory=dict)

    @property
    def k_exact(self) -> int | None:
        """The first K at which every victim's relative error is at most ``EXACT``, or None."""
        ok = np.all(self.relerr <= EXACT, axis=1)
        return int(self.K[np.argmax(ok)]) if ok.any() else None

    @property
    def partial(self) -> bool:
        """The stacked observations never reached the subspace's dimension (e.g. LASSO rows kept
        at zero hide a lag direction): at most a partial leak."""
        return self.rank_found < self.rank_needed

    def error_at(self, K: int) -> np.ndarray:
        """The victims' relative errors at K (one entry per victim)."""
        return self.relerr[int(np.flatnonzero(self.K == K)[0])]

    def to_frame(self) -> pd.DataFrame:
        """One row per (K, victim) with its relative error."""
        rows = []
        for j, k in enumerate(self.K):
            for v, name in enumerate(self.victims):
                rows.append({"K": int(k), "victim": name, "relerr": float(self.relerr[j, v])})
        return pd.DataFrame(rows)


def _relerr(Y_hat, Y):
    return np.linalg.norm(Y_hat - Y, axis=0) / np.maximum(np.linalg.norm(Y, axis=0), 1e-300)


def _require(model: CollaborativeVAR):
    trace = getattr(model, "trace_", None)
    if trace is None:
        raise ValueError("the attacks need a model fitted with solver='admm'")
    if trace.keep_values < 1 or not trace.owner_messages:
        raise ValueError("the attacks need the message values: fit with keep_values=K (K iterations kept)")
    return trace


def _owner_index(model, who) -> int:
    names = list(model.owner_names_)
    if isinstance(who, (int, np.integer)):
        if not 0 <= int(who) < len(names):
            raise ValueError(f"owner index {who} out of range 0..{len(names) - 1}")
        return int(who)
    if who in names:
        return names.index(who)
    raise ValueError(f"unknown owner {who!r}; owners: {names}")


# =============================================================================================
# 4. ADMM attacks
# =============================================================================================
def zero_init_leak(model: CollaborativeVAR) -> AttackResult:
    """Spec 5.1: with init="zero" the first broadcast is m^1 = 2Y/(n + rho); every owner reads
    every series at once (Y = m^1 (n + rho)/2). With a random start the same read-out is
    returned too, to show it fails."""
    trace = _require(model)
    if not trace.broadcasts:
        raise ValueError("no broadcast was recorded")
    n, rho = trace.n_owners, trace.rho
    truth = model.design_[1]
    Y_hat = trace.broadcasts[0] * (n + rho) / 2.0
    err = _relerr(Y_hat, truth)[None, :]
    note = ("zero initialisation: the first broadcast is 2Y/(n + rho), every series leaks at iteration 1"
            if trace.init == "zero" else
            "random initialisation: m^1 (n + rho)/2 is Y plus a mask, the read-out fails (the owner attack does not)")
    return AttackResult("every owner", list(model.owner_names_), np.array([1]), err, {1: Y_hat}, truth, 1, 1,
                        0, 0, np.array([]), note=note, formula="m^1 (n + rho)/2 = Y", centred=model.trend == "c")


@one_blas_thread()
def central_node_attack(model: CollaborativeVAR, victim=0, K_max: int | None = None) -> AttackResult:
    """Prop. 2 (spec 5.2): the central node rebuilds owner ``victim``'s series.

    Y-free variant (71): from D^k = (n + rho) d_victim^k, whose columns c != victim are in
    S = col(Z_victim) and whose victim column is y_victim - (element of S); subspace from the
    top-p singular vectors, then the structure solve. Base variant (47): the central node
    holds Y from the start (relerr 0 at every K); the series is read, not attacked.
    """
    trace = _require(model)
    i = _owner_index(model, victim)
    n, rho, lags, T = trace.n_owners, trace.rho, trace.lags, trace.T
    p = len(lags)
    truth = model.design_[1][:, [i]]
    K_avail = len(trace.owner_messages)
    K_max = K_avail if K_max is None else min(int(K_max), K_avail)
    Ks = np.arange(1, K_max + 1)
    centred = model.trend == "c"
    name = trace.owner_names[i]
    if trace.variant == "base":
        recs = {int(k): truth.copy() for k in Ks}
        return AttackResult("central node", [name], Ks, np.zeros((len(Ks), 1)), recs, truth,
                            0, 0, p, p, np.array([]), centred=centred,
                            formula="base protocol: Y is an input of the central node",
                            note="In the base protocol the central node receives Y itself: every series is known "
                                 "before the first iteration (the paper's central-node leak matters only for the "
                                 "Y-free variant).")
    vectors: list[np.ndarray]
    relerr: list[np.ndarray]
    vectors, relerr, recs = [], [], {}
    prev_col = None
    sv, rank = np.array([]), 0
    for k in Ks:
        D = (n + rho) * trace.owner_messages[k - 1][i]  # (T, n): what the central node received, rescaled
        vectors.extend(D[:, c] for c in range(n) if c != i)
        if prev_col is not None:
            vectors.append(D[:, i] - prev_col)
        prev_col = D[:, i]
        V, sv, rank = _basis(vectors, p)
        Y_hat, _, _ = structure_solve(D[:, [i]], V, lags, constant=centred, times=model.fit_rows_)
        recs[int(k)] = Y_hat
        relerr.append(_relerr(Y_hat, truth))
    return AttackResult(
        "central node", [name], Ks, np.array(relerr), recs, truth, predicted_k=_central_formula(T, n, p),
        k_needed=large_t_central(n, p), rank_needed=p, rank_found=rank,
        singular_values=sv / sv[0] if sv.size and sv[0] > 0 else sv, centred=centred,
        formula="central node's count: k = ceil(Tp / (Tn - pn))",
        note=f"Y-free variant: the central node never receives Y and still rebuilds {name}'s series.")


def _central_formula(T, n, p):
    return breach_iterations_central(T, n, p)


@one_blas_thread()
def owner_attack(model: CollaborativeVAR, attacker=0, K_max: int | None = None) -> AttackResult:
    """Prop. 3 (spec 5.3): owner ``attacker`` rebuilds every other owner's series from the
    broadcasts m^1..m^K, its own data and the public n and rho (any random U^0).

    W^k = n m^k - (n + rho) m^{k+1} = -Y - S^k + 2 S^{k+1} with S^k the sum of the owners'
    contributions actually sent; removing its own part leaves vectors of
    S = col([Z_Aj], j != attacker) (dimension (n-1)p); the structure solve does the rest.
    """
    trace = _require(model)
    a = _owner_index(model, attacker)
    n, rho, lags, T = trace.n_owners, trace.rho, trace.lags, trace.T
    p = len(lags)
    Zc, Yc = model.design_
    y_a = Yc[:, a]
    victims = [c for c in range(n) if c != a]
    truth = Yc[:, victims]
    K_avail = min(len(trace.broadcasts), len(trace.owner_messages))
    K_max = K_avail if K_max is None else min(int(K_max), K_avail)
    Ks = np.arange(1, K_max + 1)
    centred = model.trend == "c"
    d = (n - 1) * p
    Z_a = Zc[:, a * p:(a + 1) * p]

    def own_contribution(k):  # the attacker's own S-part at iteration k (what it really sent)
        msg = trace.owner_messages[k - 1][a]
        if trace.variant == "base":
            return msg
        own = -(n + rho) * msg
        own[:, a] += y_a
        return own

    m = trace.broadcasts
    relerr, recs = [], {}
    vectors = []
    sv, rank = np.array([]), 0
    g_prev = None
    for K in Ks:
        if K < 2:
            relerr.append(np.ones(len(victims)))
            recs[int(K)] = np.zeros_like(truth)
            continue
        k = K - 1  # the newest W^k uses m^k and m^{k+1} = m^K
        W = n * m[k - 1] - (n + rho) * m[k]
        Q = 2.0 * own_contribution(k + 1) - own_contribution(k)
        vectors.append(W[:, a] + y_a - Q[:, a])
        g = -W[:, victims] + Q[:, victims]
        if g_prev is not None:
            vectors.extend((g - g_prev).T)
        g_prev = g
        V, sv, rank = _basis(vectors, d)
        Y_hat, _, _ = structure_solve(g, V, lags, constant=centred, times=model.fit_rows_)
        recs[int(K)] = Y_hat
        relerr.append(_relerr(Y_hat, truth))
    names = [trace.owner_names[c] for c in victims]
    return AttackResult(
        f"owner {trace.owner_names[a]}", names, Ks, np.array(relerr), recs, truth,
        predicted_k=breach_iterations_owner(T, n, p), k_needed=owner_attack_needs(n, p), rank_needed=d,
        rank_found=rank, singular_values=sv / sv[0] if sv.size and sv[0] > 0 else sv, centred=centred,
        formula="owners' count: k = ceil((Tn + (n-1)(Tp + T)) / (Tn - (n-1)pn))",
        note=f"{trace.owner_names[a]} uses only the broadcasts, its own series and the public n and rho.",
        extra={"Z_attacker": Z_a.shape})


# =============================================================================================
# 5. SMC protocols reviewed (Prop. 1 and 5.7)
# =============================================================================================
def du_product(A: np.ndarray, C: np.ndarray, M: np.ndarray) -> dict:
    """Du et al. (2004) A.C without a third party, (14)-(17): owner 1 holds A (k x m), owner 2
    holds C (m x s), M (m x m) invertible is drawn jointly. Owner 2 sends (M^-1)_top C, owner 1
    sends A M_right; V_a + V_c = A C."""
    m = M.shape[0]
    h = m // 2
    Minv = np.linalg.inv(M)
    to_owner1 = Minv[:h] @ C
    to_owner2 = A @ M[:, h:]
    V_a = A @ M[:, :h] @ to_owner1
    V_c = to_owner2 @ Minv[h:] @ C
    return {"V_a": V_a, "V_c": V_c, "to_owner1": to_owner1, "to_owner2": to_owner2}


@one_blas_thread()
def du_var_attack(y1: np.ndarray, y2: np.ndarray, p: int, random_state=None) -> dict:
    """Prop. 1 (spec 5.6): two owners compute Z_A1'Z_A2 (matrix M), Z_A1'Y_A2 (M*) and
    Z_A2'Y_A1 (M**) by Du's protocol; owner 2 rebuilds Z_A1 from Z_A1'[M_right, M*_right],
    owner 1 rebuilds Z_A2 from [(M^-1)_top; M**_right'] Z_A2. Exact when the stacked
    T x T matrices are invertible. y1, y2: the series (pre-sample included); T even."""
    rng = np.random.default_rng(random_state) if not isinstance(random_state, np.random.Generator) else random_state
    Z, Ytg = lagged_design(np.column_stack([y1, y2]), p)
    T = Z.shape[0]
    if T % 2:
        Z, Ytg = Z[1:], Ytg[1:]
        T -= 1
    Z1, Z2 = Z[:, :p], Z[:, p:]
    Y1, Y2 = Ytg[:, [0]], Ytg[:, [1]]
    Ms = [rng.standard_normal((T, T)) for _ in range(3)]
    h = T // 2
    p1 = du_product(Z1.T, Z2, Ms[0])
    p2 = du_product(Z1.T, Y2, Ms[1])
    p3 = du_product(Z2.T, Y1, Ms[2])
    # owner 2's view: Z1' M_right and Z1' M*_right
    R = np.hstack([p1["to_owner2"], p2["to_owner2"]])
    Mstack2 = np.hstack([Ms[0][:, h:], Ms[1][:, h:]])
    Z1_hat = np.linalg.solve(Mstack2.T, R.T)
    # owner 1's view: (M^-1)_top Z2 and Z2' M**_right
    S = np.vstack([p1["to_owner1"], p3["to_owner2"].T])
    Mstack1 = np.vstack([np.linalg.inv(Ms[0])[:h], Ms[2][:, h:].T])
    Z2_hat = np.linalg.solve(Mstack1, S)
    return {"product_error": float(np.max(np.abs(p1["V_a"] + p1["V_c"] - Z1.T @ Z2))),
            "Z1_error": float(np.max(np.abs(Z1_hat - Z1))), "Z2_error": float(np.max(np.abs(Z2_hat - Z2))),
            "cond_owner2": float(np.linalg.cond(Mstack2)), "cond_owner1": float(np.linalg.cond(Mstack1)),
            "values_shared_per_product": p * h, "T": T, "Z1_hat": Z1_hat, "Z2_hat": Z2_hat}


def karr_product(A: np.ndarray, C: np.ndarray, g: int | None = None, offset: int = 0) -> dict:
    """Karr et al. (2009) A'C, (21)-(25): owner 1 (A, m x k) sends W (m x g), g columns of the
    full QR factor of A past the first k (W'A = 0); owner 2 returns (I - WW')C; owner 1 forms
    A'(I - WW')C = A'C. g defaults to g* = s m/(k + s). ``offset`` skips columns of Q."""
    m, k = A.shape
    s = C.shape[1]
    if g is None:
        g = int(round(s * m / (k + s)))
    Q, _ = linalg.qr(A, mode="full")
    start = k + int(offset)
    if start + g > m:
        raise ValueError(f"offset {offset} + g {g} exceeds the {m - k} columns orthogonal to A")
    W = Q[:, start:start + g]
    PC = C - W @ (W.T @ C)
    return {"W": W, "returned": PC, "product": A.T @ PC, "g": g,
            "nlie_owner1": k * s + k * g, "nlie_owner2": k * s + s * (m - g)}


@one_blas_thread()
def karr_var_attack(y1: np.ndarray, y2: np.ndarray, p: int, g: int | None = None,
                    second_offset: int | None = None) -> dict:
    """Spec 5.7: owner 1 learns (I - WW') Z_A2 from Z_A1'Z_A2 (and, when ``second_offset`` is
    not None, (I - W2 W2') Y_A2 from Z_A1'Y_A2 with W2 = W shifted by that many columns).
    Solves for y_2's values from the lag structure; returns the system's rank, the number of
    unknowns and the reconstruction error (exact only at full rank)."""
    Z, Ytg = lagged_design(np.column_stack([y1, y2]), p)
    T = Z.shape[0]
    Z1, Z2, Y2 = Z[:, :p], Z[:, p:], Ytg[:, [1]]
    first = karr_product(Z1, Z2, g)
    W = first["W"]
    P1 = np.eye(T) - W @ W.T
    # unknowns: y_2 at times 1-p .. T-1 (Z only) or 1-p .. T (with Y_A2); index j <-> time j + 1 - p
    n_unknown = T + p - 1 + (1 if second_offset is not None else 0)
    rows, rhs = [], []
    t = np.arange(T)
    for q in range(p):  # column q of Z_A2 is lag q + 1: y_{t-q-1} for target time t = 1..T
        S = np.zeros((T, n_unknown))
        S[t, t + p - 1 - q] = 1.0  # time (t+1) - (q+1) = t - q -> index t - q + p - 1
        rows.append(P1 @ S)
        rhs.append(first["returned"][:, q])
    if second_offset is not None:
        second = karr_product(Z1, Y2, first["g"], offset=second_offset)
        W2 = second["W"]
        S = np.zeros((T, n_unknown))
        S[t, t + p] = 1.0  # target time t + 1 -> index t + p
        rows.append(S - W2 @ (W2.T @ S))
        rhs.append(second["returned"][:, 0])
    A = np.vstack(rows)
    b = np.concatenate(rhs)
    sol, _, _rank, _ = linalg.lstsq(A, b, lapack_driver="gelsd")
    truth = y2[len(y2) - T - p: len(y2) - T - p + n_unknown]
    return {"rank": int(np.linalg.matrix_rank(A)), "unknowns": n_unknown,
            "product_error": float(np.max(np.abs(first["product"] - Z1.T @ Z2))),
            "max_error": float(np.max(np.abs(sol - truth))), "g": first["g"], "T": T}
