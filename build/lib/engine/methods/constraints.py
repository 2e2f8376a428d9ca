"""Shared scikit-learn parameter constraints: one declaration of epsilon, delta and random_state.

Estimators declare ``_parameter_constraints = {**PRIVACY_PARAMETER_CONSTRAINTS, ...}`` and call
``self._validate_params()`` at the top of ``fit`` (scikit-learn's declarative validation); only rules
that tie several parameters together (for example "classic calibration needs epsilon <= 1") stay
hand-written.

Examples
--------
>>> from sklearn.base import BaseEstimator
>>> class Toy(BaseEstimator):
...     _parameter_constraints = {**PRIVACY_PARAMETER_CONSTRAINTS}
...     def __init__(self, epsilon=1.0, delta=1e-5, random_state=None):
...         self.epsilon, self.delta, self.random_state = epsilon, delta, random_state
>>> Toy(epsilon=float("inf"))._validate_params()  # epsilon = inf is the non-private reference
>>> try:
...     Toy(epsilon=0.0)._validate_params()
... except ValueError as err:
...     print(str(err)[:40])
The 'epsilon' parameter of Toy must be a
"""
from __future__ import annotations

from numbers import Real

import numpy as np
from sklearn.utils._param_validation import Interval, Options, StrOptions

__all__ = ["CALIBRATION_CONSTRAINT", "PRIVACY_PARAMETER_CONSTRAINTS"]

#: epsilon > 0 (inf allowed: no noise, the non-private reference); delta in (0, 1); any sklearn random_state.
PRIVACY_PARAMETER_CONSTRAINTS = {
    "epsilon": [Interval(Real, 0, None, closed="neither"), Options(Real, {float("inf")})],
    "delta": [Interval(Real, 0, 1, closed="neither")],
    # scikit-learn's "random_state" refuses numpy Generators and SeedSequences, which the methods accept as
    # noise seeds (engine.privacy.noise_generator).
    "random_state": ["random_state", np.random.Generator, np.random.SeedSequence],
}

#: The Gaussian calibrations ``engine.privacy.calibration.resolve_calibration`` understands.
CALIBRATION_CONSTRAINT = [StrOptions({"auto", "analytic", "classic"})]
