"""PCA-Gauss: differentially private synthetic data from a projection plus a Gaussian model.

Spec ``pca_gauss.md`` (Chanyaswad, Liu & Mittal, "Coupling Dimensionality Reduction with
Generative Model for Non-Interactive Private Data Release"). One estimator, ``PCAGauss``,
scikit-learn style, with the paper's three algorithms:

- ``task="unsupervised"`` with ``pca_source="nonprivate"``: Algorithm 1 exactly (spec 2.1). W is
  the top-P eigenvectors of the SAME private data, S = W'X'XW/(MN) = diag(top-P eigenvalues)/(MN),
  and only the noisy S is released. W is never released, so the synthetic data are **one
  axis-aligned Gaussian blob**, unrelated to the original features (``transform`` still maps real
  rows with the hidden W, for evaluation only). With an independent W (public, Lap-PCA,
  Analyze-Gauss, identity) the unsupervised task is "Algorithm 2 without y" (spec 9.4).
- ``task="regression"``: Algorithm 2 (spec 2.2): the (P+1)x(P+1) second moment of [W'x/sqrt(M); y]
  with Laplace noise, and samples from N(0, S_priv).
- ``task="classification"``: Algorithm 3 (spec 2.3): per class a Laplace mean and a Laplace
  covariance (budget split eps_mu = 0.1, eps_Sigma = 0.9 of the Gaussian budget), and N_C draws.

W sources (spec 2.4): ``"public"`` (PCA of a disjoint public slice, free), ``"laplace"``
(Lap-PCA, spec 2.4, scale M a^2/(N eps) as printed or M^2 a^2/(N eps) as Prop. 3 requires),
``"analyze_gauss"`` (AG-PCA, (eps_PCA, delta)), ``"nonprivate"`` (Algorithm 1 only) and
``"identity"`` (W = I and no 1/sqrt(M): Liu et al.'s full-dimensional Gaussian baseline, spec 4).
Lap-PCA and AG-PCA take eps_PCA = alpha eps; the Gaussian stage gets the rest.

Modes (spec 2.6 table):

- ``mode="paper"`` reproduces the paper: centring and max-abs scaling with the private training data,
  the paper's sensitivity formulas (``sens="paper"``; ``"tight"`` gives the spec's corrected and
  centring-safe bounds), Lap-PCA's printed scale (``lap_pca_scale="M"``; under-noised by a factor M:
  the ledger records the true epsilon M eps and the claimed one), exact class counts, and
  ``psd="numpy"`` (the raw, possibly indefinite, noisy matrix goes to numpy's SVD sampler, which
  samples with (C'C)^(1/2)). Every release is marked ``sensitivity_source="data"``: the scaling
  comes from the private data, so no total is a proven guarantee.
- ``mode="strict"`` is provably eps-DP (or (eps, delta) with AG-PCA): public centre and bounds
  (``bounds`` or the public slice's range), every entry clipped to the box, second moments about
  the public centre (no data-dependent centring), means released privately (a budget slice),
  noisy class counts N_C + Lap(2/eps_cnt) with per-class sums and second moments divided by them,
  Lap-PCA at M^2, the PSD fix by eigenvalue clipping (post-processing), and the Algorithm 1
  eigenvalues released alone with the Lidskii-Mirsky bound min(P, 2) a^2/N.

Neighbours are "bounded" (replace one record, N public) as in the paper; sensitivities are L1
(Laplace) or L2 (Analyze-Gauss), each computed for replace-one. The ledger keeps the accountant's
default relation: every record already carries its replace-one sensitivity, so the accountant composes
the right pair of output distributions (and dp-accounting's PLD refuses Laplace events under its own
REPLACE_ONE setting). Every release goes through ``engine.privacy``
(``LaplaceMechanism``, ``AnalyzeGauss``) into ``privacy_ledger_``. With ``epsilon=inf`` no noise
is added and the ledger stays empty (no guarantee).

Written by hand: the paper's algorithms (no public code exists, and no library implements them).
Linear algebra is scipy's ``eigh``; sampling is numpy's; the privacy core is ``engine.privacy``.
"""
from __future__ import annotations

import dataclasses
import math
import warnings
from numbers import Integral

import numpy as np
import pandas as pd
from scipy.linalg import eigh
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_array, check_is_fitted, validate_data

from engine.privacy import (
    AnalyzeGauss,
    LaplaceMechanism,
    PrivacyLedger,
    as_generator,
    clip_abs,
)

__all__ = [
    "ALPHA_GRID",
    "PCA_SOURCES",
    "PCAGauss",
    "TASKS",
    "FINDINGS",
    "alg1_release_query",
    "alg3_class_moments",
    "lap_pca_noise_scale",
    "sensitivities",
    "top_eigenvectors",
    "MODEL_FORMAT",
    "model_from_dict",
    "model_to_dict",
    "to_json",
]

