"""Layout rules of every figure in ui/figures/, on small inputs (tests/figure_cases.py).

The legend must not be able to overlap the axes: a horizontal legend at a fixed paper y below the plot
(``legend={"orientation": "h", "y": -0.2}``) sits on the x-axis title and tick labels as soon as the plot is
short or the legend wraps. The rule: the legend is anchored to the bottom of the FIGURE (yref="container",
y=0, yanchor="bottom"), where plotly reserves its height under the axis tick labels and title, or above the
plot area (paper y >= 1, yanchor="bottom"); axis titles push the margins (automargin); long titles wrap.
tests/browser/test_browser_figure_layout.py checks the drawn figures for overlaps in chromium.
"""
from __future__ import annotations

import inspect
import math
import re

import pytest

import ui.figures.layout as layout
from figure_cases import CASES, F, figure_modules

# every public function defined in a page's figure module (ui/<page>/figures.py, ui/figures/chemometrics.py)
BUILDERS = sorted(name for module in figure_modules() for name, obj in vars(module).items()
                  if inspect.isfunction(obj) and obj.__module__ == module.__name__ and not name.startswith("_"))


def axes(fig):
    return {k: fig.layout[k] for k in fig.layout.to_plotly_json() if k.startswith(("xaxis", "yaxis"))}


def test_every_public_figure_builder_has_a_case():
    missing = [name for name in BUILDERS if name not in CASES]
    assert not missing, f"add small inputs for {missing} to tests/figure_cases.py (CASES)"


def legend_shown(fig) -> bool:
    entries = [t for t in fig.data if t.showlegend is not False]
    if fig.layout.showlegend is False or not entries:
        return False
    return fig.layout.showlegend is True or len(entries) > 1


def legend_cannot_overlap(legend) -> str | None:
    """None when the legend is placed where it cannot collide with the plot's axes, else why not."""
    y = legend.y
    if legend.orientation != "h":
        return f"orientation {legend.orientation!r}: a vertical legend beside the plot is not the house style"
    if legend.yref == "container":
        if y is not None and y <= 0.01 and legend.yanchor == "bottom":
            return None  # plotly reserves its height below everything else
        return f"container legend at y={y}, yanchor={legend.yanchor!r}"
    if y is not None and y >= 1 and legend.yanchor == "bottom":
        return None  # above the plot area, growing upwards into the top margin
    return f"paper legend at y={y}, yanchor={legend.yanchor!r}: overlaps the x axis when the plot is short"


@pytest.mark.parametrize("name", sorted(CASES))
def test_legend_is_placed_where_it_cannot_overlap_the_axes(name):
    fig = CASES[name]()
    if legend_shown(fig):
        problem = legend_cannot_overlap(fig.layout.legend)
        assert problem is None, f"{name}: {problem}"
        # the figure grew by the legend's rows: the plot area keeps the height the builder asked for
        assert fig.layout.height >= fig.layout.meta["privalab_base_height"] + layout._LEGEND_ROW_PX


@pytest.mark.parametrize("name", sorted(CASES))
def test_titles_and_axes_fit(name):
    fig = CASES[name]()
    for key, axis in axes(fig).items():
        assert axis.automargin is True, f"{name}.{key}: tick labels and title must push the margin"
        text = axis.title.text or ""
        for line in text.split("<br>"):
            assert len(line) <= F.AXIS_TITLE_CHARS[key[0]], f"{name}.{key} title line too long: {line!r}"
    title = fig.layout.title.text or ""
    for line in title.split("<br>"):
        assert len(line) <= F.TITLE_CHARS, f"{name}: title line {line!r} is cut off in a half-width column"
    if title:  # the title band is above every other top-margin item
        assert fig.layout.margin.t >= 16 + 24 * (title.count("<br>") + 1)
    assert fig.layout.hoverlabel.namelength == -1, f"{name}: hover cuts trace names at 15 characters"


