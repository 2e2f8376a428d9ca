"""Figures of the edPLS page (pages/edpls.py), issue #4."""
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


def edpls_coef_figure(axis, coef_private, coef_plain, *, axis_label: str, private_label: str,
                      reference_label: str = "non-private PLS") -> go.Figure:
    """Regression coefficients over the channel axis, private over the reference (default non-private PLS)."""
    return coefficient_figure(axis, coef_private, coef_plain, axis_label=axis_label, private_label=private_label,
                              reference_label=reference_label)


def edpls_pred_figure(y_true, y_private, y_plain, *, response: str, private_label: str) -> go.Figure:
    """Predicted against measured on the test rows, with the identity line."""
    return prediction_figure(y_true, y_private, y_plain, response=response, private_label=private_label,
                             reference_label="non-private PLS")


def edpls_rmsep_curve_figure(curves, *, group: str = "chain", sigma_y: float | None = None,
                             x_title: str = "ε per the chosen accounting") -> go.Figure:
    """RMSEP against epsilon (log-log): median line, interquartile band, one colour per group,
    and each group's non-private RMSEP as a dotted line (``x_title``: paper mode names its ε a claim)."""
    groups = list(curves.groupby(group, sort=False))
    fig = go.Figure()
    for i, (name, df) in enumerate(groups):
        # one group: the private/non-private colours of every page; several: one colour per group (no red,
        # which means non-private), the group's non-private line dotted in its colour
        col = PRIVATE_COLOUR if len(groups) == 1 else GROUP_PALETTE[i % len(GROUP_PALETTE)]
        add_median_band(fig, df.sort_values("epsilon"), "epsilon", colour=col, name=str(name),
                         nonprivate_name=f"{name} non-private",
                         nonprivate_colour=NONPRIVATE_COLOUR if len(groups) == 1 else None)
    if sigma_y:
        fig.add_hline(y=sigma_y, line={"dash": "dash", "color": "#999"}, annotation_text="σ_y (predict the mean)")
    fig.update_layout(title="RMSEP vs ε", xaxis={"title": x_title, "type": "log"},
                      yaxis={"title": "RMSEP on the test rows (units of y)", "type": "log"})
    return finish(fig)


def edpls_samples_needed_figure(curve, *, target: float | None = None, name: str = "strict edPLS") -> go.Figure:
    """Strict mode: simulated RMSEP against the number of training rows (``name``: the strict estimator)."""
    fig = go.Figure()
    add_median_band(fig, curve, "n", colour=PRIVATE_COLOUR, name=name, nonprivate_name="non-private",
                     nonprivate_colour=NONPRIVATE_COLOUR)
    if target:
        fig.add_hline(y=target, line={"dash": "dash", "color": "#999"}, annotation_text="target RMSEP")
    fig.update_layout(title="How many samples would strict mode need?",
                      xaxis={"title": "training rows n", "type": "log"},
                      yaxis={"title": "RMSEP on the test rows (units of y)", "type": "log"})
    return finish(fig)
