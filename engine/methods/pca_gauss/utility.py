"""Utility of DP synthetic data: the harness that fits, evaluates and sweeps PCA-Gauss and its baselines.

Train on synthetic, test on real held-out data (spec Sec. 5). One harness for PCA-Gauss and every baseline
(spec Sec. 4):

- ``real`` (non-private, full dimension) and ``public_only`` (the public slice alone, non-private);
- ``pca_gauss_public`` / ``pca_gauss_laplace`` / ``pca_gauss_ag`` (Algorithms 2 and 3 with Pub-, Lap-, AG-PCA),
  ``pca_gauss_alg1`` (Algorithm 1, unsupervised, non-private W);
- ``liu`` (the full-dimensional Gaussian, no reduction), ``jiang`` (Pub-PCA + identity query, i.e. input
  perturbation with Laplace noise), ``li`` (Bernoulli random projection + identity query);
- ``pca_gauss_opendp`` (OpenDP's DP PCA for W, then our Gaussian stage; slow and may stall at large eps).

Sweeps over eps, P and alpha take a progress callback. Every sweep row carries the status of its own fit's
ledger ("proven", "not proven", "no privacy"). Release noise is fresh (``noise_seed=None``) unless a noise
seed is given (then every ledger says "not proven: the noise seed is known"); ``random_state`` seeds only the
data split and the evaluation models. Nothing here is DP by itself.

The split and metrics are in :mod:`.evaluation`, the frames in :mod:`.frames`, the bundled data sets and the
frame-to-arrays adapter in :mod:`engine.data.tables`; this module re-exports them.
"""
from __future__ import annotations

import math
import time

import numpy as np
import pandas as pd

from engine.data import DataError
from engine.data.tables import (  # noqa: F401  (re-exported: the old synthetic_utility names)
    _DESCR_ROW,
    BUNDLED_SETS,
    BundledSet,
    PublicInputs,
    arrays_from_frame,
    documented_public_inputs,
    load_bundled,
)
from engine.privacy import Release
from engine.threads import one_blas_thread

from .baselines import IdentityQueryRelease
from .estimator import PCAGauss
from .evaluation import (  # noqa: F401  (re-exported: the old synthetic_utility names)
    METRICS,
    PRIMARY_METRIC,
    Split,
    _accuracy,
    _kmeans,
    _real_space,
    _rmse,
    _silhouette,
    default_public_size,
    evaluate,
    gaussian_reference_silhouette,
    make_split,
    reference_levels,
)
from .export import can_map_back
from .frames import (
    correlation_pair,
    released_frames,
    shareable_synthetic_frame,
    synthetic_frame,
)
from .sensitivity import ALPHA_GRID

__all__ = [
    "BUNDLED_SETS",
    "METHOD_LABELS",
    "METRICS",
    "PRIMARY_METRIC",
    "SOURCE_METHOD",
    "Split",
    "alpha_grid",
    "arrays_from_frame",
    "best_over",
    "build_release",
    "correlation_pair",
    "default_methods",
    "documented_public_inputs",
    "evaluate",
    "fit_release",
    "gaussian_reference_silhouette",
    "load_bundled",
    "make_split",
    "opendp_components",
    "reference_levels",
    "release_report",
    "released_frames",
    "run_method",
    "shareable_synthetic_frame",
    "summarise",
    "synthetic_frame",
    "utility_sweep",
]


# --------------------------------------------------------------------------------------------- methods
METHOD_LABELS = {
    "real": "Real data (non-private, full dimension)",
    "public_only": "Public slice only (non-private)",
    "pca_gauss_public": "PCA-Gauss, Pub-PCA",
    "pca_gauss_laplace": "PCA-Gauss, Lap-PCA",
    "pca_gauss_ag": "PCA-Gauss, AG-PCA",
    "pca_gauss_alg1": "PCA-Gauss, Alg. 1 (non-private W)",
    "pca_gauss_opendp": "OpenDP DP-PCA + our Gaussian",
    "liu": "Liu: full-dim Gaussian (no reduction)",
    "jiang": "Jiang: Pub-PCA + Laplace input perturbation",
    "li": "Li: random projection + Laplace input perturbation",
}
_PCA_GAUSS_SOURCE = {"pca_gauss_public": "public", "pca_gauss_laplace": "laplace", "pca_gauss_ag": "analyze_gauss",
                     "pca_gauss_alg1": "nonprivate", "liu": "identity"}
