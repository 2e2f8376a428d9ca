"""DP-CCA privacy audits: the cases ``engine.privacy.audit`` runs, kept with the method they audit.

End-to-end audit: ``pipeline_audit_case`` runs the page's default strict pipeline (its data,
split, bounds, private centring and calibration) through ``engine.privacy.audit`` with the
neighbours that attain the sensitivity (``worst_case_rows``).


``dp_cca_case`` is a copy of ``engine.privacy.audit.dp_cca_case`` (same data, neighbours and release),
so that the audit module can stop importing the method (issue #17: ``engine.privacy`` imports nothing
above it).
"""
from __future__ import annotations

import numpy as np

from engine.data.samples import make_two_views
from engine.methods.dp_cca.core import _row_norms
from engine.methods.dp_cca.estimator import DPCCA, resolve_calibration
from engine.methods.dp_cca.evaluation import PAGE_DEFAULTS, default_bound, split_rows
from engine.methods.dp_cca.sensitivity import _WORST_INNER, worst_case_rows
from engine.privacy.audit import AuditCase, case_name, check_bug, expected_verdict, planted, upper_triangle

__all__ = ["AUDIT_CONFIGS", "dp_cca_case", "pipeline_audit_case", "pipeline_audit_params"]

#: Configurations of the end-to-end audit.
AUDIT_CONFIGS = ("default", "classic", "tight")


def _audit_data(config: str):
    if config == "tight":  # two columns per view (the least that attains the bound), rows inside the unit bounds
        rng = np.random.default_rng(17)
        latent = rng.normal(size=(60, 1))
        X = np.hstack([latent, rng.normal(size=(60, 1))]) + 0.3 * rng.normal(size=(60, 2))
        Y = np.hstack([latent, rng.normal(size=(60, 1))]) + 0.3 * rng.normal(size=(60, 2))
        return X / (1.5 * _row_norms(X).max()), Y / (1.5 * _row_norms(Y).max())
    d = PAGE_DEFAULTS
    tv = make_two_views(n_samples=d["n_rows"], random_state=d["data_seed"])
    train, _ = split_rows(d["n_rows"], d["test_fraction"], d["split_seed"])
    return tv.X[train], tv.Y[train]


def pipeline_audit_params(config: str = "default", epsilon: float = 1.0, delta: float = 1e-5) -> dict:
    """The DPCCA parameters of an audit configuration (the page's ``params`` dict for "default").

    "default": the page at its defaults (synthetic views 10 + 8 columns, K = 3, per-view bounds
    ``default_bound``, private centring, analytic calibration, lambda auto). "classic": the same with the
    page's other calibration choice ("auto": classic for eps <= 1, conservative). "tight": two columns per
    view, unit bounds, private centring, analytic calibration (sensitivity sqrt(32/27) attained, the
    release's true epsilon equals the claim).
    """
    if config not in AUDIT_CONFIGS:
        raise ValueError(f"config must be one of {AUDIT_CONFIGS}, got {config!r}")
    if config == "tight":
        return {"n_components": 1, "epsilon": float(epsilon), "delta": float(delta), "mode": "strict",
                "calibration": "analytic", "regularization": "auto", "x_bound": 1.0, "y_bound": 1.0}
    d = PAGE_DEFAULTS
    return {"n_components": d["n_components"], "epsilon": float(epsilon), "delta": float(delta), "mode": "strict",
            "calibration": "auto" if config == "classic" else d["calibration"], "regularization": d["regularization"],
            "x_bound": default_bound(10), "y_bound": default_bound(8)}


def pipeline_audit_case(config: str = "default", epsilon: float = 1.0, delta: float = 1e-5, *,
                        bug: str | None = None):
    """The page's strict pipeline as an ``engine.privacy.audit.AuditCase`` with worst-case neighbours.

    Parameters
    ----------
    config : "default", "classic" or "tight" (``pipeline_audit_params``).
    epsilon, delta : the claim.
    bug : None, "noise_halved" or "sensitivity_halved" (planted: the same release with half the noise).

    Returns
    -------
    AuditCase. D = the configuration's training rows with the last row replaced by the first row of
    ``worst_case_rows``, D' = the same with the second (replace-one). The release is the estimator's
    own path: ``DPCCA._prepare`` (clipping, scaling, the private-centring column), ``_noise`` (the
    calibrated sigma for ``release_sensitivity``) and ``_draw`` (the noise); the audited output is the
    released upper triangle of Z'Z / N restricted to the coordinates the worst rows touch (x_1, x_2,
    y_1, y_2 and the constant column): every other released number has the same distribution on D and
    D' and independent noise, so dropping it is post-processing and loses no evidence.
    """
    check_bug(bug)
    params = pipeline_audit_params(config, epsilon, delta)
    X, Y = _audit_data(config)
    dx, dy = X.shape[1], Y.shape[1]
    (x, y), (xt, yt) = worst_case_rows(params, dx, dy)
    XD, YD, XDp, YDp = X.copy(), Y.copy(), X.copy(), Y.copy()
    XD[-1], YD[-1], XDp[-1], YDp[-1] = x, y, xt, yt
    keep = np.array([0, 1, dx, dx + 1, dx + dy])  # the coordinates the worst rows touch (+ the constant)
    est = DPCCA(**params)
    sigma = est._noise(X.shape[0])["sigma"]

    def release(data, rng, n):
        prep = est._prepare(*data)
        noise = est._noise(prep.n)
        G0 = prep.gram()
        out = []
        for start in range(0, n, 5000):
            with planted(bug):  # planted in production (engine.privacy.audit.planted_bug)
                G = est._draw(prep, noise, min(5000, n - start), rng, G0)
            out.append(upper_triangle(G[:, keep][:, :, keep] / prep.n))
        return np.concatenate(out)

    sens = est._sensitivity()
    return AuditCase(
        case_name(f"dp_cca_pipeline_{config}", bug), "dp_cca", "strict", float(epsilon), float(delta), release,
        (XD, YD), (XDp, YDp),
        f"replace one row by another, both on the public bounds with inner product "
        f"{_WORST_INNER[('per_view', 'private')]:.4g} per view (the rows that attain the sensitivity {sens:.6g})",
        expected_verdict("strict", bug),
        f"page pipeline ({config}): per-view bounds {params['x_bound']:g}, {params['y_bound']:g}, private centring, "
        f"{resolve_calibration(params['calibration'], epsilon)} calibration, sigma = {sigma:.4g} on Z'Z", bug)


