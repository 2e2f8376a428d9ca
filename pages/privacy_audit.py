"""Privacy audit: the entry point. The page's body (sections, tasks, figures) is in ui/privacy_audit/."""
import streamlit as st

from ui.doc_link import doc_link
from ui.privacy_audit.sections import main

st.title("Privacy audit")
doc_link("privacy_audit")
main()
