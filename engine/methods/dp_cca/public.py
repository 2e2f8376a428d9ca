"""Strict DP-CCA with a public centre, public bounds and row-wise preprocessing (issue #18).

Strict ``DPCCA`` needs public bounds on ||x - c_x|| and ||y - c_y||. Without a declared centre it
centres privately inside the release (a constant column, row scale sqrt(3) instead of sqrt(2)), and its
page defaults (3 sqrt(columns), ``default_bound``) know nothing of the data's scale, so on spectra
(absorbances of ~0.5 whose rows differ by a few hundredths) the noise is calibrated to rows tens of
times larger than the signal. When the owner declares a sample of both views PUBLIC (another batch,
a reference library, rows already published), the centre and the bounds can come from it:

- ``public_setting(X_public, Y_public, quantile=0.95, ...)``: x_center, y_center = the column means of
  the public rows; x_bound, y_bound = the ``quantile`` of the public rows' norms after that centre
  (``numpy.quantile``, linear interpolation). Everything is a function of the public rows and the
  declared settings only: the private rows never enter (tests/test_dp_cca_public.py changes every
  private row and checks that nothing public moves). A quantile below 1 clips the private rows that lie
  beyond it (onto the bound: ``engine.privacy.moments.scale_rows``), which trades a little bias for less
  noise; 0.95 is the default, 1.0 the largest public row.
- row-wise preprocessing, where the views are spectra: a chain of ``engine.data.preprocess`` that fits
  nothing on the rows (SNV, Savitzky-Golay, detrend: ``chain_caveat`` is None), applied to each view,
  then an optional data-independent binning into ``bands`` (``engine.data.views.bin_columns``). A chain
  that learns from rows (MSC, centring, autoscaling) is refused: here it would learn from the private rows.
- ``PublicDPCCA``: the estimator that does both and fits strict ``DPCCA`` (per-view bounds, public
  centre) on the transformed rows; its ledger is the inner fit's (one Analyze-Gauss release, proven when
  the noise is fresh). The public rows are not private and are not counted in the ledger.

Hand-written: the derivation is a few lines of numpy, kept here so that the rule "public quantities
from declared-public rows only" has one home with its test.
"""
from __future__ import annotations

from dataclasses import dataclass
from numbers import Integral, Real
from typing import ClassVar

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_array, check_is_fitted

from engine.data.preprocess import CHAIN_INFO, make_chain
from engine.data.views import bin_columns
from engine.methods.constraints import CALIBRATION_CONSTRAINT, PRIVACY_PARAMETER_CONSTRAINTS
from engine.methods.dp_cca.core import as_view
from engine.methods.dp_cca.estimator import DPCCA
from engine.methods.dp_cca.metrics import held_out_correlations

__all__ = ["PublicDPCCA", "PublicSetting", "public_setting", "rowwise_transform"]


@dataclass(frozen=True)
class PublicSetting:
    """Public centre and bounds of strict DP-CCA, derived from declared-public rows (``public_setting``)."""

    x_center: np.ndarray
    y_center: np.ndarray
    x_bound: float
    y_bound: float
    quantile: float
    n_public: int

    def params(self) -> dict:
        """The DPCCA parameters (strict mode, per-view bounds, public centre)."""
        return {"x_center": self.x_center, "y_center": self.y_center, "x_bound": self.x_bound,
                "y_bound": self.y_bound}

    def describe(self) -> str:
        """One sentence saying where the public centre and bounds come from."""
        return (f"public centre = column means of {self.n_public} declared-public rows; x_bound = {self.x_bound:.4g}, "
                f"y_bound = {self.y_bound:.4g} = the {self.quantile:g} quantile of their row norms after that "
                "centre (rows of the private set beyond a bound are clipped onto it)")


