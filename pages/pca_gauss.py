"""PCA-Gauss: the entry point. The page's body (sections, tasks, figures) is in ui/pca_gauss/."""
import streamlit as st

from ui.doc_link import doc_link
from ui.pca_gauss.sections import main

st.title("PCA-Gauss")
doc_link("pca_gauss")
main()