_USES_ALPHA = ("pca_gauss_laplace", "pca_gauss_ag", "pca_gauss_opendp")
_NON_PRIVATE = ("real", "public_only")


def default_methods(task: str) -> tuple:
    """The methods compared by default for ``task``."""
    if task == "unsupervised":
        return ("real", "pca_gauss_alg1", "pca_gauss_public", "liu", "jiang", "li")
    return ("real", "public_only", "pca_gauss_public", "pca_gauss_laplace", "pca_gauss_ag", "liu", "jiang", "li")


def opendp_components(Xs: np.ndarray, P: int, epsilon: float) -> np.ndarray:
    """W (M, P) from OpenDP's DP PCA (Amin et al. 2019) on rows already in the [-1, 1] box.

    Replace-one neighbours are 2 changes in OpenDP's symmetric distance, so ``n_changes=2``: the fit is
    epsilon-DP for our neighbouring relation. Needs ``opendp`` with its numpy extra (``randomgen``).
    """
    import opendp.prelude as dp
    dp.enable_features("contrib", "honest-but-curious", "idealized-numerics")
    from opendp.extras.sklearn.decomposition import PCA as OpenDPPCA

    N, M = Xs.shape
    model = OpenDPPCA(epsilon=float(epsilon), row_norm=math.sqrt(M), n_samples=N, n_features=M, n_components=P,
                      n_changes=2)
    model.fit(Xs)
    Q, _ = np.linalg.qr(np.asarray(model.components_, dtype=float).T)
    return Q[:, :P]


def fit_release(method: str, split: Split, *, P: int, epsilon: float, alpha: float = 0.5, mode: str = "paper",
                delta: float | None = None, random_state=None, **options):
    """A fitted release object (``PCAGauss`` or ``IdentityQueryRelease``) for one harness method.

    random_state : the release's noise (None: fresh OS entropy; anything else is a known seed and a ledger
    caveat). options : ``PCAGauss`` options (bounds, y_bounds, labels, public_declared, mean_share, ...).
    """
    task = split.task
    y = split.y_train if task != "unsupervised" else None
    common = dict(X_public=split.X_public, y_public=split.y_public)
    if method in _PCA_GAUSS_SOURCE:
        source = _PCA_GAUSS_SOURCE[method]
        est = PCAGauss(P, epsilon, task=task, pca_source=source, mode=mode, random_state=random_state, alpha=alpha,
                       delta=delta, **options)
        return est.fit(split.X_train, y, **common)
    if method in ("jiang", "li"):
        est = IdentityQueryRelease(P, epsilon, task=task, projection="public_pca" if method == "jiang" else "bernoulli",
                                   mode=mode, random_state=random_state,
                                   **{k: v for k, v in options.items()
                                      if k in ("bounds", "y_bounds", "public_declared")})
        return est.fit(split.X_train, y, **common)
    if method == "pca_gauss_opendp":
        eps_pca = alpha * epsilon
        probe = PCAGauss(P, epsilon, task=task, pca_source="public", mode=mode, **options)
        scaling = probe._fit_scaling(split.X_train, None if y is None or task != "regression" else np.asarray(y, float),
                                     split.X_public, split.y_public, mode, task)
        Xs = probe._box(split.X_train, scaling)
        started = time.perf_counter()
        W = opendp_components(Xs, P, eps_pca) if math.isfinite(eps_pca) else \
            PCAGauss(P, np.inf, task="unsupervised", pca_source="nonprivate", mode="paper").fit(Xs).components_
        seconds = time.perf_counter() - started
        est = PCAGauss(P, (1 - alpha) * epsilon, task=task, pca_source="given", components=W, mode=mode,
                       random_state=random_state, delta=delta, **options).fit(split.X_train, y, **common)
        if math.isfinite(eps_pca):
            est.privacy_ledger_.entries.insert(0, Release(
                name="OpenDP DP-PCA (mean, eigenvalues, eigenvectors)", mechanism="laplace", sensitivity=1.0,
                scale=1.0 / eps_pca, epsilon=eps_pca, delta=0.0, calibration="opendp",
                sensitivity_source="data" if mode == "paper" else "public",
                note="pure ε-DP (OpenDP, n_changes = 2 for replace-one); recorded as a Laplace-type release: the "
                     "basic total is exact, other accountants treat it as Laplace"))
        est.opendp_seconds_ = seconds
        return est
    raise ValueError(f"unknown method {method!r}; choose from {sorted(METHOD_LABELS)}")