def _check_chain(chain: str) -> str:
    """The chain name, or a ValueError when one of its steps learns from the rows (or is unknown)."""
    steps = [p.strip() for p in str(chain).split("+") if p.strip()]
    learned = [p for p in steps if CHAIN_INFO.get(p, {"learns_from_data": True})["learns_from_data"]]
    if learned or not steps:
        what = "; ".join(f"{p}: {CHAIN_INFO[p]['learned']}" if p in CHAIN_INFO else f"{p}: unknown step"
                         for p in learned)
        raise ValueError(f"the chain '{chain}' learns from the rows it is fitted on ({what or 'empty name'}), so it "
                         "cannot be applied to private rows here; use a row-wise chain (none, snv, sg_smooth, "
                         "sg1, sg2_nb, detrend, airpls or a '+' composite of them)")
    return chain


def rowwise_transform(A, chain: str = "none", bands: int | None = None) -> np.ndarray:
    """A row-wise chain (refused if it learns from rows), then an optional binning into ``bands`` columns.

    Each output row depends on its own input row only, so the same function applies to private, public
    and test rows and per-row bounds stay valid.
    """
    A = check_array(A, dtype=np.float64, ensure_min_samples=1)
    out = make_chain(_check_chain(chain)).fit_transform(A)  # row-wise: fit learns nothing
    if bands is not None:
        out, _ = bin_columns(out, int(bands))
    return np.asarray(out, dtype=np.float64)


def public_setting(X_public, Y_public, *, quantile: float = 0.95, x_chain: str = "none", y_chain: str = "none",
                   bands: int | None = None) -> PublicSetting:
    """Centre and per-view bounds of strict DP-CCA from a declared-public sample of both views.

    Parameters
    ----------
    X_public : (n_pub, Dx) array-like, Y_public : (n_pub, Dy) or (n_pub,) : rows the owner declares public.
    quantile : float in (0, 1], the quantile of the public row norms (after the public centre) used as bound.
    x_chain, y_chain : row-wise chains applied first (``rowwise_transform``); bands : optional binning.

    Returns
    -------
    PublicSetting, in the units of the transformed views.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> s = public_setting(rng.normal(size=(200, 3)), rng.normal(size=(200, 2)), quantile=1.0)
    >>> s.x_center.shape, s.y_bound > 0
    ((3,), True)
    """
    q = float(quantile)
    if not 0 < q <= 1:
        raise ValueError(f"quantile must be in (0, 1], got {quantile}")
    Xp = rowwise_transform(X_public, x_chain, bands)
    Yp = rowwise_transform(as_view(Y_public, "Y_public")[0], y_chain, bands if _is_wide(Y_public) else None)
    if Xp.shape[0] != Yp.shape[0] or Xp.shape[0] < 2:
        raise ValueError("X_public and Y_public must have the same number (>= 2) of rows")
    cx, cy = Xp.mean(axis=0), Yp.mean(axis=0)
    bx = float(np.quantile(np.linalg.norm(Xp - cx, axis=1), q))
    by = float(np.quantile(np.linalg.norm(Yp - cy, axis=1), q))
    if not (bx > 0 and by > 0):
        raise ValueError("the public rows are all equal after the centre: no bound can be derived from them")
    return PublicSetting(cx, cy, bx, by, q, int(Xp.shape[0]))


def _is_wide(Y) -> bool:
    """Binning applies to Y only when it has more columns than bands could need (spectra, not one response)."""
    return np.ndim(Y) == 2 and np.shape(Y)[1] > 1


