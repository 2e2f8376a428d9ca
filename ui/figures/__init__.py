"""Plotly figures shared by the pages (every figure in PrivaLab is plotly).

``layout`` holds the house layout every builder finishes with (``finish``: legend, margins, axis titles,
log ticks) and the shared colours; ``chemometrics`` and ``report`` the figures several pages draw. A page's own
builders live in its folder (``ui/<page>/figures.py``).
"""