#: Former name of :func:`fit_release` (the shareable export is :func:`engine.release.manifest.build_release`).
build_release = fit_release


def run_method(method: str, split: Split, **kwargs) -> dict:
    """Release with one method, evaluate it, and return one row of metrics and budget figures.

    Keyword arguments: P, epsilon, alpha (0.5), mode ("paper"), delta, K (10), random_state (split-independent
    evaluation stream: K-Means, SVM ties), noise_seed (None: fresh release noise; an int: known, "not proven"),
    real_silhouette, n_synthetic, and ``PCAGauss`` options (bounds, y_bounds, labels, public_declared, ...).
    The row's ``status`` is the fit's own ledger status ("no privacy" for the non-private references).
    Runs single-threaded: on small data, BLAS/OpenMP thread start-up
    (K-Means above all) costs far more than it saves, and sweeps are many small fits.
    """
    # OpenMP too: scikit-learn's K-Means runs on OpenMP (a digits sweep took 234 s instead of 10 s on a loaded
    # machine with only BLAS limited).
    with one_blas_thread(openmp=True):
        return _run_method(method, split, **kwargs)


def _noise_state(noise_seed, rng):
    """The release's random_state: None (fresh OS entropy) or, for a known noise seed, a stream derived from
    it and the cell's evaluation stream (each cell of a sweep gets its own reproducible noise)."""
    if noise_seed is None:
        return None
    return np.random.SeedSequence([int(noise_seed), int(rng.integers(2**32))])


def _run_method(method: str, split: Split, *, P: int, epsilon: float, alpha: float = 0.5, mode: str = "paper",
               delta: float | None = None, K: int = 10, random_state=None, noise_seed=None, real_silhouette=None,
               n_synthetic=None, **options) -> dict:
    task = split.task
    rng = np.random.default_rng(random_state)
    row = {"method": method, "epsilon": float(epsilon), "P": int(P), "alpha": float(alpha), "mode": mode}
    started = time.perf_counter()
    if method in _NON_PRIVATE:
        ref, Z_fit, y_fit = _real_space(split, "train" if method == "real" else "public")
        Z_test = ref.transform(split.X_test)
        y_test = ref.transform_y(split.y_test) if task == "regression" else split.y_test
        row.update(P=split.X_train.shape[1], alpha=float("nan"), epsilon_total=math.inf, delta_total=0.0,
                   status="no privacy", proven=False)
        if task == "unsupervised":
            metrics = evaluate(task, Z_fit, None, Z_test, None, K=K, labels_real=split.y_test, random_state=rng)
        else:
            metrics = evaluate(task, Z_fit, y_fit, Z_test, y_test, random_state=rng)
        row.update(metrics, fit_seconds=time.perf_counter() - started)
        return row
    est = fit_release(method, split, P=P, epsilon=epsilon, alpha=alpha, mode=mode, delta=delta,
                      random_state=_noise_state(noise_seed, rng), **options)
    fit_seconds = time.perf_counter() - started
    drawn = est.sample(n_synthetic) if not isinstance(est, IdentityQueryRelease) else est.sample()
    Z_syn, y_syn = drawn if isinstance(drawn, tuple) else (drawn, None)
    Z_test = est.transform(split.X_test)
    if task == "regression":
        y_test = est.transform_y(split.y_test)
    else:
        y_test = split.y_test
    ledger = est.privacy_ledger_
    eps_total, delta_total = ledger.total("basic") if len(ledger) else (math.inf, 0.0)
    row.update(P=est.components_.shape[1], epsilon_total=eps_total, delta_total=delta_total,
               status=ledger.status, proven=ledger.status == "proven", fit_seconds=fit_seconds,
               psd_fixed=bool(getattr(est, "psd_fixed_", False)))
    if hasattr(est, "opendp_seconds_"):
        row["opendp_seconds"] = est.opendp_seconds_
    if task == "unsupervised":
        metrics = evaluate(task, Z_syn, None, Z_test, None, K=K, real_silhouette=real_silhouette,
                           labels_real=split.y_test, random_state=rng)
    else:
        metrics = evaluate(task, Z_syn, y_syn, Z_test, y_test, random_state=rng)
    row.update(metrics)
    return row


