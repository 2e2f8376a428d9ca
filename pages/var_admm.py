"""VAR-ADMM: the entry point. The page's body (sections, tasks, figures) is in ui/var_admm/."""
import streamlit as st

from ui.doc_link import doc_link
from ui.var_admm.sections import main

st.title("VAR-ADMM")
doc_link("var_admm")
main()
