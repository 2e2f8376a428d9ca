"""Plotly figure builders shared by the pages (every figure in PrivaLab is plotly).

Every builder returns ``_finish(fig)``: one place for the layout rules (legend below the plot where it cannot
collide with the axes, automargin axis titles, wrapped long titles, readable log axes, full trace names on
hover). Builders set data, colours, titles and axis titles only; not legend positions or margins.
"""
from __future__ import annotations

import math
import textwrap

import plotly.graph_objects as go

# One colour per concept on every page: a model with a privacy guarantee/defence vs the same model without.
PRIVATE_COLOUR = "#1f77b4"
NONPRIVATE_COLOUR = "#d62728"
_GROUP_PALETTE = ("#1f77b4", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf", "#bcbd22")

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


def _finish(fig: go.Figure) -> go.Figure:
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


def sigma_curve_figure(df, sensitivity: float, delta: float) -> go.Figure:
    """Noise scale against epsilon (log-log) from ``engine.privacy.calculator.sigma_curve``."""
    fig = go.Figure()
    fig.add_scatter(x=df["epsilon"], y=df["analytic_sigma"], name="Gaussian, analytic (exact)", mode="lines")
    fig.add_scatter(x=df["epsilon"], y=df["classic_sigma"], name="Gaussian, classic (ε ≤ 1 only)",
                    mode="lines", line={"dash": "dash"})
    fig.add_scatter(x=df["epsilon"], y=df["laplace_scale"], name="Laplace scale b", mode="lines",
                    line={"dash": "dot"})
    fig.update_layout(
        xaxis={"title": "ε", "type": "log"},
        yaxis={"title": "noise scale (units of the sensitivity)", "type": "log"},
        title=f"Noise for sensitivity {sensitivity:g}, δ = {delta:.1e}",
    )
    return _finish(fig)


# =============================================================================================
# Attack lab (PLS), issue #5: figures for pages/attack_lab.py. Everything below this line
# belongs to the attack lab; the functions above are shared and unchanged.
# =============================================================================================
ATTACK_COLOURS = {
    "secret": "#222222",
    "plain": NONPRIVATE_COLOUR,
    "paper_sigma_squared": "#ff7f0e",
    "paper_sigma": PRIVATE_COLOUR,
    "strict": "#2ca02c",
}
ATTACK_METRICS = {
    "correlation": ("correlation_mean", "correlation_q25", "correlation_q75",
                    "|correlation| with the secret (mean; band: middle 50% of runs)"),
    "cosine": ("cosine_mean", "cosine_q25", "cosine_q75",
               "|cos| with the reachable secret (mean; band: middle 50% of runs)"),
    "hit": ("hit_rate", "hit_low", "hit_high", "peak found (hit rate; band: 95% interval)"),
}


def attack_party_spectra_figure(axis, X_own, X_other, own_label: str, other_label: str, *,
                                secret_centre=None, max_rows: int = 12, axis_title: str = "channel") -> go.Figure:
    """A few rows of each party's data over the variable axis (paper Fig. 1, left)."""
    from plotly.subplots import make_subplots

    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.08,
                        subplot_titles=(f"Attacker: {own_label}", f"Other party: {other_label}"))
    for row, (X, colour) in enumerate(((X_own, "#1f77b4"), (X_other, "#9467bd")), start=1):
        for i in range(min(max_rows, len(X))):
            fig.add_scatter(x=axis, y=X[i], mode="lines", line={"width": 1, "color": colour},
                            opacity=0.6, showlegend=False, row=row, col=1)
    if secret_centre is not None:
        fig.add_vline(x=secret_centre, line_dash="dash", line_color="black")
    fig.update_xaxes(title_text=axis_title, row=2, col=1)
    fig.update_layout(height=420)
    return _finish(fig)


def attack_reconstruction_figure(axis, secret: dict, plain: dict, private: dict, *, private_label: str,
                                 secret_label: str = "true unique component", secret_centre=None,
                                 axis_title: str = "channel") -> go.Figure:
    """The secret next to what the attacker recovers from plain PLS and from edPLS (paper Fig. 2).

    secret, plain, private: {"W": (m,), "P": (m,)} curves already scaled to max |.| = 1.
    """
    from plotly.subplots import make_subplots

    fig = make_subplots(rows=1, cols=2, shared_yaxes=True, horizontal_spacing=0.05,
                        subplot_titles=("from the shared weights W", "from the shared loadings P"))
    for col, comp in enumerate(("W", "P"), start=1):
        first = col == 1
        fig.add_scatter(x=axis, y=secret[comp], name=secret_label, mode="lines", legendgroup="secret",
                        showlegend=first, line={"color": ATTACK_COLOURS["secret"], "width": 4}, opacity=0.35,
                        row=1, col=col)
        fig.add_scatter(x=axis, y=plain[comp], name="recovered from plain PLS", mode="lines", legendgroup="plain",
                        showlegend=first, line={"color": ATTACK_COLOURS["plain"], "width": 1.5}, row=1, col=col)
        fig.add_scatter(x=axis, y=private[comp], name=private_label, mode="lines", legendgroup="private",
                        showlegend=first, line={"color": ATTACK_COLOURS["paper_sigma"], "width": 1.5},
                        row=1, col=col)
        if secret_centre is not None:
            fig.add_vline(x=secret_centre, line_dash="dash", line_color="grey", row=1, col=col)
        fig.update_xaxes(title_text=axis_title, row=1, col=col)
    fig.update_yaxes(title_text="scaled to peak 1", row=1, col=1)
    fig.update_layout(height=380)
    return _finish(fig)


