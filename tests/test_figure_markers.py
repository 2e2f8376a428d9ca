"""Scatters of rows draw at most ``MARKERS_PER_FIGURE`` markers (ui/figures/markers.py): which rows, and that
every builder of a scatter of rows keeps to it, keeps the rows that matter and says in its title what it drew.

Oracles: the definitions themselves (sorted distinct row numbers, the k largest values by a full sort, gaps of
evenly spaced picks), counted on the built figures' traces.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ui.dp_cca.figures import dp_cca_scores_figure
from ui.figures.chemometrics import chemometrics_prediction_figure, chemometrics_t2_q_figure
from ui.figures.layout import prediction_figure
from ui.figures.markers import MARKERS_PER_FIGURE, WORST_SHARE, drawn_note, rows_drawn
from ui.pca_gauss.figures import pca_gauss_scatter_figure

RNG = np.random.default_rng(33)


def _markers(fig) -> int:
    return sum(len(t.x) for t in fig.data if t.mode == "markers")


@settings(max_examples=200, deadline=None)
@given(n=st.integers(0, 3000), limit=st.integers(1, 1200), seed=st.integers(0, 2**32 - 1), with_worst=st.booleans())
def test_rows_drawn_keeps_every_row_up_to_the_limit_then_the_worst_and_even_gaps(n, limit, seed, with_worst):
    worst = np.random.default_rng(seed).permutation(n).astype(float) if with_worst else None
    rows = rows_drawn(n, limit, worst)
    if n <= limit:
        assert rows.tolist() == list(range(n))
        return
    assert rows.size == limit
    assert np.all(np.diff(rows) > 0) and rows[0] >= 0 and rows[-1] < n
    k = int(limit * WORST_SHARE) if with_worst else 0
    if k:  # the k largest values, found by a full sort
        assert set(np.argsort(-worst)[:k]) <= set(rows.tolist())
    # the other picks are evenly spaced among the rows that are not the worst: no gap between consecutive picks
    # wider than (rows left - 1) / (picks - 1) rounded up, plus the rounding of both ends
    rest = np.setdiff1d(np.arange(n), np.argsort(-worst)[:k] if k else [])
    picks = np.searchsorted(rest, np.setdiff1d(rows, np.argsort(-worst)[:k] if k else []))
    if picks.size > 1:
        assert np.diff(picks).max() <= math.ceil((rest.size - 1) / (picks.size - 1)) + 1
        assert picks[0] == 0 and picks[-1] == rest.size - 1


def test_rows_drawn_counts_nan_as_worst_and_refuses_bad_arguments():
    worst = np.zeros(100)
    worst[[3, 77]] = np.nan
    assert {3, 77} <= set(rows_drawn(100, 20, worst).tolist())
    with pytest.raises(ValueError, match="limit must be >= 1"):
        rows_drawn(10, 0)
    with pytest.raises(ValueError, match="one value per row"):
        rows_drawn(10, 4, worst=np.zeros(9))
    assert drawn_note(5, 5) == "" and drawn_note(500, 3000, "test rows") == "500 of 3,000 test rows drawn"


def test_prediction_figure_draws_the_same_rows_of_both_models_with_the_largest_errors():
    n = 3000
    y = RNG.normal(size=n)
    private, reference = y + RNG.normal(0, 0.3, n), y + RNG.normal(0, 0.1, n)
    private[1234] += 40.0  # the worst prediction: must be drawn
    reference[2222] -= 30.0  # the reference's worst too
    fig = prediction_figure(y, private, reference, response="y", private_label="p", reference_label="r")
    ref_trace, priv_trace = (t for t in fig.data if t.mode == "markers")
    assert len(priv_trace.x) == len(ref_trace.x) == MARKERS_PER_FIGURE // 2
    assert np.array_equal(priv_trace.x, ref_trace.x)
    assert private[1234] in priv_trace.y and reference[2222] in ref_trace.y
    assert f"{MARKERS_PER_FIGURE // 2:,} of 3,000 test rows drawn" in fig.layout.title.text.replace("<br>", " ")
    # the identity line spans every row, drawn or not
    assert fig.data[0].x == (min(y.min(), reference.min()), max(y.max(), reference.max()))
    small = prediction_figure(y[:300], private[:300], reference[:300], response="y", private_label="p",
                              reference_label="r")
    assert _markers(small) == 600 and "drawn" not in small.layout.title.text


def test_chemometrics_prediction_keeps_every_prediction_outside_the_range():
    n = 2400
    y = RNG.uniform(9, 11, n)
    private = y + RNG.normal(0, 0.2, n)
    outside = np.zeros(n, bool)
    outside[RNG.choice(n, 40, replace=False)] = True
    private[outside] = 12.5
    fig = chemometrics_prediction_figure(y, {"private": private, "reference": y + 0.01}, {"private": outside},
                                         y_range=(8.5, 11.5), range_label="[8.5, 11.5]", response="moisture")
    per_model = [t for t in fig.data if t.mode == "markers" and t.name in ("private", "reference")]
    assert [len(t.x) for t in per_model] == [MARKERS_PER_FIGURE // 2] * 2
    flagged = next(t for t in fig.data if str(t.name).startswith("outside"))
    assert len(flagged.x) == 40  # all of them, though 40 of 2,400 rows is under the evenly spaced share
    assert "500 of 2,400 test rows drawn" in fig.layout.title.text.replace("<br>", " ")


def test_pca_gauss_scatter_draws_evenly_spaced_rows_of_each_panel_and_names_the_counts():
    def frame(n):
        return pd.DataFrame({"c1": RNG.normal(size=n), "c2": RNG.normal(size=n),
                             "label": RNG.choice(list("abc"), n)})
    real, synthetic = frame(1797), frame(800)
    fig = pca_gauss_scatter_figure(real, synthetic, colour="label")
    per_panel = {}
    for t in fig.data:
        per_panel[t.xaxis] = per_panel.get(t.xaxis, 0) + len(t.x)
    assert sorted(per_panel.values()) == [MARKERS_PER_FIGURE // 2] * 2
    titles = [a.text for a in fig.layout.annotations]
    assert any("500 of 1,797 rows drawn" in t for t in titles)
    assert any("500 of 800 rows drawn" in t for t in titles)
    assert set(real.iloc[[0, 1796]]["c1"]) <= {x for t in fig.data if t.xaxis == "x" for x in t.x}  # both ends


def test_dp_cca_scores_and_t2_q_keep_to_the_limit():
    fig = dp_cca_scores_figure(RNG.normal(size=2500), RNG.normal(size=2500))
    assert _markers(fig) == MARKERS_PER_FIGURE
    assert "1,000 of 2,500 rows drawn" in fig.layout.title.text.replace("<br>", " ")
    n_tr, n_te = 2000, 1000
    table = pd.DataFrame({"row": np.arange(n_tr + n_te), "set": ["training"] * n_tr + ["test"] * n_te,
                          "T²": RNG.chisquare(3, n_tr + n_te), "Q": RNG.chisquare(5, n_tr + n_te) / 100})
    table.loc[1500, "T²"] = 500.0  # farthest out of the training rows
    for stat, lim in (("T²", 12.6), ("Q", 0.154)):
        table[f"{stat} over 99%"] = table[stat] > lim
    fig = chemometrics_t2_q_figure(table, {0.95: 9.0, 0.99: 12.6}, {0.95: 0.11, 0.99: 0.154})
    sets = {t.name: t for t in fig.data if t.name in ("training rows", "test rows")}
    drawn = len(sets["training rows"].x) + len(sets["test rows"].x)
    assert MARKERS_PER_FIGURE - 2 <= drawn <= MARKERS_PER_FIGURE  # each set its share, rounded down
    assert 500.0 in sets["training rows"].x
    assert f"{drawn:,} of 3,000 rows drawn" in fig.layout.title.text.replace("<br>", " ")
