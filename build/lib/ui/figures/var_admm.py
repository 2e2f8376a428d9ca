"""Figures of the VAR-ADMM page (pages/var_admm.py), issue #9."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ui.figures.layout import NONPRIVATE_COLOUR, PRIVATE_COLOUR, finish

VAR_COLOURS = {"actual": "#222222", "var": NONPRIVATE_COLOUR, "ar": "#7f7f7f", "defended": PRIVATE_COLOUR,
               "reconstruction": "#d62728", "primal": "#1f77b4", "dual": "#ff7f0e", "coef": "#2ca02c"}


def _runs(mask) -> list[tuple[int, int]]:
    """(first, last) indices of each run of True in a boolean sequence."""
    m = np.asarray(mask, dtype=bool)
    if m.size == 0:
        return []
    edges = np.diff(np.concatenate([[0], m.astype(int), [0]]))
    return list(zip(np.flatnonzero(edges == 1), np.flatnonzero(edges == -1) - 1))


def var_forecast_figure(times, actual, var_pred, ar_pred, *, site: str, defended=None,
                        defended_label: str = "with the defence", night=None,
                        y_title: str = "value (as fitted: centred)") -> go.Figure:
    """One site's test-period series: actual against the collaborative VAR, the local AR and,
    optionally, the VAR under a defence (one-step-ahead forecasts). ``night``: booleans per time step, shaded
    (the hours the series is 0); ``y_title`` names the units the values are in."""
    fig = go.Figure()
    times = list(times)
    runs = _runs(night) if night is not None else []
    for first, last in runs:
        x1 = times[last + 1] if last + 1 < len(times) else times[last]
        fig.add_vrect(x0=times[first], x1=x1, fillcolor="#7f7f9f", opacity=0.15, line_width=0, layer="below")
    if runs:  # a legend entry for the shading (vrects have none)
        fig.add_scatter(x=[times[runs[0][0]]], y=[None], name="night (output 0 in the series)", mode="markers",
                        marker={"symbol": "square", "size": 12, "color": "rgba(127, 127, 159, 0.3)"})
    fig.add_scatter(x=times, y=actual, name="actual", mode="lines", line={"color": VAR_COLOURS["actual"], "width": 2})
    fig.add_scatter(x=times, y=var_pred, name="collaborative VAR", mode="lines",
                    line={"color": VAR_COLOURS["var"], "width": 1.5})
    fig.add_scatter(x=times, y=ar_pred, name="local AR (own lags only)", mode="lines",
                    line={"color": VAR_COLOURS["ar"], "width": 1, "dash": "dot"})
    if defended is not None:
        fig.add_scatter(x=times, y=defended, name=f"VAR {defended_label}", mode="lines",
                        line={"color": VAR_COLOURS["defended"], "width": 1, "dash": "dash"})
    fig.update_layout(title=f"One-step-ahead forecasts against the actual series: {site}", height=380,
                      yaxis={"title": y_title})
    return finish(fig)


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
    fig.update_layout(barmode="group",
                      title=f"Skill of the collaborative VAR over each owner's local AR ({metric.upper()})",
                      yaxis={"title": f"{metric.upper()} gain over AR (%)"}, xaxis={"type": "category"},
                      height=400)
    return finish(fig)


def var_convergence_figure(residuals, coef_error=None, *, coef_iterations=None, clean_residuals=None) -> go.Figure:
    """ADMM convergence: primal r^k and dual s^k residuals with Boyd's thresholds (log), and
    max |B^k - B*| against the central fit when given."""
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
    return finish(fig)


def var_attack_series_figure(times, truth, reconstruction, *, victim: str, K: int, attacker: str) -> go.Figure:
    """The victim's private series against what the attacker rebuilt after K iterations."""
    fig = go.Figure()
    fig.add_scatter(x=times, y=truth, name=f"true private series ({victim})", mode="lines",
                    line={"color": VAR_COLOURS["actual"], "width": 4}, opacity=0.35)
    fig.add_scatter(x=times, y=reconstruction, name=f"rebuilt by {attacker} after K = {K}", mode="lines",
                    line={"color": VAR_COLOURS["reconstruction"], "width": 1.2})
    fig.update_layout(title=f"What {attacker} recovers of {victim}'s series", height=360,
                      yaxis={"title": "value (as fitted)"})
    return finish(fig)