def attack_success_figure(summary, *, component: str = "P", metric: str = "correlation", settings=None,
                          labels=None, show_rmsep: bool = True, component_label: str = "") -> go.Figure:
    """Attack success against ε with bands, and the models' RMSEP on a second (log) axis.

    summary: ``engine.attacks.pls_subspace.summarise_sweep`` output. Plain PLS (ε = ∞) is a
    dashed horizontal line; RMSEP is dotted, median over runs.
    """
    from plotly.subplots import make_subplots

    mean_col, low_col, high_col, y_title = ATTACK_METRICS[metric]
    part = summary[summary["component"] == component]
    labels = labels or {}
    settings = settings or [s for s in ATTACK_COLOURS if s in set(part["setting"])]
    fig = make_subplots(specs=[[{"secondary_y": True}]])
    private = part[part["setting"] != "plain"]
    eps_range = (private["epsilon"].min(), private["epsilon"].max()) if len(private) else (1.0, 100.0)
    for setting in settings:
        rows = part[part["setting"] == setting].sort_values("epsilon")
        if rows.empty:
            continue
        colour = ATTACK_COLOURS.get(setting, "#7f7f7f")
        label = labels.get(setting, setting)
        if setting == "plain":
            r = rows.iloc[0]
            fig.add_scatter(x=list(eps_range), y=[r[mean_col]] * 2, mode="lines", name=f"{label} (ε = ∞)",
                            line={"color": colour, "dash": "dash"}, secondary_y=False)
            if show_rmsep and r["rmsep_median"] == r["rmsep_median"]:
                fig.add_scatter(x=list(eps_range), y=[r["rmsep_median"]] * 2, mode="lines",
                                name=f"RMSEP, {label}", line={"color": colour, "dash": "dot", "width": 1},
                                secondary_y=True)
            continue
        x = rows["epsilon"].tolist()
        fig.add_scatter(x=x + x[::-1], y=rows[high_col].tolist() + rows[low_col].tolist()[::-1],
                        fill="toself", fillcolor=colour, opacity=0.18, line={"width": 0}, hoverinfo="skip",
                        showlegend=False, legendgroup=setting, secondary_y=False)
        fig.add_scatter(x=x, y=rows[mean_col], mode="lines+markers", name=label, legendgroup=setting,
                        line={"color": colour}, secondary_y=False)
        if show_rmsep:
            fig.add_scatter(x=x, y=rows["rmsep_median"], mode="lines+markers", name=f"RMSEP, {label}",
                            legendgroup=setting, marker={"symbol": "x", "size": 6},
                            line={"color": colour, "dash": "dot", "width": 1}, secondary_y=True)
    fig.update_xaxes(title_text="ε (log scale)", type="log")
    fig.update_yaxes(title_text=y_title, range=[-0.02, 1.05], secondary_y=False)
    if show_rmsep:
        fig.update_yaxes(title_text="RMSEP on held-out rows (median, log)", type="log", secondary_y=True,
                         showgrid=False)
    title = "Attack success vs privacy"
    if component_label:
        title += f": attack on the {component_label}"
    fig.update_layout(title=title, height=460)
    return _finish(fig)


# =============================================================================================
# P3LS simulation, issue #8: figures for pages/p3ls.py. Everything below this line belongs to
# the P3LS page; the functions above are shared and unchanged.
# =============================================================================================
P3LS_MODEL_COLOURS = {"local": "#7f7f7f", "P3LS": "#1f77b4", "central": "#ff7f0e"}
P3LS_PHASE_COLOURS = {"keys": "#9467bd", "training": "#1f77b4", "recovery": "#2ca02c", "selection": "#bcbd22",
                      "inference": "#ff7f0e", "relevance": "#d62728"}


