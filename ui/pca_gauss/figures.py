"""Figures of the PCA-Gauss page (pages/pca_gauss.py), issue #6."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ui.figures.layout import PRIVATE_COLOUR, finish
from ui.figures.markers import MARKERS_PER_FIGURE, drawn_note, rows_drawn

PCA_GAUSS_COLOURS = {
    "real": "#222222",
    "public_only": "#7f7f7f",
    "pca_gauss_public": "#1f77b4",
    "pca_gauss_laplace": "#ff7f0e",
    "pca_gauss_ag": "#2ca02c",
    "pca_gauss_alg1": "#17becf",
    "pca_gauss_opendp": "#8c564b",
    "liu": "#bcbd22",  # not red: red is the non-private colour on every page
    "jiang": "#9467bd",
    "li": "#e377c2",
}

_PG_QUALITATIVE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
                   "#bcbd22", "#17becf")


def _shared_range(frames, column: str, pad: float = 0.05) -> list | None:
    """[lo, hi] over every frame's ``column`` (padded), so real and synthetic panels share one scale."""
    values = [np.asarray(f[column], dtype=float) for f in frames if column in f.columns and len(f)]
    values = np.concatenate(values) if values else np.array([])
    values = values[np.isfinite(values)]
    if values.size == 0:
        return None
    lo, hi = float(values.min()), float(values.max())
    span = hi - lo or max(abs(lo), 1.0)
    return [lo - pad * span, hi + pad * span]


def _is_class_column(frame, colour) -> bool:
    return colour is not None and colour in frame.columns and frame[colour].dtype.kind not in "fiu"


