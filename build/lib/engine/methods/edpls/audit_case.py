"""edPLS audit cases: the noise call of the method (``edpls_case``) and the page's whole strict pipeline
(``pipeline_audit_case``, from ``pipeline``), for ``engine.privacy.audit.epsilon_lower_bound``.

``edpls_case`` audits the raw noisy release on a small fixed data set with worst-case neighbours
(everything after the noise call is post-processing); ``pipeline_audit_case`` runs exactly what the page
runs. Both support the planted bugs of ``engine.privacy.audit`` (the audit must catch them).
"""
from __future__ import annotations

import numpy as np

from engine.methods.edpls.estimator import EDPLS
from engine.methods.edpls.pipeline import pipeline_audit_case
from engine.privacy.audit import BUG_FACTORS, AuditCase, case_name, check_bug, expected_verdict, upper_triangle
from engine.privacy.mechanisms import sample_symmetric_gaussian

__all__ = ["edpls_case", "pipeline_audit_case", "strict_edpls_case"]


def _edpls_data(n: int = 40, m: int = 3, seed: int = 7):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, m))
    X *= 0.8 / np.maximum(1.0, np.linalg.norm(X, axis=1, keepdims=True) / 2.0)
    y = X @ np.array([1.0, -0.5, 0.25])[:m] + 0.1 * rng.normal(size=n)
    y = np.clip(y, -1.5, 1.5)
    return X, y


def edpls_case(mode: str = "strict", epsilon: float = 1.0, delta: float = 1e-5, bug: str | None = None,
               x_bound: float = 2.0, y_bound: float = 2.0) -> AuditCase:
    """edPLS (k = 1). Neighbours: add one row maximising |y| * ||x||.

    strict: the row x = x_bound e_1, y = y_bound (both at their public bounds, one non-zero
    channel): its change of the released numbers is exactly the calibrated sensitivity
    (``engine.methods.edpls.strict_sensitivity``, attained), so the bound can approach the claim;
    the audited output is the Analyze-Gauss release of Z'Z on the method's own clipped, scaled
    rows (the estimator's ``_Prepared`` state and its sigma; the PLS model is post-processing).
    The page's whole pipeline is audited by ``engine.methods.edpls.pipeline_audit_case``.
    paper: the row x = 3 max_i ||x_i|| e_1, y = 3 max_i |y_i| (an outlier: the data-dependent
    bounds xmax * ymax grow with it); the audited output is the released noisy weight vector w
    of the first component (one release at the stated per-release epsilon).
    """
    check_bug(bug)
    if mode not in ("strict", "paper"):
        raise ValueError("mode must be 'strict' or 'paper'")
    X, y = _edpls_data()
    factor = BUG_FACTORS[bug]
    if mode == "strict":
        row_x = np.zeros(X.shape[1])
        row_x[0] = x_bound
        row_y = y_bound
        params = dict(n_components=1, epsilon=epsilon, delta=delta, mode="strict", x_bound=x_bound,
                      y_bound=y_bound)
    else:
        row_x = np.zeros(X.shape[1])
        row_x[0] = 3 * float(np.linalg.norm(X, axis=1).max())
        row_y = 3 * float(np.abs(y).max())
        params = dict(n_components=1, epsilon=epsilon, delta=delta, mode="paper")
    D = (X, y)
    D_prime = (np.vstack([X, row_x]), np.append(y, row_y))

    if mode == "strict":
        def release(data, rng, n):
            prep = EDPLS(**params)._prepare(*data)
            G0 = prep._gram()
            sigma = float(prep.noise_table(1, epsilon)["sigma"].iloc[0]) * factor
            return upper_triangle(G0[None] + sample_symmetric_gaussian(sigma, G0.shape[0], rng, n))
        note = ("Analyze-Gauss release of Z'Z (private centring column included), exact worst-case "
                "sensitivity (strict_sensitivity)")
    else:
        def release(data, rng, n):
            est = EDPLS(**params)
            if factor != 1.0:
                raise ValueError("planted bugs are audited on strict mode only")
            out = est.sample_releases(*data, n, rng, keep_raw=True)
            return out["W_raw"][:, 0, :]
        note = "noisy w[1] released with sigma from the data-dependent bound xmax * ymax"
    return AuditCase(case_name(f"edpls_{mode}", bug), "edpls", mode, float(epsilon), float(delta), release, D, D_prime,
                     "add one row maximising |y| * ||x||", expected_verdict(mode, bug), note, bug)


