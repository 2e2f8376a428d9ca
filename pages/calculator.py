"""Noise & budget calculator: the entry point. The page's body (sections, tasks, figures) is in ui/calculator/."""
import streamlit as st

from ui.calculator.sections import main
from ui.doc_link import doc_link

st.title("Noise & budget calculator")
doc_link("calculator")
main()
