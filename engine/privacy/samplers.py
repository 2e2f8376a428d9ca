"""Floating-point-safe noise drawn through OpenDP's samplers (issue #15, item 8).

Textbook samplers (``numpy``'s ``normal``/``laplace`` scaled by sigma, then added in floating
point) leak through the gaps and rounding pattern of IEEE doubles (Mironov 2012, "On significance
of the least significant bits for differential privacy"). OpenDP samples on a lattice ``2**k * Z``
with exact integer arithmetic (discrete Gaussian / discrete Laplace, Canonne, Kamath & Steinke 2020)
and only then rounds to a float, from its own OS-entropy RNG. This module wraps that kept library
rather than writing samplers by hand; it holds no sampler of its own.

Every function draws fresh noise: there is no seed argument because OpenDP takes none.

Cost: OpenDP's exact samplers are slow (~10 us per draw per core, against ~20 ns for numpy), so the
draws are split over threads (the Rust call releases the GIL). ``bench/bench_privacy.py`` reports
the cost on a 700 x 700 Analyze-Gauss release as ``opendp_noise_ratio``.

Caveat: drawing noise here and adding it to a statistic in numpy gets the sampler's protection
(no textbook ``-log(U)`` / Box-Muller artefacts) but the final float addition is still numpy's. The
full Mironov defence passes the statistic itself through the OpenDP measurement.

The lattice step is ``2**k`` with ``k = floor(log2(scale)) - 52``: below one ulp of the scale, so
the draws are as fine as a double allows, and ~3x faster than OpenDP's default (``k = -1074``).
Calling these functions enables OpenDP's ``"contrib"`` feature for the process.
"""
from __future__ import annotations

import math
import os
from concurrent.futures import ThreadPoolExecutor
from types import ModuleType

import numpy as np

__all__ = ["opendp_gaussian_vector", "opendp_laplace_vector", "opendp_symmetric_gaussian"]

#: Below this many draws per thread, threads cost more than they save.
_MIN_CHUNK = 4096


def _opendp() -> ModuleType:
    """The ``opendp.prelude`` module with ``contrib`` enabled; a clear ImportError if absent."""
    try:
        import opendp.prelude as dp
    except ImportError as exc:  # pragma: no cover - exercised only without opendp
        raise ImportError(
            "engine.privacy.samplers needs the 'opendp' package (pip install opendp); "
            "it draws floating-point-safe noise through OpenDP's samplers"
        ) from exc
    dp.enable_features("contrib")
    return dp


def _check(name: str, scale: float, size: int) -> tuple[float, int]:
    scale, size = float(scale), int(size)
    if not math.isfinite(scale) or scale < 0:
        raise ValueError(f"{name} must be finite and >= 0, got {scale}")
    if size < 0:
        raise ValueError(f"size must be >= 0, got {size}")
    return scale, size


def _draw(kind: str, scale: float, size: int) -> np.ndarray:
    """``size`` i.i.d. draws of OpenDP's ``kind`` noise ("gaussian" or "laplace") at ``scale``."""
    dp = _opendp()
    if size == 0 or scale == 0.0:
        return np.zeros(size)
    k = max(-1074, math.floor(math.log2(scale)) - 52)
    make, metric = {
        "gaussian": (dp.m.make_gaussian, dp.l2_distance(T=float)),
        "laplace": (dp.m.make_laplace, dp.l1_distance(T=float)),
    }[kind]
    n_chunks = max(1, min(os.cpu_count() or 1, size // _MIN_CHUNK))
    sizes = [len(c) for c in np.array_split(np.empty(size, dtype=np.int8), n_chunks)]

    def one(n: int) -> np.ndarray:
        # A noise measurement on the zero vector of length n: its output is the noise itself.
        domain = dp.vector_domain(dp.atom_domain(T=float, nan=False), size=n)
        meas = make(domain, metric, scale=scale, k=k)
        return np.asarray(meas(np.zeros(n)), dtype=float)

    if n_chunks == 1:
        return one(size)
    with ThreadPoolExecutor(max_workers=n_chunks) as pool:
        return np.concatenate(list(pool.map(one, sizes)))


def opendp_gaussian_vector(sigma: float, size: int) -> np.ndarray:
    """i.i.d. N(0, sigma^2) noise from OpenDP's discrete-Gaussian sampler (fresh OS entropy).

    Parameters
    ----------
    sigma : float
        Standard deviation (OpenDP's ``scale``), ``>= 0``.
    size : int
        Number of draws.

    Returns
    -------
    numpy.ndarray, shape (size,)
        Float64 noise on the lattice ``2**k * Z`` (``k`` as in the module docstring).
    """
    sigma, size = _check("sigma", sigma, size)
    return _draw("gaussian", sigma, size)


def opendp_laplace_vector(b: float, size: int) -> np.ndarray:
    """i.i.d. Laplace(0, b) noise from OpenDP's discrete-Laplace sampler (fresh OS entropy).

    Parameters
    ----------
    b : float
        Laplace scale (mean absolute deviation; std is ``sqrt(2) * b``), ``>= 0``.
    size : int
        Number of draws.

    Returns
    -------
    numpy.ndarray, shape (size,)
    """
    b, size = _check("b", b, size)
    return _draw("laplace", b, size)


def opendp_symmetric_gaussian(sigma: float, dim: int) -> np.ndarray:
    """Symmetric Gaussian noise matrix from OpenDP, like ``mechanisms.sample_symmetric_gaussian``.

    The upper triangle with the diagonal (``dim * (dim + 1) / 2`` values) is i.i.d. N(0, sigma^2)
    drawn by :func:`opendp_gaussian_vector`, then mirrored, so the result is exactly symmetric.

    Parameters
    ----------
    sigma : float
        Standard deviation of each entry, ``>= 0``.
    dim : int
        Matrix side.

    Returns
    -------
    numpy.ndarray, shape (dim, dim)
    """
    dim = int(dim)
    if dim < 0:
        raise ValueError(f"dim must be >= 0, got {dim}")
    iu = np.triu_indices(dim)
    draws = opendp_gaussian_vector(sigma, iu[0].size)
    noise = np.zeros((dim, dim))
    noise[iu[0], iu[1]] = draws
    noise[iu[1], iu[0]] = draws
    return noise
