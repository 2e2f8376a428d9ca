"""The house layout of every PrivaLab figure: colours, sizes, legend placement, axis titles, log ticks.

Every builder in ``ui.figures`` returns ``finish(fig)``: one place for the layout rules (legend below the plot
where it cannot collide with the axes, automargin axis titles, wrapped long titles, readable log axes, full
trace names on hover). Builders set data, colours, titles and axis titles only; not legend positions or
margins. Hand-written: plotly has no automatic legend placement that avoids the axes.
"""
from __future__ import annotations

import math
import textwrap

import numpy as np
import plotly.graph_objects as go

from ui.figures.markers import MARKERS_PER_FIGURE, drawn_note, largest_error, rows_drawn

# One colour per concept on every page: a model with a privacy guarantee/defence vs the same model without.
PRIVATE_COLOUR = "#1f77b4"
NONPRIVATE_COLOUR = "#d62728"
GROUP_PALETTE = (  # one colour per group when a figure compares several
    "#1f77b4", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf", "#bcbd22")

DEFAULT_HEIGHT = 450  # plotly's default; set explicitly so the legend's rows can be added to it
TITLE_CHARS = 60  # title lines longer than this are wrapped (a half-width column holds about 60)
AXIS_TITLE_CHARS = {"x": 70, "y": 42}
_LEGEND_WIDTH_PX = 460  # legend rows are estimated for a half-width column of the wide layout (~560 px
# wide, the legend starts at the plot's left edge)
_LEGEND_ROW_PX = 21


def _wrap(text, width: int):
    """Break a long plain-text title into lines of at most ``width`` characters (``<br>``)."""
    if not isinstance(text, str) or len(text) <= width or "<" in text:
        return text
    return "<br>".join(textwrap.wrap(text, width=width, break_long_words=False, break_on_hyphens=False))


def _legend_entries(fig: go.Figure) -> list:
    entries = [t for t in fig.data if t.showlegend is not False and t.visible is not False]
    if fig.layout.showlegend is False or (fig.layout.showlegend is None and len(entries) <= 1):
        return []  # plotly shows no legend for a single entry unless asked to
    return entries


def _legend_height(entries) -> int:
    """Rough height (px) of a horizontal legend at _LEGEND_WIDTH_PX: groups side by side, items of a
    group stacked (plotly's layout of grouped horizontal legends)."""
    groups: dict = {}
    for i, t in enumerate(entries):
        groups.setdefault(t.legendgroup or f"__{i}", []).append(len(str(t.name)))
    ungrouped = all(key.startswith("__") for key in groups)
    if ungrouped:  # one flowing row of items
        groups = {"all": [len(str(t.name)) for t in entries]}
        widths = [46 + 6.5 * n for n in groups["all"]]
        rows, used = 1, 0.0
        for w in widths:
            if used and used + w > _LEGEND_WIDTH_PX:
                rows, used = rows + 1, 0.0
            used += w
        return rows * _LEGEND_ROW_PX + 8
    total, row_h, used = 0, 0, 0.0
    for items in groups.values():
        w, h = 46 + 6.5 * max(items), len(items) * _LEGEND_ROW_PX + 6
        if used and used + w > _LEGEND_WIDTH_PX:
            total, row_h, used = total + row_h, 0, 0.0
        used, row_h = used + w, max(row_h, h)
    return total + row_h + 8


def _num(v: float) -> str:
    s = f"{v:g}"
    return s.replace("e-0", "e-").replace("e+0", "e").replace("e+", "e")


def _log_ticks(lo: float, hi: float) -> tuple[list, list]:
    """Tick values and labels a reader can read on a log axis over [lo, hi]: 1-2-5 per decade over
    up to ~3.5 decades, else powers of ten (every k-th decade, at most ~8 ticks); full numbers as labels
    (plotly's default labels the minor ticks "2", "5" without the decade: unreadable)."""
    a, b = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
    span = math.log10(hi) - math.log10(lo)
    if span <= 1.0:
        mantissas = (1, 1.5, 2, 3, 4, 5, 6, 7, 8)
    elif span <= 3.5:
        mantissas = (1, 2, 5)
    else:
        mantissas = (1,)
    step = max(1, math.ceil((b - a) / 8)) if mantissas == (1,) else 1
    vals = [m * 10.0 ** e for e in range(a - 1, b + 2) if e % step == 0 for m in mantissas]
    vals = [float(f"{v:.6g}") for v in vals if lo / 3 <= v <= hi * 3]
    if mantissas == (1,) and vals and (min(vals) < 1e-3 or max(vals) > 1e5):  # one style: 1e-8 ... 1e-2, 1
        return vals, [_num(v) if v == 1 else f"{v:.0e}".replace("e-0", "e-").replace("e+0", "e").replace("e+", "e")
                      for v in vals]
    return vals, [_num(v) for v in vals]


def _axis_values(fig: go.Figure, axis_name: str) -> list:
    """Positive finite values drawn on layout axis ``axis_name`` (e.g. "yaxis2"): traces and lines."""
    letter, suffix = axis_name[0], axis_name[5:]
    ref = letter + suffix  # "y2"
    out = []
    for t in fig.data:
        if (getattr(t, f"{letter}axis", None) or letter) != ref:
            continue
        values = getattr(t, letter, None)
        if values is None:
            continue
        for v in values:
            try:
                v = float(v)
            except (TypeError, ValueError):
                continue
            if v > 0 and math.isfinite(v):
                out.append(v)
    for s in fig.layout.shapes or ():
        if getattr(s, f"{letter}ref", None) == ref:
            for v in (getattr(s, f"{letter}0"), getattr(s, f"{letter}1")):
                if isinstance(v, (int, float)) and v > 0 and math.isfinite(v):
                    out.append(float(v))
    return out


def _annotations_to_log(fig: go.Figure, axis_name: str) -> None:
    """plotly places an annotation on a log axis at log10 of its coordinate, but ``add_hline``/``add_vline``
    give the label the line's value: the "σ_y" label of y = 0.37 was drawn at 10^0.37 = 2.3. Convert once
    (converted labels are marked with ``name``)."""
    letter, ref = axis_name[0], axis_name[0] + axis_name[5:]
    for a in fig.layout.annotations or ():
        value = getattr(a, letter)
        if getattr(a, f"{letter}ref") == ref and a.name != "log10" and isinstance(value, (int, float)) and value > 0:
            setattr(a, letter, math.log10(value))
            a.name = "log10"


def finish(fig: go.Figure) -> go.Figure:
    """The layout rules of every PrivaLab figure (call last, on the built figure; idempotent).

    - legend: horizontal, anchored at the BOTTOM OF THE FIGURE (``yref="container"``, ``y=0``,
      ``yanchor="bottom"``): plotly reserves its height below the x-axis tick labels and title, so it
      cannot overlap them however many rows it wraps to; the figure grows by the legend's estimated
      height so the plot area keeps its size;
    - every axis title and tick label pushes the margins (``automargin``); long titles and axis titles wrap;
    - log axes get 1-2-5 (or power-of-ten) ticks with full labels;
    - hover labels show the whole trace name (plotly cuts it at 15 characters by default);
    - line labels of ``add_hline``/``add_vline`` on log axes sit at their line; bands have no marker dots;
      a secondary axis gets its own round ticks.
    """
    layout = fig.layout
    for t in fig.data:  # a band's outline: no markers (plotly draws them on short traces: stray dots)
        if t.type == "scatter" and t.fill == "toself" and t.mode is None:
            t.mode = "lines"
    meta = layout.meta if isinstance(layout.meta, dict) else {}
    base = layout.height or DEFAULT_HEIGHT
    if meta.get("privalab_height") == layout.height and "privalab_base_height" in meta:
        base = meta["privalab_base_height"]  # already finished: start from the height the builder asked for

    title = layout.title.text
    if title:
        layout.title.text = _wrap(title, TITLE_CHARS)
    title_lines = str(layout.title.text).count("<br>") + 1 if title else 0
    for name in [k for k in layout.to_plotly_json() if k.startswith(("xaxis", "yaxis"))]:
        axis = layout[name]
        axis.automargin = True
        if axis.title.text:
            axis.title.text = _wrap(axis.title.text, AXIS_TITLE_CHARS[name[0]])
        if axis.type == "log" and axis.tickvals is None:
            values = _axis_values(fig, name)
            if values:
                axis.tickmode, (axis.tickvals, axis.ticktext) = "array", _log_ticks(min(values), max(values))
        if axis.type == "log":
            _annotations_to_log(fig, name)
        if axis.overlaying and axis.tickmode is None:
            axis.tickmode = "auto"  # plotly.js syncs a second axis's ticks to the first's grid: 4.39, 8.22, ...

    top_labels = any(a.yref == "paper" and (a.y or 0) >= 1 for a in layout.annotations or ())  # subplot titles
    title_px = 16 + 24 * title_lines if title_lines else 14
    top_axis = any(layout[k].side == "top" for k in layout.to_plotly_json() if k.startswith("xaxis"))
    top = title_px + (24 if top_labels else 0) + (24 if top_axis else 0)
    entries = _legend_entries(fig)
    extra = 0
    if entries:
        legend_title = layout.legend.title.text
        fig.update_layout(legend={"orientation": "h", "x": 0, "xanchor": "left",
                                  "y": 0, "yanchor": "bottom", "yref": "container", "tracegroupgap": 6})
        if legend_title:
            layout.legend.title.side = "left"
        extra = _legend_height(entries)
    height = int(base + extra)
    fig.update_layout(height=height, margin={"t": top, "b": 10, "l": layout.margin.l, "r": layout.margin.r},
                      hoverlabel={"namelength": -1},
                      meta={**meta, "privalab_base_height": base, "privalab_height": height})
    if title:
        # centred in its own band at the top (plotly anchors a multi-line title correctly only at "middle")
        fig.update_layout(title={"yref": "container", "y": 1 - title_px / 2 / height, "yanchor": "middle"})
    return fig


def add_median_band(fig: go.Figure, df, x: str, *, colour: str, name: str, nonprivate_name: str,
                     nonprivate_colour: str | None = None) -> None:
    """Median line, interquartile band (q25..q75) and the non-private line of a sweep table."""
    fig.add_scatter(x=list(df[x]) + list(df[x])[::-1], y=list(df["q75"]) + list(df["q25"])[::-1],
                    fill="toself", line={"width": 0}, fillcolor=colour, opacity=0.2, showlegend=False,
                    hoverinfo="skip")
    fig.add_scatter(x=df[x], y=df["median"], mode="lines+markers", name=f"{name} (median, IQR)",
                    line={"color": colour})
    fig.add_scatter(x=df[x], y=df["nonprivate"], mode="lines", name=nonprivate_name,
                    line={"color": nonprivate_colour or colour, "dash": "dot"})


def coefficient_figure(axis, coef_private, coef_reference, *, axis_label: str, private_label: str,
                       reference_label: str) -> go.Figure:
    """Regression coefficients over the channel axis: the private model's over its non-private reference."""
    fig = go.Figure()
    fig.add_scatter(x=axis, y=coef_reference, name=reference_label, mode="lines", line={"color": NONPRIVATE_COLOUR})
    fig.add_scatter(x=axis, y=coef_private, name=private_label, mode="lines", line={"color": PRIVATE_COLOUR},
                    opacity=0.8)
    fig.update_layout(title="Regression coefficients", xaxis_title=axis_label,
                      yaxis_title="coefficient b (y per unit of x)")
    return finish(fig)


def prediction_figure(y_true, y_private, y_reference, *, response: str, private_label: str,
                      reference_label: str) -> go.Figure:
    """Predicted against measured on the test rows, private and reference, with the identity line; beyond
    ``MARKERS_PER_FIGURE`` markers, the same rows of both (the largest errors among them) and a title that says so
    (``ui.figures.markers``)."""
    y_true, y_private, y_reference = (np.asarray(v, dtype=float) for v in (y_true, y_private, y_reference))
    lo = float(min(y_true.min(), y_reference.min()))
    hi = float(max(y_true.max(), y_reference.max()))
    rows = rows_drawn(y_true.size, MARKERS_PER_FIGURE // 2, largest_error(y_true, [y_private, y_reference]))
    fig = go.Figure()
    fig.add_scatter(x=[lo, hi], y=[lo, hi], mode="lines", name="identity", line={"dash": "dash", "color": "#999"})
    fig.add_scatter(x=y_true[rows], y=y_reference[rows], mode="markers", name=reference_label,
                    marker={"color": NONPRIVATE_COLOUR})
    fig.add_scatter(x=y_true[rows], y=y_private[rows], mode="markers", name=private_label,
                    marker={"color": PRIVATE_COLOUR})
    note = drawn_note(rows.size, y_true.size, "test rows")
    fig.update_layout(title="Test set: predicted vs measured" + (note and f" ({note}, the largest errors among them)"),
                      xaxis_title=f"measured {response}", yaxis_title=f"predicted {response}")
    return finish(fig)