def strict_edpls_case(mode: str = "strict", epsilon: float = 1.0, delta: float = 1e-5, bug: str | None = None,
                      part: str = "all") -> AuditCase:
    """The recommended strict edPLS (``StrictEDPLS``): all three noisy releases of one fit, audited jointly.

    Public side: 30 public spectra of 4 channels (chain "none", 2 public axes, dim_threshold tiny so that
    d = 2 whatever the noisy count), y_range (-2, 2). D: 40 private rows; D' adds the row
    x = c_pub + x_bound V[:, 0] (its projection has norm exactly x_bound: every block at its bound) with
    y = 2 (y~ = 1): it changes the count by 1, the released upper triangle of Z'Z by exactly its
    sensitivity sqrt(3)/2 and Z'y~ by exactly 1. The audited output is (count, upper triangle of Z'Z,
    Z'y~) with the estimator's own sigmas (``public_setup``) and rows (``scaled_rows``); everything after
    (dimension choice, ridge, shrinkage) is post-processing. Planted bugs halve every sigma.

    ``part``: "all" audits the three releases jointly against the whole (epsilon, delta) (basic composition
    is loose there, so a planted bug may stay under the claim); "count", "moments" or "cross" audits one
    release against its own share (epsilon_i, delta_i), which is tight: planted bugs exceed it.
    """
    from engine.methods.edpls.recommended import RELEASES, StrictEDPLS

    check_bug(bug)
    if mode != "strict":
        raise ValueError("the recommended strict edPLS has one mode, 'strict'")
    parts = {"count": 0, "moments": 1, "cross": 2}
    if part != "all" and part not in parts:
        raise ValueError("part must be 'all', 'count', 'moments' or 'cross'")
    rng0 = np.random.default_rng(11)
    X_pub = rng0.normal(size=(30, 4)) * np.array([1.0, 0.6, 0.3, 0.1])
    est = StrictEDPLS(float(epsilon), float(delta), y_range=(-2.0, 2.0), X_public=X_pub, preprocessing="none",
                      max_dim=2, dim_threshold=1e-12)
    pub = est.public_setup(4)
    X = rng0.normal(size=(40, 4)) * np.array([0.5, 0.3, 0.2, 0.1])
    y = np.clip(X @ np.array([1.0, -0.5, 0.2, 0.0]) + 0.1 * rng0.normal(size=40), -1.9, 1.9)
    row = pub["chain"].transform(X_pub).mean(axis=0) + pub["x_bound"] * pub["V"][:, 0]
    D, D_prime = (X, y), (np.vstack([X, row]), np.append(y, 2.0))
    factor = BUG_FACTORS[bug]
    s_n, s_xx, s_xy = (pub["sigmas"][k] * factor for k in RELEASES)

    def release(data, rng, n):
        rows, yt = est.scaled_rows(data[0], data[1], pub, 2)
        G0 = rows.Z.T @ rows.Z
        b0 = rows.Z.T @ yt
        count = len(data[1]) + rng.normal(0.0, s_n, size=(n, 1))
        tri = upper_triangle(G0[None] + sample_symmetric_gaussian(s_xx, G0.shape[0], rng, n))
        cross = b0[None] + rng.normal(0.0, s_xy, size=(n, b0.size))
        out = [count, tri, cross]
        return np.hstack(out) if part == "all" else out[parts[part]]

    note = (f"count (sigma {s_n:.4g}), Z'Z upper triangle (sigma {s_xx:.4g}, sensitivity sqrt(3)/2) and Z'y~ "
            f"(sigma {s_xy:.4g}, sensitivity 1), one fit's releases, basic composition of the three shares")
    claim = (float(epsilon), float(delta)) if part == "all" else pub["budget"][RELEASES[parts[part]]]
    base = "strict_edpls_recommended" + ("" if part == "all" else f"_{part}")
    return AuditCase(case_name(base, bug), "edpls", "strict", float(claim[0]), float(claim[1]),
                     release, D, D_prime, "add one row at the public bounds (projection norm x_bound, y = y_high)",
                     expected_verdict("strict", bug), note, bug)
