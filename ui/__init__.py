"""Shared Streamlit widgets and plotly figure builders (no computation here: see engine/).

One folder per page (issue 29: a page's code sits in its ui folder): ``ui/<page>/sections.py``'s ``main()`` is the
page's body, called by its entry point ``pages/<page>.py`` after the title and the documentation link.
"""
