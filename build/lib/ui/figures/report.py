"""Figures handed to the run report (``RunReport(figures=...)``), each with its explicit shareability.

A page passes its key figures with one call: the shareable report embeds only those declared
``shareable=True`` (built from differentially private outputs and declared-public inputs only); a figure
declared ``shareable=False`` is refused there and goes to the owner's workbook as a data table.
"""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from engine.report_figures import ReportFigure
from ui.figures.layout import PRIVATE_COLOUR, finish


def channel_axis(channels) -> tuple[np.ndarray, str]:
    """The channels' numeric names (wavelengths) as the x axis, or their index when a name is not a number."""
    try:
        return np.array([float(c) for c in channels]), "channel (column name)"
    except (TypeError, ValueError):
        return np.arange(len(channels)), "channel index"


def private_coefficients(channels, coef, *, label: str, shareable: bool, caption: str = "") -> dict:
    """``{"coefficients": ReportFigure}``: the private model's regression coefficients alone (a DP output over
    the public column names), or ``{}`` when the model has none."""
    if coef is None:
        return {}
    coef = np.asarray(coef, dtype=float).ravel()
    if len(coef) != len(channels):
        return {}
    axis, axis_label = channel_axis(channels)

    def build():  # on download only: a plotly figure costs ~10 ms of every page run otherwise (bench_load)
        fig = go.Figure(go.Scatter(x=axis, y=coef, mode="lines", name=label, line={"color": PRIVATE_COLOUR}))
        fig.update_layout(title=f"Regression coefficients of the released model ({label})", xaxis_title=axis_label,
                          yaxis_title="coefficient b (y per unit of x)", showlegend=False)
        return finish(fig)

    return {"coefficients": ReportFigure(build, shareable=shareable,
                                         caption=caption or "The released (differentially private) model only.")}


def report_figure(name: str, fig, *, shareable: bool, caption: str = "") -> dict:
    """``{name: ReportFigure(fig, shareable=...)}`` for a page's own figure (or a zero-argument builder)."""
    return {name: ReportFigure(fig, shareable=shareable, caption=caption)}


def private_values(name: str, values, *, shareable: bool, title: str = "", label: str = "private (DP)",
                   caption: str = "") -> dict:
    """``{name: ReportFigure}``: one bar per released value (e.g. the canonical correlations of a DP model)."""
    values = np.asarray(values, dtype=float).ravel()
    if not len(values):
        return {}
    fig = go.Figure(go.Bar(x=[str(i + 1) for i in range(len(values))], y=values, name=label,
                           marker={"color": PRIVATE_COLOUR}))
    title = title or f"{name[:1].upper()}{name[1:]}s of the released model"
    fig.update_layout(title=title, xaxis_title="component", yaxis_title=name, showlegend=False)
    return {name: ReportFigure(finish(fig), shareable=shareable,
                               caption=caption or "The released (differentially private) model only.")}


def synthetic_rows(synthetic, *, shareable: bool, max_points: int = 1500) -> dict:
    """``{"synthetic rows": ReportFigure}``: the released synthetic rows alone (first two released columns, or
    the first against y), coloured by their label where they have one; ``{}`` without a released column."""
    cols = [c for c in synthetic.columns if str(c).startswith("c")]
    if not cols:
        return {}
    x = cols[0]
    y = cols[1] if len(cols) > 1 else ("y" if "y" in synthetic.columns else None)
    rows = synthetic.iloc[:max_points]
    fig = go.Figure()
    groups = rows.groupby("label", sort=True) if "label" in rows.columns else [("synthetic rows", rows)]
    for label, part in groups:
        fig.add_scatter(x=part[x], y=part[y] if y else np.zeros(len(part)), mode="markers", name=str(label),
                        marker={"size": 4, "opacity": 0.6})
    fig.update_layout(title="Synthetic rows (DP release), released space", xaxis_title=str(x),
                      yaxis_title=str(y or ""), showlegend="label" in rows.columns)
    caption = f"The first {len(rows)} synthetic rows; no real row is drawn."
    return {"synthetic rows": ReportFigure(finish(fig), shareable=shareable, caption=caption)}
