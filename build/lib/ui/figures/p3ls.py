"""Figures of the P3LS simulation (pages/p3ls.py), issue #8."""
from __future__ import annotations

import plotly.graph_objects as go

from ui.figures.layout import finish

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
    return finish(fig)


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
    return finish(fig)


def p3ls_coefficients_figure(coefs, kpi: str) -> go.Figure:
    """Every party's coefficients B_i for one KPI (standardised units), coloured by party."""
    part = coefs[coefs["kpi"] == kpi]
    fig = go.Figure()
    for party in part["party"].unique():
        rows = part[part["party"] == party]
        fig.add_bar(x=rows["variable"], y=rows["coefficient"], name=party)
    fig.update_layout(title=f"Coefficients per party block for {kpi} "
                            "(standardised units; each party holds its own B_i)",
                      yaxis={"title": "coefficient"}, xaxis={"title": "variable", "type": "category"},
                      height=400)
    return finish(fig)


def p3ls_contribution_figure(relevance_tables: dict) -> go.Figure:
    """Predictive relevance R²_XiY per party (paper eq. 18), one bar group per row set.

    relevance_tables: {"training rows": Relevance.table, "test rows": Relevance.table}.
    """
    fig = go.Figure()
    colours = ["#1f77b4", "#aec7e8", "#2ca02c"]
    for (label, table), colour in zip(relevance_tables.items(), colours):
        fig.add_bar(x=table["party"], y=table["r2_xy"], name=f"R²_XiY, {label}", marker_color=colour)
    fig.add_hline(y=0, line_color="black", line_width=1)
    fig.update_layout(barmode="group",
                      title="Contribution: variance of Y explained by each party's block (1 − SS(Y − X_i B_i)/SS(Y))",
                      yaxis={"title": "R²_XiY"}, height=380)
    return finish(fig)


def p3ls_validation_figure(validation, chosen: dict) -> go.Figure:
    """Validation R² against the number of components k per model, the chosen k marked."""
    fig = go.Figure()
    for model, colour in P3LS_MODEL_COLOURS.items():
        part = validation[validation["model"] == model]
        dash = "dash" if model == "central" else None
        fig.add_scatter(x=part["k"], y=part["r2"], mode="lines", name=model, line={"color": colour, "dash": dash})
        if model in chosen:
            k = chosen[model]
            fig.add_scatter(x=[k], y=part.loc[part["k"] == k, "r2"], mode="markers",
                            marker={"color": colour, "size": 10},
                            name=f"{model}: k = {k}", showlegend=True)
    fig.update_layout(title="Choice of k on the validation rows (pooled R² over KPIs)", xaxis={"title": "k"},
                      yaxis={"title": "validation R²"}, height=360)
    return finish(fig)
