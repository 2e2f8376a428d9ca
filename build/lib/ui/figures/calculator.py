"""Figure of the noise and budget calculator (pages/calculator.py)."""
from __future__ import annotations

import plotly.graph_objects as go

from ui.figures.layout import finish


def sigma_curve_figure(df, sensitivity: float, delta: float, *, chosen=None, inverse=None) -> go.Figure:
    """Noise scale against epsilon (log-log) from ``engine.privacy.calculator.sigma_curve``.

    ``chosen``: (epsilon, analytic sigma) of the budget, marked on the analytic curve. ``inverse``: (sigma, epsilon)
    of the calculator's inverse (a typed sigma and the smallest epsilon it satisfies), marked when epsilon is finite
    and positive (a log axis has no 0).
    """
    fig = go.Figure()
    fig.add_scatter(x=df["epsilon"], y=df["analytic_sigma"], name="Gaussian, analytic (exact)", mode="lines")
    fig.add_scatter(x=df["epsilon"], y=df["classic_sigma"], name="Gaussian, classic (ε ≤ 1 only)",
                    mode="lines", line={"dash": "dash"})
    fig.add_scatter(x=df["epsilon"], y=df["laplace_scale"], name="Laplace scale b", mode="lines",
                    line={"dash": "dot"})
    if chosen is not None:
        eps, sigma = chosen
        fig.add_scatter(x=[eps], y=[sigma], name=f"chosen ε = {eps:g} (σ = {sigma:.4g})", mode="markers",
                        marker={"size": 12, "symbol": "circle", "line": {"width": 2}})
    if inverse is not None and 0 < inverse[1] < float("inf"):
        sigma, eps = inverse
        fig.add_scatter(x=[eps], y=[sigma], name=f"typed σ = {sigma:.4g} → ε = {eps:.4g}", mode="markers",
                        marker={"size": 12, "symbol": "diamond-open", "line": {"width": 2}})
    fig.update_layout(
        xaxis={"title": "ε", "type": "log"},
        yaxis={"title": "noise scale (units of the sensitivity)", "type": "log"},
        title=f"Noise for sensitivity {sensitivity:g}, δ = {delta:.1e}",
    )
    return finish(fig)
