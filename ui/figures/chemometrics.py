"""Figures of the chemometrics staples (ui/chemometrics.py, on the edPLS and DP-PCR pages), issue #19.

Every figure here shows the owner's view (computed on the owner's rows without noise): the titles say so where
the figure could be mistaken for a private result. Non-private models keep the red of every page, private ones
the blue.
"""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ui.figures.layout import GROUP_PALETTE, NONPRIVATE_COLOUR, PRIVATE_COLOUR, finish
from ui.figures.markers import MARKERS_PER_FIGURE, drawn_note, largest_error, rows_drawn

OUTSIDE_MARKER = {"symbol": "x-open", "size": 13, "color": "#000000", "line": {"width": 2}}
FLAG_MARKER = {"symbol": "circle-open", "size": 14, "color": "#000000", "line": {"width": 2}}
SET_COLOURS = {"training": GROUP_PALETTE[2], "test": GROUP_PALETTE[3]}


def chemometrics_rmsecv_figure(ks, rmsecv, se, *, k_suggested: int, rule: str, marks: dict | None = None,
                               model: str = "PLS1") -> go.Figure:
    """RMSECV (with ± one standard error) against the number of latent variables; the suggested k as a star and
    ``marks`` (label -> k) as dotted vertical lines (e.g. the page's k, the private fit's k)."""
    ks, rmsecv, se = np.asarray(ks), np.asarray(rmsecv, dtype=float), np.asarray(se, dtype=float)
    fig = go.Figure()
    fig.add_scatter(x=ks, y=rmsecv, mode="lines+markers", name=f"RMSECV, non-private {model} (± 1 SE)",
                    error_y={"type": "data", "array": se, "visible": True}, line={"color": NONPRIVATE_COLOUR})
    i = int(np.flatnonzero(ks == k_suggested)[0])
    fig.add_scatter(x=[k_suggested], y=[rmsecv[i]], mode="markers", name=f"suggested k = {k_suggested} ({rule})",
                    marker={"symbol": "star", "size": 16, "color": "#000000"})
    for j, (label, k) in enumerate((marks or {}).items()):
        if k is not None:
            fig.add_vline(x=k, line={"dash": "dot", "color": GROUP_PALETTE[(j + 1) % len(GROUP_PALETTE)]},
                          annotation_text=label, annotation_position="top left" if j % 2 else "top right")
    fig.update_layout(title="RMSECV vs latent variables (owner's view, not private)",
                      xaxis={"title": "latent variables k", "dtick": 1 if len(ks) <= 20 else None},
                      yaxis={"title": "RMSECV (units of y)"})
    return finish(fig)


