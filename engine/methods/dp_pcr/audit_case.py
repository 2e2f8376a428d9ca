"""DP-PCR's privacy audit case: the one noisy release on worst-case add/remove neighbours.

Everything DP-PCR computes after its noise call (centring, eigen-decomposition, regression) is
post-processing, so auditing the raw noisy release is the strongest black-box audit of the method.
D is a small data set inside the bounds; D' adds the row x = x_bound e_1, y = y_bound (both at their
public bounds, one non-zero channel), whose change of the released numbers is exactly the calibrated
sensitivity (``engine.privacy.moments.add_remove_sensitivity`` is attained), so a correct release can
only approach its claim and a planted bug (``engine.privacy.audit.planted_bug``) exceeds it.
"""
from __future__ import annotations

import numpy as np

from engine.privacy.audit import AuditCase, expected_verdict, upper_triangle

from .estimator import DPPCR

__all__ = ["audit_data", "dp_pcr_case"]


def audit_data(n: int = 40, m: int = 3, seed: int = 13):
    """A small regression data set with every row inside x_bound = 2, y_bound = 2 (a fixed public seed)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, m))
    X *= 1.5 / np.maximum(1.5, np.linalg.norm(X, axis=1, keepdims=True))
    y = np.clip(X @ np.linspace(1.0, -0.5, m) + 0.1 * rng.normal(size=n), -1.5, 1.5)
    return X, y


def dp_pcr_case(mode: str = "strict", epsilon: float = 1.0, delta: float = 1e-5, *,
                x_bound: float = 2.0, y_bound: float = 2.0, public_centre: bool = False) -> AuditCase:
    """DP-PCR (k = 1) as an :class:`engine.privacy.audit.AuditCase`.

    Parameters
    ----------
    mode : "strict" (the only mode).
    epsilon, delta : the claim.
    x_bound, y_bound : the public bounds.
    public_centre : audit the public-centre release (x_center = 0, y_center = 0) instead of private centring.

    Returns
    -------
    AuditCase whose release is the noisy upper triangle of Z'Z on the estimator's own clipped, scaled rows
    (``DPPCR._prepare``) drawn by the fit's own release object (``DPPCR._release``: the ``MomentsRelease`` that
    ``fit`` draws from), batched over trials. Planted bugs come from ``engine.privacy.audit.planted_bug``.
    """
    if mode != "strict":
        raise ValueError("DP-PCR has one mode, 'strict'")
    X, y = audit_data()
    m = X.shape[1]
    centre = dict(x_center=np.zeros(m), y_center=0.0) if public_centre else {}
    est = DPPCR(n_components=1, epsilon=float(epsilon), delta=float(delta), x_bound=x_bound, y_bound=y_bound,
                **centre)
    row_x = np.zeros(m)
    row_x[0] = x_bound
    D = (X, y)
    D_prime = (np.vstack([X, row_x]), np.append(y, y_bound))
    preps = {id(D): est._prepare(*D), id(D_prime): est._prepare(*D_prime)}

    def release(data, rng, n):
        prep = preps[id(data)] if id(data) in preps else est._prepare(*data)
        return upper_triangle(est._release(prep).randomise(prep.gram(), n, rng))

    prep = preps[id(D)]
    change = float(np.linalg.norm(upper_triangle((preps[id(D_prime)].gram() - prep.gram())[None])))
    note = (f"Analyze-Gauss release of Z'Z ({'public centre' if public_centre else 'private centring column'}), "
            f"calibrated sensitivity {prep.sensitivity:.6f}, change of the released numbers {change:.6f}, "
            f"sigma = {est._release(prep).sigma:.4g}")
    return AuditCase("dp_pcr_strict", "dp_pcr", "strict", float(epsilon), float(delta), release, D,
                     D_prime, "add one row at the bounds (x = x_bound e_1, y = y_bound)",
                     expected_verdict("strict", None), note)