def p3ls_sequence_figure(messages, roles: list[str]) -> go.Figure:
    """Sequence diagram: one lane per role, one arrow per message (top to bottom, in order).

    messages: ``MessageLog.to_frame()`` rows (sender, receiver, message, shape, what it is, phase).
    roles: lane order, e.g. ["TA", "party 1", ..., "CSP"].
    """
    lane = {r: i for i, r in enumerate(roles)}
    n = len(messages)
    fig = go.Figure()
    for r, x in lane.items():
        fig.add_scatter(x=[x, x], y=[0.5, -n - 0.5], mode="lines", line={"color": "#cccccc", "width": 2},
                        hoverinfo="skip", showlegend=False)
    mid_x, mid_y, hover, colours, annotations = [], [], [], [], []
    for i, row in enumerate(messages.to_dict("records")):
        y = -i
        x0, x1 = lane[row["sender"]], lane[row["receiver"]]
        colour = P3LS_PHASE_COLOURS.get(row["phase"], "#333333")
        # plain dicts set once below: add_annotation per message is quadratic in the number of messages
        annotations.append({"x": x1, "y": y, "ax": x0, "ay": y, "xref": "x", "yref": "y", "axref": "x", "ayref": "y",
                            "showarrow": True, "arrowhead": 3, "arrowsize": 1, "arrowwidth": 1.5,
                            "arrowcolor": colour, "text": ""})
        annotations.append({"x": (x0 + x1) / 2, "y": y, "xref": "x", "yref": "y", "showarrow": False, "yshift": 8,
                            "font": {"size": 10},
                            "text": f"{row['message']}  <span style='color:#888'>({row['shape']})</span>"})
        mid_x.append((x0 + x1) / 2)
        mid_y.append(y)
        hover.append(f"<b>{row['message']}</b> ({row['shape']})<br>{row['sender']} → {row['receiver']}<br>"
                     f"{row['what it is']}<br>{row['phase']}, {row['step']}")
        colours.append(colour)
    fig.add_scatter(x=mid_x, y=mid_y, mode="markers", marker={"size": 6, "color": colours}, hovertext=hover,
                    hoverinfo="text", showlegend=False)
    for phase, colour in P3LS_PHASE_COLOURS.items():
        if phase in set(messages["phase"]):
            fig.add_scatter(x=[None], y=[None], mode="lines", line={"color": colour, "width": 3}, name=phase)
    fig.update_xaxes(tickvals=list(lane.values()), ticktext=list(lane), side="top", range=[-0.5, len(roles) - 0.5],
                     showgrid=False)
    fig.update_yaxes(visible=False, range=[-n - 0.5, 1])
    fig.update_layout(height=max(300, 24 * n + 120), plot_bgcolor="white", annotations=annotations)
    return _finish(fig)


def p3ls_kpi_error_figure(per_kpi, metric: str = "rmse") -> go.Figure:
    """Grouped bars per KPI: local vs P3LS vs central, test RMSE or R² (``ModelComparison.per_kpi``)."""
    fig = go.Figure()
    for model, colour in P3LS_MODEL_COLOURS.items():
        part = per_kpi[per_kpi["model"] == model]
        fig.add_bar(x=part["kpi"], y=part[metric], name={"local": "local (LC's block only)", "P3LS": "P3LS (federated)",
                                                          "central": "centralised (pooled)"}[model],
                    marker_color=colour)
    title = "Test RMSE per KPI (original units)" if metric == "rmse" else "Test R² per KPI"
    fig.update_layout(barmode="group", title=title, yaxis={"title": metric.upper() if metric == "rmse" else "R²"},
                      height=380)
    return _finish(fig)


def p3ls_coefficients_figure(coefs, kpi: str) -> go.Figure:
    """Every party's coefficients B_i for one KPI (standardised units), coloured by party."""
    part = coefs[coefs["kpi"] == kpi]
    fig = go.Figure()
    for party in part["party"].unique():
        rows = part[part["party"] == party]
        fig.add_bar(x=rows["variable"], y=rows["coefficient"], name=party)
    fig.update_layout(title=f"Coefficients per party block for {kpi} (standardised units; each party holds its own B_i)",
                      yaxis={"title": "coefficient"}, xaxis={"title": "variable", "type": "category"},
                      height=400)
    return _finish(fig)


def p3ls_contribution_figure(relevance_tables: dict) -> go.Figure:
    """Predictive relevance R²_XiY per party (paper eq. 18), one bar group per row set.

    relevance_tables: {"training rows": Relevance.table, "test rows": Relevance.table}.
    """
    fig = go.Figure()
    colours = ["#1f77b4", "#aec7e8", "#2ca02c"]
    for (label, table), colour in zip(relevance_tables.items(), colours):
        fig.add_bar(x=table["party"], y=table["r2_xy"], name=f"R²_XiY, {label}", marker_color=colour)
    fig.add_hline(y=0, line_color="black", line_width=1)
    fig.update_layout(barmode="group", title="Contribution: variance of Y explained by each party's block (1 − SS(Y − X_i B_i)/SS(Y))",
                      yaxis={"title": "R²_XiY"}, height=380)
    return _finish(fig)


def p3ls_validation_figure(validation, chosen: dict) -> go.Figure:
    """Validation R² against the number of components k per model, the chosen k marked."""
    fig = go.Figure()
    for model, colour in P3LS_MODEL_COLOURS.items():
        part = validation[validation["model"] == model]
        dash = "dash" if model == "central" else None
        fig.add_scatter(x=part["k"], y=part["r2"], mode="lines", name=model, line={"color": colour, "dash": dash})
        if model in chosen:
            k = chosen[model]
            fig.add_scatter(x=[k], y=part.loc[part["k"] == k, "r2"], mode="markers", marker={"color": colour, "size": 10},
                            name=f"{model}: k = {k}", showlegend=True)
    fig.update_layout(title="Choice of k on the validation rows (pooled R² over KPIs)", xaxis={"title": "k"},
                      yaxis={"title": "validation R²"}, height=360)
    return _finish(fig)


