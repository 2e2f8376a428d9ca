"""The edPLS estimator ``EDPLS`` (scikit-learn compatible): parameters, input checks, fit, predict, replicates.

The modes, the noise and the numerics are described in ``engine.methods.edpls`` (the package docstring);
the clean part of a fit and its private draws are ``prepared._Prepared``.
"""
from __future__ import annotations

import math
import re
import warnings
from numbers import Integral, Real
from typing import ClassVar

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.exceptions import DataConversionWarning
from sklearn.utils._param_validation import Interval, InvalidParameterError, StrOptions
from sklearn.utils.validation import check_consistent_length, check_is_fitted, validate_data

from engine.methods.column_checks import check_columns, frame_names, raise_if_non_numeric, read_y, series_name
from engine.methods.constraints import CALIBRATION_CONSTRAINT, PRIVACY_PARAMETER_CONSTRAINTS
from engine.methods.edpls.prepared import _check_finite_fit, _Prepared, _small_blas, noise_frame, noise_wide
from engine.privacy import PrivacyLedger, noise_generator
from engine.privacy.chunked import is_lazy

__all__ = ["EDPLS", "edpls_replicates"]


#: The wide noise tables: attribute -> (paper-mode column, strict-mode columns) of the long table.
_WIDE_COLUMNS = {
    "sigmas_": ("sigma", ["sigma"]),
    "noise_std_": ("std_applied", ["std_applied", "std_data_units"]),
    "sensitivities_": ("sensitivity", ["sensitivity"]),
}


# =============================================================================================
# The estimator
# =============================================================================================

def _noise_table(name: str, doc: str) -> property:
    """A noise table attribute built on first access (no pandas inside ``fit``); a model rebuilt from a release or a
    file sets it."""

    def get(self):
        return self._noise_table_attribute(name)

    def put(self, value):
        self.__dict__.setdefault("_noise_tables", {})[name] = value

    return property(get, put, doc=doc)


def _plain_matrix(a, ndim: int) -> bool:
    """A float64 numpy array (not a subclass) of ``ndim`` dimensions, at least two rows and one column."""
    return (type(a) is np.ndarray and a.dtype == np.float64 and a.ndim == ndim and a.shape[0] >= 2
            and (ndim == 1 or a.shape[1] >= 1))


