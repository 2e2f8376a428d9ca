"""The method contract: what every method's ``compare(...)`` entry point returns.

Every registered method (``engine.methods.registry.METHODS``) has one function

    compare(train, test, *, epsilon, delta, mode="strict", random_state=None, **params) -> Comparison

that fits the private model and its non-private reference on ``train`` and scores both on ``test``.
``train`` and ``test`` are tuples in the method's data kind: ``(X, y)`` for spectra and tables,
``(X, Y)`` for two views, a time-ordered panel for VAR. Pages, benches and notebooks call it the same
way for every method.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from engine.privacy.ledger import PrivacyLedger

__all__ = ["Comparison"]


@dataclass
class Comparison:
    """One private fit beside its reference.

    Attributes
    ----------
    private : the fitted private estimator (or the method's result object).
    reference : the fitted non-private reference (the same method at epsilon = inf, or its plain peer).
    headline : dict str -> float, the named numbers a page shows first, private and reference side by
        side (for example "RMSEP (private)", "RMSEP (non-private)").
    ledger : PrivacyLedger or None (None: the method releases nothing under differential privacy).
    guarantee : str, the one sentence the ledger supports (``engine.privacy.wording``); it never claims more.
    notes : tuple of str, anything the reader must know beside the numbers (caveats, clipping).
    """

    private: Any  # each method's own estimator or result type
    reference: Any
    headline: dict
    ledger: PrivacyLedger | None
    guarantee: str
    notes: tuple = field(default_factory=tuple)

    @property
    def status(self) -> str:
        """"proven", "not proven" or "no privacy" (from the ledger; "no privacy" without one)."""
        return "no privacy" if self.ledger is None else self.ledger.status