# =============================================================================================
# DP-CCA, issue #7: figures for pages/dp_cca.py. Everything below this line belongs to the
# DP-CCA page; the functions above are shared and unchanged.
# =============================================================================================
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
    return _finish(fig)


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
    return _finish(fig)


def dp_cca_loadings_figure(x_names, u_private, u_nonprivate, y_names, v_private, v_nonprivate, *,
                           x_title: str = "X variable", y_title: str = "Y variable") -> go.Figure:
    """Weights of the first canonical pair over the variables of each view, private vs non-private.

    Each curve is scaled to max |.| = 1 (the scale of a canonical weight vector is arbitrary).
    """
    from plotly.subplots import make_subplots

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
    return _finish(fig)


def dp_cca_scores_figure(x_scores, y_scores, *, label: str = "private model") -> go.Figure:
    """First canonical variates of the rows, X score against Y score (NOT differentially private)."""
    fig = go.Figure()
    fig.add_scatter(x=list(x_scores), y=list(y_scores), mode="markers", marker={"size": 4, "opacity": 0.5,
                    "color": DP_CCA_COLOURS["private"]}, name=label)
    fig.update_layout(title="First canonical pair of the training rows (not DP)", xaxis={"title": "X·u₁"},
                      yaxis={"title": "Y·v₁"}, height=380)
    return _finish(fig)


# =============================================================================================
# PCA-Gauss, issue #6: figures for pages/pca_gauss.py. Everything below this line belongs to the
# PCA-Gauss page; the functions above are shared and unchanged.
# =============================================================================================
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


def pca_gauss_scatter_figure(real, synthetic, *, x: str = "c1", y: str = "c2", colour: str | None = None,
                             max_points: int = 1500) -> go.Figure:
    """Real (left) and synthetic (right) rows in the released space, same axes, coloured by label or y."""
    from plotly.subplots import make_subplots

    fig = make_subplots(rows=1, cols=2, shared_xaxes=True, shared_yaxes=True, horizontal_spacing=0.05,
                        subplot_titles=("Real rows (mapped by W)", "Synthetic rows (DP release)"))
    for col, frame in ((1, real), (2, synthetic)):
        frame = frame.iloc[:max_points]
        yy = frame[y] if y in frame.columns else [0.0] * len(frame)
        if colour is not None and colour in frame.columns and frame[colour].dtype.kind not in "fiu":
            for k, label in enumerate(sorted(set(real[colour]) | set(synthetic[colour]))):
                part = frame[frame[colour] == label]
                fig.add_scatter(x=part[x], y=part[y] if y in part.columns else [0.0] * len(part), mode="markers",
                                name=str(label), legendgroup=str(label), showlegend=col == 1,
                                marker={"size": 4, "opacity": 0.6, "color": _PG_QUALITATIVE[k % len(_PG_QUALITATIVE)]},
                                row=1, col=col)
        else:
            marker = {"size": 4, "opacity": 0.6}
            if colour is not None and colour in frame.columns:
                marker.update(color=frame[colour], colorscale="Viridis", cmin=-1, cmax=1,
                              showscale=col == 2, colorbar={"title": colour})
            fig.add_scatter(x=frame[x], y=yy, mode="markers", marker=marker, showlegend=False, row=1, col=col)
    fig.update_xaxes(title_text=x)
    fig.update_yaxes(title_text=y, col=1)
    fig.update_layout(height=420, legend={"title": colour or ""})
    return _finish(fig)


_PG_QUALITATIVE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
                   "#bcbd22", "#17becf")


def pca_gauss_marginals_figure(real, synthetic, columns, *, bins: int = 30) -> go.Figure:
    """Overlaid histograms (probability density) of each released column, real against synthetic."""
    from plotly.subplots import make_subplots

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
    return _finish(fig)


def pca_gauss_correlation_figure(corr_real, corr_synthetic) -> go.Figure:
    """Correlation heat maps side by side (real | synthetic), same colour scale [-1, 1]."""
    from plotly.subplots import make_subplots

    fig = make_subplots(rows=1, cols=2, subplot_titles=("Real", "Synthetic"), horizontal_spacing=0.1)
    for col, corr in ((1, corr_real), (2, corr_synthetic)):
        fig.add_heatmap(z=corr.to_numpy(), x=list(corr.columns), y=list(corr.index), zmin=-1, zmax=1,
                        colorscale="RdBu", reversescale=True, showscale=col == 2, row=1, col=col)
    fig.update_yaxes(autorange="reversed")
    fig.update_layout(height=400)
    return _finish(fig)