def utility_sweep(split: Split, methods, epsilons, components, *, alphas=(0.5,), n_reps: int = 3,
                  mode: str = "paper", delta: float | None = None, K: int = 10, random_state=0, noise_seed=None,
                  progress=None, **options) -> pd.DataFrame:
    """Every method x eps x P (x alpha for Lap/AG/OpenDP) x replicate, one row each.

    Non-private references (``real``, ``public_only``) are fitted once per replicate and repeated for every eps
    (flat lines in the plots). ``progress(done, total)`` is called after each fit. Evaluation seeds derive from
    (random_state, replicate, grid position); release noise is fresh unless ``noise_seed`` is given (then it
    derives from it too, and every fit is "not proven: the noise seed is known").
    """
    methods = list(methods)
    epsilons = [float(e) for e in epsilons]
    components = [int(p) for p in components]
    alphas = [float(a) for a in alphas] or [0.5]
    real_sc = None
    if split.task == "unsupervised":
        _, Z_real, _ = _real_space(split, "train")
        with one_blas_thread(openmp=True):
            real_sc = _silhouette(Z_real, K, np.random.default_rng(random_state))[0]
    # (replicate, method index, method, (eps index, eps), (P index, P), (alpha index, alpha)); None: not used
    jobs: list[tuple[int, int, str, tuple[int, float] | None, tuple[int, int | None] | None,
                     tuple[int, float] | None]] = []
    for r in range(n_reps):
        for mi, m in enumerate(methods):
            if m in _NON_PRIVATE:
                jobs.append((r, mi, m, None, None, None))
                continue
            grid_p = [None] if m == "liu" else components
            for pi, P in enumerate(grid_p):
                for ei, eps in enumerate(epsilons):
                    for ai, a in enumerate(alphas if m in _USES_ALPHA else [0.5]):
                        jobs.append((r, mi, m, (ei, eps), (pi, P), (ai, a)))
    rows = []
    for done, (r, mi, m, e, p, a) in enumerate(jobs, start=1):
        if e is None:
            seed = np.random.SeedSequence(int(random_state), spawn_key=(r, mi))
            base = run_method(m, split, P=2, epsilon=math.inf, mode=mode, K=K, random_state=seed)
            for eps in epsilons:
                rows.append({**base, "epsilon": eps, "rep": r})
        else:
            assert p is not None and a is not None  # a private method's job has all three positions
            seed = np.random.SeedSequence(int(random_state), spawn_key=(r, mi, e[0], p[0], a[0]))
            P = p[1] if p[1] is not None else split.X_train.shape[1]
            row = run_method(m, split, P=P, epsilon=e[1], alpha=a[1], mode=mode, delta=delta, K=K,
                             random_state=seed, noise_seed=noise_seed, real_silhouette=real_sc, **options)
            row["rep"] = r
            rows.append(row)
        if progress is not None:
            progress(done, len(jobs))
    df = pd.DataFrame(rows)
    df["label"] = df["method"].map(METHOD_LABELS)
    if real_sc is not None:
        df["real_silhouette"] = real_sc
    return df


def summarise(df: pd.DataFrame, metric: str, by=("method", "epsilon", "P", "alpha")) -> pd.DataFrame:
    """Mean, 95 % CI half-width (1.96 sd/sqrt(R)), median and count of ``metric`` per group, and the
    group's ledger status ("proven", "not proven", "no privacy", or "mixed")."""
    keys = [k for k in by if k in df.columns]
    g = df.groupby(keys, dropna=False)[metric]
    out = g.agg(mean="mean", sd="std", median="median", n="count").reset_index()
    out["ci95"] = 1.96 * out["sd"].fillna(0.0) / np.sqrt(out["n"].clip(lower=1))
    out["label"] = out["method"].map(METHOD_LABELS)
    if "status" in df.columns:  # each fit's own ledger status; a group of mixed statuses says so
        status = df.groupby(keys, dropna=False)["status"].agg(lambda s: s.iloc[0] if s.nunique() == 1 else "mixed")
        out = out.merge(status.reset_index(), on=keys, how="left")
    return out


def best_over(summary: pd.DataFrame, metric: str, over=("P", "alpha")) -> pd.DataFrame:
    """Per (method, eps) the row with the best mean over ``over`` (the paper's "best over P and alpha":
    tuned on test data, which spends privacy never accounted for; spec 9.8)."""
    higher = METRICS[metric][1]
    keys = [c for c in ("method", "epsilon") if c in summary.columns]
    s = summary.sort_values("mean", ascending=not higher)
    return s.groupby(keys, dropna=False, sort=False).head(1).sort_values(keys).reset_index(drop=True)


