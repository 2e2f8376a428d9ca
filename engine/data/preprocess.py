"""Spectral preprocessing chains (chemotools + scikit-learn), fitted on training rows only.

Every step is a chemotools transformer (SNV, MSC, Savitzky-Golay smoothing and derivatives,
airPLS and polynomial baselines) or sklearn's ``StandardScaler`` (mean-centring, autoscaling);
no transform is written here beyond the two adaptations below. ``make_chain`` returns an unfitted sklearn
``Pipeline`` so that it is fitted on the training rows only (``fit``/``fit_transform`` on train, ``transform`` on test).

One adaptation of chemotools (0.5) is needed for the edPLS paper's airPLS settings
(lambda = 100, 15 iterations, *first*-order difference penalty, output = spectrum - baseline,
as in chemotools 0.1.5 which the paper used): chemotools 0.5's ``AirPls`` hard-codes the
second-order penalty and warm-starts every spectrum from weights learned on the first training
spectrum. ``AirPlsOrder`` subclasses it, supplying the first-order penalty matrix D'D in the
banded/sparse layout chemotools' own solvers take, and (by default) starting every spectrum
from uniform weights as the original algorithm (Zhang et al. 2010) and chemotools 0.1.5 do.
Without warm start the transform is row-wise (it learns nothing from the training rows),
which strict-mode privacy needs. The iteration itself is chemotools'.

A second adaptation: chemotools' ``StandardNormalVariate`` divides by the row's standard deviation as computed,
so a row whose spread underflows (``[5e-324, 0, ...]``, a ``1e-300`` tail) is divided by a zero and turns NaN,
and a fit that worked without that row raises with it (a data-dependent error: review N3). ``FlatSafeSNV``
computes the same SNV on the row divided by its largest magnitude (SNV does not change under scaling) and maps
every *flat* row to the zero row. One definition of "flat" serves every row-wise step (``flat_rows``): the
standard deviation of the row scaled to max |x| = 1 is at most ``FLAT_RELATIVE_SPREAD`` (public, 1e-12), or the
row is all zeros. It depends on that row alone and on a public constant, so it is data-independent.

``CHAIN_INFO`` says for each named chain whether it learns from the data and what strict mode
(public bounds, per-row sensitivity) leaks or needs with it.
"""
from __future__ import annotations

from collections.abc import Callable
from numbers import Integral
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp
from chemotools.baseline import AirPls, PolynomialCorrection
from chemotools.derivative import SavitzkyGolay
from chemotools.scatter import MultiplicativeScatterCorrection, StandardNormalVariate
from chemotools.smooth import SavitzkyGolayFilter
from chemotools.utils._linear_algebra import compute_DtD_banded, compute_DtD_sparse
from sklearn.base import clone
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import FunctionTransformer, StandardScaler
from sklearn.utils._param_validation import Interval

__all__ = [
    "CHAINS",
    "CHAIN_INFO",
    "FLAT_RELATIVE_SPREAD",
    "AirPlsOrder",
    "FlatSafeSNV",
    "chain_names",
    "difference_penalty",
    "flat_rows",
    "make_chain",
]

#: A row whose standard deviation, after dividing the row by its largest magnitude, is at most this is flat.
#: Why 1e-12: below it SNV's (x - mean) / std is rounding error amplified beyond 1e-4 relative (the rounding of x
#: is u max|x| with u = 1.1e-16), so the row has no shape worth keeping; any positive value keeps the division
#: finite, and the constant is public.
FLAT_RELATIVE_SPREAD = 1e-12


def flat_rows(X) -> np.ndarray:
    """Which rows of X (n, m) are flat (bool (n,)): all zeros, or std(x / max|x|) <= ``FLAT_RELATIVE_SPREAD``.

    Computed without underflow (the row is scaled to max |x| = 1 first), row by row, from that row only.
    Rows holding NaN or infinity are not called flat: the data checks refuse them by name.
    """
    X = np.asarray(X, dtype=float)
    if X.ndim != 2 or X.shape[1] == 0:
        return np.zeros(X.shape[0] if X.ndim else 0, dtype=bool)
    finite = np.isfinite(X).all(axis=1)
    scale = np.where(finite, np.max(np.abs(np.where(np.isfinite(X), X, 0.0)), axis=1), 1.0)
    flat = finite & (scale == 0)
    live = finite & (scale > 0)
    spread = np.std(X[live] / scale[live, None], axis=1)
    flat[live] = ~(spread > FLAT_RELATIVE_SPREAD)  # "not >": a NaN spread counts as flat
    return flat