def pca_gauss_utility_figure(summary, *, metric_label: str, references: dict | None = None,
                             x: str = "epsilon", log_x: bool = True, title: str = "") -> go.Figure:
    """Utility against ε (or P): mean line and 95 % CI band per method; references as dashed lines.

    summary : frame with columns method, label, <x>, mean, ci95 (``engine.methods.synthetic_utility.summarise``).
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
    fig.update_layout(xaxis={"title": "ε (total budget)" if x == "epsilon" else x, "type": "log" if log_x else "linear"},
                      yaxis={"title": metric_label}, title=title, height=440)
    return _finish(fig)


# =============================================================================================
# VAR-ADMM, issue #9: figures for pages/var_admm.py. Everything below this line belongs to the
# VAR-ADMM page; the functions above are shared and unchanged.
# =============================================================================================
VAR_COLOURS = {"actual": "#222222", "var": NONPRIVATE_COLOUR, "ar": "#7f7f7f", "defended": PRIVATE_COLOUR,
               "reconstruction": "#d62728", "primal": "#1f77b4", "dual": "#ff7f0e", "coef": "#2ca02c"}


def var_forecast_figure(times, actual, var_pred, ar_pred, *, site: str, defended=None,
                        defended_label: str = "with the defence") -> go.Figure:
    """One site's test-period series: actual against the collaborative VAR, the local AR and,
    optionally, the VAR under a defence (one-step-ahead forecasts)."""
    fig = go.Figure()
    fig.add_scatter(x=times, y=actual, name="actual", mode="lines", line={"color": VAR_COLOURS["actual"], "width": 2})
    fig.add_scatter(x=times, y=var_pred, name="collaborative VAR", mode="lines",
                    line={"color": VAR_COLOURS["var"], "width": 1.5})
    fig.add_scatter(x=times, y=ar_pred, name="local AR (own lags only)", mode="lines",
                    line={"color": VAR_COLOURS["ar"], "width": 1, "dash": "dot"})
    if defended is not None:
        fig.add_scatter(x=times, y=defended, name=f"VAR {defended_label}", mode="lines",
                        line={"color": VAR_COLOURS["defended"], "width": 1, "dash": "dash"})
    fig.update_layout(title=f"One-step-ahead forecasts against the actual series: {site}", height=380,
                      yaxis={"title": "value (as fitted: centred)"})
    return _finish(fig)


def var_skill_figure(tables: dict, metric: str = "mae") -> go.Figure:
    """Per-owner gain of the VAR over each owner's local AR, 100 (1 - err_VAR/err_AR), one bar group
    per model (tables: {label: ForecastEvaluation.table})."""
    column = f"{metric}_gain_pct"
    colours = [VAR_COLOURS["var"], VAR_COLOURS["defended"], "#9467bd", "#8c564b"]
    fig = go.Figure()
    for (label, table), colour in zip(tables.items(), colours):
        fig.add_bar(x=table["owner"], y=table[column], name=label, marker_color=colour)
    fig.add_hline(y=0, line_color="black", line_width=1)
    fig.add_hline(y=10, line_color="grey", line_width=1, line_dash="dot",
                  annotation_text="10 %", annotation_position="top left")
    fig.update_layout(barmode="group", title=f"Skill of the collaborative VAR over each owner's local AR ({metric.upper()})",
                      yaxis={"title": f"{metric.upper()} gain over AR (%)"}, xaxis={"type": "category"},
                      height=400)
    return _finish(fig)


def var_convergence_figure(residuals, coef_error=None, *, coef_iterations=None, clean_residuals=None) -> go.Figure:
    """ADMM convergence: primal r^k and dual s^k residuals with Boyd's thresholds (log), and
    max |B^k - B*| against the central fit when given."""
    from plotly.subplots import make_subplots

    rows = 2 if coef_error is not None else 1
    fig = make_subplots(rows=rows, cols=1, shared_xaxes=True, vertical_spacing=0.08,
                        subplot_titles=("residuals (Boyd 3.3)",) + (("max |B^k − B_central|",) if rows == 2 else ()))
    k = residuals["iteration"]
    fig.add_scatter(x=k, y=residuals["primal_residual"], name="primal r^k", mode="lines",
                    line={"color": VAR_COLOURS["primal"]}, row=1, col=1)
    fig.add_scatter(x=k, y=residuals["dual_residual"], name="dual s^k", mode="lines",
                    line={"color": VAR_COLOURS["dual"]}, row=1, col=1)
    if residuals["eps_primal"].gt(0).any():
        fig.add_scatter(x=k, y=residuals["eps_primal"], name="ε_pri (stop below)", mode="lines",
                        line={"color": VAR_COLOURS["primal"], "dash": "dot", "width": 1}, row=1, col=1)
        fig.add_scatter(x=k, y=residuals["eps_dual"], name="ε_dual (stop below)", mode="lines",
                        line={"color": VAR_COLOURS["dual"], "dash": "dot", "width": 1}, row=1, col=1)
    if clean_residuals is not None:
        fig.add_scatter(x=clean_residuals["iteration"], y=clean_residuals["primal_residual"], name="primal, no noise",
                        mode="lines", line={"color": "#aaaaaa", "width": 1}, row=1, col=1)
    if coef_error is not None:
        x = list(coef_iterations) if coef_iterations is not None else list(range(1, len(coef_error) + 1))
        fig.add_scatter(x=x, y=coef_error, name="max |B^k − B*|", mode="lines",
                        line={"color": VAR_COLOURS["coef"]}, row=2, col=1)
        fig.update_yaxes(type="log", row=2, col=1)
        fig.update_xaxes(title_text="iteration k", row=2, col=1)
    else:
        fig.update_xaxes(title_text="iteration k", row=1, col=1)
    fig.update_yaxes(type="log", row=1, col=1)
    fig.update_layout(height=520 if rows == 2 else 360)
    return _finish(fig)


def var_attack_series_figure(times, truth, reconstruction, *, victim: str, K: int, attacker: str) -> go.Figure:
    """The victim's private series against what the attacker rebuilt after K iterations."""
    fig = go.Figure()
    fig.add_scatter(x=times, y=truth, name=f"true private series ({victim})", mode="lines",
                    line={"color": VAR_COLOURS["actual"], "width": 4}, opacity=0.35)
    fig.add_scatter(x=times, y=reconstruction, name=f"rebuilt by {attacker} after K = {K}", mode="lines",
                    line={"color": VAR_COLOURS["reconstruction"], "width": 1.2})
    fig.update_layout(title=f"What {attacker} recovers of {victim}'s series", height=360,
                      yaxis={"title": "value (as fitted)"})
    return _finish(fig)


