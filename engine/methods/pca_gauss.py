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
- ``mode="strict"`` is provably eps-DP (or (eps, delta) with AG-PCA) when every input it treats as
  public really is: the centre and bounds come from ``bounds=(lower, upper)`` (values the caller
  declares public: documentation, domain knowledge) or ``bounds="public"`` (the range of ``X_public``,
  a separate data set the caller declares public), never from the private rows; the centre is the
  midpoint of the bounds; every entry is clipped to the box; second moments are about that public
  centre (no data-dependent centring); means are released privately (a budget slice); the label
  set is the public parameter ``labels``; noisy class counts N_C + Lap(2/eps_cnt) with per-class sums
  and second moments divided by them; Lap-PCA at M^2; the PSD fix by eigenvalue clipping
  (post-processing); the Algorithm 1 eigenvalues released alone with the Lidskii-Mirsky bound
  min(P, 2) a^2/N. ``bounds="data"`` (or a label set read from y, a public slice not declared
  public, a known noise seed) still runs, but the ledger carries a "not proven: ..." caveat.

Neighbours are "bounded" (replace one record, **N public**) as in the paper; sensitivities are L1
(Laplace) or L2 (Analyze-Gauss), each computed for replace-one, and the ledger says so
(``neighbouring="replace"``): the number of training rows N is treated as public. Every release goes
through ``engine.privacy`` (``LaplaceMechanism``, ``AnalyzeGauss``) into ``privacy_ledger_``, with noise
from :func:`engine.privacy.noise_generator` (fresh OS entropy unless a seed is given; a known seed is a
ledger caveat). With ``epsilon=inf`` no noise is added and the ledger stays empty ("no privacy").

