"""The edPLS page's pipeline in the engine, and its end-to-end privacy audit (issue #15, item 7).

The page (``pages/edpls.py``) builds a strict fit from: a data table, a response column, a train/test
split (its own fixed split seed: a split is not a release), a preprocessing chain fitted on the training
rows, public bounds and EDPLS's private centring. The helpers below are that pipeline, used by the page
*and* by :func:`pipeline_audit_case`, so the audit runs exactly what the page runs:

- :data:`PAGE_DEFAULTS`: the page's defaults (sample set, split, chain, budget);
- :func:`page_problem`: response and channel columns, X, y and the split;
- :func:`preprocess`: the chain fitted on the training rows and applied to all rows;
- :func:`default_x_bound` / :func:`sample_y_bound`: the default public bounds (sqrt(m): channels in
  [-1, 1] by assumption about the instrument; a power of ten above a *public sample set's* |y|);
- :func:`strict_params`: the EDPLS parameters of a strict fit, with the chain's ledger caveat;
- :data:`STRICT_ESTIMATORS`, :func:`sample_y_range`, :func:`public_spectra`: the page's strict estimators
  (the recommended ``make_strict_edpls`` of issue #18 is the default; its fit beside the references is
  ``recommended_evaluation``), the default public range of y on a public sample set, and the public spectra table.

:func:`pipeline_audit_case` puts that pipeline through :func:`engine.privacy.audit.epsilon_lower_bound`
with worst-case neighbours: one added row at the bounds with a single non-zero channel (clipped onto
x = x_bound e_1, y = y_bound), which changes the released numbers by exactly the calibrated
sensitivity (``strict_sensitivity``: the bound is attained), so a correct release can only approach
its claim and a planted bug (noise halved) exceeds it.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from engine.data.catalog import SAMPLE_SETS
from engine.data.io import load_table
from engine.data.preprocess import make_chain
from engine.data.split import train_test_indices
from engine.methods.edpls.estimator import EDPLS
from engine.methods.edpls.sweeps import chain_caveat
from engine.privacy.audit import AuditCase, case_name, check_bug, expected_verdict, planted

__all__ = ["PAGE_DEFAULTS", "STRICT_ESTIMATORS", "PageProblem", "default_x_bound", "page_problem",
           "pipeline_audit_case", "preprocess", "public_spectra", "sample_y_bound", "sample_y_range", "strict_params"]

#: The page's defaults (the budget ones equal ``ui.state.DEFAULTS``; a test checks it).
PAGE_DEFAULTS: dict[str, Any] = {
    "sample_set": "nir", "test_fraction": 0.3, "split": "random", "split_seed": 0, "chain": "none",
    "max_components": 5, "epsilon": 1.0, "delta": 1e-5, "calibration": "analytic",
    "strict_estimator": "recommended",
}
#: The strict estimators the page offers: the recommended one (issue #18) and the plain Analyze-Gauss EDPLS.
STRICT_ESTIMATORS = ("recommended", "plain")


@dataclass
class PageProblem:
    """What the page fits: channel names, X (n, m), y (n,), train and test row indices."""

    channels: list
    X: np.ndarray
    y: np.ndarray
    train: np.ndarray
    test: np.ndarray


def page_problem(df, response: str, response_columns=(), *, split: str = "random", test_fraction: float = 0.3,
                 split_seed: int = 0, x_columns=None) -> PageProblem:
    """The page's response, channels and split. Channels: ``x_columns`` when given (the user's choice, in that
    order; never the response), else every other numeric column but the declared responses.

    The split seed is a data-split seed, not a noise seed (a split is not a release).
    """
    numeric = [c for c in df.columns if pd.api.types.is_numeric_dtype(df[c])]  # text columns may be StringDtype
    if x_columns is not None:
        bad = [str(c) for c in x_columns if c not in numeric or c == response]
        if bad:
            raise ValueError(f"X columns {', '.join(bad[:5])} are not numeric columns other than the response")
        channels = list(x_columns)
    else:
        excluded = set(response_columns) | {response}
        channels = [c for c in numeric if c not in excluded]
    X = df[channels].to_numpy(dtype=float)
    y = df[response].to_numpy(dtype=float)
    tr, te = train_test_indices(len(y), test_fraction, how=split, random_state=split_seed)
    return PageProblem(channels, X, y, tr, te)


def preprocess(X: np.ndarray, chain: str, train_idx) -> np.ndarray:
    """The chain of ``engine.data.preprocess.make_chain`` fitted on the training rows, applied to all rows."""
    pipe = make_chain(chain)
    pipe.fit(X[train_idx])
    return pipe.transform(X)


def default_x_bound(n_channels: int) -> float:
    """sqrt(m): every channel assumed in [-1, 1] (absorbance units), an assumption about the instrument."""
    return float(math.sqrt(int(n_channels)))


def sample_y_bound(y_public) -> float:
    """The power of ten above max |y| of a *public* sample set (never call it on private rows)."""
    return float(10.0 ** math.ceil(math.log10(float(np.max(np.abs(y_public))) + 1e-12)))


def sample_y_range(y_public) -> tuple[float, float]:
    """The default public range of y for a *public* sample set: [0, b] when every value is >= 0 (a
    content, e.g. % w/w), else [-b, b], with b = :func:`sample_y_bound` (never call it on private rows)."""
    b = sample_y_bound(y_public)
    return (0.0, b) if float(np.min(y_public)) >= 0 else (-b, b)


def strict_params(*, n_components: int, epsilon: float, delta: float, calibration: str, x_bound: float,
                  y_bound: float, chain: str = "none", x_center=None, y_center=None) -> dict:
    """EDPLS parameters of the page's strict fit; a chain fitted on the private rows adds its caveat."""
    why = chain_caveat(chain)
    params = dict(n_components=int(n_components), epsilon=float(epsilon), delta=float(delta), mode="strict",
                  calibration=calibration, noise_std="sigma", x_bound=float(x_bound), y_bound=float(y_bound))
    if x_center is not None:
        params.update(x_center=x_center, y_center=float(y_center))
    if why:
        params["caveats"] = (why,)
    return params


