"""P3LSRegressor: the P3LS protocol behind scikit-learn's ``fit(X, y)`` with a column split of X."""
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

from engine.methods.column_checks import check_columns, frame_names, raise_if_non_numeric
from engine.methods.p3ls.columns import resolve_column_split
from engine.methods.p3ls.protocol import P3LS, P3LS_PARAMETER_CONSTRAINTS, _check_response

__all__ = ["P3LSRegressor"]


class P3LSRegressor(ClassNamePrefixFeaturesOutMixin, TransformerMixin, RegressorMixin, MultiOutputMixin,
                    BaseEstimator):
    """:class:`P3LS` behind scikit-learn's API: ``fit(X, y)`` splits X's columns between the parties.

    Every fit and prediction runs the full protocol (:class:`P3LS`: masks, message log, recovery); only the
    input format differs. Without noise P3LS equals centralised PLS on the pooled columns (scikit-learn's
    ``PLSRegression(scale=True)``) up to rounding, so it meets every check of ``check_estimator``.

    Parameters
    ----------
    n_components : int
        k (or the largest k searched when ``fit`` gets ``validation``).
    column_split : int, list of int or list of index arrays, default 2
        Which columns each party holds (:func:`resolve_column_split`): g parties with contiguous
        near-equal blocks, contiguous block widths ``[n1, n2, ...]``, or each party's column indices
        (names for a DataFrame X). The party order is the order of the blocks.
    label_holder, row_mask_block_size, secure_aggregation, party_names, random_state
        As :class:`P3LS` (``random_state=None``: fresh masks from OS entropy).

    Attributes
    ----------
    p3ls_ : the fitted :class:`P3LS` (roles, message log ``p3ls_.log_``, relevance, leakage report).
    columns_ : list of int arrays, party i's columns of X.
    coef_ (l, n) and intercept_ (l,) in original units and X's column order (like ``PLSRegression``);
    x_weights_, x_loadings_ (n, k), x_mean_, x_scale_ (n,) in X's column order; x_scores_ (m, k),
    y_loadings_ (l, k), y_scores_ (m, k); n_components_ (the chosen k); n_features_in_ (and
    feature_names_in_ for a DataFrame X).
    """

    _parameter_constraints: ClassVar[dict] = {
        **P3LS_PARAMETER_CONSTRAINTS,
        # which columns, and whether every column has one owner, needs X: resolve_column_split checks it
        "column_split": [Interval(Integral, 1, None, closed="left"), "array-like"],
    }

    def __init__(self, n_components: int = 2, column_split=2, *, label_holder: int = -1,
                 row_mask_block_size: int | None = None, secure_aggregation: bool = False, party_names=None,
                 random_state=None):
        self.n_components = n_components
        self.column_split = column_split
        self.label_holder = label_holder
        self.row_mask_block_size = row_mask_block_size
        self.secure_aggregation = secure_aggregation
        self.party_names = party_names
        self.random_state = random_state

    def _blocks(self, X: np.ndarray) -> list[np.ndarray]:
        return [X[:, c] for c in self.columns_]

    def fit(self, X, y, validation=None):
        """Run the protocol on X (m, n) split by ``column_split`` and y (m, l) or (m,). Returns self.

        validation : optional (X_val, y_val); the label contributor then picks k in 1..n_components on it
        (as :meth:`P3LS.fit`).
        """
        self._validate_params()
        if y is None:
            raise ValueError("P3LSRegressor requires y to be passed, but the target y is None")
        X = self._checked_x(X, reset=True, full=True)
        y2, one_d = _check_response(y, "y")
        if y2.shape[0] != X.shape[0]:
            raise ValueError(f"X has {X.shape[0]} rows (samples) but y has {y2.shape[0]}")
        y = y2[:, 0] if one_d else y2
        self.columns_ = resolve_column_split(self.column_split, X.shape[1], getattr(self, "feature_names_in_", None))
        if validation is not None:
            X_val, y_val = validation
            X_val = self._checked_x(X_val, reset=False, full=False)
            validation = (self._blocks(X_val), y_val)
        self.p3ls_ = fed = P3LS(self.n_components, label_holder=self.label_holder,
                                row_mask_block_size=self.row_mask_block_size,
                                secure_aggregation=self.secure_aggregation, party_names=self.party_names,
                                random_state=self.random_state).fit(self._blocks(X), y, validation=validation)
        back = np.argsort(np.concatenate(self.columns_))  # stacked-block order -> X's column order
        self.coef_, self.intercept_ = fed.coef_[:, back], fed.intercept_
        self.x_weights_, self.x_loadings_ = fed.x_weights_[back], fed.x_loadings_[back]
        self.x_mean_, self.x_scale_ = fed.x_mean_[back], fed.x_scale_[back]
        self.x_scores_, self.y_loadings_, self.y_scores_ = fed.x_scores_, fed.y_loadings_, fed.y_scores_
        self.n_components_ = fed.n_components_
        return self

    @property
    def _n_features_out(self) -> int:
        """Number of columns ``transform`` returns (the chosen k), for ``get_feature_names_out``."""
        return self.n_components_

    def _checked_x(self, X, *, reset: bool, full: bool) -> np.ndarray:
        """X through ``validate_data`` (n_features_in_, feature names), then column by column (``column_checks``):
        text, NaN, inf, overflow, underflow named by X's column; ``full`` (training) also a constant or
        duplicated column, as :meth:`P3LS.fit` refuses them."""
        names = frame_names(X)
        try:
            X = validate_data(self, X, dtype=np.float64, reset=reset, ensure_all_finite=False,
                              ensure_min_samples=2 if reset or full else 1)
        except (ValueError, TypeError) as exc:
            raise_if_non_numeric(X, "X", names, cause=exc)
            raise
        check_columns(X, "X", names, constant=full, duplicates=full)
        return X

    def _new_blocks(self, X) -> list[np.ndarray]:
        check_is_fitted(self, "p3ls_")
        return self._blocks(self._checked_x(X, reset=False, full=False))

    def predict(self, X) -> np.ndarray:
        """Predictions for new rows X (m_new, n) by the protocol (Alg. 5): (m_new, l), or (m_new,) for 1-D y."""
        blocks = self._new_blocks(X)  # NotFittedError before fit
        return self.p3ls_.predict(blocks)

    def transform(self, X) -> np.ndarray:
        """Shared scores T_new (m_new, k) of new rows X (m_new, n), by the protocol (Alg. 5)."""
        blocks = self._new_blocks(X)
        return self.p3ls_.transform(blocks)