# ---------------------------------------------------------------------------- the generic DP-CCA case
def _two_views(n: int = 60, seed: int = 11):
    rng = np.random.default_rng(seed)
    latent = rng.normal(size=(n, 1))
    X = np.hstack([latent, rng.normal(size=(n, 1))]) + 0.3 * rng.normal(size=(n, 2))
    Y = np.hstack([latent, rng.normal(size=(n, 1))]) + 0.3 * rng.normal(size=(n, 2))
    Z = np.hstack([X, Y])
    Z /= 1.2 * np.linalg.norm(Z, axis=1).max()
    return Z[:, :2], Z[:, 2:]


def dp_cca_case(mode: str = "strict", epsilon: float = 1.0, delta: float = 1e-5, neighbour: str = "axis") -> AuditCase:
    """DP-CCA (replace-one neighbours, public N).

    strict: public centre 0 and joint row bound 1; D's last row is a unit row z, D' replaces it
    by a unit row w orthogonal to it (||zz' - ww'||_F = sqrt(2), the sensitivity bound).
    ``neighbour="singular"`` takes z, w along the top two singular vectors of the joint rows (the
    issue's choice); ``"axis"`` (default) takes two coordinate axes. The released numbers are the
    upper triangle of Z'Z (the noise is symmetric), whose change is
    sqrt((2 + sum_i (z_i^2 - w_i^2)^2) / 2): sqrt(2) only for axis-aligned rows, so "axis" is the
    true worst case and "singular" gives a weaker audit. paper: D' replaces the last row by an
    outlier 5 times the largest row along the second singular vector; the data-dependent
    centring and scaling then move every row. Audited output: the method's noisy moment matrix
    C_hat = (Z'Z + E) / N (``DPCCA``'s own preparation and noise call, ``_draw``, as its ``fit`` makes it; CCA is
    post-processing). Planted bugs come from ``engine.privacy.audit.planted_bug``.
    """
    if mode not in ("strict", "paper"):
        raise ValueError("mode must be 'strict' or 'paper'")
    if neighbour not in ("axis", "singular"):
        raise ValueError("neighbour must be 'axis' or 'singular'")
    X, Y = _two_views()
    Z = np.hstack([X, Y])
    _, _, Vt = np.linalg.svd(Z, full_matrices=False)
    dx = X.shape[1]
    if mode == "strict":
        z, w = (Vt[0], Vt[1]) if neighbour == "singular" else np.eye(Z.shape[1])[:2]
        params = dict(n_components=1, epsilon=epsilon, delta=delta, mode="strict", row_bound=1.0,
                      x_center=np.zeros(dx), y_center=np.zeros(Y.shape[1]), calibration="auto")
        what = ("replace one unit row along the top singular vector by one along the second" if neighbour == "singular"
                else "replace one unit row along axis 1 by one along axis 2")
    else:
        z = Z[-1]
        w = 5 * float(np.linalg.norm(Z, axis=1).max()) * Vt[1]
        params = dict(n_components=1, epsilon=epsilon, delta=delta, mode="paper", calibration="auto")
        what = "replace one row by an outlier (5x the largest row norm)"
    ZD, ZDp = Z.copy(), Z.copy()
    ZD[-1], ZDp[-1] = z, w
    D, D_prime = (ZD[:, :dx], ZD[:, dx:]), (ZDp[:, :dx], ZDp[:, dx:])

    def release(data, rng, n):
        est = DPCCA(**params)
        prep = est._prepare(*data)
        G = est._draw(prep, est._noise(prep.n), n, rng, prep.gram())
        return upper_triangle(G / prep.n)

    note = "Analyze-Gauss on C = Z'Z / N, sensitivity sqrt(2)/N"
    return AuditCase(f"dp_cca_{mode}", "dp_cca", mode, float(epsilon), float(delta), release, D,
                     D_prime, what, expected_verdict(mode, None), note)

