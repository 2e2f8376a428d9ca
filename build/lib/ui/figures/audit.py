"""Figures of the privacy audit page (pages/privacy_audit.py), issue #11."""
from __future__ import annotations

import plotly.graph_objects as go

from engine.privacy.audit import AUDIT_CONFIDENCE
from ui.figures.layout import finish


def audit_histogram_figure(stat_D, stat_D_prime, threshold: float, *, statistic: str, bins: int = 80,
                           title: str = "Release outputs on neighbouring data sets") -> go.Figure:
    """Overlaid histograms of the audit's 1-D output statistic on D and on D', with the threshold."""
    fig = go.Figure()
    fig.add_trace(go.Histogram(x=stat_D, name="on D", nbinsx=bins, opacity=0.6, histnorm="probability density"))
    fig.add_trace(go.Histogram(x=stat_D_prime, name="on D′ (neighbour)", nbinsx=bins, opacity=0.6,
                               histnorm="probability density"))
    fig.add_vline(x=threshold, line_dash="dash", annotation_text="test threshold")
    fig.update_layout(barmode="overlay", xaxis_title=f"output statistic ({statistic})", yaxis_title="density",
                      title=title)
    return finish(fig)


def audit_bound_figure(names, claimed, lower_bounds, *, confidence: float = AUDIT_CONFIDENCE) -> go.Figure:
    """Claimed epsilon vs audited lower bound (at ``confidence``), one pair of bars per audit."""
    fig = go.Figure()
    fig.add_trace(go.Bar(x=list(names), y=list(claimed), name="claimed ε"))
    fig.add_trace(go.Bar(x=list(names), y=list(lower_bounds), name=f"audited lower bound ({100 * confidence:g} %)"))
    fig.update_layout(barmode="group", yaxis_title="ε", title="Claimed ε against the audited lower bound")
    return finish(fig)