def var_attack_error_figure(K, relerr, *, victims, predicted_k=None, k_exact=None, k_needed=None,
                            formula: str = "") -> go.Figure:
    """Relative reconstruction error against the number of iterations observed (log), one line per
    victim; the paper's predicted K, the constructive K and the first exact K marked."""
    import numpy as np

    fig = go.Figure()
    err = np.maximum(np.asarray(relerr, dtype=float), 1e-17)
    for j, name in enumerate(victims):
        fig.add_scatter(x=K, y=err[:, j], mode="lines+markers", name=str(name), line={"width": 1.2},
                        marker={"size": 5})
    fig.add_hline(y=1e-8, line_color="grey", line_dash="dot", annotation_text="exact (1e-8)",
                  annotation_position="bottom right")
    if predicted_k is not None:
        fig.add_vline(x=predicted_k, line_color="#9467bd", line_dash="dash",
                      annotation_text=f"paper {formula.split(':')[0] or 'formula'}: K = {predicted_k}",
                      annotation_position="top left")
    if k_needed is not None and k_needed != predicted_k:
        fig.add_vline(x=k_needed, line_color="#8c564b", line_dash="dot", annotation_text=f"large-T limit: {k_needed}",
                      annotation_position="bottom left")
    if k_exact is not None:
        fig.add_vline(x=k_exact, line_color=VAR_COLOURS["reconstruction"], line_width=2,
                      annotation_text=f"exact from K = {k_exact}", annotation_position="top right")
    fig.update_layout(title="Reconstruction error against the iterations observed", height=380,
                      xaxis={"title": "K (iterations observed)", "dtick": 1}, yaxis={"title": "‖ŷ − y‖ / ‖y‖", "type": "log"})
    return _finish(fig)


def var_singular_values_figure(singular_values, rank_needed: int) -> go.Figure:
    """Singular values of the attacker's stacked observations (scaled to the largest): a gap after
    the subspace dimension means the subspace was reached ("rank reached" diagnostic)."""
    import numpy as np

    sv = np.maximum(np.asarray(singular_values, dtype=float), 1e-18)
    fig = go.Figure()
    fig.add_scatter(x=list(range(1, len(sv) + 1)), y=sv, mode="markers+lines", name="singular value",
                    line={"color": "#1f77b4"})
    fig.add_vline(x=rank_needed + 0.5, line_dash="dash", line_color="grey",
                  annotation_text=f"subspace dimension {rank_needed}")
    fig.update_layout(title="Singular values of the stacked observations", height=320,
                      yaxis={"type": "log", "title": "singular value / largest"},
                      xaxis={"title": "index"}, showlegend=False)
    return _finish(fig)


def var_privacy_curve_figure(sweep, *, law: str) -> go.Figure:
    """Accuracy against privacy of additive noise: median MAE gain over AR and owners worse than AR
    against b; the per-value ε = Δ/b on the top axis labels."""
    from plotly.subplots import make_subplots

    fig = make_subplots(specs=[[{"secondary_y": True}]])
    fig.add_scatter(x=sweep["b"], y=sweep["median_mae_gain_pct"], mode="lines+markers", name="median MAE gain over AR (%)",
                    line={"color": VAR_COLOURS["defended"]}, secondary_y=False)
    fig.add_scatter(x=sweep["b"], y=sweep["median_rmse_gain_pct"], mode="lines+markers", name="median RMSE gain over AR (%)",
                    line={"color": VAR_COLOURS["defended"], "dash": "dot"}, secondary_y=False)
    fig.add_bar(x=sweep["b"], y=sweep["owners_worse_mae"], name="owners worse than their AR (MAE)", opacity=0.35,
                marker_color=VAR_COLOURS["ar"], secondary_y=True)
    fig.add_hline(y=0, line_color="black", line_width=1, secondary_y=False)
    status = sweep["status"] if "status" in sweep else ["proven"] * len(sweep)  # each fit's own ledger
    ticks = [(f"{b:g}<br>ε={e:.3g}" + ("" if s == "proven" else "*")) if e != float("inf") else f"{b:g}<br>ε=∞"
             for b, e, s in zip(sweep["b"], sweep["eps_per_value"], status)]
    unproven = any(s == "not proven" for s in status)
    fig.update_xaxes(title_text=f"noise scale b ({law}); ε per value (event level)"
                     + ("; * not proven (see the status column)" if unproven else ""), tickvals=list(sweep["b"]),
                     ticktext=ticks)
    fig.update_yaxes(title_text="gain over AR (%)", secondary_y=False)
    fig.update_yaxes(title_text="owners worse than their AR (count)", secondary_y=True, showgrid=False,
                     rangemode="tozero")
    fig.update_layout(title="Accuracy against privacy: additive noise on every value", height=420)
    return _finish(fig)


