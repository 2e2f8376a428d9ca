"""P3LS simulation: the entry point. The page's body (sections, tasks, figures) is in ui/p3ls/."""
import streamlit as st

from ui.doc_link import doc_link
from ui.p3ls.sections import main

st.title("P3LS simulation")
doc_link("p3ls")
main()
