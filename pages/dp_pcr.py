"""DP-PCR page: the entry point. The page is ``ui.dp_pcr.sections`` (data, the planner, public information, the
fit, exports, the sweep beside strict edPLS); widgets only, the math is ``engine.methods.dp_pcr``.
"""
import streamlit as st

from ui.doc_link import doc_link
from ui.dp_pcr.sections import main

st.title("DP-PCR: differentially private principal component regression")
doc_link("dp_pcr")
main()