def var_breach_figure(table, *, p: int, live=None) -> go.Figure:
    """Paper Fig. 10: iterations after which the owners (61) and the central node (58) hold as many
    equations as unknowns, against T, one line per n; ``live``: [(T, K, label)] markers of attacks run."""
    fig = go.Figure()
    for n in sorted(table["n"].unique()):
        part = table[(table["n"] == n) & (table["p"] == p)]
        fig.add_scatter(x=part["T"], y=part["k_owner"], mode="lines", name=f"owners (61), n = {n}")
        fig.add_scatter(x=part["T"], y=part["k_central"], mode="lines", line={"dash": "dot"},
                        name=f"central node (58), n = {n}")
    for T, K, label in live or []:
        fig.add_scatter(x=[T], y=[K], mode="markers", marker={"size": 12, "symbol": "star", "color": "#d62728"},
                        name=label)
    fig.update_layout(title=f"Iterations to a breach (p = {p} lags)", xaxis={"title": "T (rows fitted)", "type": "log"},
                      yaxis={"title": "iterations k"}, height=380)
    return _finish(fig)


def var_message_flow_figure(messages, owners: list, max_rows: int = 40) -> go.Figure:
    """Sequence diagram of the first messages of the ADMM run (paper Fig. 9): lanes for the owners
    and the central node; a broadcast is drawn to every owner lane."""
    lanes = ["central"] + list(owners)
    x_of = {r: i for i, r in enumerate(lanes)}
    rows = messages.head(max_rows).to_dict("records")
    fig = go.Figure()
    n = len(rows)
    for r, x in x_of.items():
        fig.add_scatter(x=[x, x], y=[0.5, -n - 0.5], mode="lines", line={"color": "#cccccc", "width": 2},
                        hoverinfo="skip", showlegend=False)
    annotations = []  # plain dicts set once below: add_annotation per arrow is quadratic in the number of arrows
    marks = {"x": [], "y": [], "colour": [], "hover": []}  # one marker trace, not one per message
    for i, row in enumerate(rows):
        y = -i
        x0 = x_of.get(row["sender"], 0)
        targets = list(owners) if row["receiver"] == "all owners" else [row["receiver"]]
        colour = "#1f77b4" if row["sender"] != "central" else "#d62728"
        for target in targets:
            x1 = x_of.get(target, 0)
            annotations.append({"x": x1, "y": y, "ax": x0, "ay": y, "xref": "x", "yref": "y", "axref": "x",
                                "ayref": "y", "showarrow": True, "arrowhead": 3, "arrowsize": 1, "arrowwidth": 1.2,
                                "arrowcolor": colour, "text": ""})
        marks["x"].append(x0)
        marks["y"].append(y)
        marks["colour"].append(colour)
        marks["hover"].append(f"k = {row['iteration']}: {row['message']} ({row['shape']})<br>{row['what it is']}")
    fig.add_scatter(x=marks["x"], y=marks["y"], mode="markers", marker={"size": 6, "color": marks["colour"]},
                    showlegend=False, hovertext=marks["hover"], hoverinfo="text")
    fig.update_layout(annotations=annotations)
    fig.update_xaxes(tickvals=list(x_of.values()), ticktext=lanes, side="top", showgrid=False,
                     range=[-0.5, len(lanes) - 0.5])
    fig.update_yaxes(visible=False, range=[-n - 0.5, 1])
    fig.update_layout(height=max(300, 18 * n + 100), plot_bgcolor="white",
                      title="Message flow of the first iterations (red: broadcast by the central node)")
    return _finish(fig)


# ============================================================================ edPLS (issue #4)
def edpls_coef_figure(axis, coef_private, coef_plain, *, axis_label: str, private_label: str) -> go.Figure:
    """Regression coefficients over the channel axis, private over non-private."""
    fig = go.Figure()
    fig.add_scatter(x=axis, y=coef_plain, name="non-private PLS", mode="lines", line={"color": NONPRIVATE_COLOUR})
    fig.add_scatter(x=axis, y=coef_private, name=private_label, mode="lines", line={"color": PRIVATE_COLOUR},
                    opacity=0.8)
    fig.update_layout(title="Regression coefficients", xaxis_title=axis_label, yaxis_title="coefficient b (y per unit of x)")
    return _finish(fig)