class EDPLS(RegressorMixin, BaseEstimator):
    """(eps, delta)-DP PLS1 regression: the edPLS paper's Algorithm 1, or a strict DP variant.

    Parameters
    ----------
    n_components : int, number of latent variables k.
    epsilon : float > 0 or np.inf. np.inf gives plain PLS1 with an empty ledger.
    delta : float in (0, 1).
    mode : "paper" (Algorithm 1, data-dependent sensitivities) or "strict" (provably DP,
        one Analyze-Gauss release of the clipped second moments).
    x_bound, y_bound : public bounds on ||x_i||_2 and |y_i| (strict mode; required there). They
        apply to rows after subtracting the public centre if one is given, else to the raw rows.
    calibration : "analytic" (Balle & Wang), "classic" (only eps <= 1 per release) or "auto" (classic for
        eps <= 1, analytic above: ``engine.privacy.calibration.resolve_calibration``).
    noise_std : "sigma" (correct) or "sigma_squared" (the authors' code; paper mode only).
    ymax : "abs" (max |f|, the spec) or "signed" (max f, diPLSlib); paper mode only.
    budget : "per_release" (each of the 4k releases gets (eps, delta), the paper) or "split"
        ((eps/(4k), delta/(4k)) each); paper mode only (strict always spends (eps, delta) once).
    centering : subtract the training means (paper) / centre the moments (strict).
    x_center, y_center : public centre for strict mode (both or neither). Without them strict
        mode centres privately from the same release (module docstring).
    private_intercept : bool (default True), strict mode with a public centre: also centre privately around it
        (a constant column in the same release, as ``DPPCR`` and ``AdaSSP`` do: no budget split), so the
        intercept is learned privately and a centre far from the data's mean costs nothing in it (issue #30:
        without it 3-14 sigma_y off with wide ranges). False: the public centre is the model's centre.
    random_state : None (default: fresh OS entropy for every release), int, SeedSequence or numpy
        Generator (a known noise seed: reproducible, and the ledger says "not proven: the noise seed is
        known"). See ``engine.privacy.noise_generator``.

        Clones and cross-validation: ``sklearn.base.clone`` copies ``random_state``. With None (the
        default) every fit of every clone draws fresh noise, so the folds of ``cross_val_score`` or
        ``GridSearchCV`` get independent noise, as independent private fits should. With an int or a
        Generator every clone starts from the same seed (a Generator is deep-copied in its current state),
        so every fold draws the SAME noise: reproducible, but the folds are then not independent private
        fits, and every fit's ledger says "not proven: the noise seed is known".
    sensitivity_source : strict mode: "public" (the bounds were fixed without looking at the private
        rows) or "data" (the caller read the bounds off the private rows: the same release, recorded as
        not proven, and the bounds are kept out of the shareable release). Paper mode is always "data".
    caveats : tuple of str, other reasons the caller knows the fit is not proven (e.g. "not proven: the
        preprocessing 'msc' was fitted on the private rows", see ``chain_caveat``); copied into the
        ledger's caveats (prefixed "not proven: " when missing).

    Attributes
    ----------
    coef_ (m,), intercept_ (float), x_weights_ (m, k), x_loadings_ (m, k), y_loadings_ (k,),
    x_scores_ (n, k) (paper mode: the released noisy unit scores; strict mode: None, since
    per-row training scores cannot be released privately), x_mean_, y_mean_,
    sigmas_ / noise_std_ / sensitivities_ (DataFrames, index component, columns w, t, p, c in
    paper mode; one row "ZtZ" in strict mode), noise_table_ (long form), privacy_ledger_,
    condition_number_ (cond(P_dp' W_dp)), n_clipped_ (strict; None in paper mode),
    n_features_in_.
    """

    _parameter_constraints: ClassVar[dict] = {
        **PRIVACY_PARAMETER_CONSTRAINTS,
        # noise_generator also takes a numpy Generator or SeedSequence (a known noise seed)
        "random_state": ["random_state", np.random.Generator, np.random.SeedSequence],
        "n_components": [Interval(Integral, 1, None, closed="left")],
        "mode": [StrOptions({"paper", "strict"})],
        "x_bound": [Interval(Real, 0, None, closed="neither"), None],
        "y_bound": [Interval(Real, 0, None, closed="neither"), None],
        "calibration": CALIBRATION_CONSTRAINT,
        "noise_std": [StrOptions({"sigma", "sigma_squared"})],
        "ymax": [StrOptions({"abs", "signed"})],
        "budget": [StrOptions({"per_release", "split"})],
        "centering": ["boolean"],
        "x_center": ["array-like", Real, None],
        "y_center": [Real, None],
        "private_intercept": ["boolean"],
        "sensitivity_source": [StrOptions({"public", "data"})],
        "caveats": [tuple, list, None],
    }

    def __init__(self, n_components=2, epsilon=1.0, delta=0.01, mode="paper", x_bound=None, y_bound=None,
                 calibration="analytic", noise_std="sigma", ymax="abs", budget="per_release", centering=True,
                 x_center=None, y_center=None, random_state=None, sensitivity_source="public", caveats=(),
                 private_intercept=True):
        self.n_components = n_components
        self.epsilon = epsilon
        self.delta = delta
        self.mode = mode
        self.x_bound = x_bound
        self.y_bound = y_bound
        self.calibration = calibration
        self.noise_std = noise_std
        self.ymax = ymax
        self.budget = budget
        self.centering = centering
        self.x_center = x_center
        self.y_center = y_center
        self.random_state = random_state
        self.sensitivity_source = sensitivity_source
        self.caveats = caveats
        self.private_intercept = private_intercept

    @classmethod
    def _get_param_names(cls):
        """scikit-learn's list of parameter names, introspected from ``__init__`` once per class (it reads the
        signature on every ``get_params``: a tenth of a small paper-mode fit)."""
        names = cls.__dict__.get("_param_names")
        if names is None:
            names = super()._get_param_names()
            cls._param_names = names
        return names

    # ------------------------------------------------------------------ validation
    def _check_params(self) -> None:
        """scikit-learn's declarative validation (``_parameter_constraints``), then the rules that tie several
        parameters together. Whether "classic" calibration is allowed (epsilon <= 1 per release) is decided
        where sigma is computed (``engine.privacy.calibration.resolve_calibration``)."""
        try:
            self._validate_params()
        except InvalidParameterError as err:
            raise InvalidParameterError(_plain_message(err)) from None
        if not all(isinstance(c, str) and c.strip() for c in (self.caveats or ())):
            raise ValueError(f"caveats must be a tuple of non-empty strings, got {self.caveats!r}")
        if self.mode == "strict":
            self._check_strict_params()

    def _check_strict_params(self) -> None:
        for name in ("x_bound", "y_bound"):
            v = getattr(self, name)
            if v is None:
                raise ValueError(
                    f"strict mode needs public bounds: set x_bound (max ||x_i||_2) and y_bound (max |y_i|) "
                    f"before seeing the data; {name} is missing"
                )
            if not math.isfinite(v):
                raise ValueError(f"{name} must be a finite number > 0, got {v!r}")
        if self.noise_std != "sigma":
            raise ValueError("noise_std='sigma_squared' reproduces the authors' bug and exists only in paper mode")
        if (self.x_center is None) != (self.y_center is None):
            raise ValueError("give both x_center and y_center (a public centre) or neither (private centring)")
        if self.x_center is not None and not self.centering:
            raise ValueError("x_center/y_center are a public centre: they need centering=True")

    def _validate_xy(self, X, y, full=True):
        """Checked float64 X (n, m) and y (n,), plus names and column scales for messages.

        Refuses, with a ``ValueError`` naming the column: text, NaN/inf, overflow, underflow, a
        constant or duplicated column (``column_checks``), a constant y; a column-vector y is ravelled
        with scikit-learn's ``DataConversionWarning``.
        """
        x_names = frame_names(X)
        y_name = series_name(y)
        y_label = f"y '{y_name}'" if y_name is not None else "y"
        if y is None:
            raise ValueError("EDPLS requires y to be passed, but the target y is None")
        if _plain_matrix(X, 2) and _plain_matrix(y, 1):
            # what validate_data and check_array do to float64 numpy arrays of two rows or more: nothing but record
            # the width and forget earlier column names. Their generic path (narwhals' frame detection through
            # inspect.getattr_static, the tags) cost 0.2 ms a fit, 15 % of a 56 x 700 paper-mode fit.
            self.n_features_in_ = X.shape[1]
            if hasattr(self, "feature_names_in_"):
                del self.feature_names_in_
        else:
            try:
                X = validate_data(self, X, dtype=np.float64, ensure_all_finite=False, ensure_min_samples=2)
            except (ValueError, TypeError) as exc:
                raise_if_non_numeric(X, "X", x_names, cause=exc)
                raise
            y = read_y(y, min_samples=2)
        if y.ndim == 2:
            if y.shape[1] != 1:
                raise ValueError(
                    f"EDPLS is PLS1 (one response): y has {y.shape[1]} columns; fit one model per response"
                )
            warnings.warn("A column-vector y was passed when a 1d array was expected. Please change the shape of "
                          "y to (n_samples,), for example using ravel().", DataConversionWarning, stacklevel=3)
            y = y[:, 0]
        elif y.ndim != 1:
            raise ValueError(f"y must be 1-D (n_samples,), got shape {y.shape}")
        check_consistent_length(X, y)
        x_stats = check_columns(X, "X", x_names, constant=full, duplicates=full)
        y_stats = check_columns(y[:, None], "y", [y_name], single=True, constant=full)
        n, m = X.shape
        limit = min(n - int(bool(self.centering)), m)
        if self.n_components > limit:
            minus_one = " - 1" if self.centering else ""
            raise ValueError(f"n_components={self.n_components} exceeds the rank bound min(n_samples{minus_one}, "
                             f"n_features) = {limit}")
        if self.mode == "strict" and self.x_center is not None:
            xc = np.asarray(self.x_center, dtype=float)
            if xc.shape not in ((), (m,)) or not np.all(np.isfinite(xc)) or not np.isfinite(float(self.y_center)):
                raise ValueError(f"x_center must be finite with shape ({m},) and y_center a finite number")
        return X, y, {"x_names": x_names, "y_label": y_label, "x_stats": x_stats, "y_stats": y_stats}

    def _prepare(self, X, y, K=None, full_checks=False):
        """The clean part of a fit. Values are always checked; ``full_checks`` (every public entry point: fit,
        sample_releases, sweeps) also refuses constant and duplicate columns and a constant y, which the
        privacy analyses' constructed rows may have."""
        if is_lazy(X) or is_lazy(y):  # Dask collections: passes over the partitions (engine.methods.edpls.lazy)
            from engine.methods.edpls.lazy import prepare_lazy

            return prepare_lazy(self, X, y, K)
        self._check_params()
        X, y, info = self._validate_xy(X, y, full=full_checks)
        return _Prepared(self, X, y, self.n_components if K is None else K, info)

    # ------------------------------------------------------------------ fit / predict
    def fit(self, X, y, *, scheduler=None, progress=None):
        """Fit on X (n, m) and y (n,): numpy, pandas, or Dask collections (``ddf[x_cols], ddf[response]``).

        ``scheduler`` and ``progress`` apply to Dask inputs only (``engine.methods.edpls.lazy``): strict mode
        sums its one release partition by partition on that scheduler (``engine.data.scheduler``) and calls
        ``progress(done, total)`` as partitions finish; paper mode gathers the rows first and says so.
        """
        if is_lazy(X) or is_lazy(y):
            from engine.methods.edpls.lazy import fit_lazy

            return fit_lazy(self, X, y, scheduler=scheduler, progress=progress)
        return self._fit_prepared(self._prepare(X, y, full_checks=True))

    def _fit_prepared(self, prep):
        """The fit from its clean part (``_Prepared``): one private draw, which records itself in the fit's ledger
        (a mechanism draws and records in one call), then the attributes and the ledger's caveats."""
        k, eps = int(self.n_components), float(self.epsilon)
        rng, seed_known = noise_generator(self.random_state)
        ledger = PrivacyLedger()
        out = prep.draw(k, eps, 1, rng, ledger=ledger)
        _check_finite_fit(prep, out, k, eps)
        self.coef_ = out["coef"][0]
        self.intercept_ = float(out["intercept"][0])
        self.x_weights_ = out["W"][0]
        self.x_loadings_ = out["P"][0]
        self.y_loadings_ = out["c"][0]
        self.x_scores_ = None if out["T"] is None else out["T"][0]
        self.x_mean_ = np.array(out["x_mean"][0])
        self.y_mean_ = float(out["y_mean"][0])
        self.condition_number_ = float(out["cond"][0])
        # The noise tables (noise_table_, sigmas_, noise_std_, sensitivities_) are built from these numbers on
        # first access: pandas tables built eagerly took two thirds of a small paper-mode fit (issue #21).
        self._noise_record = prep.noise_record(k, eps)
        self._noise_tables = {}
        self._set_clip_attributes(prep.strict)
        self.privacy_ledger_ = prep.add_caveats(ledger, seed_known=seed_known)
        return self

    # ------------------------------------------------------------------ noise tables (lazy)
    def _noise_table_attribute(self, name: str):
        tables = self.__dict__.setdefault("_noise_tables", {})
        record = self.__dict__.get("_noise_record")
        if name not in tables and record is None:
            raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}' (not fitted)")
        if name not in tables:
            assert record is not None  # raised above otherwise
            if name == "noise_table_":
                tables[name] = noise_frame(record)
            else:
                column = _WIDE_COLUMNS[name]
                strict = record["mode"] == "strict"
                tables[name] = noise_wide(record, column[1] if strict else column[0])
        return tables[name]

    noise_table_ = _noise_table("noise_table_", "Long table of the noise applied: one row per component and quantity "
                                "(paper), one row (strict).")
    sigmas_ = _noise_table("sigmas_", "Noise std per release (paper: index component, columns w, t, p, c; strict: "
                           'one row "ZtZ").')
    noise_std_ = _noise_table("noise_std_", "Noise std applied (paper: sigma or sigma^2 as ``noise_std``; strict: "
                              "also in data units).")
    sensitivities_ = _noise_table("sensitivities_", "L2 sensitivity per release (paper: from the private data; "
                                  "strict: the exact public one).")

    def _set_clip_attributes(self, state) -> None:
        """n_clipped_ and clip_report_: the clip report of strict mode's ``state``, None in paper mode."""
        if self.mode == "paper":
            self.n_clipped_ = None
            self.clip_report_ = None
            return
        self.n_clipped_ = state.n_clipped
        self.clip_report_ = {"n_clipped": state.n_clipped, "n_clipped_x": state.n_clipped_x,
                             "n_clipped_y": state.n_clipped_y, "notes": list(state.clip_notes),
                             "private_centring": state.private_centring, "row_scale": state.scale}

    def predict(self, X):
        """Predictions X @ coef_ + intercept_, shape (n_samples,); refused for a model without an intercept."""
        check_is_fitted(self, "coef_")
        if getattr(self, "intercept_", None) is None:
            raise ValueError("this model has no intercept: it was rebuilt from a paper-mode shareable release, "
                             "which leaves out the exact private training means (Algorithm 1 releases none)")
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return X @ self.coef_ + self.intercept_

    # ------------------------------------------------------------------ replicates
    def sample_releases(self, X, y, n_replicates: int, random_state=None, *, keep_raw: bool = False) -> dict:
        """R independent private releases on the same data, vectorised over replicates.

        The clean path is computed once; only the noise and the k x k solves are per replicate.
        Drawing from a Generator ``g`` gives exactly the releases of R sequential ``fit`` calls
        with ``random_state=g``. The noise comes from ``noise_generator(random_state)`` (or the
        estimator's ``random_state`` when None): fresh by default, a known seed adds the caveat.
        Returns a dict of arrays with a leading R axis: coef, intercept,
        W, P, c, T (paper), cond, x_mean, y_mean (and W_raw / T_raw, the noisy vectors before
        renormalisation, with ``keep_raw``), plus ``noise_table`` and ``ledger`` (one replicate's).
        """
        if int(n_replicates) < 1:
            raise ValueError("n_replicates must be >= 1")
        prep = self._prepare(X, y, full_checks=True)
        rs = self.random_state if random_state is None else random_state
        rng, seed_known = noise_generator(rs)
        with _small_blas(self.mode):
            out = prep.draw(int(self.n_components), float(self.epsilon), int(n_replicates), rng, keep_raw=keep_raw)
        out["noise_table"] = prep.noise_table(int(self.n_components), float(self.epsilon))
        out["ledger"] = prep.ledger(int(self.n_components), float(self.epsilon), seed_known=seed_known)
        return out

    def fit_replicates(self, X, y, n_replicates: int, random_state=None):
        """Coefficients (R, m) and intercepts (R,) of R independent private fits (batched)."""
        out = self.sample_releases(X, y, n_replicates, random_state)
        return out["coef"], out["intercept"]


def edpls_replicates(X, y, n_replicates: int, random_state=None, **params):
    """Module-level ``EDPLS(**params).fit_replicates(X, y, n_replicates, random_state)``."""
    return EDPLS(**params).fit_replicates(X, y, n_replicates, random_state)


def _plain_message(err: Exception) -> str:
    """scikit-learn's "The 'mode' parameter of EDPLS must be a str among {...}. Got 'x' instead." in the words
    EDPLS's messages have always used (callers match on them): "mode must be one of {...}. Got 'x' instead."."""
    return re.sub(r"^The '(\w+)' parameter of \w+ must be ", r"\1 must be ", str(err)).replace("a str among", "one of")