def alpha_grid() -> tuple:
    """The paper's alpha grid (0.1 .. 0.9; 1.0 excluded)."""
    return ALPHA_GRID


SOURCE_METHOD = {"public": "pca_gauss_public", "laplace": "pca_gauss_laplace", "analyze_gauss": "pca_gauss_ag",
                 "nonprivate": "pca_gauss_alg1"}


def release_report(X, y, task: str, *, P: int, pca_source: str, epsilon: float, mode: str = "paper",
                   delta: float | None = None, alpha: float = 0.5, mean_share: float = 0.1, K: int = 10,
                   random_state=0, noise_seed=None, feature_names=None, n_public: int | None = None,
                   public=None, bounds=None, y_bounds=None, labels=None, public_declared: bool = True) -> dict:
    """Everything the page shows for one release: split, fitted model, frames, utility, ledger, downloads.

    random_state seeds the split and the evaluation models only; noise_seed is the release's noise
    (None: fresh OS entropy). public: a separate public data set (X_public, y_public) instead of a slice of
    X. bounds, y_bounds, labels, public_declared: the public inputs (see ``PCAGauss``).

    Returns a dict with keys split, model, real, synthetic (released-space frames; real rows are the test
    rows, or the training rows for clustering), corr_real, corr_synthetic, utility (this release) and
    utility_real (real data, same metrics), references, ledger, noise_log, budget, csv_released and
    csv_reconstructed (None unless W and the box are public), evaluated_on ("held-out test rows" or
    "training rows").
    """
    if pca_source not in SOURCE_METHOD:
        raise ValueError(f"pca_source must be one of {sorted(SOURCE_METHOD)}")
    split = make_split(X, y, task, n_public=n_public, random_state=random_state, feature_names=feature_names,
                       public=public)
    M = split.X_train.shape[1]
    if not 1 <= P <= M:
        raise DataError(f"k = {P} components, but the data have {M} feature columns")
    method = SOURCE_METHOD[pca_source]
    options = {"mean_share": mean_share, "bounds": bounds, "y_bounds": y_bounds, "public_declared": public_declared}
    if task == "classification":
        options["labels"] = labels
    with one_blas_thread(openmp=True):
        model = fit_release(method, split, P=P, epsilon=epsilon, alpha=alpha, mode=mode, delta=delta,
                            random_state=noise_seed, **options)
        # Sampling is post-processing: it continues the fit's own stream (fresh unless the noise seed is known).
        real, synthetic = released_frames(model, split)
        corr_real, corr_syn = correlation_pair(real, synthetic)
        real_sc = None
        if task == "unsupervised":
            real_row = _run_method("real", split, P=P, epsilon=math.inf, K=K, random_state=int(random_state))
            real_sc = real_row["silhouette"]
        else:
            real_row = _run_method("real", split, P=P, epsilon=math.inf, random_state=int(random_state))
        cols = [c for c in synthetic.columns if c.startswith("c")]
        Z_syn = synthetic[cols].to_numpy()
        target = synthetic["y"].to_numpy() if task == "regression" else \
            synthetic["label"].to_numpy() if task == "classification" else None
        y_test = real["y"].to_numpy() if task == "regression" else \
            real["label"].to_numpy() if task == "classification" else None
        utility = evaluate(task, Z_syn, target, real[cols].to_numpy(), y_test, K=K, real_silhouette=real_sc,
                           labels_real=None if split.y_test is None else np.asarray(split.y_test).astype(str),
                           random_state=int(random_state))
        references = reference_levels(split, K=K, components=(P,), random_state=int(random_state))
    reconstructed = None
    if can_map_back(model):
        reconstructed = synthetic_frame(model, reconstruct=True, feature_names=split.feature_names)
    return {
        "split": split, "model": model, "method": method, "real": real, "synthetic": synthetic,
        "corr_real": corr_real, "corr_synthetic": corr_syn, "utility": utility,
        "utility_real": {k: v for k, v in real_row.items() if k in METRICS}, "references": references,
        "ledger": model.privacy_ledger_, "noise_log": model.noise_log_, "budget": model.budget_summary(),
        "csv_released": synthetic, "csv_reconstructed": reconstructed,
        "evaluated_on": "training rows" if task == "unsupervised" else "held-out test rows",
    }
