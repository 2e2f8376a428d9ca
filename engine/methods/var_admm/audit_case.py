"""End-to-end audits of the collaborative VAR's noise defence, as the page runs it.

:func:`pipeline_audit_case` builds an :class:`engine.privacy.audit.AuditCase` from the real pipeline
(clip into the declared range, calibrated fresh noise, optional centring) with planted bugs the audit
must catch; :func:`var_admm_case` is the audit catalogue's entry (the same as
``engine.privacy.audit.var_admm_case``, kept here so the audit case lives with its method).
No streamlit here.
"""
from __future__ import annotations

import math

import numpy as np

from engine.privacy.audit import PLANTED, AuditCase, planted

from .defence import _check_range, add_noise, calibrated_noise_scale, defence_ledger

__all__ = [
    "LAW_MODES",
    "PIPELINE_BUGS",
    "gaussian_case",
    "laplace_case",
    "pipeline_audit_case",
    "uniform_case",
    "var_admm_case",
]

#: Planted bugs of :func:`pipeline_audit_case` (the audit must catch each).
PIPELINE_BUGS = ("noise_halved", "sensitivity_halved", "no_clipping", "private_centring")


def pipeline_audit_case(law: str = "laplace", epsilon: float = 1.0, delta: float = 1e-5, *, public_range=(0.0, 1.0),
                        bug: str | None = None, T: int = 6, n_owners: int = 2, stage: str = "release",
                        outside: float = 88.0):
    """The page's noise defence, end to end, as an :class:`engine.privacy.audit.AuditCase`.

    The release is the page's pipeline on a small panel (T x n_owners) in "kW": values clipped
    into the declared ``public_range`` by :func:`add_noise`, noise of scale b calibrated as the page
    does in strict mode (:func:`calibrated_noise_scale` from ε, δ and Δ = hi - lo), and, with
    ``stage="centred"``, the post-processing the fit applies (each owner's noisy series centred on
    its noisy mean). Worst-case neighbours (event level): one value of owner 1 is ``hi + outside``
    in D (far above the range, as a kW value against a range declared in [0, 1]) and
    ``lo - outside`` in D' (far below): clipping must bring the change back to Δ. The claim is
    :func:`defence_ledger`'s per-value ε.

    bug : None, "noise_halved", "sensitivity_halved" (b calibrated to Δ/2), "no_clipping" (the
        range is not applied: the shipped bug) or "private_centring" (the old pipeline: values
        centred on the private mean, then noised, no clipping). Each must be caught.
    law "uniform": no guarantee (claim ε = ∞; reported, b = Δ).
    """
    if bug is not None and bug not in PIPELINE_BUGS:
        raise ValueError(f"bug must be None or one of {PIPELINE_BUGS}, got {bug!r}")
    if stage not in ("release", "centred"):
        raise ValueError("stage must be 'release' or 'centred'")
    lo, hi = _check_range(public_range)
    width = hi - lo
    if law in ("laplace", "gaussian"):
        b = calibrated_noise_scale(law, epsilon, delta, width)
        claim = defence_ledger(law, calibrated_noise_scale(law, epsilon, delta, width), (lo, hi), True, T, n_owners,
                               False, delta=delta)
        claimed, mode = claim.eps_per_value, "strict"
    elif law == "uniform":
        b, claimed, mode = width, math.inf, "paper"
    else:
        raise ValueError("law must be 'laplace', 'gaussian' or 'uniform'")
    base = np.random.default_rng(3).uniform(lo, hi, size=(T, n_owners))
    base[0, 1] = hi + outside  # another kW value outside the range (clipped in both data sets)
    D, D_prime = base.copy(), base.copy()
    D[T // 2, 0] = hi + outside
    D_prime[T // 2, 0] = lo - outside
    clip = None if bug in ("no_clipping", "private_centring") else (lo, hi)

    def release(data, rng, n):
        stack = np.broadcast_to(data, (n, *data.shape))
        if bug == "private_centring":
            stack = stack - data.mean(axis=0)
        with planted(bug if bug in PLANTED else None):  # noise and sensitivity bugs: planted in production
            out = add_noise(stack, law, b, rng, public_range=clip)
        if stage == "centred":
            out = out - out.mean(axis=1, keepdims=True)
        return out.reshape(n, -1)

    expect = "violated" if bug else ("holds" if mode == "strict" else "report")
    name = f"var_admm_{law}" + ("" if bug is None else f"_bug_{bug}")
    return AuditCase(name, "var_admm", mode, float(claimed), 0.0 if law != "gaussian" else float(delta), release,
                     D, D_prime, f"one value of one owner moved from {hi + outside:g} to {lo - outside:g} across the "
                     f"declared range [{lo:g}, {hi:g}] (event level)", expect,
                     f"clip to [{lo:g}, {hi:g}] then {law} noise b = {b:.4g}"
                     + (", centred on the noisy mean" if stage == "centred" else ""), bug)


def var_admm_case(law: str = "laplace", epsilon: float = 1.0, delta: float = 1e-5, value_range: float = 1.0
                  ) -> AuditCase:
    """VAR-ADMM's noise defence as the page runs it: values clipped into the declared public range
    [0, value_range], fresh noise once per value calibrated to (eps, Delta), any centring after.

    The real pipeline on a small panel in "kW" (:func:`pipeline_audit_case`): neighbours move one value
    from far above the range to far below it, which clipping must bring back to Delta; the claim is the
    defence ledger's per-value epsilon. law "uniform" carries no guarantee (claim inf: reported only).
    The noise is the defence's own ``add_noise`` (``engine.privacy.mechanisms.draw_noise``); the catalogue's
    planted bugs come from ``engine.privacy.audit.planted_bug``.
    """
    return pipeline_audit_case(law, epsilon, delta, public_range=(0.0, float(value_range)))


#: The audit mode of each law: a calibrated law is audited as "strict", uniform noise (no guarantee) as "paper".
LAW_MODES = {"laplace": "strict", "gaussian": "strict", "uniform": "paper"}


def _registry_case(law: str, mode: str, epsilon: float, delta: float, **kwargs) -> AuditCase:
    if mode != LAW_MODES[law]:
        raise ValueError(f"the {law} noise defence is audited in mode {LAW_MODES[law]!r}, got {mode!r}")
    return var_admm_case(law, epsilon, delta, **kwargs)


def laplace_case(mode: str = "strict", epsilon: float = 1.0, delta: float = 1e-5, **kwargs) -> AuditCase:
    """The registry's audit target "var_admm_laplace": :func:`var_admm_case` with Laplace noise."""
    return _registry_case("laplace", mode, epsilon, delta, **kwargs)


def gaussian_case(mode: str = "strict", epsilon: float = 1.0, delta: float = 1e-5, **kwargs) -> AuditCase:
    """The registry's audit target "var_admm_gaussian": :func:`var_admm_case` with Gaussian noise."""
    return _registry_case("gaussian", mode, epsilon, delta, **kwargs)


def uniform_case(mode: str = "paper", epsilon: float = 1.0, delta: float = 1e-5, **kwargs) -> AuditCase:
    """The registry's audit target "var_admm_uniform": uniform noise, no guarantee (reported only)."""
    return _registry_case("uniform", mode, epsilon, delta, **kwargs)

