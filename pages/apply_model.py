"""Apply a model: a shareable regression release and new spectra -> predictions (ui.apply_model.view)."""
import streamlit as st

from ui.apply_model.view import apply_section
from ui.doc_link import doc_link

st.title("Apply a model")
doc_link("apply_model")
st.caption("Upload the shareable release of a regression fitted in PrivaLab (edPLS, DP-PCR, AdaSSP) and a file of "
           "new spectra: the model's channels are matched by name, its preprocessing chain is applied, and the "
           "predictions come back as a table and a CSV. The same from the command line: "
           "`privalab predict --model release.json --data spectra.csv --out predictions.csv`.")
apply_section()