@pytest.mark.parametrize("name", sorted(CASES))
def test_log_axes_have_readable_ticks(name):
    fig = CASES[name]()
    for key, axis in axes(fig).items():
        if axis.type != "log":
            continue
        assert axis.tickvals is not None and len(axis.tickvals) >= 2, f"{name}.{key}: log axis without ticks"
        for value, label in zip(axis.tickvals, axis.ticktext):
            assert float(label) == pytest.approx(value), f"{name}.{key}: tick {label!r} is not its value {value}"


def test_log_ticks_are_1_2_5_over_few_decades_and_powers_of_ten_over_many():
    vals, text = layout._log_ticks(0.04, 1.7)  # the edPLS RMSEP axis: non-private 0.04, private up to 1.7
    assert text == ["0.02", "0.05", "0.1", "0.2", "0.5", "1", "2", "5"]
    vals, text = layout._log_ticks(1e-17, 1.0)  # VAR attack error
    assert len(vals) <= 9 and all(re.fullmatch(r"1(e-\d+)?|0\.0*1", t) for t in text)


def test_finishing_twice_does_not_grow_the_figure_twice():
    fig = CASES["edpls_rmsep_curve_figure"]()
    height = fig.layout.height
    assert layout.finish(fig).layout.height == height


def test_legacy_layout_is_rejected():
    """The check fails on the layout this file was written to get rid of."""
    import plotly.graph_objects as go

    old = go.Figure(layout={"legend": {"orientation": "h", "y": -0.2}})
    assert legend_cannot_overlap(old.layout.legend) is not None
    default_h = go.Figure(layout={"legend": {"orientation": "h"}})
    assert legend_cannot_overlap(default_h.layout.legend) is not None


def colour_of(trace):
    mode = getattr(trace, "mode", None) or ""
    return (trace.line.color if "lines" in mode else None) or trace.marker.color


@pytest.mark.parametrize("name, private, nonprivate", [
    ("edpls_coef_figure", "edPLS (paper, ε = 1)", "non-private PLS"),
    ("edpls_pred_figure", "edPLS (paper, ε = 1)", "non-private PLS"),
    ("edpls_samples_needed_figure", "strict edPLS (median, IQR)", "non-private"),
    ("demo_cost_figure", "strict edPLS (median, IQR)", "non-private PLS (no privacy)"),
    ("dp_cca_correlation_bars", "private (DP)", "non-private (ε = ∞)"),
    ("attack_reconstruction_figure", "recovered from edPLS (paper-faithful σ, ε = 1)", "recovered from plain PLS"),
    ("demo_leak_figure", None, "recovered by party 1 from plain PLS (no privacy)"),
    ("var_forecast_figure", "VAR with Laplace noise b = 0.3", "collaborative VAR"),
])
def test_private_and_nonprivate_have_the_same_colours_on_every_page(name, private, nonprivate):
    by_name = {t.name: t for t in CASES[name]().data}
    if private is not None:
        assert colour_of(by_name[private]) == F.PRIVATE_COLOUR
    assert colour_of(by_name[nonprivate]) == F.NONPRIVATE_COLOUR


@pytest.mark.parametrize("name, text, value", [
    ("edpls_rmsep_curve_figure", "σ_y (predict the mean)", 0.37),
    ("edpls_samples_needed_figure", "target RMSEP", 0.2),
    ("var_attack_error_figure", "exact (1e-8)", 1e-8),
])
def test_line_labels_on_log_axes_sit_at_their_line(name, text, value):
    """add_hline on a log axis gives its label the raw value; plotly reads it as log10 (0.37 -> 2.3)."""
    fig = CASES[name]()
    label = next(a for a in fig.layout.annotations if a.text == text)
    assert label.y == pytest.approx(math.log10(value))
    demo = CASES["demo_cost_figure"]()  # finished twice (it builds on edpls_rmsep_curve_figure): converted once
    assert next(a for a in demo.layout.annotations if a.text.startswith("σ_y")).y == pytest.approx(math.log10(0.37))
