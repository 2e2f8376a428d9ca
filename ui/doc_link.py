"""Each page's link to its documentation page (the mkdocs site built from ``docs/``).

A page key is the page file's stem (``pages/edpls.py`` -> ``"edpls"``; the home page is ``"home"``). A method
page's documentation is ``docs/methods/<key>.md`` by convention (so a new method needs no line here, and
``tests/test_doc_links.py`` fails until its page exists); the tool pages and home are listed in ``DOC_PAGES``.

The site is built locally, never fetched: ``mkdocs serve`` (dev requirements) serves it at
``http://127.0.0.1:8000/``, the default base. An operator who hosts the built site (``mkdocs build`` writes
``site/``) elsewhere sets ``PRIVALAB_DOCS_URL`` to its address. The link also names the Markdown file in the
checkout, readable without any server.
"""
from __future__ import annotations

import os

import streamlit as st

#: Environment variable naming the documentation site's base URL.
DOCS_URL_ENV = "PRIVALAB_DOCS_URL"
#: Where ``mkdocs serve`` serves the site by default (loopback only).
DEFAULT_DOCS_URL = "http://127.0.0.1:8000/"

#: Pages whose documentation does not follow the method convention: page key -> Markdown file under docs/.
DOC_PAGES = {
    "home": "index.md",
    "attack_lab": "tools/attack-lab.md",
    "calculator": "tools/calculator.md",
    "privacy_audit": "tools/privacy-audit.md",
    "apply_model": "tools/apply-model.md",
}


def doc_path(page_key: str) -> str:
    """The page's Markdown file, relative to ``docs/`` (e.g. ``"methods/edpls.md"``)."""
    return DOC_PAGES.get(page_key, f"methods/{page_key}.md")


def doc_url(page_key: str) -> str:
    """The page's address on the site: the base from ``PRIVALAB_DOCS_URL`` plus mkdocs' directory URL."""
    base = os.environ.get(DOCS_URL_ENV, "").strip() or DEFAULT_DOCS_URL
    path = doc_path(page_key).removesuffix(".md")
    path = "" if path == "index" else path + "/"
    return base.rstrip("/") + "/" + path


def doc_link(page_key: str) -> None:
    """One caption line: ``Documentation: <link> · docs/<file>`` (the Markdown source in the checkout)."""
    url = doc_url(page_key)
    st.caption(f"Documentation: [{url}]({url}) · `docs/{doc_path(page_key)}`")