TASKS = ("unsupervised", "regression", "classification")
PCA_SOURCES = ("public", "laplace", "analyze_gauss", "nonprivate", "identity", "given")
MODES = ("paper", "strict")
#: The paper's grid for eps_PCA = alpha eps; alpha = 1.0 would leave nothing for the Gaussian.
ALPHA_GRID = tuple(round(0.1 * i, 1) for i in range(1, 10))

#: The spec's findings, stated plainly (the page shows them).
FINDINGS = {
    "lap_pca": (
        "Lap-PCA as printed adds Laplace noise of scale M·a²/(N·ε), but the covariance's L1 sensitivity "
        "(the paper's own Prop. 3) is M²·a²/N: the printed release is under-noised by a factor M, i.e. it is "
        "(M·ε)-DP, not ε-DP. Strict mode uses M²."
    ),
    "alg1_blob": (
        "Algorithm 1 releases only the P noisy eigenvalues of the data's covariance (its W is non-private and "
        "never released): its synthetic data are one axis-aligned Gaussian blob, with no clusters and no link to "
        "the original features. Its silhouette tracks P, not ε."
    ),
    "alg3_centring": (
        "Algorithm 3's class-covariance bound P²a²/N_C ignores the re-centring with the class mean and fails for "
        "P ≤ 3; its class counts are used unprotected. Strict mode releases noisy counts, sums and second moments."
    ),
}


# --------------------------------------------------------------------------------------------
# Sensitivities (L1 unless said otherwise), one function so tests and the page read one table.
# --------------------------------------------------------------------------------------------
def sensitivities(task: str, P: int, N: int, *, rule: str = "paper", identity_dim: int | None = None,
                  class_counts=None, a: float = 1.0, nonprivate_w: bool = False) -> dict:
    """The L1 sensitivities of every Laplace release of one PCA-Gauss fit (spec Sec. 3).

    Parameters
    ----------
    task : "unsupervised" | "regression" | "classification".
    P : int, released dimension (for ``identity_dim=M`` the data dimension M).
    N : int, number of private training records (public under bounded DP).
    rule : "paper" (the paper's formulas), "tight" (spec's corrected / centring-safe bounds, paper
        pipeline) or "strict" (strict-mode pipeline: uncentred sums about a public centre, noisy counts).
    identity_dim : None for normalised PCA features x~ = W'x/sqrt(M) (||x~||_2 <= a); M for Liu's
        full-dimensional baseline (x in [-a, a]^M, no normalisation).
    class_counts : array (L,) of class sizes N_C (classification with rule "paper"/"tight").
    nonprivate_w : Algorithm 1 (W from the same data): only the eigenvalues are the query.

    Returns
    -------
    dict name -> sensitivity (floats, or arrays of shape (L,) per class for "paper"/"tight").
    """
    if rule not in ("paper", "tight", "strict"):
        raise ValueError(f"rule must be 'paper', 'tight' or 'strict', got {rule!r}")
    a2 = a * a
    if identity_dim is None:
        d, l1 = P, math.sqrt(P) * a             # ||x~||_1 <= sqrt(P) ||x~||_2 <= sqrt(P) a
        block_paper = P * P * a2
        block_tight = min(P * P, 2 * P) * a2    # ||x~x~' - x'x'||_1 <= 2 ||x~||_1^2, and <= P^2 a^2 (box)
        mean_paper = 2 * P * a
    else:
        d, l1 = identity_dim, identity_dim * a  # box [-a, a]^M: ||x||_1 <= M a
        block_paper = block_tight = d * d * a2  # Prop. 3
        mean_paper = 2 * d * a
    out: dict = {}
    if task == "unsupervised" and nonprivate_w:
        out["eigenvalues"] = (P * a2 if rule == "paper" else min(P, 2) * a2) / N  # Thm 4 / Lidskii-Mirsky
        return out
    if task in ("unsupervised", "regression"):
        with_y = task == "regression"
        if rule == "paper":
            out["second_moment"] = (block_paper + (4 * d * a2 + a2 if with_y else 0.0)) / N  # Thm 5 / Prop 3-4
        else:
            out["second_moment"] = (block_tight + (4 * l1 * a + a2 if with_y else 0.0)) / N
        if rule == "strict":
            out["mean"] = 2 * (l1 + (a if with_y else 0.0)) / N
        return out
    if task != "classification":
        raise ValueError(f"task must be one of {TASKS}, got {task!r}")
    if rule == "strict":
        # Replace-one may move a record between classes: counts change by 1 in two classes (L1 = 2), the
        # per-class sums by x and x' (<= 2 l1), the second moments by xx' and x'x'' (<= 2 l1^2 >= block).
        out["counts"] = 2.0
        out["class_sums"] = 2 * l1
        out["class_second_moments"] = max(block_tight, 2 * l1 * l1)
        return out
    counts = np.asarray(class_counts, dtype=float)
    if rule == "paper":
        out["class_mean"] = mean_paper / counts                  # Thm 6
        out["class_covariance"] = block_paper / counts           # Thm 6 (fails for P <= 3, spec 9.2)
    else:
        out["class_mean"] = 2 * l1 / counts
        out["class_covariance"] = np.maximum(block_tight, 6 * l1 * l1 + 4 * l1 * l1 / counts) / counts
    return out


