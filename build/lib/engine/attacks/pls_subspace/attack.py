"""The attack itself (paper Eq. 5) and its success measures; the names every part of the attack shares.

See ``engine.attacks.pls_subspace`` for the threat model and the measures' definitions.
"""
from __future__ import annotations

import math

import numpy as np
from scipy.linalg import lstsq
from sklearn.cross_decomposition import PLSRegression
from sklearn.utils.validation import check_X_y

__all__ = [
    "COMPONENTS",
    "SETTINGS",
    "STATUSES",
    "AttackSetupError",
    "leak_exclusivity",
    "local_components",
    "orient",
    "project_off_span",
    "reconstruct",
    "success_measures",
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
    ``secret_centre`` (default: argmax|secret|; a zero or non-finite v never hits);
    cosine = |cos(v, secret projected off ``local_span``)|; correlation = |Pearson r(v, secret)|;
    peak = argmax|v|.
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
