"""Show a privacy ledger: every release, and the total guarantee stated honestly."""
from __future__ import annotations

import streamlit as st

from engine.privacy import PrivacyLedger
from engine.privacy.wording import ledger_text  # noqa: F401  (re-exported: the page and report wording)


def show_ledger(ledger: PrivacyLedger, delta: float | None = None, *, expanded: bool = False) -> None:
    """Render the ledger sentence and, in an expander, one row per release."""
    st.markdown(ledger_text(ledger, delta))
    if len(ledger):
        with st.expander(f"Privacy ledger ({len(ledger)} release{'s' if len(ledger) != 1 else ''}, "
                         f"{ledger.status})", expanded=expanded):
            st.dataframe(ledger.to_frame(), hide_index=True, width="stretch")
