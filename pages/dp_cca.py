"""DP-CCA: the entry point. The page's body (sections, tasks, figures) is in ui/dp_cca/."""
import streamlit as st

from ui.doc_link import doc_link
from ui.dp_cca.sections import main

st.title("DP-CCA")
doc_link("dp_cca")
main()
