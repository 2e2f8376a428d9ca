"""Show a privacy ledger: one headline guarantee, then (in an expander) every release and every accountant."""
from __future__ import annotations

import streamlit as st

from engine.privacy import PrivacyLedger
from engine.privacy.wording import (  # ledger_text re-exported: the page and report wording
    NEIGHBOURING_DETAIL,
    NEIGHBOURING_NOTE,
    accountants_frame,
    ledger_text,
    neighbouring_text,
    plural,
)
from ui.tables import human_headers

__all__ = ["ledger_text", "neighbouring_note", "show_ledger"]


def neighbouring_note(ledger: PrivacyLedger | None = None, *, key: str | None = None) -> None:
    """The page's neighbouring relation (from the ledger, when there is one), the shared sentence on why ε
    values differ between relations, and the longer explanation in an expander."""
    if ledger is not None:
        st.caption(f"This page's guarantee is {neighbouring_text(ledger)}. {NEIGHBOURING_NOTE}")
    else:
        st.caption(NEIGHBOURING_NOTE)
    with st.expander("Why ε differs between 'add or remove one row' and 'replace one row'", expanded=False):
        st.markdown(NEIGHBOURING_DETAIL)


def show_ledger(ledger: PrivacyLedger, delta: float | None = None, *, expanded: bool = False,
                note: bool = True) -> None:
    """Render the headline guarantee (its unit and neighbouring relation included) and, in an expander, one row
    per release and every accountant's total; ``note``: then the shared note on why ε differs between
    neighbouring relations (once per page: pass False to a second ledger on the same page)."""
    summary = ledger.summary(delta) if len(ledger) else None
    st.markdown(ledger_text(ledger, delta, summary=summary))
    if len(ledger):
        with st.expander(f"Privacy ledger ({plural(len(ledger), 'release')}, {ledger.status})", expanded=expanded):
            st.dataframe(human_headers(ledger.to_frame()), hide_index=True, width="stretch")
            st.caption("The same releases totalled by each accountant (the headline above uses the tightest valid "
                       "one; all are upper bounds on the true ε at their δ):")
            st.dataframe(human_headers(accountants_frame(ledger, delta, summary)), hide_index=True, width="stretch")
    if note:
        neighbouring_note(ledger if len(ledger) else None)
