"""Noise mechanisms as small objects, each with its calibration in one place (diffprivlib style).

A mechanism is built from (epsilon, delta, sensitivity) and knows its noise scale; it adds
noise to vectors, batches of vectors, or symmetric matrices, and describes itself as a
ledger record. The symmetric-noise release of a second-moment matrix (Analyze-Gauss, Dwork, Talwar,
Thakurta & Zhang 2014) is ``engine.privacy.moments`` (``MomentsRelease``, ``AnalyzeGauss``).

Written by hand: no kept library exposes a seeded, vectorised symmetric-matrix Gaussian
release with our ledger; the calibration itself lives in ``calibration.py``.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from sklearn.utils import check_random_state

from .calibration import check_eps_delta, noise_scale, resolve_calibration
from .ledger import Release

__all__ = [
    "GaussianMechanism",
    "LaplaceMechanism",
    "as_generator",
    "sample_gaussian_vector",
    "sample_symmetric_gaussian",
]


def as_generator(random_state) -> np.random.Generator:
    """Turn None, an int, a numpy Generator or a legacy RandomState into a Generator."""
    if isinstance(random_state, np.random.Generator):
        return random_state
    if random_state is None or isinstance(random_state, (int, np.integer)):
        return np.random.default_rng(random_state)
    rs = check_random_state(random_state)
    return np.random.default_rng(rs.randint(0, 2**32 - 1))


def sample_gaussian_vector(sigma: float, size, random_state=None) -> np.ndarray:
    """i.i.d. N(0, sigma^2) noise of the given shape (a vector, or a batch of vectors)."""
    if sigma < 0:
        raise ValueError(f"sigma must be >= 0, got {sigma}")
    return as_generator(random_state).normal(0.0, 1.0, size=size) * sigma


def sample_symmetric_gaussian(sigma: float, dim: int, random_state=None, n_replicates=None) -> np.ndarray:
    """Symmetric Gaussian noise matrix: upper triangle (with diagonal) i.i.d. N(0, sigma^2), mirrored.

    Returns shape (dim, dim), or (n_replicates, dim, dim) when ``n_replicates`` is given.
    The result is exactly symmetric (E[..., i, j] == E[..., j, i] bit for bit).
    """
    if sigma < 0:
        raise ValueError(f"sigma must be >= 0, got {sigma}")
    rng = as_generator(random_state)
    lead = () if n_replicates is None else (int(n_replicates),)
    iu = np.triu_indices(dim)
    noise = np.zeros((*lead, dim, dim))
    draws = rng.normal(0.0, 1.0, size=(*lead, iu[0].size)) * sigma
    noise[..., iu[0], iu[1]] = draws
    noise[..., iu[1], iu[0]] = draws
    return noise


@dataclass
class GaussianMechanism:
    """Gaussian mechanism: adds N(0, sigma^2 I) to a query of L2 sensitivity ``sensitivity``.

    calibration: "analytic" (Balle & Wang 2018, tight for every eps), "classic"
    (sqrt(2 ln(1.25/delta)) Delta / eps, refused for eps > 1) or "auto" (classic for eps <= 1);
    the rule is ``calibration.resolve_calibration``.
    """

    epsilon: float
    delta: float
    sensitivity: float = 1.0
    calibration: str = "analytic"
    sigma: float = field(init=False)

    def __post_init__(self):
        # "auto" is resolved here so that the ledger names the calibration actually used.
        self.calibration = resolve_calibration(self.calibration, self.epsilon)
        check_eps_delta(self.epsilon, self.delta)  # a mechanism needs a finite epsilon (inf is "no mechanism")
        self.sigma = noise_scale("gaussian", self.epsilon, self.delta, self.sensitivity, self.calibration)

    def randomise(self, value, random_state=None) -> np.ndarray:
        """value + noise, same shape as value (any shape: noise is i.i.d. per entry)."""
        value = np.asarray(value, dtype=float)
        return value + sample_gaussian_vector(self.sigma, value.shape, random_state)

    def release(self, name: str, *, sensitivity_source: str = "public", note: str = "") -> Release:
        """Ledger record for one application of this mechanism."""
        return Release(
            name=name,
            mechanism="gaussian",
            calibration=self.calibration,
            sensitivity=self.sensitivity,
            scale=self.sigma,
            epsilon=self.epsilon,
            delta=self.delta,
            sensitivity_source=sensitivity_source,
            note=note,
        )


@dataclass
class LaplaceMechanism:
    """Laplace mechanism: adds Laplace(0, b) per entry, b = Delta_1 / eps; pure eps-DP."""

    epsilon: float
    sensitivity: float = 1.0
    scale: float = field(init=False)

    def __post_init__(self):
        check_eps_delta(self.epsilon, 0.5)
        self.scale = noise_scale("laplace", self.epsilon, sensitivity=self.sensitivity)

    def randomise(self, value, random_state=None) -> np.ndarray:
        """value + Laplace noise of this mechanism's scale, same shape as value."""
        value = np.asarray(value, dtype=float)
        return value + as_generator(random_state).laplace(0.0, self.scale, size=value.shape)

    def release(self, name: str, *, sensitivity_source: str = "public", note: str = "") -> Release:
        """The ledger record of one draw of this mechanism under ``name``."""
        return Release(
            name=name,
            mechanism="laplace",
            calibration="laplace",
            sensitivity=self.sensitivity,
            scale=self.scale,
            epsilon=self.epsilon,
            delta=0.0,
            sensitivity_source=sensitivity_source,
            note=note,
        )
