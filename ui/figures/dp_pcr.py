"""Figures of the DP-PCR page (pages/dp_pcr.py); the shared layout rules are ``ui.figures.layout``."""
from __future__ import annotations

import plotly.graph_objects as go

from ui.figures.layout import GROUP_PALETTE, NONPRIVATE_COLOUR, PRIVATE_COLOUR, add_median_band, finish

__all__ = ["dp_pcr_coef_figure", "dp_pcr_pred_figure", "dp_pcr_rmsep_figure", "dp_pcr_variance_figure"]

#: One colour per method in the side-by-side sweep (no red: red means non-private on every page).
METHOD_COLOURS = {"DP-PCR": PRIVATE_COLOUR, "edPLS (strict)": GROUP_PALETTE[1]}


def dp_pcr_coef_figure(axis, coef_private, coef_nonprivate, *, axis_label: str, private_label: str) -> go.Figure:
    """Regression coefficients over the channel axis: private PCR over non-private PCR."""
    fig = go.Figure()
    fig.add_scatter(x=axis, y=coef_nonprivate, name="non-private PCR", mode="lines", line={"color": NONPRIVATE_COLOUR})
    fig.add_scatter(x=axis, y=coef_private, name=private_label, mode="lines", line={"color": PRIVATE_COLOUR},
                    opacity=0.8)
    fig.update_layout(title="Regression coefficients", xaxis_title=axis_label,
                      yaxis_title="coefficient b (y per unit of x)")
    return finish(fig)


def dp_pcr_pred_figure(y_true, y_private, y_nonprivate, *, response: str, private_label: str) -> go.Figure:
    """Predicted against measured on the test rows, with the identity line."""
    lo, hi = float(min(min(y_true), min(y_nonprivate))), float(max(max(y_true), max(y_nonprivate)))
    fig = go.Figure()
    fig.add_scatter(x=[lo, hi], y=[lo, hi], mode="lines", name="identity", line={"dash": "dash", "color": "#999"})
    fig.add_scatter(x=y_true, y=y_nonprivate, mode="markers", name="non-private PCR",
                    marker={"color": NONPRIVATE_COLOUR})
    fig.add_scatter(x=y_true, y=y_private, mode="markers", name=private_label, marker={"color": PRIVATE_COLOUR})
    fig.update_layout(title="Test set: predicted vs measured", xaxis_title=f"measured {response}",
                      yaxis_title=f"predicted {response}")
    return finish(fig)


def dp_pcr_variance_figure(ratio_private, ratio_nonprivate) -> go.Figure:
    """Share of the X variance along each component: private eigenvalues beside the non-private ones."""
    comps = [f"PC{i + 1}" for i in range(len(ratio_private))]
    fig = go.Figure()
    fig.add_bar(x=comps, y=list(ratio_nonprivate), name="non-private PCA", marker={"color": NONPRIVATE_COLOUR})
    fig.add_bar(x=comps, y=list(ratio_private), name="private (noisy moments)", marker={"color": PRIVATE_COLOUR})
    fig.update_layout(title="Explained variance ratio per component", barmode="group", xaxis_title="component",
                      yaxis_title="share of the total X variance")
    return finish(fig)


def dp_pcr_rmsep_figure(curves, *, sigma_y: float | None = None) -> go.Figure:
    """RMSEP against ε (log-log) for DP-PCR and strict edPLS on the same split: median, IQR band and each
    method's non-private RMSEP (dotted, in its colour)."""
    fig = go.Figure()
    finite = curves[curves["epsilon"] < float("inf")]
    for i, (name, df) in enumerate(finite.groupby("method", sort=False)):
        colour = METHOD_COLOURS.get(name, GROUP_PALETTE[(i + 2) % len(GROUP_PALETTE)])
        add_median_band(fig, df.sort_values("epsilon"), "epsilon", colour=colour, name=str(name),
                         nonprivate_name=f"{name} non-private")
    if sigma_y:
        fig.add_hline(y=sigma_y, line={"dash": "dash", "color": "#999"}, annotation_text="σ_y (predict the mean)")
    fig.update_layout(title="RMSEP vs ε: PCR and PLS side by side",
                      xaxis={"title": "ε (one strict release per fit)", "type": "log"},
                      yaxis={"title": "RMSEP on the test rows (units of y)", "type": "log"})
    return finish(fig)
