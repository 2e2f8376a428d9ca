"""Figures of the guided demo on the home page (ui/demo.py, engine.demo), issue #10."""
from __future__ import annotations

import plotly.graph_objects as go

from ui.figures.attack_lab import ATTACK_COLOURS
from ui.figures.edpls import edpls_rmsep_curve_figure
from ui.figures.layout import finish


def demo_leak_figure(axis, secret, leaked, *, secret_centre=None, correlation: float | None = None,
                     title: str = "Without privacy: what the shared PLS model gives away",
                     leaked_label: str = "recovered by party 1 from plain PLS (no privacy)",
                     secret_label: str = "party 2's secret band (simulated truth)", height: int = 320) -> go.Figure:
    """The other party's secret band next to what the attacker recovers from plain PLS (one panel).

    secret, leaked: (m,) curves already scaled to peak 1 (``engine.demo.leak_example``).
    """
    fig = go.Figure()
    fig.add_scatter(x=axis, y=secret, name=secret_label, mode="lines",
                    line={"color": ATTACK_COLOURS["secret"], "width": 5}, opacity=0.35)
    fig.add_scatter(x=axis, y=leaked, name=leaked_label, mode="lines",
                    line={"color": ATTACK_COLOURS["plain"], "width": 1.5})
    if secret_centre is not None:
        fig.add_vline(x=secret_centre, line_dash="dash", line_color="grey")
    if correlation is not None:
        title = f"{title} (|corr| = {correlation:.2f})"
    fig.update_layout(title=title, xaxis_title="channel", yaxis_title="scaled to peak 1", height=height)
    return finish(fig)


def demo_cost_figure(curve, *, sigma_y: float, epsilon: float, unit: str = "", response: str = "y") -> go.Figure:
    """Strict edPLS RMSEP against ε (median, IQR band) with the non-private RMSEP and σ_y, and the
    story's ε marked. curve: ``engine.demo.guided_story`` step 3's table (an ``rmsep_curve`` with a
    ``model`` column)."""
    fig = edpls_rmsep_curve_figure(curve, group="model", sigma_y=sigma_y)
    for trace in fig.data:  # the dotted line of each group is the non-private model, not a private one
        if trace.name and trace.name.endswith(" non-private"):
            trace.name = "non-private PLS (no privacy)"
    fig.add_vline(x=epsilon, line={"dash": "dot", "color": "#2ca02c"}, annotation_text=f"ε = {epsilon:g}")
    units = f" ({unit})" if unit else ""
    # the label comes from each ε's own ledger (a "status" column), never assumed
    status = set(curve["status"]) if "status" in getattr(curve, "columns", ()) else set()
    said = ("proven DP at each ε" if status == {"proven"} else
            "not proven: see the ledger" if "not proven" in status else "one strict fit per ε")
    fig.update_layout(title=f"The cost: RMSEP of {response} against ε (strict edPLS, {said})",
                      yaxis_title=f"RMSEP on held-out rows{units}", xaxis_title="ε (log scale)", height=400)
    return finish(fig)