def public_spectra(df, channels) -> np.ndarray:
    """X_public (n_public, m) from a table the user declares public: the page's channel columns, by name.

    Raises ValueError naming the missing or non-numeric channels (never a silent reordering)."""
    names = [str(c) for c in df.columns]
    by_name = dict(zip(names, df.columns, strict=False))
    missing = [str(c) for c in channels if str(c) not in by_name]
    if missing:
        shown = ", ".join(missing[:5]) + (f" and {len(missing) - 5} more" if len(missing) > 5 else "")
        raise ValueError(f"the public spectra lack {len(missing)} of the {len(channels)} channels of the private "
                         f"data ({shown})")
    cols = [by_name[str(c)] for c in channels]
    bad = [str(c) for c in cols if not pd.api.types.is_numeric_dtype(df[c])]
    if bad:
        raise ValueError(f"the public spectra's channel column(s) {', '.join(bad[:5])} are not numeric")
    X = df[cols].to_numpy(dtype=float)
    if not np.isfinite(X).all():
        raise ValueError("the public spectra contain missing or infinite values")
    if X.shape[0] < 2:
        raise ValueError("the public spectra need at least two rows")
    return X


def upper_triangle(G: np.ndarray) -> np.ndarray:
    iu = np.triu_indices(G.shape[-1])
    return G[..., iu[0], iu[1]]