def var_attack_error_figure(K, relerr, *, victims, predicted_k=None, k_exact=None, k_needed=None,
                            formula: str = "") -> go.Figure:
    """Relative reconstruction error against the number of iterations observed (log), one line per
    victim; the paper's predicted K, the constructive K and the first exact K marked."""
    fig = go.Figure()
    err = np.maximum(np.asarray(relerr, dtype=float), 1e-17)
    for j, name in enumerate(victims):
        fig.add_scatter(x=K, y=err[:, j], mode="lines+markers", name=str(name), line={"width": 1.2},
                        marker={"size": 5})
    fig.add_hline(y=1e-8, line_color="grey", line_dash="dot", annotation_text="exact (1e-8)",
                  annotation_position="bottom right")
    if predicted_k is not None:
        fig.add_vline(x=predicted_k, line_color="#9467bd", line_dash="dash",
                      annotation_text=f"paper's formula: K = {predicted_k}",
                      annotation_position="top left")
    if k_needed is not None and k_needed != predicted_k:
        fig.add_vline(x=k_needed, line_color="#8c564b", line_dash="dot", annotation_text=f"large-T limit: {k_needed}",
                      annotation_position="bottom left")
    if k_exact is not None:
        fig.add_vline(x=k_exact, line_color=VAR_COLOURS["reconstruction"], line_width=2,
                      annotation_text=f"exact from K = {k_exact}", annotation_position="top right")
    fig.update_layout(title="Reconstruction error against the iterations observed", height=380,
                      xaxis={"title": "K (iterations observed)", "dtick": 1},
                      yaxis={"title": "‖ŷ − y‖ / ‖y‖", "type": "log"})
    return finish(fig)


def var_singular_values_figure(singular_values, rank_needed: int) -> go.Figure:
    """Singular values of the attacker's stacked observations (scaled to the largest): a gap after
    the subspace dimension means the subspace was reached ("rank reached" diagnostic)."""
    sv = np.maximum(np.asarray(singular_values, dtype=float), 1e-18)
    fig = go.Figure()
    fig.add_scatter(x=list(range(1, len(sv) + 1)), y=sv, mode="markers+lines", name="singular value",
                    line={"color": "#1f77b4"})
    fig.add_vline(x=rank_needed + 0.5, line_dash="dash", line_color="grey",
                  annotation_text=f"subspace dimension {rank_needed}")
    fig.update_layout(title="Singular values of the stacked observations", height=320,
                      yaxis={"type": "log", "title": "singular value / largest"},
                      xaxis={"title": "index"}, showlegend=False)
    return finish(fig)


def var_privacy_curve_figure(sweep, *, law: str) -> go.Figure:
    """Accuracy against privacy of additive noise: median MAE gain over AR and owners worse than AR
    against b; the per-value ε = Δ/b on the top axis labels."""
    fig = make_subplots(specs=[[{"secondary_y": True}]])
    fig.add_scatter(x=sweep["b"], y=sweep["median_mae_gain_pct"], mode="lines+markers",
                    name="median MAE gain over AR (%)",
                    line={"color": VAR_COLOURS["defended"]}, secondary_y=False)
    fig.add_scatter(x=sweep["b"], y=sweep["median_rmse_gain_pct"], mode="lines+markers",
                    name="median RMSE gain over AR (%)",
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
    return finish(fig)


def var_breach_figure(table, *, p: int, live=None) -> go.Figure:
    """Paper Fig. 10: iterations after which the owners (61) and the central node (58) hold as many
    equations as unknowns, against T, one line per n; ``live``: [(T, K, label)] markers of attacks run."""
    fig = go.Figure()
    for n in sorted(table["n"].unique()):
        part = table[(table["n"] == n) & (table["p"] == p)]
        fig.add_scatter(x=part["T"], y=part["k_owner"], mode="lines", name=f"owners, n = {n}")
        fig.add_scatter(x=part["T"], y=part["k_central"], mode="lines", line={"dash": "dot"},
                        name=f"central node, n = {n}")
    for T, K, label in live or []:
        fig.add_scatter(x=[T], y=[K], mode="markers", marker={"size": 12, "symbol": "star", "color": "#d62728"},
                        name=label)
    fig.update_layout(title=f"Iterations to a breach (p = {p} lags)", xaxis={"title": "T (rows fitted)", "type": "log"},
                      yaxis={"title": "iterations k"}, height=380)
    return finish(fig)


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
    return finish(fig)
