"""Noise mechanisms as small objects that calibrate, draw and record (diffprivlib's shape), and the one draw.

The mechanism interface (``GaussianMechanism``, ``LaplaceMechanism`` here; ``MomentsRelease`` in
``engine.privacy.moments`` for the symmetric noise of a second-moment matrix, Analyze-Gauss):

- **calibrate**: built from (epsilon, delta, sensitivity[, calibration]), it computes its noise scale once
  (``sigma`` or ``scale``) with ``calibration.noise_scale``. ``GaussianMechanism`` and ``MomentsRelease``
  accept ``epsilon = inf``: scale 0, the exact value comes back, nothing is drawn or recorded (a
  non-private reference).
- **draw and record in one call**: ``randomise(value, random_state, *, ledger=None, name=..., note=...)``
  returns value + noise; given a ``PrivacyLedger`` it adds this draw's record to it in the same call, so
  a fit's ledger is written as its noise is drawn and cannot drift from it. Without a ledger it only draws
  (the audit's batched trials, sweeps of replicates: ``MomentsRelease.randomise(G, n_replicates, ...)``).
- **record only**: ``release(name, ...)`` (``record(name, ...)`` on ``MomentsRelease``) gives the ledger
  record of one application, for code that describes a release it does not draw (bounds, calculators).

Every release's noise comes from :func:`draw_noise`, the one place noise is drawn: it is what the audit's
planted bugs (``engine.privacy.audit.planted_bug``) scale, so a planted bug reaches every production fit and
costs one context-variable read when off.

Written by hand: no kept library exposes a seeded, vectorised symmetric-matrix Gaussian
release with our ledger; the calibration itself lives in ``calibration.py``.
"""
from __future__ import annotations

import math
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeAlias, overload

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .calibration import check_eps_delta, noise_scale, resolve_calibration
from .ledger import Release

if TYPE_CHECKING:
    from .ledger import PrivacyLedger

__all__ = [
    "GaussianMechanism",
    "LaplaceMechanism",
    "as_generator",
    "draw_noise",
    "sample_gaussian_vector",
    "sample_symmetric_gaussian",
]

#: What a ``random_state`` argument may be (``as_generator``, ``engine.privacy.noise.noise_generator``).
RandomStateLike: TypeAlias = (int | np.integer[Any] | np.random.SeedSequence | np.random.Generator
                              | np.random.RandomState | None)
#: A ``size`` of ``draw_noise`` other than None: an int or a shape tuple.
Shape: TypeAlias = int | tuple[int, ...]


def as_generator(random_state: RandomStateLike) -> np.random.Generator:
    """Turn None, an int, a numpy Generator or a legacy RandomState into a Generator."""
    if isinstance(random_state, np.random.Generator):
        return random_state
    if random_state is None or isinstance(random_state, (int, np.integer)):
        return np.random.default_rng(random_state)
    # here, not at the top: a federation party's process imports this module for as_generator alone, and
    # scikit-learn's import took 1.2 s of CPU in each of them (every P3LS message starts one on Flower 1.42)
    from sklearn.utils import check_random_state

    rs = check_random_state(random_state)
    return np.random.default_rng(rs.randint(0, 2**32 - 1))


#: The planted bug in force in this context: None, or (kind, factor) set by ``engine.privacy.audit.planted_bug``
#: (a context variable: one thread's audit never reaches another session's fit).
PLANTED_BUG: ContextVar[tuple[str, float] | None] = ContextVar("planted_bug", default=None)

#: Noise laws ``draw_noise`` draws ("uniform": VAR-ADMM's paper defence, which carries no guarantee).
DRAW_LAWS = ("gaussian", "laplace", "uniform")


@overload
def draw_noise(law: str, scale: float, size: None, random_state: RandomStateLike = None) -> float: ...


@overload
def draw_noise(law: str, scale: float, size: Shape, random_state: RandomStateLike = None) -> NDArray[np.float64]: ...