def pipeline_audit_case(config: str = "page_default", epsilon: float | None = None, delta: float | None = None,
                        bug: str | None = None, *, data=None, y_bound: float | None = None, channel: int = 0):
    """The page's strict pipeline as an :class:`engine.privacy.audit.AuditCase` with worst-case neighbours.

    Parameters
    ----------
    config : "page_default" (the page at its defaults: the NIR sample set, its first response, a random
        30 % test split with the page's split seed, chain "none" fitted on the training rows, x_bound =
        sqrt(m), y_bound = the power of ten above the public sample's |y|, private centring) or
        "public_centre" (the same with a declared public centre x_center = 0, y_center = 0).
    epsilon, delta : the claim (default: the page's defaults).
    bug : None, "noise_halved" or "sensitivity_halved" (planted: sigma for half the noise / half Delta).
    data : optional ``(df, response, response_columns)`` instead of the sample set (then give ``y_bound``).
    y_bound : the public bound on |y| (default: the page's default for the public sample set).
    channel : the channel j of the added row.

    Returns
    -------
    AuditCase. D = the pipeline's training rows; D' = D plus one row x = x_center + 10 x_bound e_j,
    y = y_center + 10 y_bound (raw units, before the pipeline): preprocessing, clipping and scaling
    put it at x_bound e_j, y_bound, the row whose change of the released numbers is exactly the
    calibrated sensitivity. The audited output is the noisy release on the coordinates that change
    (the entries of Z'Z among channel j, y and the constant column): the other coordinates have the
    same distribution on D and D' and independent noise, so dropping them (post-processing) loses
    nothing. The clean Gram matrix and sigma come from the estimator's own state (``EDPLS._prepare``,
    ``_Prepared._gram``) and the noise from the fit's own release object (``_Prepared.strict_release``),
    batched over trials; planted bugs come from ``engine.privacy.audit.planted``.
    """
    check_bug(bug)
    if config not in ("page_default", "public_centre"):
        raise ValueError("config must be 'page_default' or 'public_centre'")
    eps = float(PAGE_DEFAULTS["epsilon"] if epsilon is None else epsilon)
    dlt = float(PAGE_DEFAULTS["delta"] if delta is None else delta)
    if data is None:
        sample = SAMPLE_SETS[PAGE_DEFAULTS["sample_set"]]
        df, response, responses = load_table(sample.path), sample.response_columns[0], sample.response_columns
        public_sample = True
    else:
        df, response, responses = data
        public_sample = False
    prob = page_problem(df, response, responses, split=PAGE_DEFAULTS["split"],
                        test_fraction=PAGE_DEFAULTS["test_fraction"], split_seed=PAGE_DEFAULTS["split_seed"])
    m = len(prob.channels)
    x_bound = default_x_bound(m)
    if y_bound is None:
        if not public_sample:
            raise ValueError("give the public y_bound: a bound is never read off data that are not public")
        y_bound = sample_y_bound(prob.y)
    centre: dict[str, Any] = dict(x_center=np.zeros(m), y_center=0.0) if config == "public_centre" else {}
    chain = PAGE_DEFAULTS["chain"]
    k = min(PAGE_DEFAULTS["max_components"], m, len(prob.train) - 3)
    params = strict_params(n_components=k, epsilon=eps, delta=dlt, calibration=PAGE_DEFAULTS["calibration"],
                           x_bound=x_bound, y_bound=y_bound, chain=chain, **centre)
    X_raw, y_raw = prob.X[prob.train], prob.y[prob.train]
    row_x = np.zeros(m) if not centre else np.array(centre["x_center"], dtype=float)
    row_x[channel] += 10 * x_bound
    row_y = (centre.get("y_center", 0.0)) + 10 * y_bound
    D = (X_raw, y_raw)
    D_prime = (np.vstack([X_raw, row_x]), np.append(y_raw, row_y))

    def state(data_):
        Xr, yr = data_
        Xp = preprocess(Xr, chain, np.arange(len(yr)))  # the chain is fitted on the (training) rows given
        prep = EDPLS(**params)._prepare(Xp, yr)
        return prep, prep._gram()

    (prep_D, G_D), (_, G_Dp) = state(D), state(D_prime)
    diff = np.abs(G_Dp - G_D)
    idx = np.nonzero(diff.max(axis=0) > 1e-12 * max(1.0, float(np.abs(G_D).max())))[0]
    change = float(np.linalg.norm(upper_triangle(G_Dp - G_D)))
    sens = prep_D.strict.sensitivity
    moments = prep_D.strict_release(eps)  # the fit's own release object
    sigma = float(moments.sigma)
    clean = {id(D): G_D[np.ix_(idx, idx)], id(D_prime): G_Dp[np.ix_(idx, idx)]}

    def release(data_, rng, n):
        G0 = clean[id(data_)] if id(data_) in clean else state(data_)[1][np.ix_(idx, idx)]
        with planted(bug):  # a planted bug is planted in production (engine.privacy.audit.planted_bug)
            return upper_triangle(moments.randomise(G0, n, rng))

    note = (f"{config}: strict pipeline as the page builds it (chain {chain!r}, x_bound = {x_bound:.4g}, "
            f"y_bound = {y_bound:.4g}, {'public centre' if centre else 'private centring'}); calibrated "
            f"sensitivity {sens:.6f}, change of the released numbers {change:.6f}; "
            f"{upper_triangle(np.zeros((idx.size, idx.size))).size} coordinates audited, sigma = {sigma:.4g}")
    return AuditCase(case_name(f"edpls_pipeline_{config}", bug), "edpls", "strict", eps, dlt, release, D, D_prime,
                     f"add one row at the bounds on channel {channel} (x = x_bound e_j, y = y_bound after the "
                     "pipeline's clipping)", expected_verdict("strict", bug), note, bug)
