"""The centralised P3LS model (the paper's CenPLS/LocalPLS): Algorithm 1 (:mod:`.pls`) behind scikit-learn's
estimator API. Apart from :mod:`.pls` so that the parties' processes, which import that module, import no
scikit-learn to start.
"""
from __future__ import annotations

from numbers import Integral
from typing import ClassVar

import numpy as np
from sklearn.base import (
    BaseEstimator,
    ClassNamePrefixFeaturesOutMixin,
    MultiOutputMixin,
    RegressorMixin,
    TransformerMixin,
)
from sklearn.utils._param_validation import Interval
from sklearn.utils.validation import check_is_fitted, validate_data

from engine.methods.p3ls.pls import PLSComponents, _as_2d_response, orient_components, standardise_columns, svd_pls

__all__ = ["SVDPLS"]


class SVDPLS(ClassNamePrefixFeaturesOutMixin, TransformerMixin, RegressorMixin, MultiOutputMixin, BaseEstimator):
    """Centralised PLS by Algorithm 1 with ddof=1 standardisation (the paper's CenPLS/LocalPLS).

    A scikit-learn regressor (multi-output) and transformer (``transform`` gives the X-scores), like
    scikit-learn's ``PLSRegression(scale=True)``; it passes ``check_estimator``.

    Parameters
    ----------
    n_components : int
        Number of latent variables k.

    Attributes (after fit): ``components_`` (:class:`PLSComponents`, standardised units, sign
    convention applied), ``x_weights_`` (n, k), ``x_loadings_`` (n, k), ``x_scores_`` (m, k),
    ``y_scores_`` (m, k), ``y_loadings_`` (l, k), ``x_rotations_`` (n, k), ``x_mean_``,
    ``x_scale_``, ``y_mean_``, ``y_scale_``, ``coef_`` (l, n) and ``intercept_`` (l,) in original
    units, like scikit-learn: ``predict(X) = (X - x_mean_) @ coef_.T + intercept_``;
    ``n_features_in_`` (and ``feature_names_in_`` for a DataFrame).
    """

    _parameter_constraints: ClassVar[dict] = {"n_components": [Interval(Integral, 1, None, closed="left")]}

    def __init__(self, n_components: int = 2):
        self.n_components = n_components

    def fit(self, X, Y):
        """Fit on X (m, n) and Y (m, l) or (m,). Returns self."""
        self._validate_params()  # k <= min(rows, columns) needs the data: svd_pls checks it
        X, Y = validate_data(self, X, Y, dtype=np.float64, multi_output=True, y_numeric=True, ensure_min_samples=2)
        Y2, self._y_was_1d = _as_2d_response(Y)
        Z, self.x_mean_, self.x_scale_ = standardise_columns(X)
        Zy, self.y_mean_, self.y_scale_ = standardise_columns(Y2)
        self.components_, _ = orient_components(svd_pls(Z, Zy, self.n_components))
        self._set_public(self.components_)
        return self

    @property
    def _n_features_out(self) -> int:
        """Number of columns ``transform`` returns (k), for ``get_feature_names_out``."""
        return self.components_.n_components

    def _set_public(self, c: PLSComponents) -> None:
        self.x_weights_, self.x_loadings_, self.x_scores_ = c.W, c.P, c.T
        self.y_scores_, self.y_loadings_, self.x_rotations_ = c.U, c.Q, c.R
        self.coef_ = (c.B * self.y_scale_).T / self.x_scale_
        self.intercept_ = self.y_mean_.copy()

    def _standardised(self, X) -> np.ndarray:
        check_is_fitted(self, "components_")
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return (X - self.x_mean_) / self.x_scale_

    def transform(self, X) -> np.ndarray:
        """X-scores T_new = Z_new R, shape (m_new, k)."""
        return self._standardised(X) @ self.components_.R

    def predict(self, X, n_components: int | None = None) -> np.ndarray:
        """Predictions in original units, (m_new, l) or (m_new,); ``n_components`` < k uses the nested model."""
        Z = self._standardised(X)  # NotFittedError before fit
        c = self.components_ if n_components is None else self.components_.truncate(n_components)
        Y = (Z @ c.B) * self.y_scale_ + self.y_mean_
        return Y[:, 0] if self._y_was_1d else Y