def draw_noise(law: str, scale: float, size: Shape | None,
               random_state: RandomStateLike = None) -> float | NDArray[np.float64]:
    """The one place release noise is drawn: i.i.d. noise of ``law`` and ``scale``, shape ``size``.

    Parameters
    ----------
    law : "gaussian" (N(0, scale^2)), "laplace" (Laplace(0, scale)) or "uniform" (U(-scale, scale)).
    scale : float >= 0, the calibrated scale.
    size : int, tuple or None (one float).
    random_state : None, int or Generator (``as_generator``).

    Returns
    -------
    ndarray of shape ``size`` (a float for None), drawn by the generator's own ``normal``, ``laplace`` or
    ``uniform``, so the stream is the same as a direct call.

    A planted bug (``engine.privacy.audit.planted_bug``) multiplies the scale by its factor: "noise_scale"
    draws less noise than calibrated, "sensitivity_scale" draws the noise of a sensitivity understated by the
    factor (every calibration here is linear in the sensitivity: analytic and classic Gaussian sigma and the
    Laplace b = Delta / eps), while the ledger keeps recording what the release claims, as a real bug would.
    """
    planted = PLANTED_BUG.get()
    if planted is not None:
        scale = scale * planted[1]
    rng = as_generator(random_state)
    if law == "gaussian":
        return rng.normal(0.0, scale, size=size)
    if law == "laplace":
        return rng.laplace(0.0, scale, size=size)
    if law == "uniform":
        return rng.uniform(-scale, scale, size=size)
    raise ValueError(f"law must be one of {DRAW_LAWS}, got {law!r}")


def sample_gaussian_vector(sigma: float, size: Shape, random_state: RandomStateLike = None) -> NDArray[np.float64]:
    """i.i.d. N(0, sigma^2) noise of the given shape (a vector, or a batch of vectors)."""
    if sigma < 0:
        raise ValueError(f"sigma must be >= 0, got {sigma}")
    return draw_noise("gaussian", sigma, size, random_state)


def sample_symmetric_gaussian(sigma: float, dim: int, random_state: RandomStateLike = None,
                              n_replicates: int | None = None) -> NDArray[np.float64]:
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
    draws = draw_noise("gaussian", sigma, (*lead, iu[0].size), rng)
    noise[..., iu[0], iu[1]] = draws
    noise[..., iu[1], iu[0]] = draws
    return noise


@dataclass
class GaussianMechanism:
    """Gaussian mechanism: adds N(0, sigma^2 I) to a query of L2 sensitivity ``sensitivity``.

    calibration: "analytic" (Balle & Wang 2018, tight for every eps), "classic"
    (sqrt(2 ln(1.25/delta)) Delta / eps, refused for eps > 1) or "auto" (classic for eps <= 1);
    the rule is ``calibration.resolve_calibration``. ``epsilon = inf``: sigma = 0, ``randomise`` returns
    the exact value and records nothing (no release under differential privacy).
    """

    epsilon: float
    delta: float
    sensitivity: float = 1.0
    calibration: str = "analytic"
    sigma: float = field(init=False)

    def __post_init__(self) -> None:
        if self.epsilon == math.inf:  # no mechanism: the exact value (a non-private reference)
            self.sigma = 0.0
            return
        # "auto" is resolved here so that the ledger names the calibration actually used.
        self.calibration = resolve_calibration(self.calibration, self.epsilon)
        check_eps_delta(self.epsilon, self.delta)
        self.sigma = noise_scale("gaussian", self.epsilon, self.delta, self.sensitivity, self.calibration)

    def randomise(self, value: ArrayLike, random_state: RandomStateLike = None, *,
                  ledger: PrivacyLedger | None = None, name: str = "", note: str = "",
                  sensitivity_source: str = "public") -> NDArray[np.float64]:
        """value + noise, same shape as value (any shape: noise is i.i.d. per entry).

        With ``ledger`` (a ``PrivacyLedger``), this draw's record (``release(name, ...)``) is added to it in the
        same call; at epsilon = inf nothing is drawn or recorded.
        """
        value = np.asarray(value, dtype=float)
        if self.epsilon == math.inf:
            return value.copy()
        out = value + draw_noise("gaussian", self.sigma, value.shape, random_state)
        if ledger is not None:
            ledger.add(self.release(name, sensitivity_source=sensitivity_source, note=note))
        return out

    def release(self, name: str, *, sensitivity_source: str = "public", note: str = "") -> Release:
        """Ledger record for one application of this mechanism."""
        if self.epsilon == math.inf:
            raise ValueError("epsilon = inf releases nothing under differential privacy: no ledger record")
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

    def __post_init__(self) -> None:
        check_eps_delta(self.epsilon, 0.5)
        self.scale = noise_scale("laplace", self.epsilon, sensitivity=self.sensitivity)

    def randomise(self, value: ArrayLike, random_state: RandomStateLike = None, *,
                  ledger: PrivacyLedger | None = None, name: str = "", note: str = "",
                  sensitivity_source: str = "public") -> NDArray[np.float64]:
        """value + Laplace noise (any shape); with ``ledger``, this draw's record is added in the same call."""
        value = np.asarray(value, dtype=float)
        out = value + draw_noise("laplace", self.scale, value.shape, random_state)
        if ledger is not None:
            ledger.add(self.release(name, sensitivity_source=sensitivity_source, note=note))
        return out

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