def chemometrics_prediction_figure(y_true, predictions: dict, outside: dict, *, y_range, range_label: str,
                                   response: str) -> go.Figure:
    """Predicted against measured on the test rows, one colour per model (``predictions``: label -> values; the
    first is the private model, drawn blue), the identity line, the y range's bounds where they are near the
    points, and predictions outside the range (``outside``: label -> mask) marked with a black ×."""
    y = np.asarray(y_true, dtype=float)
    preds = {label: np.asarray(p, dtype=float) for label, p in predictions.items()}
    masks = {label: np.asarray(outside.get(label, np.zeros(p.shape, bool)), dtype=bool) for label, p in preds.items()}
    values = np.concatenate([y, *preds.values()])
    lo, hi = float(values.min()), float(values.max())
    # beyond MARKERS_PER_FIGURE markers: the same rows of every model, those outside the range and the largest
    # errors first (ui.figures.markers)
    worst = largest_error(y, list(preds.values()))
    worst[np.logical_or.reduce([*masks.values(), np.zeros(y.size, bool)])] = np.inf
    rows = rows_drawn(y.size, max(1, MARKERS_PER_FIGURE // max(1, len(preds))), worst)
    fig = go.Figure()
    fig.add_scatter(x=[float(y.min()), float(y.max())], y=[float(y.min()), float(y.max())], mode="lines",
                    name="identity", line={"dash": "dash", "color": "#999"})
    colours = [PRIVATE_COLOUR, NONPRIVATE_COLOUR, *GROUP_PALETTE[1:]]
    flagged_x, flagged_y = [], []
    for i, (label, pred) in enumerate(preds.items()):
        fig.add_scatter(x=y[rows], y=pred[rows], mode="markers", name=label,
                        marker={"color": colours[i % len(colours)]})
        mask = masks[label][rows]
        flagged_x += list(y[rows][mask])
        flagged_y += list(pred[rows][mask])
    if flagged_x:
        fig.add_scatter(x=flagged_x, y=flagged_y, mode="markers", name=f"outside {range_label}",
                        marker=OUTSIDE_MARKER)
    span = max(hi - lo, 1e-12)
    for bound, name in zip(y_range, ("low", "high")):
        if lo - 0.25 * span <= bound <= hi + 0.25 * span:  # a far bound would squash the points
            fig.add_hline(y=bound, line={"dash": "dot", "color": "#555"}, annotation_text=f"{name} end of the range")
    note = drawn_note(rows.size, y.size, "test rows")
    fig.update_layout(title="Test set: predicted vs measured, predictions outside the y range marked"
                      + (note and f" ({note}, the largest errors among them)"),
                      xaxis_title=f"measured {response}", yaxis_title=f"predicted {response}")
    return finish(fig)


def chemometrics_loadings_figure(axis, loadings, *, axis_label: str, n_show: int = 3, model: str = "PLS",
                                 prefix: str = "LV") -> go.Figure:
    """X-loadings of the first ``n_show`` latent variables of the non-private reference, over the channels
    (``prefix``: "LV" for PLS, "PC" for PCR)."""
    loadings = np.asarray(loadings, dtype=float)
    fig = go.Figure()
    for a in range(min(n_show, loadings.shape[1])):
        fig.add_scatter(x=axis, y=loadings[:, a], mode="lines", name=f"{prefix} {a + 1}",
                        line={"color": GROUP_PALETTE[a % len(GROUP_PALETTE)]})
    fig.update_layout(title=f"X-loadings, non-private {model} (owner's view)", xaxis_title=axis_label,
                      yaxis_title="loading")
    return finish(fig)


def chemometrics_vip_figure(axis, vip, *, axis_label: str) -> go.Figure:
    """VIP of every channel of the non-private PLS, with the usual threshold VIP = 1 (the mean of VIP² is 1)."""
    vip = np.asarray(vip, dtype=float)
    fig = go.Figure()
    fig.add_scatter(x=axis, y=vip, mode="lines", name="VIP", line={"color": NONPRIVATE_COLOUR})
    fig.add_hline(y=1.0, line={"dash": "dash", "color": "#999"}, annotation_text="VIP = 1")
    fig.update_layout(title="VIP, non-private PLS (owner's view)", xaxis_title=axis_label,
                      yaxis_title="VIP (variable importance in projection)")
    return finish(fig)


def chemometrics_t2_q_figure(table, t2_limits: dict, q_limits: dict) -> go.Figure:
    """Hotelling T² against Q residuals, one colour per set (training, test), the 95 % (dashed) and 99 % (dotted)
    limits of the training rows, and rows over a 99 % limit circled. ``table``: ``OutlierDiagnostics.table``.
    Beyond ``MARKERS_PER_FIGURE`` rows, each set draws its share, the rows farthest past the 99 % limits first
    (``ui.figures.markers``), and the title says so; every circled row is drawn."""
    fig = go.Figure()

    def past(values, limit) -> np.ndarray:  # how far past a 99 % limit (the value itself without a limit)
        values = np.asarray(values, dtype=float)
        return values / limit if np.isfinite(limit) and limit > 0 else values

    drawn = 0
    for name, df in table.groupby("set", sort=False):
        worst = np.fmax(past(df["T²"], t2_limits.get(0.99, np.nan)), past(df["Q"], q_limits.get(0.99, np.nan)))
        part = df.iloc[rows_drawn(len(df), max(1, MARKERS_PER_FIGURE * len(df) // len(table)), worst)]
        drawn += len(part)
        fig.add_scatter(x=part["T²"], y=part["Q"], mode="markers", name=f"{name} rows",
                        marker={"color": SET_COLOURS.get(name, GROUP_PALETTE[0])},
                        text=[f"row {r}" for r in part["row"]], hovertemplate="%{text}: T² %{x:.3g}, Q %{y:.3g}")
    over = [c for c in table.columns if c.endswith("over 99%")]
    flagged = table[table[over].any(axis=1)] if over else table.iloc[:0]
    if len(flagged):
        fig.add_scatter(x=flagged["T²"], y=flagged["Q"], mode="markers", name="over a 99 % limit",
                        marker=FLAG_MARKER, hoverinfo="skip")
    for alpha, dash in ((0.95, "dash"), (0.99, "dot")):
        if np.isfinite(t2_limits.get(alpha, np.nan)):
            fig.add_vline(x=t2_limits[alpha], line={"dash": dash, "color": "#555"},
                          annotation_text=f"T² {alpha:.0%}", annotation_position="top right")
        if np.isfinite(q_limits.get(alpha, np.nan)):
            fig.add_hline(y=q_limits[alpha], line={"dash": dash, "color": "#555"},
                          annotation_text=f"Q {alpha:.0%}", annotation_position="top left")
    note = drawn_note(drawn, len(table))
    fig.update_layout(title="Outliers: Hotelling T² vs Q residuals (owner's view, not private)"
                      + (note and f"; {note}, the farthest out among them"),
                      xaxis_title="Hotelling T² (distance within the model)",
                      yaxis_title="Q residual, SPE (distance to the model)")
    return finish(fig)


def chemometrics_spectra_figure(axis, raw, panels: dict, *, axis_label: str, row_labels) -> go.Figure:
    """A few training spectra raw (top) and after each preprocessing below (``panels``: title -> rows, same rows as
    ``raw``), one colour per row."""
    raw = np.atleast_2d(np.asarray(raw, dtype=float))
    rows = 1 + len(panels)
    fig = make_subplots(rows=rows, cols=1, shared_xaxes=True, vertical_spacing=0.24 / rows,
                        subplot_titles=("raw spectra", *panels))
    for p, values in enumerate([raw, *[np.atleast_2d(np.asarray(v, dtype=float)) for v in panels.values()]]):
        for i, label in enumerate(row_labels):
            fig.add_scatter(x=axis, y=values[i], mode="lines", name=str(label), legendgroup=str(label),
                            showlegend=p == 0, line={"color": GROUP_PALETTE[i % len(GROUP_PALETTE)]}, row=p + 1, col=1)
        fig.update_yaxes(title_text="raw" if p == 0 else "preprocessed", row=p + 1, col=1)
    fig.update_xaxes(title_text=axis_label, row=rows, col=1)
    fig.update_layout(title="Training spectra before and after preprocessing (owner's view)", height=260 * rows + 40)
    return finish(fig)
