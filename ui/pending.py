"""Plain notice for a page whose capability is not built yet (no fake results)."""
from __future__ import annotations

import streamlit as st


def pending(issue: int, missing: str, available: str = "") -> None:
    """Say which issue-level capability is still missing on this page."""
    st.warning(f"**Not available yet (issue #{issue}).** {missing}", icon=":material/construction:")
    if available:
        st.caption(available)
