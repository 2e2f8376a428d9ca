"""What each P3LS role can infer from what it received (spec Sec. 3.3 / 3.4), and why masks are not DP."""
from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import linalg
from sklearn.utils.validation import check_is_fitted

from engine.methods.p3ls.protocol import P3LS

__all__ = ["NOT_DP_STATEMENT", "leakage_report"]

NOT_DP_STATEMENT = (
    "Masks are not differential privacy: no noise is added, and the released scores T, "
    "coefficients B_i, loadings Q and relevance values are exact functions of the data. The "
    "guarantee is confidentiality of the raw inputs against semi-honest, non-colluding parties "
    "with a trusted authority; any collusion with the server, or a compromised authority, undoes "
    "the masks."
)


def _singular_values(Z) -> np.ndarray:
    return linalg.svdvals(np.asarray(Z, float), check_finite=False)


def leakage_report(model: P3LS) -> pd.DataFrame:
    """What each role can infer from what it received, beside the true (plaintext) value.

    Every row: observer, what it learns, how (from which received values), the largest absolute
    difference between the inferred and the true value (0 up to rounding means: revealed exactly),
    and a note. The plaintext side is computed from the simulation's raw blocks, which no role
    other than their owner holds. Masks are not differential privacy (see ``NOT_DP_STATEMENT``).
    """
    check_is_fitted(model, "server_")
    csp, hs, LC = model.server_, model.holders_, model.label_contributor_
    Z = np.hstack([h._Z for h in hs])
    Zy = LC._Zy
    audit = model.audit()
    k = model.n_components_
    T, P, W, Q = audit.T, audit.P, audit.W, audit.Q
    Tm, Pm, Wm, Qm = (csp._get(x) for x in ("T'", "P'", "W'", "Q'"))
    signs = LC._get("signs")
    _m, _n = Z.shape
    rows = []

    def add(observer, learns, source, diff, note):
        rows.append({"observer": observer, "learns": learns, "from": source,
                     "max_abs_difference": float(diff), "note": note})

    def sv_diff(a, b):
        sa, sb = _singular_values(a), _singular_values(b)
        r = min(len(sa), len(sb))
        return np.max(np.abs(sa[:r] - sb[:r]))

    add("CSP", "singular values of the pooled X (all parties' standardised columns)", "X' = A X H",
        sv_diff(csp._get("X'"), Z),
        "orthogonal masks keep every singular value: the spectrum of X is public to the CSP")
    add("CSP", "singular values of Y", "Y' = A Y G", sv_diff(csp._get("Y'"), Zy),
        "for one response (l = 1) G = ±1, so Y' = ±A y")
    add("CSP", "Gram matrix of the scores T^T T", "T'^T T'", np.max(np.abs(Tm.T @ Tm - T.T @ T)),
        "the variance carried by every latent variable")
    dd = np.outer(signs, signs)  # the CSP's components carry the SVD's signs, the parties' the convention's
    add("CSP", "P^T W (k x k)", "P'^T W'", np.max(np.abs(Pm.T @ Wm * dd - P.T @ W)),
        "exact up to the sign of each component, unaffected by H")
    add("CSP", "Q^T Q (Gram matrix of the Y-loadings)", "Q'^T Q'", np.max(np.abs(Qm.T @ Qm * dd - Q.T @ Q)),
        "Q itself only up to the rotation G")
    ss_x = float(np.sum(Z ** 2))
    ss_y = float(np.sum(Zy ** 2))
    x_var = (T * T).sum(0) * (P * P).sum(0) / ss_x
    x_var_m = (Tm * Tm).sum(0) * (Pm * Pm).sum(0) / float(np.sum(csp._get("X'") ** 2))
    y_var = (T * T).sum(0) * (Q * Q).sum(0) / ss_y
    y_var_m = (Tm * Tm).sum(0) * (Qm * Qm).sum(0) / float(np.sum(csp._get("Y'") ** 2))
    add("CSP", f"X-variance explained per latent variable ({k} values)", "T', P', X'", np.max(np.abs(x_var - x_var_m)),
        f"R²_X = {x_var.sum():.4f}")
    add("CSP", f"Y-variance explained per latent variable ({k} values)", "T', Q', Y'", np.max(np.abs(y_var - y_var_m)),
        f"R²_Y = {y_var.sum():.4f}: the CSP knows how well the joint model fits")
    for h in hs:
        name = f"X_{h.index}'"
        if name in csp._holdings:
            X_i_m = csp._get(name)
            add("CSP", f"singular values of {h.name}'s block", name, sv_diff(X_i_m, h._Z),
                "each block is sent separately (no secure aggregation): its spectrum and its subspace are visible")
        else:
            add("CSP", f"singular values of {h.name}'s block", "—", float("nan"),
                "not visible: secure aggregation on, the CSP only sees the sum")
        CH = csp._get(f"[H_{h.index}]")
        sub = csp._get("X'") @ CH.T  # = A X_i C_i^T: party i's block, still behind A and C_i
        true = model.authority_._get("A").left(h._Z @ h._get(f"C_{h.index}").T)
        rank = np.linalg.matrix_rank(sub)
        add("CSP", f"{h.name}'s block behind A and C_{h.index} (A X_{h.index} C_{h.index}^T, rank {rank})",
            f"X' [H_{h.index}]^T", np.max(np.abs(sub - true)),
            "recovery hands the CSP party i's row space of H; rank and singular structure of the block up to C_i")
    # Caveat 1: Q is not exclusive to the LC
    for h in hs:
        if h is LC:
            continue
        W_i, B_i = h._get(f"W_{h.index}"), h._get(f"B_{h.index}")
        if h.n_columns >= k and np.linalg.matrix_rank(W_i) == k:
            Zq = linalg.lstsq(W_i, B_i)[0]  # (P^T W)^-1 Q^T
            q_last = Zq[-1]
            what = "all of Q (k = 1) and with T the LC's fitted values" if k == 1 else f"q_{k}, the last column of Q"
            add(h.name, what, f"W_{h.index}, B_{h.index}", np.max(np.abs(q_last - Q[:, -1])),
                "Q is meant to stay with the LC (spec 3.4 caveat 1); releasing B_i for k = 1, 2, ... gives all of Q")
        else:
            add(h.name, "q_k from its own W_i and B_i", "—", float("nan"),
                f"not solvable: it holds {h.n_columns} columns < k = {k}")
    # Caveat 2: PLS1 gets no Y masking
    if Zy.shape[1] == 1:
        Qm_oriented = Qm * signs  # the CSP's signs are the SVD's; the sign convention is public
        add("CSP", "the Y-loadings Q (one response: G = ±1)", "Q'",
            min(np.max(np.abs(Qm_oriented - Q)), np.max(np.abs(Qm_oriented + Q))),
            "Q' = ±Q: the CSP learns Q and R²_Y exactly")
    # The LC learns the other parties' summed contribution per row
    others = sum(h._Z @ h._get(f"B_{h.index}") for h in hs if h is not LC)
    if isinstance(others, np.ndarray):
        fitted = T @ Q.T
        add(LC.name, "Σ_{j≠LC} X_j B_j per training row (the other parties' joint effect)", "T, Q, its own X_LC B_LC",
            np.max(np.abs((fitted - LC._Z @ LC._get(f"B_{LC.index}")) - others)), "exact for every batch")
    add("every data holder", f"T: a {k}-dimensional exact projection of all parties' data per row", "T' and A", 0.0,
        "shared by design (monitoring); each party can regress T on its own block and study the rest")
    add("everyone", "differential privacy", "—", float("nan"), NOT_DP_STATEMENT)
    return pd.DataFrame(rows)