def lap_pca_noise_scale(M: int, N: int, epsilon: float, rule: str = "M2", a: float = 1.0) -> float:
    """Laplace scale of Lap-PCA: M a^2/(N eps) as printed ("M") or M^2 a^2/(N eps) (Prop. 3, "M2")."""
    if rule not in ("M", "M2"):
        raise ValueError("rule must be 'M' (as printed) or 'M2' (Prop. 3)")
    return (M if rule == "M" else M * M) * a * a / (N * epsilon)


def top_eigenvectors(C: np.ndarray, P: int) -> tuple[np.ndarray, np.ndarray]:
    """Top-P eigenpairs of the symmetric part of C (largest first). Returns (values (P,), vectors (M, P))."""
    C = np.asarray(C, dtype=float)
    M = C.shape[0]
    vals, vecs = eigh((C + C.T) / 2.0, subset_by_index=[M - P, M - 1])
    order = np.argsort(vals)[::-1]
    vecs = vecs[:, order]
    # Deterministic sign (largest |entry| positive) so that fits are comparable across runs.
    signs = np.sign(vecs[np.argmax(np.abs(vecs), axis=0), np.arange(P)])
    signs[signs == 0] = 1.0
    return vals[order], vecs * signs


def alg1_release_query(X_centred: np.ndarray, P: int) -> tuple[np.ndarray, np.ndarray]:
    """Algorithm 1's query without noise: W (M, P) and S = (1/N) Xt Xt' with Xt = W'X/sqrt(M) (P, P).

    X_centred : array (N, M), rows are records (sklearn layout), already centred and in [-a, a].
    S equals diag(top-P eigenvalues of X'X)/(M N) (spec 8.1).
    """
    X = np.asarray(X_centred, dtype=float)
    N, M = X.shape
    _, W = top_eigenvectors(X.T @ X, P)
    Z = X @ W / math.sqrt(M)
    return W, Z.T @ Z / N


