"""Figures of the PLS attack lab (pages/attack_lab.py), issue #5."""
from __future__ import annotations

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ui.figures.layout import NONPRIVATE_COLOUR, PRIVATE_COLOUR, finish

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
    return finish(fig)


def attack_reconstruction_figure(axis, secret: dict, plain: dict, private: dict, *, private_label: str,
                                 secret_label: str = "true unique component", secret_centre=None,
                                 axis_title: str = "channel") -> go.Figure:
    """The secret next to what the attacker recovers from plain PLS and from edPLS (paper Fig. 2).

    secret, plain, private: {"W": (m,), "P": (m,)} curves already scaled to max |.| = 1.
    """
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
    return finish(fig)


def attack_success_figure(summary, *, component: str = "P", metric: str = "correlation", settings=None,
                          labels=None, show_rmsep: bool = True, component_label: str = "") -> go.Figure:
    """Attack success against ε with bands, and the models' RMSEP on a second (log) axis.

    summary: ``engine.attacks.pls_subspace.summarise_sweep`` output. Plain PLS (ε = ∞) is a
    dashed horizontal line; RMSEP is dotted, median over runs.
    """
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
    return finish(fig)
