"""The PCA-Gauss estimator: parameters, ``fit``, sampling and mapping (spec ``pca_gauss.md``).

The releases themselves live in :mod:`.releases` (W sources and the Gaussian stage), the box in
:mod:`.inputs`, the bounds in :mod:`.sensitivity`; see the package docstring for the paper's algorithms and modes.
"""
from __future__ import annotations

import math
from numbers import Integral, Real
from typing import ClassVar

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from engine.methods.constraints import (
    CALIBRATION_CONSTRAINT,
    PRIVACY_PARAMETER_CONSTRAINTS,
)
from engine.privacy import (
    SEED_KNOWN_CAVEAT,
    Neighbouring,
    PrivacyLedger,
    as_generator,
    clip_abs,
    noise_generator,
    resolve_calibration,
)
from engine.privacy.chunked import is_lazy

from .inputs import _BoxScaling, _ReleaseTransformer, read_public, read_records
from .releases import _BoxRows, _ReleaseSteps
from .sampling import _draw, _largest_remainder
from .sensitivity import CAVEATS, MODES, PCA_SOURCES, TASKS

__all__ = ["PCAGauss"]

#: psd, lap_pca_scale and sens when left None, per mode.
_MODE_DEFAULTS = {"paper": ("numpy", "M", "paper"), "strict": ("clip", "M2", "strict")}


