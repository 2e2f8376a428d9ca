"""Show a privacy ledger: every release, and the total guarantee stated honestly."""
from __future__ import annotations

import streamlit as st

from engine.privacy import PrivacyLedger


def ledger_text(ledger: PrivacyLedger, delta: float | None = None) -> str:
    """One sentence stating the total guarantee and whether it is proven."""
    if not len(ledger):
        return "No private release: these results carry no differential-privacy guarantee (ε = ∞)."
    s = ledger.summary(delta)
    eps_b, del_b = s["basic"]
    eps_p, del_p = s["pld"]
    head = (
        f"{s['n_releases']} noisy release(s). Total: ε = {eps_p:.4g} at δ = {del_p:.2g} "
        f"(PLD accountant); basic composition gives ε = {eps_b:.4g}, δ = {del_b:.2g}; "
        f"zCDP gives ε = {s['zcdp'][0]:.4g}."
    )
    if s["proven"]:
        return head + " Every sensitivity comes from public bounds, so this is a proven guarantee."
    return head + (
        " Some sensitivities were computed from the private data itself (paper-faithful mode), "
        "so these totals are **not** a proven guarantee."
    )


def show_ledger(ledger: PrivacyLedger, delta: float | None = None, *, expanded: bool = False) -> None:
    """Render the ledger sentence and, in an expander, one row per release."""
    st.markdown(ledger_text(ledger, delta))
    if len(ledger):
        with st.expander(f"Privacy ledger ({len(ledger)} releases)", expanded=expanded):
            st.dataframe(ledger.to_frame(), hide_index=True, width="stretch")
