"""edPLS audit cases: the noise call of the method (``edpls_case``) and the page's whole strict pipeline
(``pipeline_audit_case``, from ``pipeline``), for ``engine.privacy.audit.epsilon_lower_bound``.

``edpls_case`` audits the raw noisy release on a small fixed data set with worst-case neighbours
(everything after the noise call is post-processing); ``pipeline_audit_case`` runs exactly what the page
runs. The catalogue's planted bugs come from ``engine.privacy.audit.planted_bug`` (in production);
``pipeline_audit_case`` keeps its own bug switch.
"""
from __future__ import annotations

import numpy as np

from engine.methods.edpls.estimator import EDPLS
from engine.methods.edpls.pipeline import pipeline_audit_case
from engine.methods.edpls.recommended import make_strict_edpls
from engine.privacy.audit import AuditCase, expected_verdict, upper_triangle

__all__ = ["edpls_case", "pipeline_audit_case", "strict_edpls_case"]


def _edpls_data(n: int = 40, m: int = 3, seed: int = 7):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, m))
    X *= 0.8 / np.maximum(1.0, np.linalg.norm(X, axis=1, keepdims=True) / 2.0)
    y = X @ np.array([1.0, -0.5, 0.25])[:m] + 0.1 * rng.normal(size=n)
    y = np.clip(y, -1.5, 1.5)
    return X, y


def edpls_case(mode: str = "strict", epsilon: float = 1.0, delta: float = 1e-5, x_bound: float = 2.0,
               y_bound: float = 2.0) -> AuditCase:
    """edPLS (k = 1). Neighbours: add one row maximising |y| * ||x||.

    strict: the row x = x_bound e_1, y = y_bound (both at their public bounds, one non-zero
    channel): its change of the released numbers is exactly the calibrated sensitivity
    (``engine.methods.edpls.strict_sensitivity``, attained), so the bound can approach the claim;
    the audited output is the Analyze-Gauss release of Z'Z drawn by the fit's own release object
    (``_Prepared.strict_release``, the ``MomentsRelease`` that ``EDPLS.fit`` draws from) on the estimator's
    own clipped, scaled rows (``_Prepared``); the PLS model is post-processing.
    The page's whole pipeline is audited by ``engine.methods.edpls.pipeline_audit_case``.
    paper: the row x = 3 max_i ||x_i|| e_1, y = 3 max_i |y_i| (an outlier: the data-dependent
    bounds xmax * ymax grow with it); the audited output is the released noisy weight vector w
    of the first component (``EDPLS.sample_releases``: the fit's own draw, one release at the stated
    per-release epsilon). Planted bugs come from ``engine.privacy.audit.planted_bug``.
    """
    if mode not in ("strict", "paper"):
        raise ValueError("mode must be 'strict' or 'paper'")
    X, y = _edpls_data()
    row_x = np.zeros(X.shape[1])
    if mode == "strict":
        row_x[0] = x_bound
        row_y = y_bound
        params = dict(n_components=1, epsilon=epsilon, delta=delta, mode="strict", x_bound=x_bound,
                      y_bound=y_bound)
    else:
        row_x[0] = 3 * float(np.linalg.norm(X, axis=1).max())
        row_y = 3 * float(np.abs(y).max())
        params = dict(n_components=1, epsilon=epsilon, delta=delta, mode="paper")
    D = (X, y)
    D_prime = (np.vstack([X, row_x]), np.append(y, row_y))

    if mode == "strict":
        def release(data, rng, n):
            prep = EDPLS(**params)._prepare(*data)
            return upper_triangle(prep.strict_release(epsilon).randomise(prep._gram(), n, rng))
        note = ("Analyze-Gauss release of Z'Z (private centring column included), exact worst-case "
                "sensitivity (strict_sensitivity), drawn by the fit's strict_release")
    else:
        def release(data, rng, n):
            out = EDPLS(**params).sample_releases(*data, n, rng, keep_raw=True)
            return out["W_raw"][:, 0, :]
        note = "noisy w[1] released with sigma from the data-dependent bound xmax * ymax"
    return AuditCase(f"edpls_{mode}", "edpls", mode, float(epsilon), float(delta), release, D, D_prime,
                     "add one row maximising |y| * ||x||", expected_verdict(mode, None), note)


def _recommended_data(m: int):
    """400 smooth private spectra of m channels, y inside (-1.9, 1.9), and the worst-case added row.

    400 rows: the fit refines its declared range only when the count's lower bound n_hat - 2 sigma_n could pass
    the histogram's threshold (about 190 rows at epsilon = 1); with fewer it keeps the declared range and draws no
    histogram, so the audited releases (which include the histogram) would not be the fit's.

    The row is x = v / std(v), v the top right singular vector of V'M (V the data-independent spline basis,
    M the linear filter after SNV): SNV leaves it unchanged (zero mean: M kills constants, so v is orthogonal
    to them), so its projection has norm exactly the data-free bound sqrt(m) ||V'M||_2: z has norm 1, its cross
    change (y~ = 1) is the sensitivity 1 and its Z'Z change 0.80 of sqrt(3)/2 (u is not one-hot: no SNV row
    reaches one axis alone at the bound).
    """
    from engine.methods.edpls.basis import chain_operator
    from engine.methods.edpls.recommended import StrictEDPLS

    est = StrictEDPLS()
    pub = make_strict_edpls(1.0, 1e-5, y_range=(-2.0, 2.0)).public_setup(m)
    v = np.linalg.svd(pub["V"].T @ chain_operator(est.preprocessing, m))[2][0]
    rng0 = np.random.default_rng(11)
    X = np.cumsum(rng0.normal(size=(400, m)), axis=1)
    y = np.clip(rng0.uniform(-1.9, 1.9, size=400), -1.9, 1.9)
    return X, y, v / v.std()