class PCAGauss(_ReleaseSteps, _BoxScaling, _ReleaseTransformer, BaseEstimator):
    """Differentially private synthetic data: a projection W plus a Gaussian (or per-class Gaussian).

    A scikit-learn transformer: ``fit(X, y)`` releases the model, ``transform(X)`` maps rows into the
    released space (``fit_transform`` = ``fit(X, y).transform(X)``); y is required (tag) for the supervised
    tasks. ``sample`` draws the synthetic rows.

    Parameters
    ----------
    n_components : int, P (ignored for ``pca_source="identity"``, where P = M).
    epsilon : float > 0 or ``inf`` (no noise), the total budget of the fit.
    task : "unsupervised" (Alg. 1, or Alg. 2 without y for an independent W) | "regression" (Alg. 2)
        | "classification" (Alg. 3).
    pca_source : "public" (needs ``X_public`` in fit) | "laplace" | "analyze_gauss" | "nonprivate"
        (Alg. 1 only) | "identity" (Liu's full-dimensional baseline) | "given" (``components``, a W computed
        elsewhere, e.g. by OpenDP's DP PCA: its budget is the caller's to account). Default: "nonprivate" for
        the unsupervised task, "public" otherwise.
    mode : "paper" | "strict" (spec 2.6).
    random_state : None, int or Generator.
    alpha : float in (0, 1), eps_PCA = alpha eps for Lap-PCA and AG-PCA.
    mean_share : share of the Gaussian budget for means (paper: 0.1 for Alg. 3; strict: also the DP mean
        of Alg. 1/2 with an independent W).
    count_share : strict classification only, share of the Gaussian budget for the noisy class counts
        (taken out of the covariance share).
    delta : delta of AG-PCA; None means 1/N in paper mode (the paper's choice); strict mode requires it.
    psd, lap_pca_scale, sens : None takes the mode's default (paper: "numpy", "M", "paper";
        strict: "clip", "M2", strict formulas). ``sens`` ("paper" | "tight") applies to paper mode.
    bounds : public bounds of the features (strict mode; paper mode ignores them):
        ``(lower, upper)`` (scalars or arrays (M,)) that the caller declares public (documentation,
        domain knowledge); ``"public"``: the range of ``X_public``, a separate data set the caller
        declares public (see ``public_declared``); ``"data"``: read off the private training rows
        (runs, but the ledger says "not proven"). None refuses in strict mode. The centre is the
        midpoint of the bounds and the scale their half-range.
    y_bounds : the same for y (strict regression): ``(lower, upper)``, ``"public"`` (range of ``y_public``)
        or ``"data"``.
    labels : the public label set (strict classification), a sequence of the class values. None reads the
        set from y (the ledger then says "not proven"). Labels of y outside the set are refused.
    public_declared : bool, whether ``X_public`` / ``y_public`` are declared public by their owner. False
        (e.g. a slice of the private upload nobody declared public): W and bounds derived from them are not
        released and the ledger says "not proven".
    ag_neighbouring : "replace" (L2 sensitivity sqrt(2), default) or "add_remove" (1; paper mode only:
        strict mode's ledger uses replace-one throughout).
    calibration : Gaussian calibration of AG-PCA, resolved by ``engine.privacy.resolve_calibration``: "auto"
        (paper mode: classic for eps_PCA <= 1, else analytic, as the spec says; strict mode: analytic),
        "analytic" or "classic" (refused for eps_PCA > 1).
    n_synthetic : default number of rows ``sample()`` draws; None means N (the paper's choice).
    components : (M, P) orthonormal W for ``pca_source="given"`` (in the scaled [-1, 1] feature space).

    Fitted attributes
    -----------------
    components_ : (M, P) W. scaling_ : dict (centre, scale, y_centre, y_scale, source).
    mean_ : (P,) or (P+1,) released mean (zeros where the model assumes zero mean).
    covariance_raw_ : released noisy second-moment / covariance matrix before the PSD fix.
    covariance_ : covariance the sampler uses. classes_, class_counts_, class_means_,
    class_covariances_ (classification). min_eig_before_fix_, psd_fixed_ : PSD log.
    privacy_ledger_ : PrivacyLedger. noise_log_ : DataFrame, one row per noise draw (per class too).
    epsilon_pca_, epsilon_gauss_, epsilon_mu_, epsilon_sigma_, epsilon_count_ : the split.
    n_train_, n_features_in_, n_released_ : sizes (N is public under replace-one neighbours).
    released_projection_ : whether W may be published (False for Algorithm 1's non-private W and for a W
    from undeclared "public" rows). bounds_source_ : "declared", "public data", "private data" or
    "paper scaling". labels_declared_ : whether ``classes_`` is the declared public label set.
    clip_report_ : ClipReport of the box clipping of the training data (owner's view: exact counts).
    n_partitions_ : fits on Dask collections only (strict mode, ``engine.methods.pca_gauss.lazy``): partitions summed.
    """

    def __init__(self, n_components=2, epsilon=1.0, task="unsupervised", pca_source=None, mode="paper",
                 random_state=None, *, alpha=0.5, mean_share=0.1, count_share=0.1, delta=None, psd=None,
                 lap_pca_scale=None, sens=None, bounds=None, y_bounds=None, labels=None, public_declared=True,
                 ag_neighbouring="replace", calibration="auto", n_synthetic=None, components=None):
        self.n_components = n_components
        self.epsilon = epsilon
        self.task = task
        self.pca_source = pca_source
        self.mode = mode
        self.random_state = random_state
        self.alpha = alpha
        self.mean_share = mean_share
        self.count_share = count_share
        self.delta = delta
        self.psd = psd
        self.lap_pca_scale = lap_pca_scale
        self.sens = sens
        self.bounds = bounds
        self.y_bounds = y_bounds
        self.labels = labels
        self.public_declared = public_declared
        self.ag_neighbouring = ag_neighbouring
        self.calibration = calibration
        self.n_synthetic = n_synthetic
        self.components = components

    # ---------------------------------------------------------------- parameters
    # One value at a time, declaratively (scikit-learn's ``_validate_params``); the rules that tie several
    # parameters together stay in ``_resolved``. ``random_state`` also takes a numpy Generator or SeedSequence
    # (``engine.privacy.noise_generator`` reads both; the harness passes SeedSequences), and ``delta`` may be
    # None (paper mode: 1/N).
    _parameter_constraints: ClassVar[dict] = {
        **PRIVACY_PARAMETER_CONSTRAINTS,
        "random_state": [*PRIVACY_PARAMETER_CONSTRAINTS["random_state"], np.random.Generator,
                         np.random.SeedSequence],
        "delta": [*PRIVACY_PARAMETER_CONSTRAINTS["delta"], None],
        "n_components": [Interval(Integral, 1, None, closed="left")],
        "task": [StrOptions(set(TASKS))],
        "pca_source": [StrOptions(set(PCA_SOURCES)), None],
        "mode": [StrOptions(set(MODES))],
        "alpha": [Interval(Real, 0, 1, closed="neither")],
        "mean_share": [Interval(Real, 0, 1, closed="neither")],
        "count_share": [Interval(Real, 0, 1, closed="neither")],
        "psd": [StrOptions({"numpy", "clip"}), None],
        "lap_pca_scale": [StrOptions({"M", "M2"}), None],
        "sens": [StrOptions({"paper", "tight", "strict"}), None],
        "bounds": "no_validation",  # (lower, upper), "public" or "data": checked in _resolve_bounds
        "y_bounds": "no_validation",
        "labels": ["array-like", None],
        "public_declared": ["boolean"],
        "ag_neighbouring": [StrOptions({"replace", "add_remove"})],
        "calibration": CALIBRATION_CONSTRAINT,
        "n_synthetic": [Interval(Integral, 0, None, closed="left"), None],
        "components": ["array-like", None],
    }

    def _resolved(self) -> dict:
        """The cross-parameter rules, and the parameters with the mode's defaults filled in."""
        task, mode, eps = self.task, self.mode, float(self.epsilon)
        source = self.pca_source if self.pca_source is not None else (
            "nonprivate" if task == "unsupervised" else "public")
        if source == "nonprivate" and task != "unsupervised":
            raise ValueError("pca_source='nonprivate' is Algorithm 1 only (task='unsupervised'); supervised "
                             "tasks need a W independent of the data: 'public', 'laplace' or 'analyze_gauss'")
        if mode == "strict" and float(self.mean_share) + float(self.count_share) >= 1:
            raise ValueError("mean_share + count_share must be < 1 (the rest goes to the covariance)")
        psd, lap, sens = self.psd or _MODE_DEFAULTS[mode][0], self.lap_pca_scale or _MODE_DEFAULTS[mode][1], \
            self.sens or _MODE_DEFAULTS[mode][2]
        if mode == "paper" and sens not in ("paper", "tight"):
            raise ValueError(f"sens must be 'paper' or 'tight' in paper mode, got {sens!r}")
        if mode == "strict" and sens != "strict":
            raise ValueError("sens applies to paper mode only; strict mode uses its own proven bounds")
        if mode == "strict" and lap == "M":
            raise ValueError("lap_pca_scale='M' (as printed) is under-noised by a factor M and is not eps-DP; "
                             "strict mode needs 'M2'")
        if mode == "strict" and source == "analyze_gauss" and self.delta is None and math.isfinite(eps):
            raise ValueError("strict mode with AG-PCA needs an explicit delta (well below 1/N)")
        if mode == "strict" and self.ag_neighbouring != "replace":
            raise ValueError("strict mode uses replace-one neighbours (N public) for every release: "
                             "ag_neighbouring must be 'replace'")
        return {"task": task, "mode": mode, "source": source, "eps": eps, "alpha": float(self.alpha), "psd": psd,
                "lap": lap, "sens": sens}

    def _ag_calibration(self, mode: str, eps_pca: float) -> str:
        """AG-PCA's Gaussian calibration: the one rule (``resolve_calibration``) applied to the request, where
        strict mode's default ("auto") is "analytic" (tight at every epsilon, like its other mode defaults)."""
        requested = "analytic" if mode == "strict" and self.calibration == "auto" else self.calibration
        return resolve_calibration(requested, eps_pca)

    # ---------------------------------------------------------------- fit
    def fit(self, X, y=None, X_public=None, y_public=None, *, scheduler=None, progress=None):
        """Fit the DP generative model.

        Parameters
        ----------
        X : array (N, M), private training records (rows); or a dask DataFrame / Array (strict mode: the
            statistics are summed partition by partition, ``engine.methods.pca_gauss.lazy``).
        y : array (N,), response (regression) or labels (classification); ignored when unsupervised.
        X_public : array (n_pub, M), a disjoint public slice (Pub-PCA; strict-mode bounds).
        y_public : array (n_pub,), public responses (strict regression: bounds of y).
        scheduler, progress : Dask inputs only: the scheduler (``engine.data.scheduler``) and a callable
            ``progress(done, total)`` called as partitions finish.

        Returns
        -------
        self
        """
        if is_lazy(X) or is_lazy(y):  # Dask collections: one pass over the partitions (engine.methods.pca_gauss.lazy)
            from engine.methods.pca_gauss.lazy import fit_lazy

            return fit_lazy(self, X, y, X_public, y_public, scheduler=scheduler, progress=progress)
        self._validate_params()
        p = self._resolved()
        task, mode = p["task"], p["mode"]
        X, y = read_records(self, X, y, task)
        if X_public is not None:
            X_public = read_public(X_public, X.shape[1], "X_public")
        N, M = X.shape
        P = self._n_released_axes(p, M)
        rng, eps_pca, eps_gauss, cal = self._start(p)
        # --- scaling and clipping to the box (a = 1)
        self._set_scaling(self._fit_scaling(X, y, X_public, y_public, mode, task), p)
        Xs, self.clip_report_ = clip_abs((X - self.scaling_["centre"]) / self.scaling_["scale"], 1.0)
        Xp_s = self._box(X_public, self.scaling_) if X_public is not None else None
        ys = None
        if task == "regression":
            ys = np.clip((y - self.scaling_["y_centre"]) / self.scaling_["y_scale"], -1.0, 1.0)
        rows = _BoxRows(Xs, ys)
        labels = None
        if task == "classification":
            classes, rows.y_idx, declared = self._label_set(y, mode)
            labels = (classes, declared)
        # the paper's choice for AG-PCA when delta is None (weak: spec 9.8)
        delta_pca = float(self.delta) if self.delta is not None else 1.0 / N
        return self._release_from(rows, p, P, Xp_s, (eps_pca, eps_gauss, delta_pca, cal), rng, labels)

    def _n_released_axes(self, p, M: int) -> int:
        P = M if p["source"] == "identity" else int(self.n_components)
        if P > M:
            raise ValueError(f"n_components = {P} exceeds the number of features (n_features = {M})")
        return P

    def _start(self, p):
        """The fit's noise generator, empty ledger and budget split: (rng, eps_pca, eps_gauss, calibration)."""
        mode, source, eps = p["mode"], p["source"], p["eps"]
        rng, seed_known = noise_generator(self.random_state)
        self._sens_source = "data" if mode == "paper" else "public"
        # Every sensitivity below is for replace-one neighbours (N public), and the ledger says so.
        self.privacy_ledger_ = PrivacyLedger(neighbouring=Neighbouring.REPLACE_ONE)
        if seed_known:
            self.privacy_ledger_.add_caveat(SEED_KNOWN_CAVEAT)
        self._noise_rows = []
        # --- budget split (spec 2.5)
        if source in ("laplace", "analyze_gauss"):
            eps_pca, eps_gauss = p["alpha"] * eps, (1.0 - p["alpha"]) * eps
        else:
            eps_pca, eps_gauss = 0.0, eps
        # Resolved only where a Gaussian is drawn (AG-PCA with noise): elsewhere the calibration is unused.
        cal = self._ag_calibration(mode, eps_pca) if source == "analyze_gauss" and math.isfinite(eps_pca) else None
        return rng, eps_pca, eps_gauss, cal

    def _set_scaling(self, scaling: dict, p) -> None:
        self.scaling_ = scaling
        for reason in self.scaling_.pop("caveats"):
            self.privacy_ledger_.add_caveat(reason)
        self.bounds_source_ = self.scaling_["bounds_source"]
        if p["source"] == "public" and not self.public_declared:
            self.privacy_ledger_.add_caveat(CAVEATS["public_undeclared"])

    def _release_from(self, rows, p, P, Xp_s, budget, rng, labels):
        """W, then the Gaussian stage, from the box rows' statistics (``_BoxRows`` or the lazy path's sums)."""
        task, mode, source = p["task"], p["mode"], p["source"]
        eps_pca, eps_gauss, delta_pca, cal = budget
        M = rows.M
        # --- projection W and projected data
        W = self._projection(rows, Xp_s, source, P, eps_pca, delta_pca, p["lap"], rng, cal)
        norm = 1.0 if source == "identity" else math.sqrt(M)
        rows.project(W, norm)
        self.components_ = W
        self._norm = norm
        # W may be published only if it is itself a release or public: never Algorithm 1's W (computed from the
        # private rows without noise), nor a Pub-PCA W from rows nobody declared public.
        self.released_projection_ = source != "nonprivate" and not (source == "public" and not self.public_declared)
        identity_dim = M if source == "identity" else None

        self.epsilon_pca_, self.epsilon_gauss_ = eps_pca, eps_gauss
        self.epsilon_mu_ = self.epsilon_sigma_ = self.epsilon_count_ = 0.0
        self.delta_pca_ = delta_pca if source == "analyze_gauss" else 0.0
        self.n_train_, self.n_released_ = rows.N, P + (1 if task == "regression" else 0)
        self._params = p
        if task == "classification":
            self._fit_classes(rows, *labels, eps_gauss, mode, p, identity_dim, rng)
        else:
            self._fit_single(rows, eps_gauss, mode, p, identity_dim, source, rng)
        self.noise_log_ = pd.DataFrame(self._noise_rows)
        self._sample_rng = np.random.default_rng(rng.integers(0, 2**63 - 1))
        del self._noise_rows
        return self

    # ---------------------------------------------------------------- sampling and mapping
    def sample(self, n=None, random_state=None):
        """Synthetic rows in the released space.

        Parameters
        ----------
        n : int, number of rows (default ``n_synthetic`` or N). For classification, rows are split over the
            classes in proportion to the class counts (exact in paper mode, noisy in strict mode).
        random_state : None continues the fit's seeded stream; an int or Generator gives a fresh one.

        Returns
        -------
        unsupervised: Z (n, P). regression: (Z (n, P), y (n,)) with y in the scaled units (inverse_transform_y
        maps it back). classification: (Z (n, P), labels (n,)).
        """
        check_is_fitted(self, "privacy_ledger_")
        n = int(self.n_synthetic or self.n_train_) if n is None else int(n)
        if n < 0:
            raise ValueError("n must be >= 0")
        rng = self._sample_rng if random_state is None else as_generator(random_state)
        psd = self._params["psd"]
        task = self._params["task"]
        if task == "classification":
            per_class = _largest_remainder(self._syn_weights, n)
            parts, labels = [], []
            for c, k in enumerate(per_class):
                C = self.class_covariances_raw_[c]
                parts.append(_draw(self.class_means_[c], C, int(k), psd, rng))
                labels.append(np.repeat(self.classes_[c], k))
            Zs = np.concatenate(parts)
            lab = np.concatenate(labels)
            order = rng.permutation(n)
            return Zs[order], lab[order]
        draws = _draw(self.mean_, self.covariance_raw_, n, psd, rng)
        if task == "regression":
            return draws[:, :-1], draws[:, -1]
        return draws

    def transform(self, X):
        """Real rows mapped into the released space: W'(clip((x - centre)/scale))/sqrt(M). Shape (n, P).

        For Algorithm 1 (``pca_source="nonprivate"``) W is not released: use this for evaluation only.
        """
        check_is_fitted(self, "components_")
        X = validate_data(self, X, dtype=float, reset=False)
        return self._box(X, self.scaling_) @ self.components_ / self._norm

    def transform_y(self, y) -> np.ndarray:
        """Responses in the released (scaled, clipped) units (regression)."""
        check_is_fitted(self, "scaling_")
        if "y_centre" not in self.scaling_:
            raise ValueError("transform_y applies to task='regression'")
        y = np.asarray(y, dtype=float)
        return np.clip((y - self.scaling_["y_centre"]) / self.scaling_["y_scale"], -1.0, 1.0)

    def inverse_transform_y(self, y_released) -> np.ndarray:
        """Released y back in the original units (task='regression' only)."""
        check_is_fitted(self, "scaling_")
        if "y_centre" not in self.scaling_:
            raise ValueError("inverse_transform_y applies to task='regression'")
        return np.asarray(y_released, dtype=float) * self.scaling_["y_scale"] + self.scaling_["y_centre"]

    def inverse_transform(self, Z) -> np.ndarray:
        """Released-space rows mapped back to the original features: centre + scale * sqrt(M) W z. (n, M).

        Refused for Algorithm 1 (its W is computed from the private data and never released).
        """
        check_is_fitted(self, "components_")
        if not self.released_projection_:
            raise ValueError("Algorithm 1's W is not private and not released: its synthetic data cannot be "
                             "mapped back to the original features")
        Z = np.atleast_2d(np.asarray(Z, dtype=float))
        return (Z * self._norm) @ self.components_.T * self.scaling_["scale"] + self.scaling_["centre"]

    # ---------------------------------------------------------------- reporting
    def budget_summary(self) -> dict:
        """The split and the total (basic composition) of this fit, for display."""
        check_is_fitted(self, "privacy_ledger_")
        led = self.privacy_ledger_
        # Nothing released with noise: no privacy (epsilon infinite), never "epsilon = 0".
        eps_total, delta_total = led.total("basic") if len(led) else (math.inf, 0.0)
        return {
            "epsilon_nominal": float(self.epsilon), "epsilon_pca": self.epsilon_pca_,
            "epsilon_gauss": self.epsilon_gauss_, "epsilon_count": self.epsilon_count_,
            "epsilon_mu": self.epsilon_mu_, "epsilon_sigma": self.epsilon_sigma_, "delta": self.delta_pca_,
            "epsilon_ledger_basic": eps_total, "delta_ledger_basic": delta_total,
            "status": led.status, "proven": led.status == "proven",
            "reasons_not_proven": led.reasons_not_proven(),
        }
