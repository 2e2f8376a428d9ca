"""Sampling from a released (possibly indefinite) Gaussian, with the PSD handling of spec 2.6.

"numpy": numpy's SVD sampler on the raw noisy matrix (paper mode; it samples with (C'C)^(1/2));
"clip": eigenvalue clipping (strict mode; post-processing). Hand-written: numpy only offers the first.
"""
from __future__ import annotations

import warnings

import numpy as np


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

