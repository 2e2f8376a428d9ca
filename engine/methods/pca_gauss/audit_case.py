"""PCA-Gauss's privacy audit cases (issue #17: audit cases live with their methods).

:func:`pca_gauss_case` is the Lap-PCA covariance release with its worst-case replace-one neighbours (the
catalogue case of :mod:`engine.privacy.audit`); :func:`pipeline_audit_case` is the end-to-end audit of the
page's strict release (the real :class:`PCAGauss` fit, every Laplace release captured with its own noise call).
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from engine.privacy.audit import AuditCase, expected_verdict, planted

from .estimator import PCAGauss

__all__ = ["LAP_PCA_RELEASE", "pca_gauss_case", "pipeline_audit_case"]

#: The ledger name of the Lap-PCA covariance release (``PCAGauss._projection``).
LAP_PCA_RELEASE = "Lap-PCA covariance"


def pca_gauss_case(mode: str = "strict", epsilon: float = 1.0, M: int = 2, N: int = 50, *,
                   delta: float | None = None) -> AuditCase:
    """PCA-Gauss's Lap-PCA covariance release S = X'X/N + Laplace (replace-one, entries in [-1, 1]).

    ``delta`` is accepted for the registry's uniform call ``(mode, epsilon, delta)`` and ignored: the Laplace
    release is pure epsilon-DP (the case's delta is 0).

    Worst case (Prop. 3): D's last row is all ones, D' replaces it by alternating signs, which
    changes half of the M^2 entries by 2/N (L1 change M^2/N). The release is the shipped one: a real
    ``PCAGauss(pca_source="laplace", bounds=(-1, 1))`` fit on each data set captures the Lap-PCA query value and
    its ``LaplaceMechanism`` (the fit's own noise call, ``_noisy``), and every trial draws that mechanism's
    ``randomise`` (batched). The fit's budget is epsilon / alpha, so that the Lap-PCA release (the share alpha)
    claims ``epsilon``, read off the fit's ledger. strict: scale M^2/(N eps) (rule "M2"); paper: the printed scale
    M/(N eps) (rule "M", under-noised by M) on rows centred and scaled with the private data (paper mode), so
    D and D' also move the query through the scaling. Planted bugs come from ``engine.privacy.audit.planted_bug``.
    """
    if mode not in ("strict", "paper"):
        raise ValueError("mode must be 'strict' or 'paper'")
    rng0 = np.random.default_rng(5)
    X = rng0.uniform(-1, 1, size=(N, M))
    XD, XDp = X.copy(), X.copy()
    XD[-1] = 1.0
    XDp[-1] = np.where(np.arange(M) % 2 == 0, 1.0, -1.0)
    # the fit's budget such that its Lap-PCA release gets epsilon (the share alpha of it: the claim audited here)
    alpha = PCAGauss().alpha
    params = dict(n_components=min(2, M), epsilon=float(epsilon) / alpha, mode=mode, pca_source="laplace",
                  bounds=(-1.0, 1.0), alpha=alpha)

    def capture(data):
        est = PCAGauss(**params)
        est._capture = []
        est.fit(data)
        (value, mech), = [(v, m) for name, v, m in est._capture if name == LAP_PCA_RELEASE]
        record, = [r for r in est.privacy_ledger_.entries if r.name == LAP_PCA_RELEASE]
        return value, mech, record

    captured = {id(XD): capture(XD), id(XDp): capture(XDp)}
    _value, mech, record = captured[id(XD)]
    claim = record.epsilon if record.claimed_epsilon is None else record.claimed_epsilon

    def release(data, rng, n):
        value, mech, _ = captured[id(data)]
        return mech.randomise(np.broadcast_to(value, (n, *value.shape)), rng).reshape(n, -1)

    case = AuditCase(f"pca_gauss_{mode}", "pca_gauss", mode, float(claim), 0.0, release, XD, XDp,
                     "replace one row (all ones -> alternating signs)", expected_verdict(mode, None),
                     f"Lap-PCA covariance of a PCAGauss fit ({mode}), the fit's LaplaceMechanism: "
                     f"b = {mech.scale:.4g}, sensitivity {mech.sensitivity:.4g}, claimed epsilon {claim:.4g}")
    case.fit_params = params  # the PCAGauss parameters of the audited fit (tests rebuild its query values)
    return case


def pipeline_audit_case(task: str = "unsupervised", *, pca_source: str = "public", epsilon: float = 1.0,
                        bug: str | None = None, n_features: int | None = None, n_rows: int = 40,
                        bounds=(0.0, 16.0), mean_share: float = 0.1):
    """The page's strict release, exactly as the page builds it, with worst-case replace-one neighbours.

    The release function runs the real :class:`PCAGauss` fit (strict mode, declared public ``bounds``,
    centring on their midpoint, clipping to the box, the projection, the query) once per data set and
    captures every Laplace release's exact query value and its ``LaplaceMechanism``; each trial then
    draws the mechanism's own noise call (vectorised over trials) on those values and returns the
    concatenation of all releases of the fit (everything else the fit computes is post-processing).
    Raw rows live in [lo, hi]^M (digits-like: [0, 16]^64); u = all ones and v = alternating signs are
    orthogonal corners of the box (in box units).

    task="unsupervised", pca_source="public" (the page's default: digits, Pub-PCA, k = 2): the public rows
        spread along r1 = cos t u + sin t v and r2 = -sin t u + cos t v (t = 22.5 degrees, u and v normed),
        so W = [r1, r2]; D's last row lies beyond the corner u (clipped to it), D''s beyond the corner v.
        The projected record moves from (cos t, -sin t) to (sin t, cos t): the mean changes by 1.85/N of its
        2 sqrt(2)/N and the second moment by 2 sqrt(2)/N of its 4/N (the largest change two unit vectors in
        the plane can make; the bound min(k^2, 2k) is not attained).
    task="unsupervised", pca_source="nonprivate" (Algorithm 1, k = 2): k_rows rows at u, j rows at v, the
        rest at the centre; D's last row beyond u, D''s beyond v. The top-2 eigenvalues of X'X/(MN) move by
        1/N each: an L1 change of 2/N, exactly the release's sensitivity min(k, 2)/N.
    task="classification" (Algorithm 3, Pub-PCA with k = 1 on a public set along u, labels {0, 1} declared):
        D's last row is the corner u in class 0, D''s the corner -u in class 1: the class counts, sums and
        second moments change by 2, 2 and 2, each its sensitivity (k = 1 makes every bound tight).

    bug: None, "noise_halved" or "sensitivity_halved" (planted: the auditor must catch it).

    Returns
    -------
    engine.privacy.audit.AuditCase (claim: the fit's total ε from its ledger, δ = 0); ``case.fit_params``
    holds the audited fit's ``PCAGauss`` parameters.
    """
    if bug not in (None, "noise_halved", "sensitivity_halved"):
        raise ValueError(f"bug must be None, 'noise_halved' or 'sensitivity_halved', got {bug!r}")
    lo, hi = (float(b) for b in bounds)
    c, half = (lo + hi) / 2.0, (hi - lo) / 2.0
    N = int(n_rows)
    rng0 = np.random.default_rng(11)
    if task == "unsupervised":
        P = 2
        M = 64 if n_features is None else int(n_features)
        if M % 2:
            raise ValueError("the worst cases need an even number of features (orthogonal corners u and v)")
        u, v = np.ones(M), np.where(np.arange(M) % 2 == 0, 1.0, -1.0)
        if pca_source == "nonprivate":
            k_rows, j_rows = N // 2, N // 4
            base = np.full((N, M), c)
            base[:k_rows] = c + half * u
            base[k_rows:k_rows + j_rows] = c + half * v
            X_pub = None
            what = ("Algorithm 1: replace one row beyond the corner u (clipped to u) by one beyond the orthogonal "
                    "corner v: the top-2 eigenvalues move by 1/N each")
        elif pca_source == "public":
            t = math.pi / 8
            r1 = (math.cos(t) * u + math.sin(t) * v) / math.sqrt(M)
            r2 = (-math.sin(t) * u + math.cos(t) * v) / math.sqrt(M)
            g = rng0.standard_normal((100, 2)) * np.array([0.5, 0.25]) * math.sqrt(M) / 2
            X_pub = c + half * np.clip(g[:, :1] * r1 + g[:, 1:] * r2, -1, 1)
            base = np.clip(c + half * rng0.uniform(-0.5, 0.5, size=(N, M)), lo, hi)
            what = ("Pub-PCA (k = 2): replace one row beyond the corner u by one beyond the corner v; W is rotated "
                    "by 22.5 degrees against them, so the mean and second moment move as much as two unit "
                    "vectors can make them")
        else:
            raise ValueError("pca_source must be 'public' (the page's default) or 'nonprivate' (Algorithm 1)")
        D, Dp = base.copy(), base.copy()
        D[-1], Dp[-1] = c + 1.5 * half * u, c + 3.0 * half * v  # outside the box: the fit clips them
        data: dict[str, tuple[np.ndarray, np.ndarray | None, np.ndarray | None]] = {
            "D": (D, None, X_pub), "D'": (Dp, None, X_pub)}
        kw: dict[str, Any] = dict(task="unsupervised", pca_source=pca_source)
    elif task == "classification":
        P = 1
        M = 8 if n_features is None else int(n_features)
        u = np.ones(M)
        X_pub = c + half * np.outer(rng0.uniform(-1, 1, 30), u) * 0.9 + 1e-3 * half * rng0.normal(size=(30, M))
        X = np.clip(c + half * rng0.uniform(-1, 1, size=(N, M)), lo, hi)
        y = np.arange(N) % 2
        D, Dp = X.copy(), X.copy()
        yD, yDp = y.copy(), y.copy()
        D[-1], yD[-1] = c + half * u, 0
        Dp[-1], yDp[-1] = c - half * u, 1
        data = {"D": (D, yD, X_pub), "D'": (Dp, yDp, X_pub)}
        kw = dict(task="classification", pca_source="public", labels=(0, 1))
        what = "replace one row at the corner u in class 0 by one at -u in class 1 (k = 1: every bound tight)"
    else:
        raise ValueError("task must be 'unsupervised' or 'classification'")
    params = dict(n_components=P, epsilon=float(epsilon), mode="strict", bounds=(lo, hi), mean_share=mean_share, **kw)

    def capture(key):
        X, y, X_pub = data[key]
        est = PCAGauss(**params)
        est._capture = []
        est.fit(X, y, X_public=X_pub)
        return est._capture, est.privacy_ledger_

    captured = {key: capture(key)[0] for key in data}
    claim = capture("D")[1].total("basic")[0]
    if set(n for n, _, _ in captured["D"]) != set(n for n, _, _ in captured["D'"]):
        raise AssertionError("the two neighbours made different releases")
    def release(key, rng, n):
        parts = []
        with planted(bug):  # planted bugs: in production (engine.privacy.audit.planted_bug)
            for _, value, mech in captured[key]:
                exact = np.broadcast_to(value, (n, *value.shape))
                parts.append(mech.randomise(exact, rng).reshape(n, -1))  # the fit's own noise call, n trials at once
        return np.concatenate(parts, axis=1)

    name = f"pca_gauss_pipeline_{task}_{kw['pca_source']}" + (f"_bug_{bug}" if bug else "")
    scales = "; ".join(f"{n}: b = {m.scale:.4g}" for n, _, m in captured["D"])
    case = AuditCase(name, "pca_gauss", "strict", float(claim), 0.0, release, "D", "D'", what,
                     "violated" if bug else "holds", f"page pipeline ({task}, k = {P}, M = {M}, N = {N}); {scales}",
                     bug)
    case.fit_params = params  # the PCAGauss parameters of the audited fit (tests compare them with the page's)
    return case
