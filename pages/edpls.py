"""edPLS page: the entry point. The page's sections are ``ui.edpls.sections`` (data, the planner, preprocessing,
the strict or paper fit, results, exports), ``ui.edpls.analysis`` (sweep, simulation), ``ui.edpls.fits`` (cached
fits) and ``ui.edpls.exports``; widgets only, the math is ``engine.methods.edpls``.
"""
import streamlit as st

from ui.doc_link import doc_link
from ui.edpls.sections import main

st.title("edPLS: differentially private PLS1 regression")
doc_link("edpls")
main()
