"""Exact power-of-two rescaling: the one helper behind every overflow-safe norm and scale in the engine.

Dividing by 2^e is exact in float64, so data in any units (1e-300 to 1e300) can be brought near 1 before
squaring without changing a single bit of the result's meaning. Used by the column checks, the paper-mode
edPLS path, DP-CCA's scaling and the row norms of every clipping step (``engine.privacy.clipping``).

Examples
--------
>>> pow2_exponent(3.0), pow2_exponent(0.0)
(2, 0)
>>> safe_scale_exponent(3.0), safe_scale_exponent(1e300)
(0, 997)
"""
from __future__ import annotations

import numpy as np

__all__ = ["SAFE_EXPONENT", "pow2_exponent", "safe_scale_exponent"]

#: |e| up to this needs no rescaling: squares of values below 2^256 stay far inside float64's range.
SAFE_EXPONENT = 256


def pow2_exponent(value: float) -> int:
    """e with value * 2^-e in [0.5, 1) (0 for value 0, inf or nan): dividing by 2^e is exact in float64."""
    return int(np.frexp(float(value))[1]) if value > 0 else 0


def safe_scale_exponent(largest: float) -> int:
    """0 inside the safe range, else the power of two that brings the largest |value| to [0.5, 1)."""
    e = pow2_exponent(largest)
    return 0 if -SAFE_EXPONENT <= e <= SAFE_EXPONENT else e