Sharing (issue #15): :func:`shareable_release` builds the one shareable export of a fit with
:func:`engine.release.build_release` from an explicit field list (DP outputs and declared-public
inputs only: never Algorithm 1's non-private W, never bounds read off the private data, never exact
class counts); :func:`owner_sheets` gathers what only the owner may see (non-private W, data ranges,
clip counts, the noise log). :func:`pipeline_audit_case` is the end-to-end audit of the page's strict
release.

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
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.utils.validation import check_array, check_is_fitted, validate_data

from engine.methods.column_checks import check_columns, frame_names, raise_if_non_numeric, series_name
from engine.privacy import (
    SEED_KNOWN_CAVEAT,
    AnalyzeGauss,
    LaplaceMechanism,
    PrivacyLedger,
    as_generator,
    clip_abs,
    noise_generator,
)

__all__ = [
    "ALPHA_GRID",
    "CAVEATS",
    "PCA_SOURCES",
    "PCAGauss",
    "TASKS",
    "FINDINGS",
    "N_PUBLIC_NOTE",
    "alg1_release_query",
    "read_public",
    "read_records",
    "alg3_class_moments",
    "lap_pca_noise_scale",
    "sensitivities",
    "top_eigenvectors",
    "MODEL_FORMAT",
    "model_from_dict",
    "model_from_release",
    "owner_sheets",
    "pipeline_audit_case",
    "shareable_release",
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


#: What the ledger says when an input treated as public was not (each makes the fit "not proven").
CAVEATS = {
    "bounds_data": "not proven: the bounds and centre were read off the private data (declare public bounds)",
    "y_bounds_data": "not proven: the bounds of y were read off the private data (declare public bounds of y)",
    "labels_data": "not proven: the label set was read from the private labels (declare the label set public)",
    "public_undeclared": "not proven: the 'public' rows X_public were not declared public (they are rows of the "
                         "private upload)",
    "paper_scaling": "not proven: centre and scale read off the private training data (paper-faithful mode)",
}
#: The neighbouring relation, as the page and the release state it.
N_PUBLIC_NOTE = ("Neighbouring data sets replace one record (bounded DP, as in the paper): the number of private "
                 "training rows N is the same in both and is treated as public.")


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
# Input checks (issue #16)
# --------------------------------------------------------------------------------------------
def read_records(est, X, y, task: str):
    """Checked float X (N, M) and y of ``fit`` (PCAGauss and the baselines); sets ``n_features_in_``.

    Refused with a ``ValueError`` that names the column (``column_checks``): text, NaN, inf, overflow
    (squares past 1.8e308) and underflow (a column too small to square), in X and in a regression y.
    Constant and duplicated columns are **accepted**: PCA inverts nothing, a constant feature stays at 0
    in the box (and in the synthetic rows), and identical features only lower the rank of the second
    moment (scikit-learn's digits has constant pixels, some identical to each other).
    """
    x_names = frame_names(X)
    if task != "unsupervised":
        if y is None:
            raise ValueError(f"{type(est).__name__} with task={task!r} requires y to be passed, but the target "
                             "y is None")
        if task == "regression":
            y_name = series_name(y)
            try:
                ya = check_array(y, ensure_2d=False, dtype=np.float64, ensure_all_finite=False, input_name="y",
                                 ensure_min_samples=1)
            except (ValueError, TypeError) as exc:
                raise_if_non_numeric(y, "y", [y_name], single=True, cause=exc)
                raise
            if ya.ndim == 1 or (ya.ndim == 2 and ya.shape[1] == 1):
                check_columns(ya.reshape(-1, 1), "y", [y_name], single=True, constant=False, duplicates=False)
    try:
        if task == "unsupervised":
            X = validate_data(est, X, dtype=float, ensure_all_finite=False, ensure_min_samples=2)
        else:
            X, y = validate_data(est, X, y, dtype=float, ensure_all_finite=False, y_numeric=task == "regression",
                                 ensure_min_samples=2)
    except (ValueError, TypeError) as exc:
        raise_if_non_numeric(X, "X", x_names, cause=exc)
        raise
    check_columns(X, "X", x_names, constant=False, duplicates=False)
    if task == "regression":
        y = np.asarray(y, dtype=float)
    return X, (None if task == "unsupervised" else y)


def read_public(X_public, M: int, what: str = "X_public") -> np.ndarray:
    """A checked public slice (n_pub, M): the values checks of :func:`read_records`, with its own name."""
    names = frame_names(X_public)
    try:
        Xp = check_array(X_public, dtype=float, ensure_all_finite=False, input_name=what)
    except (ValueError, TypeError) as exc:
        raise_if_non_numeric(X_public, what, names, cause=exc)
        raise
    if Xp.shape[1] != M:
        raise ValueError(f"{what} has {Xp.shape[1]} columns, X has {M}")
    check_columns(Xp, what, names, constant=False, duplicates=False)
    return Xp


# --------------------------------------------------------------------------------------------
# The estimator
# --------------------------------------------------------------------------------------------
class _ReleaseTransformer(ClassNamePrefixFeaturesOutMixin, TransformerMixin):
    """Mixin (put before BaseEstimator): what PCA-Gauss and its baselines share as scikit-learn transformers: y is required for the supervised
    tasks, and ``transform`` returns P projected columns named ``<class>0 .. <class>P-1``."""

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = self.task in ("regression", "classification")
        return tags

    @property
    def _n_features_out(self) -> int:
        """Number of columns ``transform`` returns (P), for ``get_feature_names_out``."""
        return self.components_.shape[1]


class PCAGauss(_ReleaseTransformer, BaseEstimator):
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
    n_train_, n_features_in_, n_released_ : sizes (N is public under replace-one neighbours).
    released_projection_ : whether W may be published (False for Algorithm 1's non-private W and for a W
    from undeclared "public" rows). bounds_source_ : "declared", "public data", "private data" or
    "paper scaling". labels_declared_ : whether ``classes_`` is the declared public label set.
    clip_report_ : ClipReport of the box clipping of the training data (owner's view: exact counts).
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
        if mode == "strict" and self.ag_neighbouring != "replace":
            raise ValueError("strict mode uses replace-one neighbours (N public) for every release: "
                             "ag_neighbouring must be 'replace'")
        choice("calibration", self.calibration, ("auto", "analytic", "classic"))
        return {"task": task, "mode": mode, "source": source, "eps": eps, "alpha": alpha, "psd": psd,
                "lap": lap, "sens": sens}

    # ---------------------------------------------------------------- scaling to the [-1, 1] box
    def _fit_scaling(self, X, y, X_public, y_public, mode, task) -> dict:
        """Centre and scale of the [-1, 1] box, and where they come from.

        Returns a dict with centre (M,), scale (M,), source (text), bounds_source ("declared",
        "public data", "private data", "paper scaling"), caveats (list of ledger caveats) and, for
        regression, y_centre, y_scale, y_bounds_source.
        """
        caveats: list = []
        if mode == "paper":
            # Spec Sec. 2 pre-processing: centre with the training mean, divide by the max |.| (not private).
            centre = X.mean(axis=0)
            scale = np.abs(X - centre).max(axis=0)
            out = {"source": "training data (centre and max-abs scale; not private)", "bounds_source": "paper scaling"}
            caveats.append(CAVEATS["paper_scaling"])
            if task == "regression":
                yc = float(y.mean())
                ys = float(np.abs(y - yc).max())
                out.update(y_centre=yc, y_scale=ys if ys > 0 else 1.0, y_bounds_source="paper scaling")
        else:
            lo, hi, kind = self._resolve_bounds(self.bounds, X, X_public, "bounds", (X.shape[1],))
            caveats += self._bounds_caveats(kind, "bounds_data")
            centre, scale = (lo + hi) / 2.0, (hi - lo) / 2.0
            out = {"source": {"declared": "public bounds (declared)", "public data": "public bounds (range of the "
                              "declared public data)", "private data": "bounds read off the private data "
                              "(not proven)"}[kind], "bounds_source": kind}
            if task == "regression":
                ylo, yhi, ykind = self._resolve_bounds(self.y_bounds, y, y_public, "y_bounds", ())
                caveats += self._bounds_caveats(ykind, "y_bounds_data")
                ylo, yhi = float(ylo), float(yhi)
                out.update(y_centre=(ylo + yhi) / 2.0, y_scale=(yhi - ylo) / 2.0 or 1.0, y_bounds_source=ykind)
        scale = np.where(scale > 0, scale, 1.0)  # a constant feature stays at 0
        out.update(centre=np.asarray(centre, dtype=float), scale=np.asarray(scale, dtype=float), caveats=caveats)
        return out

    def _bounds_caveats(self, kind, key) -> list:
        if kind == "private data":
            return [CAVEATS[key]]
        if kind == "public data" and not self.public_declared:
            return [CAVEATS["public_undeclared"]]
        return []

    @staticmethod
    def _resolve_bounds(spec, private, public, name, shape):
        """(lower, upper, kind) for a bounds parameter (see the class docstring); kind as ``bounds_source_``."""
        what = "y" if name == "y_bounds" else "the features"
        if spec is None:
            raise ValueError(
                f"strict mode needs public bounds of {what}: pass {name}=(lower, upper) with values you declare "
                f"public (documentation, domain knowledge), {name}='public' with a separate public data set, or "
                f"{name}='data' to read them off the private rows (not proven)")
        if isinstance(spec, str):
            if spec == "data":
                arr = np.asarray(private, dtype=float)
                return arr.min(axis=0), arr.max(axis=0), "private data"
            if spec == "public":
                if public is None or len(public) == 0:
                    raise ValueError(f"{name}='public' needs the separate public data set "
                                     f"({'y_public' if name == 'y_bounds' else 'X_public'}) in fit")
                arr = np.asarray(public, dtype=float)
                return arr.min(axis=0), arr.max(axis=0), "public data"
            raise ValueError(f"{name} must be (lower, upper), 'public' or 'data', got {spec!r}")
        try:
            lo, hi = spec
            lo = np.broadcast_to(np.asarray(lo, dtype=float), shape).copy()
            hi = np.broadcast_to(np.asarray(hi, dtype=float), shape).copy()
        except (TypeError, ValueError):
            raise ValueError(f"{name} must be (lower, upper) with scalars or arrays of shape {shape}") from None
        if not (np.all(np.isfinite(lo)) and np.all(np.isfinite(hi))):
            raise ValueError(f"{name}: every bound must be a finite number")
        if np.any(hi < lo):
            raise ValueError(f"{name}: every upper bound must be >= its lower bound")
        return lo, hi, "declared"

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
        capture = getattr(self, "_capture", None)
        if capture is not None:  # pipeline_audit_case: the exact query value and its noise call
            capture.append((name, value.copy(), mech))
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
        X, y = read_records(self, X, y, task)
        if X_public is not None:
            X_public = read_public(X_public, X.shape[1], "X_public")
        N, M = X.shape
        P = M if source == "identity" else int(self.n_components)
        if P > M:
            raise ValueError(f"n_components = {P} exceeds the number of features (n_features = {M})")
        rng, seed_known = noise_generator(self.random_state)
        self._sens_source = "data" if mode == "paper" else "public"
        # Every sensitivity below is for replace-one neighbours (N public), and the ledger says so.
        self.privacy_ledger_ = PrivacyLedger(neighbouring="replace")
        if seed_known:
            self.privacy_ledger_.add_caveat(SEED_KNOWN_CAVEAT)
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
        for reason in self.scaling_.pop("caveats"):
            self.privacy_ledger_.add_caveat(reason)
        self.bounds_source_ = self.scaling_["bounds_source"]
        if source == "public" and not self.public_declared:
            self.privacy_ledger_.add_caveat(CAVEATS["public_undeclared"])
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
        # W may be published only if it is itself a release or public: never Algorithm 1's W (computed from the
        # private rows without noise), nor a Pub-PCA W from rows nobody declared public.
        self.released_projection_ = source != "nonprivate" and not (source == "public" and not self.public_declared)
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

    def _label_set(self, y, mode):
        """(classes (L,), index of each y in classes (N,), declared?) from ``labels`` or, failing that, y."""
        if self.labels is None or mode == "paper":
            classes, y_idx = np.unique(y, return_inverse=True)
            if classes.size < 2:
                raise ValueError("classification needs at least two classes in y")
            return classes, y_idx, False
        classes = np.asarray(list(self.labels))
        if classes.ndim != 1 or classes.size < 2:
            raise ValueError("labels must list at least two class values")
        try:  # declared labels typed as text ("0", "1") match integer labels of y
            classes = classes.astype(np.asarray(y).dtype)
        except (TypeError, ValueError):
            pass
        keys = [str(c) for c in classes]
        if len(set(keys)) != len(keys):
            raise ValueError("labels: the declared label set holds a value twice")
        index = {k: i for i, k in enumerate(keys)}
        y_keys = np.asarray(y).astype(str)
        unknown = sorted(set(y_keys) - set(index))
        if unknown:
            raise ValueError(f"y holds {len(unknown)} label value(s) outside the declared label set "
                             f"(e.g. {unknown[0]!r}): declare every label, or drop those rows")
        return classes, np.array([index[k] for k in y_keys], dtype=int), True

    def _fit_classes(self, Z, y, eps_g, mode, p, identity_dim, rng):
        classes, y_idx, declared = self._label_set(y, mode)
        self.labels_declared_ = declared
        if not declared and mode == "strict":
            self.privacy_ledger_.add_caveat(CAVEATS["labels_data"])
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
            noisy_any = False
            for c in range(L):
                mu_c, S_c = alg3_class_moments(Z[y_idx == c])
                extra = {"class": str(classes[c]), "N_C": int(counts[c])}
                mu_p, m1 = self._noisy(f"class mean ({P})", mu_c, eps_mu, sens["class_mean"][c], rng,
                                       log_extra=extra)
                S_p, m2 = self._noisy(f"class covariance ({P} x {P})", S_c, eps_s, sens["class_covariance"][c],
                                      rng, log_extra=extra)
                noisy_any = noisy_any or m1 is not None
                means.append(mu_p)
                covs_raw.append(S_p)
            # Per class the scale is sensitivity_C / eps, so every class's release has the same epsilon:
            # one record per statistic stands for all classes (parallel composition over disjoint classes).
            # The record is written per unit of N_C (sensitivity N_C s_C, scale N_C s_C / eps: the same noise
            # multiplier, so the same epsilon): an exact class count must not reach the ledger, which is shared.
            if noisy_any:
                par = f"parallel composition over {L} disjoint classes (per-class scales in the owner's noise log)"
                # N_C = 1 gives the per-unit sensitivities (exact for "paper"; for "tight" an upper bound of
                # N_C s_C, whose 4 l1^2 / N_C term is at most 4 l1^2).
                unit = sensitivities("classification", P, N, rule=p["sens"], identity_dim=identity_dim,
                                     class_counts=[1.0])
                u_mu, u_s = float(unit["class_mean"][0]), float(unit["class_covariance"][0])
                self._record(LaplaceMechanism(eps_mu, u_mu), f"class means ({L} x {P})",
                             f"Alg. 3 means: sensitivity {u_mu:.4g} a/N_C per class, recorded per unit of N_C; "
                             f"exact class counts used, not private; {par}")
                self._record(LaplaceMechanism(eps_s, u_s), f"class covariances ({L} x {P} x {P})",
                             f"Alg. 3 covariances centred with the exact class mean: sensitivity "
                             f"{'at most ' if p['sens'] == 'tight' else ''}{u_s:.4g} a²/N_C per class, recorded per "
                             f"unit of N_C; {par}")
            self.class_counts_ = counts
            syn_weights = counts
        else:
            sens = sensitivities("classification", P, N, rule="strict", identity_dim=identity_dim)
            eps_c = float(self.count_share) * eps_g
            eps_mu = float(self.mean_share) * eps_g
            eps_s = eps_g - eps_c - eps_mu
            self.epsilon_count_, self.epsilon_mu_, self.epsilon_sigma_ = eps_c, eps_mu, eps_s
            # An empty declared class still gets its (noisy) count, sum and second moment: the label set is public.
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




# =============================================================================================
# The two kinds of export (issue #15): the shareable release and the owner's sheets
# =============================================================================================
MODEL_FORMAT = "privalab.pca_gauss.release/1"
_PCA_RELEASE_PREFIXES = ("Lap-PCA", "AG-PCA", "OpenDP")


def _public_bounds(model) -> tuple[bool, bool]:
    """(feature bounds public?, y bounds public?) of a fitted model (declared, or a declared public data set)."""
    ok = {"declared"} | ({"public data"} if model.public_declared else set())
    feat = model.bounds_source_ in ok
    y_ok = model.scaling_.get("y_bounds_source") in ok if "y_centre" in model.scaling_ else feat
    return feat, y_ok


def can_map_back(model) -> bool:
    """Whether synthetic rows may be mapped back to the original features in a shareable file: W released
    (or public) and the box's centre and scale public."""
    return bool(model.released_projection_) and _public_bounds(model)[0]


def shareable_release(model: PCAGauss, *, extra_notes=None) -> dict:
    """The shareable release of a fitted ``PCAGauss``, built by :func:`engine.release.build_release`.

    Fields, each with its provenance: the constructor parameters the user declared (ε, δ, task, k,
    W source, budget shares, public bounds, the public label set); the budget split; N (public under
    replace-one); W only when it is itself a DP release (Lap-PCA, AG-PCA, OpenDP) or public (Pub-PCA on a
    declared public data set, identity, a given W); the box's centre and scale only when the bounds are
    public; the DP Gaussian (mean, noisy and PSD-fixed covariance) or per-class Gaussians (noisy class
    sizes, means, covariances); the PSD log (post-processing). Never Algorithm 1's non-private W, bounds
    read off the private data, exact class counts, clip counts or the noise log.

    Raises
    ------
    ValueError : nothing released with noise (ε = ∞: no privacy), or a classification fit whose label
        set was read from the private labels (paper mode, or strict mode without ``labels``).
    """
    from engine.privacy.wording import ledger_text
    from engine.release import Field, build_release
    from engine.report import plain_text

    check_is_fitted(model, "privacy_ledger_")
    led = model.privacy_ledger_
    if not len(led):
        raise ValueError("nothing was released with noise (ε = ∞: no privacy): a non-private model is not a "
                         "shareable release; it belongs in the owner's workbook")
    p = model._params
    task, mode, source = p["task"], p["mode"], p["source"]
    if task == "classification" and not getattr(model, "labels_declared_", False):
        why = ("paper-faithful Algorithm 3 uses the exact class counts and the label set of the private labels"
               if mode == "paper" else "the label set was read from the private labels")
        raise ValueError(f"no shareable release: {why}. Declare the label set public (labels=...) in strict mode.")
    names = [r.name for r in led.entries]
    pca_rel = [n for n in names if n.startswith(_PCA_RELEASE_PREFIXES)]
    gauss = ", ".join(n for n in names if n not in pca_rel)
    declared = "declared public by the user"
    F = []
    params = {"n_components": model.n_components, "epsilon": model.epsilon, "task": task, "pca_source": source,
              "mode": mode, "alpha": model.alpha, "mean_share": model.mean_share, "delta": model.delta,
              "psd": model.psd, "lap_pca_scale": model.lap_pca_scale, "sens": model.sens,
              "public_declared": model.public_declared, "ag_neighbouring": model.ag_neighbouring,
              "calibration": model.calibration, "n_synthetic": model.n_synthetic}
    feat_public, y_public = _public_bounds(model)
    for key, value in (("bounds", model.bounds), ("y_bounds", model.y_bounds)):
        if value is None or isinstance(value, str):
            params[key] = value  # None, "public" or "data": a word, not a value of the data
        else:
            params[key] = tuple(np.asarray(v, dtype=float) for v in value)
    if model.labels is not None and mode == "strict":
        params["labels"] = np.asarray(model.classes_)
    F += [Field(k, v, "public", declared, role="param") for k, v in params.items()]
    split = {"epsilon_pca": model.epsilon_pca_, "epsilon_gauss": model.epsilon_gauss_,
             "epsilon_class_sizes": model.epsilon_count_, "epsilon_mu": model.epsilon_mu_,
             "epsilon_sigma": model.epsilon_sigma_, "delta_pca": model.delta_pca_,
             "class_size_share": model.count_share}
    F.append(Field("budget_split", split, "public", "the declared ε, δ and budget shares", role="info"))
    F.append(Field("n_samples", int(model.n_train_), "public",
                   "the number of training rows N (public under replace-one neighbours)", role="info"))
    F.append(Field("n_features_in_", int(model.n_features_in_), "public", "the table's schema"))
    F.append(Field("n_released_", int(model.n_released_), "public", "k (and y) declared by the user"))
    F.append(Field("released_projection_", bool(model.released_projection_), "public", "the W source"))
    notes = [N_PUBLIC_NOTE]
    # Pub-PCA's W is the PCA of the public rows *in the box*: public only when the box itself is public (with
    # paper scaling or bounds read off the data it depends on the private rows without noise).
    w_shareable = model.released_projection_ and (source != "public" or feat_public)
    if w_shareable:
        if source in ("laplace", "analyze_gauss") or (source == "given" and pca_rel):
            F.append(Field("components_", model.components_, "dp", ", ".join(pca_rel)))
        else:
            why = {"public": "PCA of the separate data set declared public", "identity": "identity (no reduction)",
                   "given": "W given by the caller, declared independent of the private data"}[source]
            F.append(Field("components_", model.components_, "public", why))
    else:
        notes.append("W is not part of this release: " + (
            "Algorithm 1 computes it from the private rows without noise, so the synthetic rows live in an "
            "anonymous k-dimensional space." if source == "nonprivate" else
            "it was computed from rows nobody declared public." if not model.released_projection_ else
            "the public rows were scaled with a box read off the private data."))
    if feat_public:
        scaling = {"centre": model.scaling_["centre"], "scale": model.scaling_["scale"],
                   "source": model.scaling_["source"], "bounds_source": model.bounds_source_}
        if "y_centre" in model.scaling_ and y_public:
            scaling.update(y_centre=model.scaling_["y_centre"], y_scale=model.scaling_["y_scale"],
                           y_bounds_source=model.scaling_["y_bounds_source"])
        F.append(Field("scaling_", scaling, "public", "midpoint and half-range of the public bounds"))
        F.append(Field("bounds_source_", model.bounds_source_, "public", "the bounds declaration"))
    else:
        notes.append("The box's centre and scale are not part of this release (they were read off the private "
                     "data): the synthetic rows stay in the scaled space.")
    if task == "classification":
        F.append(Field("classes_", np.asarray(model.classes_), "public", "the label set declared public"))
        F.append(Field("noisy_class_sizes", np.asarray(model.class_counts_, dtype=float), "dp",
                       next(n for n in names if n.startswith("class counts")), role="info"))
        F.append(Field("class_means_", model.class_means_, "dp", gauss))
        F.append(Field("class_covariances_raw_", model.class_covariances_raw_, "dp", gauss))
        F.append(Field("class_covariances_", model.class_covariances_, "dp", gauss))
        F.append(Field("class_min_eig_before_fix_", model.class_min_eig_before_fix_, "dp", gauss))
        F.append(Field("mean_", model.mean_, "dp", gauss))
    else:
        zero_mean = mode == "paper" or source == "nonprivate"
        F.append(Field("mean_", model.mean_, "public", "zero mean (the model's assumption)") if zero_mean
                 else Field("mean_", model.mean_, "dp", gauss))
        F.append(Field("covariance_raw_", model.covariance_raw_, "dp", gauss))
        F.append(Field("covariance_", model.covariance_, "dp", gauss))
    F.append(Field("min_eig_before_fix_", float(model.min_eig_before_fix_), "dp", gauss))
    F.append(Field("psd_fixed_", bool(model.psd_fixed_), "dp", gauss))
    guarantee = plain_text(ledger_text(led))
    return build_release("pca_gauss", MODEL_FORMAT, F, led, guarantee=guarantee,
                         extra_notes=notes + list(extra_notes or []))


def model_from_release(data) -> PCAGauss:
    """A ``PCAGauss`` rebuilt from :func:`shareable_release` output (dict or JSON): it samples synthetic rows,
    and maps rows when the release holds W and the public box. Private state is absent by construction."""
    from engine.release import estimator_from_release

    if isinstance(data, (str, bytes)):
        import json

        data = json.loads(data)
    model = estimator_from_release(data, PCAGauss, MODEL_FORMAT)
    from engine.export import decode_value

    types = data.get("types", {})
    info = {k: decode_value(v, f"fields.{k}", types) for k, v in data["fields"].items()}
    split = info["budget_split"]
    model.count_share = split["class_size_share"]
    model.epsilon_pca_, model.epsilon_gauss_ = split["epsilon_pca"], split["epsilon_gauss"]
    model.epsilon_count_, model.epsilon_mu_ = split["epsilon_class_sizes"], split["epsilon_mu"]
    model.epsilon_sigma_, model.delta_pca_ = split["epsilon_sigma"], split["delta_pca"]
    model.n_train_ = int(info["n_samples"])
    model._params = model._resolved()
    model._norm = 1.0 if model._params["source"] == "identity" else math.sqrt(model.n_features_in_)
    if model._params["task"] == "classification":
        model.class_counts_ = np.asarray(info["noisy_class_sizes"], dtype=float)
        model._syn_weights = np.clip(model.class_counts_, 0.0, None)
        model.covariance_raw_ = model.covariance_ = None
        model.labels_declared_ = True
    model._sample_rng = np.random.default_rng()  # sampling is post-processing: a fresh stream
    return model


def to_json(model: PCAGauss, **json_kwargs) -> str:
    """The shareable release of ``model`` as strict JSON (:func:`shareable_release`)."""
    from engine.release import release_to_json

    return release_to_json(shareable_release(model), **json_kwargs)


#: Kept name: reads the shareable release (the old full-attribute export is gone).
model_from_dict = model_from_release


def owner_sheets(model: PCAGauss, feature_names=None) -> dict:
    """What only the data owner may see about a fit (for :class:`engine.workbook.OwnerWorkbook`): the box's
    centre and scale with their source (data ranges when read off the data), clip counts, a W that is not
    released (Algorithm 1), the full noise log (per-class exact N_C in paper mode) and the sizes."""
    check_is_fitted(model, "privacy_ledger_")
    M = model.n_features_in_
    sc = model.scaling_
    box = pd.DataFrame({"lower": sc["centre"] - sc["scale"], "upper": sc["centre"] + sc["scale"],
                        "centre": sc["centre"], "half-range": sc["scale"]},
                       index=pd.Index(list(feature_names) if feature_names is not None and len(feature_names) == M
                                      else [f"x{i + 1}" for i in range(M)], name="feature"))
    out = {"box (bounds and centre)": box,
           "box source": {"features": sc["source"], "bounds source": model.bounds_source_,
                          **({"y centre": sc["y_centre"], "y scale": sc["y_scale"],
                              "y bounds source": sc.get("y_bounds_source")} if "y_centre" in sc else {})},
           "sizes (exact)": {"N training rows": int(model.n_train_), "M features": int(M),
                             "rows clipped to the box": int(model.clip_report_.n_clipped),
                             "clipping": model.clip_report_.describe("rows")},
           "noise log": model.noise_log_}
    if not model.released_projection_:
        out["W not released (private)"] = pd.DataFrame(
            model.components_, columns=[f"w{i + 1}" for i in range(model.components_.shape[1])])
    if model._params["task"] == "classification" and not getattr(model, "labels_declared_", False):
        out["label set (private)"] = {"labels read from y": ", ".join(map(str, model.classes_))}
    return out


# =============================================================================================
# End-to-end audit of the page's strict release
# =============================================================================================
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
    from engine.privacy.audit import AuditCase

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
        data = {"D": (D, None, X_pub), "D'": (Dp, None, X_pub)}
        kw = dict(task="unsupervised", pca_source=pca_source)
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
    if bug == "sensitivity_halved":
        captured = {k: [(n, v, LaplaceMechanism(m.epsilon, m.sensitivity / 2)) for n, v, m in rel]
                    for k, rel in captured.items()}
    factor = 0.5 if bug == "noise_halved" else 1.0

    def release(key, rng, n):
        parts = []
        for _, value, mech in captured[key]:
            exact = np.broadcast_to(value, (n,) + value.shape)
            noisy = mech.randomise(exact, rng)  # the fit's own noise call, n trials at once
            parts.append((exact + factor * (noisy - exact)).reshape(n, -1))
        return np.concatenate(parts, axis=1)

    name = f"pca_gauss_pipeline_{task}_{kw['pca_source']}" + (f"_bug_{bug}" if bug else "")
    scales = "; ".join(f"{n}: b = {m.scale:.4g}" for n, _, m in captured["D"])
    case = AuditCase(name, "pca_gauss", "strict", float(claim), 0.0, release, "D", "D'", what,
                     "violated" if bug else "holds", f"page pipeline ({task}, k = {P}, M = {M}, N = {N}); {scales}",
                     bug)
    case.fit_params = params  # the PCAGauss parameters of the audited fit (tests compare them with the page's)
    return case
