"""Figures of the DP-PCR page (pages/dp_pcr.py); the shared layout rules are ``ui.figures.layout``."""
from __future__ import annotations

import plotly.graph_objects as go

from ui.figures.layout import (
    GROUP_PALETTE,
    NONPRIVATE_COLOUR,
    PRIVATE_COLOUR,
    add_median_band,
    coefficient_figure,
    finish,
    prediction_figure,
)

__all__ = ["dp_pcr_coef_figure", "dp_pcr_pred_figure", "dp_pcr_rmsep_figure", "dp_pcr_variance_figure"]

#: One colour per method in the side-by-side sweep (no red: red means non-private on every page).
METHOD_COLOURS = {"DP-PCR": PRIVATE_COLOUR, "edPLS (strict)": GROUP_PALETTE[1]}


def dp_pcr_coef_figure(axis, coef_private, coef_nonprivate, *, axis_label: str, private_label: str) -> go.Figure:
    """Regression coefficients over the channel axis: private PCR over non-private PCR."""
    return coefficient_figure(axis, coef_private, coef_nonprivate, axis_label=axis_label, private_label=private_label,
                              reference_label="non-private PCR")


def dp_pcr_pred_figure(y_true, y_private, y_nonprivate, *, response: str, private_label: str) -> go.Figure:
    """Predicted against measured on the test rows, with the identity line."""
    return prediction_figure(y_true, y_private, y_nonprivate, response=response, private_label=private_label,
                             reference_label="non-private PCR")


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
