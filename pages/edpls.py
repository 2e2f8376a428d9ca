"""edPLS page: not built yet (issue #4). It says so instead of showing fake results."""
import streamlit as st

from ui.budget import budget_picker
from ui.data_picker import data_picker
from ui.pending import pending

st.title("edPLS")
pending(4, "Private PLS1 fitting (paper-faithful and strict modes), preprocessing comparison and RMSEP-vs-ε curves are being built.", "The data picker and budget below already work; no model is fitted on this page yet.")
budget_picker("edpls")
data_picker(key="edpls_data")
