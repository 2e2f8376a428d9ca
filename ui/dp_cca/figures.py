"""Figures of the DP-CCA page (pages/dp_cca.py), issue #7."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ui.figures.layout import NONPRIVATE_COLOUR, PRIVATE_COLOUR, finish
from ui.figures.markers import MARKERS_PER_FIGURE, drawn_note, rows_drawn

DP_CCA_COLOURS = {"private": PRIVATE_COLOUR, "nonprivate": NONPRIVATE_COLOUR, "true": "#555555",
                  "captured": "#1f77b4", "angle_cos": "#2ca02c"}
DP_CCA_SWEEP_AXES = {
    "epsilon": ("ε (log scale)", "log"),
    "n_samples": ("N, training rows (log scale)", "log"),
    "delta": ("δ (log scale)", "log"),
}
DP_CCA_METRICS = {
    "captured": "captured correlation (held-out, private / non-private)",
    "angle_cos": "subspace similarity (mean cos of principal angles)",
}


def dp_cca_correlation_bars(private, nonprivate, true=None, *, private_label: str = "private (DP)",
                            nonprivate_label: str = "non-private (ε = ∞)") -> go.Figure:
    """Grouped bars per canonical pair: private vs non-private correlations (and the true values)."""
    k = len(private)
    pairs = [f"pair {i + 1}" for i in range(k)]
    fig = go.Figure()
    fig.add_bar(x=pairs, y=list(private), name=private_label, marker_color=DP_CCA_COLOURS["private"])
    fig.add_bar(x=pairs, y=list(nonprivate)[:k], name=nonprivate_label, marker_color=DP_CCA_COLOURS["nonprivate"])
    if true is not None:
        fig.add_bar(x=pairs, y=list(true)[:k], name="true (planted)", marker_color=DP_CCA_COLOURS["true"],
                    opacity=0.6)
    fig.update_layout(barmode="group", title="Canonical correlations on the training rows",
                      yaxis={"title": "canonical correlation", "range": [0, 1.05]},
                      height=360)
    return finish(fig)


def dp_cca_sweep_figure(summary, parameter: str, *, title: str | None = None) -> go.Figure:
    """One of the poster's three curves: utility against ε, N or δ (mean, band = ± 1 sd).

    summary: ``engine.methods.dp_cca.summarise_sweep`` rows of one parameter.
    """
    part = summary[summary["parameter"] == parameter].sort_values("value")
    x = part["value"].tolist()
    fig = go.Figure()
    for metric, label in DP_CCA_METRICS.items():
        colour = DP_CCA_COLOURS[metric]
        mean = part[f"{metric}_mean"]
        sd = part[f"{metric}_sd"]
        fig.add_scatter(x=x + x[::-1], y=(mean + sd).tolist() + (mean - sd).tolist()[::-1], fill="toself",
                        fillcolor=colour, opacity=0.15, line={"width": 0}, hoverinfo="skip", showlegend=False,
                        legendgroup=metric)
        fig.add_scatter(x=x, y=mean, mode="lines+markers", name=label, line={"color": colour}, legendgroup=metric)
    fig.add_hline(y=1.0, line_dash="dash", line_color="#999999", annotation_text="non-private",
                  annotation_position="bottom right")
    axis_title, axis_type = DP_CCA_SWEEP_AXES[parameter]
    fixed = ""
    if len(part):
        n_rep = int(part["n_replicates"].iloc[0])
        fixed = f" ({n_rep} replicates per point)"
    fig.update_layout(title=title or f"Utility vs {axis_title.split(' (')[0]}{fixed}",
                      xaxis={"title": axis_title, "type": axis_type},
                      yaxis={"title": "relative to non-private CCA", "range": [min(-0.05, float(
                          (part['captured_mean'] - part['captured_sd']).min()) if len(part) else 0.0), 1.1]},
                      height=380)
    return finish(fig)


def dp_cca_loadings_figure(x_names, u_private, u_nonprivate, y_names, v_private, v_nonprivate, *,
                           x_title: str = "X variable", y_title: str = "Y variable") -> go.Figure:
    """Weights of the first canonical pair over the variables of each view, private vs non-private.

    Each curve is scaled to max |.| = 1 (the scale of a canonical weight vector is arbitrary).
    """
    fig = make_subplots(rows=1, cols=2, subplot_titles=("X view: u₁", "Y view: v₁"), horizontal_spacing=0.08)
    for col, (names, priv, nonp, title) in enumerate(
            ((x_names, u_private, u_nonprivate, x_title), (y_names, v_private, v_nonprivate, y_title)), start=1):
        names = [str(n) for n in names]
        many = len(names) > 40
        for values, key, label in ((nonp, "nonprivate", "non-private"), (priv, "private", "private (DP)")):
            if many:
                fig.add_scatter(x=names, y=list(values), mode="lines", name=label, legendgroup=key,
                                showlegend=col == 1, line={"color": DP_CCA_COLOURS[key]}, row=1, col=col)
            else:
                fig.add_bar(x=names, y=list(values), name=label, legendgroup=key, showlegend=col == 1,
                            marker_color=DP_CCA_COLOURS[key], row=1, col=col)
        fig.update_xaxes(title_text=title, type="category", row=1, col=col)
    fig.update_yaxes(title_text="weight (scaled to max |·| = 1)", row=1, col=1)
    fig.update_layout(barmode="group", title="Weights of the first canonical pair", height=380)
    return finish(fig)


def dp_cca_scores_figure(x_scores, y_scores, *, label: str = "private model") -> go.Figure:
    """First canonical variates of the rows, X score against Y score (NOT differentially private); beyond
    ``MARKERS_PER_FIGURE`` rows, that many evenly spaced, and the title says so (``ui.figures.markers``)."""
    x_scores, y_scores = np.asarray(x_scores, dtype=float), np.asarray(y_scores, dtype=float)
    rows = rows_drawn(x_scores.size, MARKERS_PER_FIGURE)
    note = drawn_note(rows.size, x_scores.size)
    fig = go.Figure()
    fig.add_scatter(x=x_scores[rows], y=y_scores[rows], mode="markers", marker={"size": 4, "opacity": 0.5,
                    "color": DP_CCA_COLOURS["private"]}, name=label)
    fig.update_layout(title="First canonical pair of the training rows (not DP)" + (note and f"; {note}"),
                      xaxis={"title": "X·u₁"}, yaxis={"title": "Y·v₁"}, height=380)
    return finish(fig)
