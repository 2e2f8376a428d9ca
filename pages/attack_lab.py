"""Attack lab (PLS): the entry point. The page's body (sections, tasks, figures) is in ui/attack_lab/."""
import streamlit as st

from ui.attack_lab.sections import main
from ui.doc_link import doc_link

st.title("Attack lab (PLS)")
doc_link("attack_lab")
main()