def strict_edpls_case(mode: str = "strict", epsilon: float = 1.0, delta: float = 1e-5, part: str = "all") -> AuditCase:
    """The recommended strict edPLS (``StrictEDPLS``): all four noisy releases of one fit, audited jointly.

    The page's defaults (``make_strict_edpls`` with y_range (-2, 2) and no public spectra: chain "snv+sg1",
    the data-independent spline basis, whose dimension does not depend on the noisy count) at the fewest
    channels the fit accepts (``MIN_CHANNELS``). D: 400 private spectra; D' adds the row of ``_recommended_data``
    (projection at the public bound) with y = 2 (y~ = 1). The draws are ``StrictEDPLS.sample_releases``: the
    fit's own checks, public setup, release objects (``mechanisms``) and private sums (``moment_sums``,
    ``range_counts``), batched over trials. The audited output is (count, the private range's histogram in its
    two halves, the log grid's and the zoom's, on the bins where D and D' differ, upper triangle of Z'Z, Z'y~):
    the declared range is refined privately by default (``refine_y_range``), so the histogram is one of the
    fit's releases (the zoom's grid is the first half's output in a fit; here the declared range's, the same
    law over any public grid); the other bins' noise is
    independent of the row and carries no information. Everything after (the range, ridge, shrinkage) is
    post-processing. Planted bugs come from ``engine.privacy.audit.planted_bug``.

    ``part``: "all" audits the releases jointly against the whole (epsilon, delta) (their composition is loose
    there); "count", "range", "moments" or "cross" audits one release against its own (epsilon_i, delta_i),
    which is tight.
    """
    from engine.methods.edpls.recommended import MIN_CHANNELS, RELEASES
    from engine.privacy.ranges import RANGE_RELEASE, range_counts, zoom_counts

    if mode != "strict":
        raise ValueError("the recommended strict edPLS has one mode, 'strict'")
    names = {"count": RELEASES[0], "range": RANGE_RELEASE, "moments": RELEASES[1], "cross": RELEASES[2]}
    if part != "all" and part not in names:
        raise ValueError("part must be 'all', 'count', 'range', 'moments' or 'cross'")
    X, y, row = _recommended_data(MIN_CHANNELS)
    est = make_strict_edpls(float(epsilon), float(delta), y_range=(-2.0, 2.0))
    # the fit's calibration for a noisy count equal to D's (the same for D and D': one mechanism audited)
    cal = est.release_calibration(est.public_setup(MIN_CHANNELS), float(len(y)))
    budget, sigmas = cal["budget"], cal["sigmas"]
    ranged = RANGE_RELEASE in budget  # the declared range is refined (``refine_y_range``, the page's default)
    if part == "range" and not ranged:
        raise ValueError("this fit draws no range histogram: there is no range release to audit")
    D, D_prime = (X, y), (np.vstack([X, row]), np.append(y, 2.0))
    ones = np.ones(len(y))
    y_in, y_in_prime = est.range_input(y, ones), est.range_input(D_prime[1], np.append(ones, 1))
    bins = np.flatnonzero(range_counts(y_in) != range_counts(y_in_prime))
    # the zoom half over the declared range's grid, as ``sample_releases`` draws it
    zoom_bins = np.flatnonzero(zoom_counts(y_in, *est.y_range) != zoom_counts(y_in_prime, *est.y_range))

    def release(data, rng, n):
        out = est.sample_releases(*data, n, rng, range_bins=bins, zoom_bins=zoom_bins, n_calibration=len(y))
        histogram = None if "range" not in out else np.hstack([out["range"], out.get("zoom", out["range"][:, :0])])
        drawn = {"count": out["count"][:, None], "range": histogram,
                 "moments": upper_triangle(out["moments"]), "cross": out["cross"]}
        if part != "all":
            return drawn[part]
        return np.hstack([v for v in drawn.values() if v is not None])

    s_n, s_xx, s_xy = (sigmas[names[k]] for k in ("count", "moments", "cross"))
    histogram = (f"the private range's histogram in two halves (sigma {sigmas[RANGE_RELEASE] * 2 ** 0.5:.4g} each, "
                 f"together sigma {sigmas[RANGE_RELEASE]:.4g}): the log grid on the {bins.size} bin(s) the row changes "
                 f"and the zoom over the declared range on {zoom_bins.size} (sensitivity 1 each, attained)"
                 if ranged else
                 "no range histogram (the fit keeps its declared range at this epsilon and count)")
    note = (f"StrictEDPLS.sample_releases at the page's defaults ({MIN_CHANNELS} channels, spline basis, calibrated "
            f"for a count of {len(y)}): count (sigma {s_n:.4g}), {histogram}, Z'Z upper triangle (sigma "
            f"{s_xx:.4g}, sensitivity sqrt(3)/2, change 0.80) and Z'y~ (sigma {s_xy:.4g}, sensitivity 1, attained), "
            "one fit's releases")
    claim = (float(epsilon), float(delta)) if part == "all" else budget[names[part]]
    base = "strict_edpls_recommended" + ("" if part == "all" else f"_{part}")
    return AuditCase(base, "edpls", "strict", float(claim[0]), float(claim[1]), release, D, D_prime,
                     "add one row at the public bound (projection norm x_bound, y = y_high)",
                     expected_verdict("strict", None), note)