class FlatSafeSNV(StandardNormalVariate):
    """chemotools' SNV computed on each row scaled to max |x| = 1 (the same result, no underflow); a flat row
    (:func:`flat_rows`) maps to the zero row instead of NaN (one row in, one row out, norm 0)."""

    def transform(self, X, y=None):
        """SNV of each row of ``X`` (n, m), flat rows mapped to zero; returns an (n, m) array."""
        from sklearn.utils.validation import check_is_fitted, validate_data

        check_is_fitted(self, "n_features_in_")
        X_ = validate_data(self, X, y="no_validation", ensure_2d=True, copy=True, reset=False, dtype=np.float64)
        out = np.zeros_like(X_)
        live = ~flat_rows(X_)
        if live.any():
            Z = X_[live] / np.max(np.abs(X_[live]), axis=1, keepdims=True)
            out[live] = (Z - Z.mean(axis=1, keepdims=True)) / Z.std(axis=1, keepdims=True)
        return out


# ---------------------------------------------------------------------------------------------
# airPLS with a selectable difference order (chemotools 0.5 fixes it at 2)
# ---------------------------------------------------------------------------------------------
def difference_penalty(n_features: int, order: int, layout: str = "banded"):
    """D'D for the ``order``-th difference operator D ((N - order) x N), in chemotools' layouts.

    layout "banded": upper banded form with 2 super-diagonals (shape (3, N)), as chemotools'
    ``solveh_banded`` solver takes (order 1 fills one super-diagonal, the top row stays 0);
    layout "sparse": CSC matrix. Order 2 returns chemotools' own matrices.
    """
    N = int(n_features)
    if order == 2:
        return compute_DtD_banded(N) if layout == "banded" else compute_DtD_sparse(N)
    if order != 1:
        raise ValueError("order must be 1 or 2")
    if layout == "sparse":
        if N < 2:
            return sp.csc_matrix((N, N))
        D = sp.diags([-1.0, 1.0], [0, 1], shape=(N - 1, N), format="csc", dtype=float)
        return sp.csc_matrix(D.T @ D)
    ab = np.zeros((3, N))
    if N >= 2:
        ab[1, 1:] = -1.0
        ab[2, :] = 2.0
        ab[2, 0] = ab[2, -1] = 1.0
    return ab


class AirPlsOrder(AirPls):
    """chemotools ``AirPls`` with a difference order of 1 or 2 and optional warm start.

    Parameters are chemotools' (``lam``, ``nr_iterations``, ``solver_type``,
    ``max_iter_after_warmstart``, ``n_jobs``) plus ``diff_order`` (1 = chemotools 0.1.5 and the
    edPLS paper; 2 = chemotools 0.5) and ``warm_start`` (False: every spectrum starts from
    uniform weights, the transform is row-wise; True: chemotools 0.5 behaviour, weights learned
    from the first training spectrum). transform returns spectrum - baseline.
    """

    _parameter_constraints: ClassVar[dict] = {
        **AirPls._parameter_constraints,
        "diff_order": [Interval(Integral, 1, 2, closed="both")],
        "warm_start": ["boolean"],
    }

    def __init__(self, lam: float = 1e4, nr_iterations: int = 100, solver_type="banded",
                 max_iter_after_warmstart: int = 20, n_jobs: int = 1, diff_order: int = 1,
                 warm_start: bool = False):
        super().__init__(lam=lam, nr_iterations=nr_iterations, solver_type=solver_type,
                         max_iter_after_warmstart=max_iter_after_warmstart, n_jobs=n_jobs)
        self.diff_order = diff_order
        self.warm_start = warm_start

    def _precompute_DtD(self, n_features: int):
        return difference_penalty(n_features, self.diff_order, self.solver_type)

    def _fit_core(self, X, y=None, solver=None):
        if self.warm_start:
            return super()._fit_core(X, y, solver=solver)
        self.w_init_ = np.ones(X.shape[1])
        return self


# ---------------------------------------------------------------------------------------------
# Named chains
# ---------------------------------------------------------------------------------------------
def _identity():
    return FunctionTransformer(None, validate=True, feature_names_out="one-to-one")


#: name -> list of (step name, factory). Composite names "a+b" are built from these in order.
CHAINS: dict[str, list[tuple[str, Callable[[], Any]]]] = {
    "none": [("identity", _identity)],
    "snv": [("snv", FlatSafeSNV)],
    "msc": [("msc", lambda: MultiplicativeScatterCorrection(method="mean"))],
    "sg_smooth": [("sg", lambda: SavitzkyGolayFilter(window_length=11, polyorder=2))],
    "sg1": [("sg", lambda: SavitzkyGolay(window_length=5, polyorder=2, deriv=1))],
    "sg2": [("sg", lambda: SavitzkyGolay(window_length=11, polyorder=2, deriv=2))],
    "sg2_nb": [("sg", lambda: SavitzkyGolay(window_length=25, polyorder=2, deriv=2))],
    "airpls": [("airpls", lambda: AirPlsOrder(lam=100, nr_iterations=15, diff_order=1))],
    "detrend": [("detrend", lambda: PolynomialCorrection(order=1))],
    "center": [("center", lambda: StandardScaler(with_mean=True, with_std=False))],
    "autoscale": [("autoscale", StandardScaler)],
}