def pca_gauss_scatter_figure(real, synthetic, *, x: str = "c1", y: str = "c2", colour: str | None = None,
                             max_points: int = MARKERS_PER_FIGURE // 2) -> go.Figure:
    """Real (left) and synthetic (right) rows in the released space on the same axis ranges, coloured by class
    (one colour per class, the same in both panels) or by a numeric y; a panel without the colour column (the
    synthetic rows of a clustering release carry no labels) is drawn in one colour. A panel of more than
    ``max_points`` rows draws that many, evenly spaced, and its title says so (``ui.figures.markers``)."""
    shown = [f.iloc[rows_drawn(len(f), max_points)] for f in (real, synthetic)]
    titles = []
    for title, drawn, frame in zip(("Real rows (mapped by W)", "Synthetic rows (DP release)"), shown,
                                   (real, synthetic), strict=True):
        note = drawn_note(len(drawn), len(frame))
        titles.append(title + (note and f": {note}"))
    fig = make_subplots(rows=1, cols=2, shared_xaxes=True, shared_yaxes=True, horizontal_spacing=0.05,
                        subplot_titles=titles)
    classes = sorted({str(v) for f in (real, synthetic) if _is_class_column(f, colour) for v in f[colour]})
    in_legend = set()
    for col, frame in ((1, shown[0]), (2, shown[1])):
        yy = frame[y] if y in frame.columns else [0.0] * len(frame)
        if _is_class_column(frame, colour):
            labels = frame[colour].astype(str)
            for k, label in enumerate(classes):
                part = frame[labels == label]
                fig.add_scatter(x=part[x], y=part[y] if y in part.columns else [0.0] * len(part), mode="markers",
                                name=label, legendgroup=label, showlegend=len(part) > 0 and label not in in_legend,
                                marker={"size": 4, "opacity": 0.6, "color": _PG_QUALITATIVE[k % len(_PG_QUALITATIVE)]},
                                row=1, col=col)
                if len(part):
                    in_legend.add(label)
        else:
            marker = {"size": 4, "opacity": 0.6}
            name = "synthetic rows (no labels)" if classes else None
            if colour is not None and colour in frame.columns and not classes:
                marker.update(color=frame[colour], colorscale="Viridis", cmin=-1, cmax=1,
                              showscale=col == 2, colorbar={"title": colour})
            elif classes:
                marker.update(color="#222222")  # not a class colour (the palette has a grey)
            fig.add_scatter(x=frame[x], y=yy, mode="markers", marker=marker, name=name, showlegend=bool(name),
                            row=1, col=col)
    x_range = _shared_range(shown, x)
    y_range = _shared_range(shown, y) if any(y in f.columns for f in shown) else None
    fig.update_xaxes(title_text=x, range=x_range, matches="x")
    fig.update_yaxes(range=y_range, matches="y")
    fig.update_yaxes(title_text=y, col=1)
    fig.update_layout(height=420, legend={"title": colour or ""})
    return finish(fig)


def pca_gauss_marginals_figure(real, synthetic, columns, *, bins: int = 30) -> go.Figure:
    """Overlaid histograms (probability density) of each released column, real against synthetic."""
    columns = list(columns)
    n_cols = min(3, len(columns)) or 1
    n_rows = -(-len(columns) // n_cols)
    fig = make_subplots(rows=n_rows, cols=n_cols, subplot_titles=columns, vertical_spacing=0.12)
    for i, c in enumerate(columns):
        r, k = i // n_cols + 1, i % n_cols + 1
        for frame, name, colour in ((real, "real", "#222222"), (synthetic, "synthetic", PRIVATE_COLOUR)):
            fig.add_histogram(x=frame[c], name=name, legendgroup=name, showlegend=i == 0, nbinsx=bins,
                              histnorm="probability density", opacity=0.55, marker_color=colour, row=r, col=k)
    fig.update_layout(barmode="overlay", height=max(260, 230 * n_rows))
    return finish(fig)


def pca_gauss_correlation_figure(corr_real, corr_synthetic) -> go.Figure:
    """Correlation heat maps side by side (real | synthetic), same colour scale [-1, 1]."""
    fig = make_subplots(rows=1, cols=2, subplot_titles=("Real", "Synthetic"), horizontal_spacing=0.1)
    for col, corr in ((1, corr_real), (2, corr_synthetic)):
        fig.add_heatmap(z=corr.to_numpy(), x=list(corr.columns), y=list(corr.index), zmin=-1, zmax=1,
                        colorscale="RdBu", reversescale=True, showscale=col == 2, row=1, col=col)
    fig.update_yaxes(autorange="reversed")
    fig.update_layout(height=400)
    return finish(fig)


def pca_gauss_utility_figure(summary, *, metric_label: str, references: dict | None = None,
                             x: str = "epsilon", log_x: bool = True, title: str = "") -> go.Figure:
    """Utility against ε (or P): mean line and 95 % CI band per method; references as dashed lines.

    summary : frame with columns method, label, <x>, mean, ci95 (``engine.methods.pca_gauss.utility.summarise``).
    references : name -> value (e.g. chance accuracy), drawn as horizontal dashed lines.
    """
    fig = go.Figure()
    for method, part in summary.groupby("method", sort=False):
        part = part.sort_values(x)
        colour = PCA_GAUSS_COLOURS.get(method, "#555555")
        label = str(part["label"].iloc[0]) if "label" in part.columns else str(method)
        lo, hi = part["mean"] - part["ci95"], part["mean"] + part["ci95"]
        fig.add_scatter(x=list(part[x]) + list(part[x])[::-1], y=list(hi) + list(lo)[::-1], fill="toself",
                        fillcolor=colour, opacity=0.15, line={"width": 0}, hoverinfo="skip", showlegend=False,
                        legendgroup=label)
        dash = "dash" if method in ("real", "public_only") else "solid"
        fig.add_scatter(x=part[x], y=part["mean"], mode="lines+markers", name=label, legendgroup=label,
                        line={"color": colour, "dash": dash})
    for name, value in (references or {}).items():
        fig.add_hline(y=value, line_dash="dot", line_color="#999999", annotation_text=name,
                      annotation_position="bottom right")
    fig.update_layout(xaxis={"title": "ε (total budget)" if x == "epsilon" else x,
                             "type": "log" if log_x else "linear"},
                      yaxis={"title": metric_label}, title=title, height=440)
    return finish(fig)
