"""The sentences that state what a privacy mode and a ledger guarantee.

One source for the dashboard (``ui.budget``, ``ui.ledger_view``) and the run report
(``engine.report``), so a download says exactly what the page said.
"""
from __future__ import annotations

from .ledger import PrivacyLedger

__all__ = ["MODE_TEXT", "ledger_text", "status_label"]

MODE_TEXT = {
    "strict": (
        "**Strict mode** is built to be provably (ε, δ)-differentially private: rows are clipped to "
        "public bounds you declare, the noise is fresh and calibrated to a sensitivity that holds for "
        "every data set, and every release of the fit together stays inside the one (ε, δ) shown. "
        "Whether a given fit is proven is stated beside it, from its own ledger."
    ),
    "paper": (
        "**Paper-faithful mode** reproduces the published algorithm, weak points included: "
        "its sensitivity bounds are computed from the private data and each release is given "
        "the full (ε, δ). The totals shown are what the paper's noise would cost *if* its "
        "bounds held; they are not a proven guarantee."
    ),
}


def ledger_text(ledger: PrivacyLedger, delta: float | None = None, summary: dict | None = None) -> str:
    """One sentence stating the total guarantee and whether it is proven.

    summary: ``ledger.summary(delta)`` when the caller has it already (the PLD total is not free).
    """
    if not len(ledger):
        return "No private release: these results carry no differential-privacy guarantee (ε = ∞)."
    s = ledger.summary(delta) if summary is None else summary
    eps_b, del_b = s["basic"]
    eps_p, del_p = s["pld"]
    head = (
        f"{s['n_releases']} noisy release(s). Total: ε = {eps_p:.4g} at δ = {del_p:.2g} "
        f"(PLD accountant); basic composition gives ε = {eps_b:.4g}, δ = {del_b:.2g}; "
        f"zCDP gives ε = {s['zcdp'][0]:.4g}."
    )
    if s["status"] == "proven":
        return head + (" Every sensitivity comes from public bounds and the noise is fresh, so this is a proven "
                       "guarantee.")
    reasons = "; ".join(r.removeprefix("not proven: ") for r in s.get("reasons_not_proven", []))
    return head + f" These totals are **not** a proven guarantee: {reasons or 'see the ledger'}."


def status_label(ledger: PrivacyLedger | None) -> str:
    """The short label of a fit's guarantee, from its own ledger: "proven", "not proven" or "no privacy"."""
    return "no privacy" if ledger is None else ledger.status