_ROWWISE = (
    "row-wise: each spectrum is transformed on its own, so per-row bounds stay valid; "
    "set x_bound on the transformed scale"
)

#: What each chain learns from the training rows and what strict mode leaks or needs with it.
CHAIN_INFO = {
    "none": {"learns_from_data": False, "learned": "",
             "strict_note": "nothing learned; bounds apply to the raw spectra"},
    "snv": {"learns_from_data": False, "learned": "",
            "strict_note": _ROWWISE + " (SNV rows have norm sqrt(m), a natural public x_bound)"},
    "msc": {"learns_from_data": True, "learned": "reference spectrum = mean of the training spectra",
            "strict_note": "the reference is a mean of the private rows: every row's output depends on all rows, "
                           "so one row's change moves every transformed row (leaks; breaks the per-row sensitivity). "
                           "Strict mode needs a public reference (MultiplicativeScatterCorrection(reference=...))"},
    "sg_smooth": {"learns_from_data": False, "learned": "",
                  "strict_note": _ROWWISE + " (Savitzky-Golay smoothing, window 11, polyorder 2)"},
    "sg1": {"learns_from_data": False, "learned": "",
            "strict_note": _ROWWISE + " (SG 1st derivative, window 5, polyorder 2: the paper); derivative "
                           "spectra are tiny, so pick x_bound on their scale"},
    "sg2": {"learns_from_data": False, "learned": "",
            "strict_note": _ROWWISE + " (SG 2nd derivative, window 11, polyorder 2; needs at least 11 channels)"},
    "sg2_nb": {"learns_from_data": False, "learned": "",
               "strict_note": _ROWWISE + " (SG 2nd derivative, window 25, polyorder 2: the notebook)"},
    "airpls": {"learns_from_data": False, "learned": "",
               "strict_note": _ROWWISE + " (airPLS lambda 100, 15 iterations, 1st-order penalty, no warm "
                              "start; chemotools 0.5's warm start would learn weights from the first training row)"},
    "detrend": {"learns_from_data": False, "learned": "",
                "strict_note": _ROWWISE + " (least-squares linear trend removed from each spectrum)"},
    "center": {"learns_from_data": True, "learned": "column means of the training rows",
               "strict_note": "the means are released in clear: in strict mode leave centring to EDPLS "
                              "(public centre or private centring inside the one release)"},
    "autoscale": {"learns_from_data": True, "learned": "column means and standard deviations of the training rows",
                  "strict_note": "means and scales are computed from the private rows and leak, and they couple all "
                                 "rows; strict mode needs public scales (or none)"},
}


def chain_names() -> list[str]:
    """The registered single-step chain names (composites: join with '+', e.g. "snv+sg1")."""
    return list(CHAINS)


def _steps_for(name: str) -> list:
    steps = []
    for part in name.split("+"):
        part = part.strip()
        if part not in CHAINS:
            raise ValueError(f"unknown preprocessing chain {part!r}; choose from {chain_names()} (join with '+')")
        steps += [(step, factory()) for step, factory in CHAINS[part] if not (step == "identity" and "+" in name)]
    if not steps:
        steps = [("identity", _identity())]
    # unique step names for set_params ("snv+snv" -> snv, snv_2)
    seen: dict[str, int] = {}
    out = []
    for step, tr in steps:
        seen[step] = seen.get(step, 0) + 1
        out.append((step if seen[step] == 1 else f"{step}_{seen[step]}", tr))
    return out


def make_chain(name_or_steps="none", **params) -> Pipeline:
    """An unfitted sklearn Pipeline for a named chain, a composite "a+b", or a list of steps.

    name_or_steps : a key of ``CHAINS`` (e.g. "sg1"), names joined with '+' ("snv+sg1"), or a
        list whose items are chain names, transformers, or (step name, transformer) pairs.
    params : passed to ``Pipeline.set_params`` with sklearn's ``step__param`` names, e.g.
        ``make_chain("sg1", sg__window_length=7)``.

    Fit it on the training rows only; it preserves the number of columns for every named chain.
    """
    if isinstance(name_or_steps, str):
        steps = _steps_for(name_or_steps)
    else:
        steps = []
        for i, item in enumerate(name_or_steps):
            if isinstance(item, str):
                steps += _steps_for(item)
            elif isinstance(item, tuple) and len(item) == 2:
                steps.append((str(item[0]), clone(item[1])))
            elif hasattr(item, "fit") and hasattr(item, "transform"):
                steps.append((f"step{i}", clone(item)))
            else:
                raise ValueError(f"cannot make a preprocessing step from {item!r}")
        if not steps:
            steps = [("identity", _identity())]
        names = [s for s, _ in steps]
        if len(set(names)) != len(names):
            steps = [(f"{s}_{i}", t) for i, (s, t) in enumerate(steps)]
    pipe = Pipeline(steps)
    if params:
        pipe.set_params(**params)
    return pipe