def edpls_pred_figure(y_true, y_private, y_plain, *, response: str, private_label: str) -> go.Figure:
    """Predicted against measured on the test rows, with the identity line."""
    lo = float(min(min(y_true), min(y_plain)))
    hi = float(max(max(y_true), max(y_plain)))
    fig = go.Figure()
    fig.add_scatter(x=[lo, hi], y=[lo, hi], mode="lines", name="identity", line={"dash": "dash", "color": "#999"})
    fig.add_scatter(x=y_true, y=y_plain, mode="markers", name="non-private PLS", marker={"color": NONPRIVATE_COLOUR})
    fig.add_scatter(x=y_true, y=y_private, mode="markers", name=private_label, marker={"color": PRIVATE_COLOUR})
    fig.update_layout(title="Test set: predicted vs measured", xaxis_title=f"measured {response}",
                      yaxis_title=f"predicted {response}")
    return _finish(fig)


def _add_median_band(fig: go.Figure, df, x: str, *, colour: str, name: str, nonprivate_name: str,
                     nonprivate_colour: str | None = None) -> None:
    """Median line, interquartile band (q25..q75) and the non-private line of a sweep table."""
    fig.add_scatter(x=list(df[x]) + list(df[x])[::-1], y=list(df["q75"]) + list(df["q25"])[::-1],
                    fill="toself", line={"width": 0}, fillcolor=colour, opacity=0.2, showlegend=False,
                    hoverinfo="skip")
    fig.add_scatter(x=df[x], y=df["median"], mode="lines+markers", name=f"{name} (median, IQR)",
                    line={"color": colour})
    fig.add_scatter(x=df[x], y=df["nonprivate"], mode="lines", name=nonprivate_name,
                    line={"color": nonprivate_colour or colour, "dash": "dot"})


def edpls_rmsep_curve_figure(curves, *, group: str = "chain", sigma_y: float | None = None) -> go.Figure:
    """RMSEP against epsilon (log-log): median line, interquartile band, one colour per group,
    and each group's non-private RMSEP as a dotted line."""
    groups = list(curves.groupby(group, sort=False))
    fig = go.Figure()
    for i, (name, df) in enumerate(groups):
        # one group: the private/non-private colours of every page; several: one colour per group (no red,
        # which means non-private), the group's non-private line dotted in its colour
        col = PRIVATE_COLOUR if len(groups) == 1 else _GROUP_PALETTE[i % len(_GROUP_PALETTE)]
        _add_median_band(fig, df.sort_values("epsilon"), "epsilon", colour=col, name=str(name),
                         nonprivate_name=f"{name} non-private",
                         nonprivate_colour=NONPRIVATE_COLOUR if len(groups) == 1 else None)
    if sigma_y:
        fig.add_hline(y=sigma_y, line={"dash": "dash", "color": "#999"}, annotation_text="σ_y (predict the mean)")
    fig.update_layout(title="RMSEP vs ε", xaxis={"title": "ε per the chosen accounting", "type": "log"},
                      yaxis={"title": "RMSEP on the test rows (units of y)", "type": "log"})
    return _finish(fig)


def edpls_samples_needed_figure(curve, *, target: float | None = None) -> go.Figure:
    """Strict mode: simulated RMSEP against the number of training rows."""
    fig = go.Figure()
    _add_median_band(fig, curve, "n", colour=PRIVATE_COLOUR, name="strict edPLS", nonprivate_name="non-private",
                     nonprivate_colour=NONPRIVATE_COLOUR)
    if target:
        fig.add_hline(y=target, line={"dash": "dash", "color": "#999"}, annotation_text="target RMSEP")
    fig.update_layout(title="How many samples would strict mode need?", xaxis={"title": "training rows n", "type": "log"},
                      yaxis={"title": "RMSEP on the test rows (units of y)", "type": "log"})
    return _finish(fig)


# =============================================================================================
# Privacy audit (issue #11): output statistic on neighbouring data sets
# =============================================================================================
def audit_histogram_figure(stat_D, stat_D_prime, threshold: float, *, statistic: str, bins: int = 80) -> go.Figure:
    """Overlaid histograms of the audit's 1-D output statistic on D and on D', with the threshold."""
    fig = go.Figure()
    fig.add_trace(go.Histogram(x=stat_D, name="on D", nbinsx=bins, opacity=0.6, histnorm="probability density"))
    fig.add_trace(go.Histogram(x=stat_D_prime, name="on D′ (neighbour)", nbinsx=bins, opacity=0.6,
                               histnorm="probability density"))
    fig.add_vline(x=threshold, line_dash="dash", annotation_text="test threshold")
    fig.update_layout(barmode="overlay", xaxis_title=f"output statistic ({statistic})", yaxis_title="density",
                      title="Release outputs on neighbouring data sets")
    return _finish(fig)


def audit_bound_figure(names, claimed, lower_bounds) -> go.Figure:
    """Claimed epsilon vs audited lower bound, one pair of bars per audit."""
    fig = go.Figure()
    fig.add_trace(go.Bar(x=list(names), y=list(claimed), name="claimed ε"))
    fig.add_trace(go.Bar(x=list(names), y=list(lower_bounds), name="audited lower bound (95%)"))
    fig.update_layout(barmode="group", yaxis_title="ε", title="Claimed ε against the audited lower bound")
    return _finish(fig)


# =============================================================================================
# Guided demo on the home page (issue #10): figures for ui/demo.py (engine.demo)
# =============================================================================================
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
    return _finish(fig)


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
    return _finish(fig)
