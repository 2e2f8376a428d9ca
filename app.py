"""PrivaLab: home page and navigation; nothing else."""
from pathlib import Path

import streamlit as st

from engine.threads import serve_with_one_blas_thread
from ui.data_picker import data_picker
from ui.doc_link import doc_link
from ui.gc_freeze import freeze_after_imports
from ui.pages import TOOL_PAGES, method_pages
from ui.runtime.warmup import start_warmup
from ui.session_file import session_file_widget
from ui.state import init_state


def home() -> None:
    from ui.home.demo import guided_demo  # here: only the home page needs it (0.8 s of imports for another page)

    st.title("PrivaLab")
    doc_link("home")
    st.markdown(
        "PrivaLab fits multivariate models (PLS, CCA, PCA, VAR) on sensitive data with differential "
        "privacy or federated protocols, and shows what privacy costs in accuracy. It also shows what "
        "an attacker could recover without it, so you can decide how much protection your data need."
    )
    st.subheader("Methods")
    for page in method_pages():
        st.page_link(page.file, label=f"**{page.title}**: {page.summary}", icon=page.icon)
    st.subheader("Tools")
    for page in TOOL_PAGES:
        st.page_link(page.file, label=f"**{page.title}**: {page.summary}", icon=page.icon)
    guided_demo()
    st.subheader("Your data")
    st.caption("Pick a sample set or upload a file; the method pages start from this choice.")
    data_picker(key="home_data")


# A bundled icon file: a material-icon or emoji favicon is fetched by the browser from a font CDN on every load.
ICON = str(Path(__file__).resolve().parent / "assets" / "privalab_icon.png")
serve_with_one_blas_thread()  # sessions share the cores: threaded BLAS spin-waits, ~10x slower (engine/threads.py)
st.set_page_config(page_title="PrivaLab", page_icon=ICON, layout="wide")
nav = st.navigation(
    {
        "": [st.Page(home, title="Home", icon=":material/home:", default=True)],
        "Methods": [st.Page(p.file, title=p.title, icon=p.icon) for p in method_pages()],
        "Tools": [st.Page(p.file, title=p.title, icon=p.icon) for p in TOOL_PAGES],
    }
)
init_state()  # after st.navigation: this run already goes through app.py, so no deep-link rerun (it would drop a click)
session_file_widget()  # in the sidebar of every page, before the page runs: a restored setting reaches its widgets
nav.run()
freeze_after_imports()  # the post-run full GC then skips the imported modules: 0.16 s less per run (ui/gc_freeze.py)
start_warmup()  # once per server process, after this run's page: all pages' imports, the forkserver (ui/runtime/warmup)