def alg3_class_moments(Z_class: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Algorithm 3's per-class query without noise: mean mu_C (P,) and S_C = (1/N_C)(Z-mu)'(Z-mu) (P, P)."""
    Z = np.asarray(Z_class, dtype=float)
    mu = Z.mean(axis=0)
    D = Z - mu
    return mu, D.T @ D / Z.shape[0]


# --------------------------------------------------------------------------------------------
# Sampling with the PSD handling of spec 2.6
# --------------------------------------------------------------------------------------------
def _sampling_covariance(C: np.ndarray, psd: str) -> tuple[np.ndarray, float, bool]:
    """(covariance actually sampled from, min eig of the symmetrised C before any fix, fix applied?)."""
    C = np.asarray(C, dtype=float)
    sym = (C + C.T) / 2.0
    min_eig = float(np.linalg.eigvalsh(sym).min())
    # "fixed" means the symmetrised matrix was indefinite, so the sampler had to change its spectrum.
    fixed = bool(min_eig < 0)
    if psd == "clip":
        vals, vecs = np.linalg.eigh(sym)
        return (vecs * np.clip(vals, 0.0, None)) @ vecs.T, min_eig, fixed
    # numpy's SVD sampler: x = z @ (sqrt(s) V) for C = U S V, i.e. covariance V' S V = (C'C)^(1/2).
    _, s, vt = np.linalg.svd(C)
    return (vt.T * s) @ vt, min_eig, fixed


def _draw(mean: np.ndarray, C: np.ndarray, n: int, psd: str, rng: np.random.Generator) -> np.ndarray:
    """n draws from N(mean, C) with the PSD handling of ``psd`` (never fails)."""
    mean = np.asarray(mean, dtype=float)
    if n == 0:
        return np.zeros((0, mean.size))
    if psd == "numpy":
        with warnings.catch_warnings():
            # numpy warns that C is not symmetric PSD and samples with (C'C)^(1/2): logged, not shown.
            warnings.simplefilter("ignore", RuntimeWarning)
            return rng.multivariate_normal(mean, C, size=n, method="svd")
    cov, _, _ = _sampling_covariance(C, "clip")
    vals, vecs = np.linalg.eigh(cov)
    root = vecs * np.sqrt(np.clip(vals, 0.0, None))
    return mean + rng.standard_normal((n, mean.size)) @ root.T


def _largest_remainder(weights: np.ndarray, n: int) -> np.ndarray:
    """Split n into integer counts proportional to non-negative weights (sum exactly n)."""
    w = np.clip(np.asarray(weights, dtype=float), 0.0, None)
    if w.sum() <= 0:
        w = np.ones_like(w)
    raw = w / w.sum() * n
    counts = np.floor(raw).astype(int)
    rest = n - counts.sum()
    if rest > 0:
        counts[np.argsort(raw - counts)[::-1][:rest]] += 1
    return counts


# --------------------------------------------------------------------------------------------
# The estimator
# --------------------------------------------------------------------------------------------
class PCAGauss(BaseEstimator):
    """Differentially private synthetic data: a projection W plus a Gaussian (or per-class Gaussian).

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
    bounds : (lower, upper) per-feature public bounds (strict mode); None uses the public slice's range.
    y_bounds : (lower, upper) public bounds of y (strict regression); None uses ``y_public``'s range.
    ag_neighbouring : "replace" (L2 sensitivity sqrt(2), default) or "add_remove" (1).
    calibration : Gaussian calibration of AG-PCA: "auto" (classic for eps_PCA <= 1, else analytic, as the
        spec says), "analytic" or "classic".
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
    n_train_, n_features_in_, n_released_ : sizes. released_projection_ : whether W may be published.
    clip_report_ : ClipReport of the box clipping of the training data (strict mode).
    """

    def __init__(self, n_components=2, epsilon=1.0, task="unsupervised", pca_source=None, mode="paper",
                 random_state=None, *, alpha=0.5, mean_share=0.1, count_share=0.1, delta=None, psd=None,
                 lap_pca_scale=None, sens=None, bounds=None, y_bounds=None, ag_neighbouring="replace",
                 calibration="auto", n_synthetic=None, components=None):
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
        self.ag_neighbouring = ag_neighbouring
        self.calibration = calibration
        self.n_synthetic = n_synthetic
        self.components = components

    # ---------------------------------------------------------------- parameters
    def _resolved(self) -> dict:
        """Validated parameters with the mode's defaults filled in."""
        def choice(name, value, options):
            if value not in options:
                raise ValueError(f"{name} must be one of {options}, got {value!r}")
            return value

        task = choice("task", self.task, TASKS)
        mode = choice("mode", self.mode, MODES)
        source = self.pca_source if self.pca_source is not None else (
            "nonprivate" if task == "unsupervised" else "public")
        choice("pca_source", source, PCA_SOURCES)
        if source == "nonprivate" and task != "unsupervised":
            raise ValueError("pca_source='nonprivate' is Algorithm 1 only (task='unsupervised'); supervised "
                             "tasks need a W independent of the data: 'public', 'laplace' or 'analyze_gauss'")
        eps = float(self.epsilon)
        if not (eps > 0):
            raise ValueError(f"epsilon must be > 0 (or inf for no noise), got {self.epsilon}")
        if not (isinstance(self.n_components, Integral) and self.n_components >= 1):
            raise ValueError(f"n_components must be an integer >= 1, got {self.n_components!r}")
        alpha = float(self.alpha)
        if source in ("laplace", "analyze_gauss") and not 0 < alpha < 1:
            raise ValueError(f"alpha must be in (0, 1) (alpha = 1 leaves nothing for the Gaussian), got {alpha}")
        for name in ("mean_share", "count_share"):
            v = float(getattr(self, name))
            if not 0 < v < 1:
                raise ValueError(f"{name} must be in (0, 1), got {v}")
        if mode == "strict" and float(self.mean_share) + float(self.count_share) >= 1:
            raise ValueError("mean_share + count_share must be < 1 (the rest goes to the covariance)")
        defaults = {"paper": ("numpy", "M", "paper"), "strict": ("clip", "M2", "strict")}[mode]
        psd = choice("psd", self.psd or defaults[0], ("numpy", "clip"))
        lap = choice("lap_pca_scale", self.lap_pca_scale or defaults[1], ("M", "M2"))
        sens = self.sens or defaults[2]
        if mode == "paper":
            choice("sens", sens, ("paper", "tight"))
        elif sens not in ("strict",):
            raise ValueError("sens applies to paper mode only; strict mode uses its own proven bounds")
        if mode == "strict" and lap == "M":
            raise ValueError("lap_pca_scale='M' (as printed) is under-noised by a factor M and is not eps-DP; "
                             "strict mode needs 'M2'")
        if mode == "strict" and source == "analyze_gauss" and self.delta is None and math.isfinite(eps):
            raise ValueError("strict mode with AG-PCA needs an explicit delta (well below 1/N)")
        choice("ag_neighbouring", self.ag_neighbouring, ("replace", "add_remove"))
        choice("calibration", self.calibration, ("auto", "analytic", "classic"))
        return {"task": task, "mode": mode, "source": source, "eps": eps, "alpha": alpha, "psd": psd,
                "lap": lap, "sens": sens}

    # ---------------------------------------------------------------- scaling to the [-1, 1] box
    def _fit_scaling(self, X, y, X_public, y_public, mode, task) -> dict:
        if mode == "paper":
            # Spec Sec. 2 pre-processing: centre with the training mean, divide by the max |.| (not private).
            centre = X.mean(axis=0)
            scale = np.abs(X - centre).max(axis=0)
            out = {"source": "training data (centre and max-abs scale; not private)"}
            if task == "regression":
                yc = float(y.mean())
                ys = float(np.abs(y - yc).max())
                out.update(y_centre=yc, y_scale=ys if ys > 0 else 1.0)
        else:
            if self.bounds is not None:
                lo, hi = (np.broadcast_to(np.asarray(b, dtype=float), (X.shape[1],)) for b in self.bounds)
                src = "public bounds (given)"
            elif X_public is not None:
                lo, hi = X_public.min(axis=0), X_public.max(axis=0)
                src = "public bounds (range of the public slice)"
            else:
                raise ValueError("strict mode needs public bounds: pass bounds=(lower, upper) or X_public to fit")
            if np.any(hi < lo):
                raise ValueError("bounds: every upper bound must be >= its lower bound")
            centre, scale = (lo + hi) / 2.0, (hi - lo) / 2.0
            out = {"source": src}
            if task == "regression":
                if self.y_bounds is not None:
                    ylo, yhi = (float(v) for v in self.y_bounds)
                elif y_public is not None and len(y_public):
                    ylo, yhi = float(np.min(y_public)), float(np.max(y_public))
                else:
                    raise ValueError("strict regression needs public bounds of y: pass y_bounds or y_public")
                if yhi < ylo:
                    raise ValueError("y_bounds: upper must be >= lower")
                out.update(y_centre=(ylo + yhi) / 2.0, y_scale=(yhi - ylo) / 2.0 or 1.0)
        scale = np.where(scale > 0, scale, 1.0)  # a constant feature stays at 0
        out.update(centre=np.asarray(centre, dtype=float), scale=np.asarray(scale, dtype=float))
        return out

    def _box(self, X, scaling) -> np.ndarray:
        return np.clip((X - scaling["centre"]) / scaling["scale"], -1.0, 1.0)

    # ---------------------------------------------------------------- ledger helpers
    def _noisy(self, name, value, eps, sensitivity, rng, *, true_eps=None, log_extra=None):
        """value + Laplace noise of scale sensitivity/eps (none for eps = inf). Returns (noisy, mechanism)."""
        value = np.asarray(value, dtype=float)
        row = {"release": name, "sensitivity": float(sensitivity), **(log_extra or {})}
        if not math.isfinite(eps):
            self._noise_rows.append({**row, "mechanism": "none (ε = ∞)", "scale": 0.0, "epsilon": math.inf,
                                     "delta": 0.0})
            return value.copy(), None
        mech = LaplaceMechanism(true_eps if true_eps is not None else eps, float(sensitivity))
        self._noise_rows.append({**row, "mechanism": "laplace", "scale": mech.scale, "epsilon": mech.epsilon,
                                 "delta": 0.0})
        return mech.randomise(value, rng), mech

    def _record(self, mech, name, note, claimed=None):
        """One ledger record for a Laplace mechanism (nothing when no noise was added)."""
        if mech is None:
            return
        rel = mech.release(name, sensitivity_source=self._sens_source, note=note)
        if claimed is not None:
            rel = dataclasses.replace(rel, claimed_epsilon=float(claimed))
        self.privacy_ledger_.add(rel)

    def _lap_release(self, name, value, eps, sensitivity, rng, note="", *, claimed=None, true_eps=None):
        noisy, mech = self._noisy(name, value, eps, sensitivity, rng, true_eps=true_eps)
        self._record(mech, name, note, claimed)
        return noisy

    # ---------------------------------------------------------------- W
    def _projection(self, Xs, Xp_s, source, P, eps_pca, delta_pca, lap_rule, rng, cal) -> np.ndarray:
        N, M = Xs.shape
        if source == "identity":
            return np.eye(M)
        if source == "given":
            if self.components is None:
                raise ValueError("pca_source='given' needs components=W (M x P)")
            W = np.asarray(self.components, dtype=float)
            if W.shape != (M, P):
                raise ValueError(f"components must have shape ({M}, {P}), got {W.shape}")
            if not np.allclose(W.T @ W, np.eye(P), atol=1e-6):
                raise ValueError("components must have orthonormal columns (the sensitivities assume ||W'x|| <= ||x||)")
            return W
        if source == "nonprivate":
            return top_eigenvectors(Xs.T @ Xs, P)[1]
        if source == "public":
            if Xp_s is None or len(Xp_s) < 2:
                raise ValueError("pca_source='public' needs X_public (a disjoint public slice, >= 2 rows) in fit")
            return top_eigenvectors(Xp_s.T @ Xp_s, P)[1]
        if source == "laplace":
            S = Xs.T @ Xs / N
            true_sens = M * M / N  # Prop. 3 with a = 1
            if lap_rule == "M":
                # As printed: scale M/(N eps_PCA), which is eps' = M eps_PCA for the true sensitivity M^2/N.
                note = (f"Lap-PCA (M x M covariance, all entries); scale M a²/(N ε) as printed: under-noised by "
                        f"M = {M}, true ε = M·ε_PCA")
                noisy = self._lap_release("Lap-PCA covariance", S, eps_pca, true_sens, rng, note,
                                          claimed=eps_pca, true_eps=M * eps_pca)
            else:
                noisy = self._lap_release("Lap-PCA covariance", S, eps_pca, true_sens, rng,
                                          "Lap-PCA (M x M covariance, all entries); scale M² a²/(N ε) (Prop. 3)")
            return top_eigenvectors(noisy, P)[1]
        # Analyze-Gauss: rows scaled into the unit ball (||x|| <= a sqrt(M) = sqrt(M)).
        U = Xs / math.sqrt(M)
        if not math.isfinite(eps_pca):
            self._noise_rows.append({"release": "AG-PCA second moment", "mechanism": "none (ε = ∞)",
                                     "sensitivity": 0.0, "scale": 0.0, "epsilon": math.inf, "delta": 0.0})
            return top_eigenvectors(U.T @ U, P)[1]
        ag = AnalyzeGauss(eps_pca, delta_pca, row_bound=1.0, neighbouring=self.ag_neighbouring, calibration=cal)
        A = ag.randomise(U, rng, check_bound=False)
        rel = ag.release("AG-PCA second moment X'X/M")
        self.privacy_ledger_.add(dataclasses.replace(rel, sensitivity_source=self._sens_source))
        self._noise_rows.append({"release": "AG-PCA second moment", "mechanism": "gaussian",
                                 "sensitivity": ag.sensitivity, "scale": ag.sigma, "epsilon": eps_pca,
                                 "delta": delta_pca})
        return top_eigenvectors(A, P)[1]

    # ---------------------------------------------------------------- fit
    def fit(self, X, y=None, X_public=None, y_public=None):
        """Fit the DP generative model.

        Parameters
        ----------
        X : array (N, M), private training records (rows).
        y : array (N,), response (regression) or labels (classification); ignored when unsupervised.
        X_public : array (n_pub, M), a disjoint public slice (Pub-PCA; strict-mode bounds).
        y_public : array (n_pub,), public responses (strict regression: bounds of y).

        Returns
        -------
        self
        """
        p = self._resolved()
        task, mode, source, eps = p["task"], p["mode"], p["source"], p["eps"]
        if task == "unsupervised":
            X = validate_data(self, X, dtype=float, ensure_min_samples=2)
            y = None
        else:
            if y is None:
                raise ValueError(f"task={task!r} needs y")
            if task == "regression":
                X, y = validate_data(self, X, y, dtype=float, y_numeric=True, ensure_min_samples=2)
                y = np.asarray(y, dtype=float)
            else:
                X, y = validate_data(self, X, y, dtype=float, ensure_min_samples=2)
        if X_public is not None:
            X_public = check_array(X_public, dtype=float)
            if X_public.shape[1] != X.shape[1]:
                raise ValueError(f"X_public has {X_public.shape[1]} columns, X has {X.shape[1]}")
        N, M = X.shape
        P = M if source == "identity" else int(self.n_components)
        if P > M:
            raise ValueError(f"n_components = {P} exceeds the number of features M = {M}")
        rng = as_generator(self.random_state)
        self._sens_source = "data" if mode == "paper" else "public"
        self.privacy_ledger_ = PrivacyLedger()  # sensitivities are replace-one already; see module docstring
        self._noise_rows = []

        # --- budget split (spec 2.5)
        if source in ("laplace", "analyze_gauss"):
            eps_pca, eps_gauss = p["alpha"] * eps, (1.0 - p["alpha"]) * eps
        else:
            eps_pca, eps_gauss = 0.0, eps
        if self.delta is not None:
            delta_pca = float(self.delta)
            if not 0 < delta_pca < 1:
                raise ValueError(f"delta must be in (0, 1), got {self.delta}")
        else:
            delta_pca = 1.0 / N  # the paper's choice for AG-PCA (weak: spec 9.8)
        cal = self.calibration
        if cal == "auto":
            cal = "classic" if (mode == "paper" and eps_pca <= 1) else "analytic"
        if cal == "classic" and math.isfinite(eps_pca) and eps_pca > 1:
            cal = "analytic"  # the classic formula is proven only for eps <= 1

        # --- scaling and clipping to the box (a = 1)
        self.scaling_ = self._fit_scaling(X, y, X_public, y_public, mode, task)
        Xs, self.clip_report_ = clip_abs((X - self.scaling_["centre"]) / self.scaling_["scale"], 1.0)
        Xp_s = self._box(X_public, self.scaling_) if X_public is not None else None
        ys = None
        if task == "regression":
            ys = np.clip((y - self.scaling_["y_centre"]) / self.scaling_["y_scale"], -1.0, 1.0)

        # --- projection W and projected data
        W = self._projection(Xs, Xp_s, source, P, eps_pca, delta_pca, p["lap"], rng, cal)
        norm = 1.0 if source == "identity" else math.sqrt(M)
        Z = Xs @ W / norm
        self.components_ = W
        self._norm = norm
        self.released_projection_ = source != "nonprivate"
        identity_dim = M if source == "identity" else None

        self.epsilon_pca_, self.epsilon_gauss_ = eps_pca, eps_gauss
        self.epsilon_mu_ = self.epsilon_sigma_ = self.epsilon_count_ = 0.0
        self.delta_pca_ = delta_pca if source == "analyze_gauss" else 0.0
        self.n_train_, self.n_released_ = N, P + (1 if task == "regression" else 0)
        self._params = p
        if task == "classification":
            self._fit_classes(Z, y, eps_gauss, mode, p, identity_dim, rng)
        else:
            self._fit_single(Z, ys, eps_gauss, mode, p, identity_dim, source, rng)
        self.noise_log_ = pd.DataFrame(self._noise_rows)
        self._sample_rng = np.random.default_rng(rng.integers(0, 2**63 - 1))
        del self._noise_rows
        return self

    def _fit_single(self, Z, ys, eps_g, mode, p, identity_dim, source, rng):
        N, P = Z.shape
        task = p["task"]
        V = Z if ys is None else np.column_stack([Z, ys])
        d = V.shape[1]
        if source == "nonprivate":
            # Algorithm 1: the query is the P eigenvalues of W'X'XW/(MN); off-diagonals are exactly 0.
            S = V.T @ V / N
            rule = "paper" if mode == "paper" and p["sens"] == "paper" else "tight"
            sens = sensitivities("unsupervised", P, N, rule=rule, nonprivate_w=True)["eigenvalues"]
            self.epsilon_sigma_ = eps_g
            if mode == "paper":
                # As printed: Laplace noise on all P^2 entries of S (scale P a^2/(N eps)).
                S_priv = self._lap_release("Alg. 1 covariance S (P x P)", S, eps_g, sens, rng,
                                           "Algorithm 1: noise on all P² entries; the query is the P eigenvalues")
            else:
                lam = self._lap_release("Alg. 1 eigenvalues (P)", np.diag(S), eps_g, sens, rng,
                                        "Algorithm 1, strict: only the P eigenvalues (Lidskii-Mirsky bound)")
                S_priv = np.diag(lam)
            self._set_gaussian(np.zeros(d), S_priv, p["psd"])
            return
        if mode == "paper":
            rule = p["sens"]
            sens = sensitivities(task, P, N, rule=rule, identity_dim=identity_dim)["second_moment"]
            self.epsilon_sigma_ = eps_g
            name = "Alg. 2 second moment S_a" if task == "regression" else "Alg. 2 (no y) second moment S"
            S_priv = self._lap_release(f"{name} ({d} x {d})", V.T @ V / N, eps_g, sens, rng,
                                       "paper: centred with the (private) training mean, zero mean assumed")
            self._set_gaussian(np.zeros(d), S_priv, p["psd"])
            return
        # strict: DP mean (mean_share) and uncentred second moment about the public centre; cov = M2 - mu mu'.
        sens = sensitivities(task, P, N, rule="strict", identity_dim=identity_dim)
        eps_mu = float(self.mean_share) * eps_g
        eps_s = eps_g - eps_mu
        self.epsilon_mu_, self.epsilon_sigma_ = eps_mu, eps_s
        mu = self._lap_release(f"mean ({d})", V.mean(axis=0), eps_mu, sens["mean"], rng,
                               "strict: rows in the public box, about the public centre")
        M2 = self._lap_release(f"second moment ({d} x {d})", V.T @ V / N, eps_s, sens["second_moment"], rng,
                               "strict: uncentred, about the public centre (no data-dependent centring)")
        self._set_gaussian(mu, M2 - np.outer(mu, mu), p["psd"])

    def _set_gaussian(self, mean, C, psd):
        self.mean_ = np.asarray(mean, dtype=float)
        self.covariance_raw_ = np.asarray(C, dtype=float)
        self.covariance_, self.min_eig_before_fix_, self.psd_fixed_ = _sampling_covariance(C, psd)

    def _fit_classes(self, Z, y, eps_g, mode, p, identity_dim, rng):
        classes, y_idx = np.unique(y, return_inverse=True)
        if classes.size < 2:
            raise ValueError("classification needs at least two classes in y")
        N, P = Z.shape
        L = classes.size
        counts = np.bincount(y_idx, minlength=L).astype(float)
        means, covs_raw = [], []
        if mode == "paper":
            eps_mu = float(self.mean_share) * eps_g
            eps_s = eps_g - eps_mu
            self.epsilon_mu_, self.epsilon_sigma_ = eps_mu, eps_s
            sens = sensitivities("classification", P, N, rule=p["sens"], identity_dim=identity_dim,
                                 class_counts=counts)
            mech_mu = mech_s = None
            for c in range(L):
                mu_c, S_c = alg3_class_moments(Z[y_idx == c])
                extra = {"class": str(classes[c]), "N_C": int(counts[c])}
                mu_p, m1 = self._noisy(f"class mean ({P})", mu_c, eps_mu, sens["class_mean"][c], rng,
                                       log_extra=extra)
                S_p, m2 = self._noisy(f"class covariance ({P} x {P})", S_c, eps_s, sens["class_covariance"][c],
                                      rng, log_extra=extra)
                mech_mu, mech_s = mech_mu or m1, mech_s or m2
                means.append(mu_p)
                covs_raw.append(S_p)
            # Per class the scale is sensitivity_C / eps, so every class's release has the same epsilon:
            # one record per statistic stands for all classes (parallel composition over disjoint classes).
            par = f"parallel composition over {L} disjoint classes (per-class scales in noise_log_)"
            self._record(mech_mu, f"class means ({L} x {P})",
                         f"Alg. 3 means (first class's sensitivity shown); exact class counts used, not private; {par}")
            self._record(mech_s, f"class covariances ({L} x {P} x {P})",
                         f"Alg. 3 covariances centred with the exact class mean; {par}")
            self.class_counts_ = counts
            syn_weights = counts
        else:
            sens = sensitivities("classification", P, N, rule="strict", identity_dim=identity_dim)
            eps_c = float(self.count_share) * eps_g
            eps_mu = float(self.mean_share) * eps_g
            eps_s = eps_g - eps_c - eps_mu
            self.epsilon_count_, self.epsilon_mu_, self.epsilon_sigma_ = eps_c, eps_mu, eps_s
            sums = np.stack([Z[y_idx == c].sum(axis=0) for c in range(L)])
            seconds = np.stack([Z[y_idx == c].T @ Z[y_idx == c] for c in range(L)])
            par = f"all {L} classes in one release (one record touches at most two classes)"
            n_noisy = self._lap_release(f"class counts ({L})", counts, eps_c, sens["counts"], rng,
                                        f"strict: noisy N_C; {par}")
            sums_noisy = self._lap_release(f"class sums ({L} x {P})", sums, eps_mu, sens["class_sums"], rng,
                                           f"strict: unnormalised, about the public centre; {par}")
            sec_noisy = self._lap_release(f"class second moments ({L} x {P} x {P})", seconds, eps_s,
                                          sens["class_second_moments"], rng, f"strict: unnormalised; {par}")
            denom = np.maximum(n_noisy, 1.0)  # post-processing of released counts only
            for c in range(L):
                mu_c = sums_noisy[c] / denom[c]
                means.append(mu_c)
                covs_raw.append(sec_noisy[c] / denom[c] - np.outer(mu_c, mu_c))
            self.class_counts_ = n_noisy
            syn_weights = np.clip(n_noisy, 0.0, None)
        self.classes_ = classes
        self.class_means_ = np.stack(means)
        self.class_covariances_raw_ = np.stack(covs_raw)
        fixed = [_sampling_covariance(C, p["psd"]) for C in covs_raw]
        self.class_covariances_ = np.stack([f[0] for f in fixed])
        self.min_eig_before_fix_ = float(min(f[1] for f in fixed))
        self.class_min_eig_before_fix_ = np.array([f[1] for f in fixed])
        self.psd_fixed_ = bool(any(f[2] for f in fixed))
        self._syn_weights = syn_weights
        # Pooled moments in the released space, for plots and summaries.
        self.mean_ = np.average(self.class_means_, axis=0, weights=np.maximum(syn_weights, 1e-12))
        self.covariance_raw_ = self.covariance_ = None

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
        eps_total, delta_total = self.privacy_ledger_.total("basic") if len(self.privacy_ledger_) else (0.0, 0.0)
        return {
            "epsilon_nominal": float(self.epsilon), "epsilon_pca": self.epsilon_pca_,
            "epsilon_gauss": self.epsilon_gauss_, "epsilon_count": self.epsilon_count_,
            "epsilon_mu": self.epsilon_mu_, "epsilon_sigma": self.epsilon_sigma_, "delta": self.delta_pca_,
            "epsilon_ledger_basic": eps_total, "delta_ledger_basic": delta_total,
            "proven": self.privacy_ledger_.proven and len(self.privacy_ledger_) > 0,
        }


# =============================================================================================
# Export (plain JSON, no pickle)
# =============================================================================================
MODEL_FORMAT = "privalab.pca_gauss/1"


def model_to_dict(model: PCAGauss) -> dict:
    """A fitted PCAGauss as plain JSON data: params, every public fitted attribute, the privacy ledger."""
    from sklearn.utils.validation import check_is_fitted

    from ..export import estimator_to_dict

    check_is_fitted(model, "components_")
    return estimator_to_dict(model, MODEL_FORMAT, state=("_norm", "_params", "_syn_weights"))


def to_json(model: PCAGauss, **json_kwargs) -> str:
    """``model_to_dict`` as strict JSON (non-finite numbers become "nan"/"inf"/"-inf" strings)."""
    from ..export import dumps

    return dumps(model_to_dict(model), **json_kwargs)


def model_from_dict(data) -> PCAGauss:
    """A PCAGauss with the exported params and fitted attributes, from ``model_to_dict`` output or its JSON."""
    from ..export import estimator_from_dict

    model = estimator_from_dict(data, PCAGauss, MODEL_FORMAT)
    model._sample_rng = np.random.default_rng()  # the fit's stream is not exported: sample() starts a fresh one
    return model
