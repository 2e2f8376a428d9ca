"""Figure of the noise and budget calculator (pages/calculator.py)."""
from __future__ import annotations

import plotly.graph_objects as go

from ui.figures.layout import finish


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
    return finish(fig)
