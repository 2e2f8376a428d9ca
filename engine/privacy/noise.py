"""Where release noise comes from: fresh OS entropy, unless the caller fixes a seed (and then it is not proven).

A DP guarantee assumes the attacker cannot predict the noise. A release whose generator was seeded
with a number anyone can read (a page's "Seed" box, a seed written into a report or a model file)
can be replayed: subtract the regenerated noise and the private statistic is back exactly. So:

- ``random_state=None`` (every estimator's default) draws from :func:`fresh_generator`, a
  :class:`FreshGenerator` seeded from ``np.random.SeedSequence()`` (128 bits of OS entropy), one per
  release. Nothing about that seed is kept or exported.
- Any other ``random_state`` (an int, a ``SeedSequence``, a Generator or RandomState the caller
  built) is a *known* noise seed: the fit still runs (tests and teaching need reproducible noise),
  but its ledger carries :data:`SEED_KNOWN_CAVEAT` and is not proven.

:func:`noise_generator` is the one place that makes that decision; every method calls it.
Data splits, simulations and the demo's synthetic data are not releases and keep ordinary seeds.
"""
from __future__ import annotations

import numpy as np

from .mechanisms import RandomStateLike, as_generator

__all__ = ["SEED_KNOWN_CAVEAT", "FreshGenerator", "fresh_generator", "noise_generator", "spawn_fresh"]

#: The ledger caveat of a release whose noise came from a seed the caller chose.
SEED_KNOWN_CAVEAT = "not proven: the noise seed is known (a fixed seed reproduces the noise, for tests and teaching)"


class FreshGenerator(np.random.Generator):
    """A numpy Generator seeded from fresh OS entropy (its seed was never seen by anyone).

    The subclass only marks the origin, so that code receiving a generator can tell fresh noise
    from a generator somebody seeded (numpy Generators cannot carry attributes or weak references).
    """


def fresh_generator() -> FreshGenerator:
    """A new :class:`FreshGenerator` (PCG64 seeded by ``np.random.SeedSequence()``: OS entropy)."""
    return FreshGenerator(np.random.PCG64(np.random.SeedSequence()))


def spawn_fresh(n: int) -> list[FreshGenerator]:
    """``n`` independent fresh generators (one per release of a batch or per cross-validation clone)."""
    return [fresh_generator() for _ in range(int(n))]


def noise_generator(random_state: RandomStateLike) -> tuple[np.random.Generator, bool]:
    """The generator a release draws its noise from, and whether its seed is known.

    Parameters
    ----------
    random_state : None, int, SeedSequence, numpy Generator or RandomState.
        None (the default everywhere) and a :class:`FreshGenerator` give fresh OS entropy;
        anything else is a seed the caller knows.

    Returns
    -------
    (generator, seed_known) : (numpy.random.Generator, bool)
        When ``seed_known`` is True the caller's ledger must carry :data:`SEED_KNOWN_CAVEAT`.

    Examples
    --------
    >>> rng, known = noise_generator(None)
    >>> known
    False
    >>> noise_generator(0)[1]
    True
    """
    if random_state is None:
        return fresh_generator(), False
    if isinstance(random_state, FreshGenerator):
        return random_state, False
    if isinstance(random_state, np.random.SeedSequence):
        return np.random.default_rng(random_state), True
    return as_generator(random_state), True