class PublicDPCCA(TransformerMixin, BaseEstimator):
    """Strict DP-CCA whose centre and bounds come from declared-public rows, after row-wise preprocessing.

    Parameters
    ----------
    X_public : (n_pub, Dx) array-like, Y_public : (n_pub, Dy) array-like: the declared-public sample.
    n_components, epsilon, delta, calibration, regularization, random_state : as ``DPCCA``.
    quantile : the public row-norm quantile used as bound (``public_setting``).
    x_chain, y_chain : row-wise chains of ``engine.data.preprocess`` ("none" for non-spectral views).
    bands : None or the number of bands each view is averaged into after its chain.

    Attributes
    ----------
    dpcca_ : the fitted strict ``DPCCA`` (on the transformed rows).   public_setting_ : ``PublicSetting``.
    privacy_ledger_ : the inner fit's ledger.   canonical_correlations_ (K,), x_weights_ (Dx', K),
    y_weights_ (Dy', K) : in the transformed units.   n_features_in_ : Dx.

    Examples
    --------
    >>> import numpy as np
    >>> from engine.data.samples import make_two_views
    >>> tv = make_two_views(n_samples=3000, dx=4, dy=3, random_state=0)
    >>> m = PublicDPCCA(tv.X[:500], tv.Y[:500], n_components=1, epsilon=1.0, random_state=0)
    >>> m.fit(tv.X[500:], tv.Y[500:]).privacy_ledger_.status
    'not proven'
    """

    _parameter_constraints: ClassVar[dict] = {
        **PRIVACY_PARAMETER_CONSTRAINTS,
        "random_state": [*PRIVACY_PARAMETER_CONSTRAINTS["random_state"], np.random.Generator],
        "X_public": ["array-like"],
        "Y_public": ["array-like"],
        "n_components": [Interval(Integral, 1, None, closed="left")],
        "quantile": [Interval(Real, 0, 1, closed="right")],
        "x_chain": [str],
        "y_chain": [str],
        "bands": [Interval(Integral, 1, None, closed="left"), None],
        "calibration": CALIBRATION_CONSTRAINT,
        "regularization": [StrOptions({"auto"}), Interval(Real, 0, np.inf, closed="left")],
    }

    def __init__(self, X_public, Y_public, n_components=2, epsilon=1.0, delta=1e-5, quantile=0.95, x_chain="none",
                 y_chain="none", bands=None, calibration="auto", regularization="auto", random_state=None):
        self.X_public = X_public
        self.Y_public = Y_public
        self.n_components = n_components
        self.epsilon = epsilon
        self.delta = delta
        self.quantile = quantile
        self.x_chain = x_chain
        self.y_chain = y_chain
        self.bands = bands
        self.calibration = calibration
        self.regularization = regularization
        self.random_state = random_state

    def _views(self, X, Y):
        Xt = rowwise_transform(X, self.x_chain, self.bands)
        Yt = rowwise_transform(as_view(Y, "Y")[0], self.y_chain, self.bands if _is_wide(Y) else None)
        return Xt, Yt

    def fit(self, X, Y):
        """Derive the public setting from (X_public, Y_public), then fit strict DPCCA on the transformed X, Y."""
        self._validate_params()
        X = check_array(X, dtype=np.float64, ensure_min_samples=2)
        self.n_features_in_ = X.shape[1]
        self.public_setting_ = public_setting(self.X_public, self.Y_public, quantile=self.quantile,
                                              x_chain=self.x_chain, y_chain=self.y_chain, bands=self.bands)
        Xt, Yt = self._views(X, Y)
        self.dpcca_ = DPCCA(n_components=self.n_components, epsilon=self.epsilon, delta=self.delta, mode="strict",
                            calibration=self.calibration, regularization=self.regularization,
                            random_state=self.random_state, **self.public_setting_.params()).fit(Xt, Yt)
        for name in ("canonical_correlations_", "x_weights_", "y_weights_", "privacy_ledger_", "n_clipped_"):
            setattr(self, name, getattr(self.dpcca_, name))
        return self

    def transform(self, X, Y=None):
        """Canonical scores of the transformed rows (``DPCCA.transform``); not DP for the training rows."""
        check_is_fitted(self, "dpcca_")
        Xt = rowwise_transform(X, self.x_chain, self.bands)
        if Y is None:
            return self.dpcca_.transform(Xt)
        return self.dpcca_.transform(*self._views(X, Y))

    def held_out_correlations(self, X, Y) -> np.ndarray:
        """corr(X u_k, Y v_k) of each pair on held-out rows (after the same row-wise transform)."""
        check_is_fitted(self, "dpcca_")
        Xt, Yt = self._views(X, Y)
        return held_out_correlations(self.x_weights_, self.y_weights_, Xt, Yt)

    def score(self, X, Y=None, y=None) -> float:
        """Sum of the held-out correlations over the K pairs."""
        return float(self.held_out_correlations(X, y if Y is None else Y).sum())
