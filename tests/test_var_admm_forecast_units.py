"""VAR-ADMM forecasts in the series' own units with nights shaded (issue #19).

Oracles: the sample solar table itself (the actual values drawn after adding the centre back are exactly the
table's values at those times, so they are never negative and 0 at night) and its zeros (the shaded hours are
exactly the hours the site's output is 0).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from engine.data import load_table
from engine.methods.var_admm import prepare_series
from ui.var_admm.figures import _runs, var_forecast_figure
from ui.var_admm.runs import fit_and_forecast, own_units, run_defence

ROOT = Path(__file__).resolve().parents[1]
SETTINGS = {"penalty": "none", "alpha": 0.0, "rho": 2.0, "init": "random", "variant": "base", "max_iter": 3000,
            "tol": 1e-6, "scheme": "auto", "init_seed": 0}
LAGS = (1, 2, 24)


@pytest.fixture(scope="module")
def solar():
    df = load_table(ROOT / "sample_data" / "solar_pv.csv")
    Y = df.set_index(pd.to_datetime(df["time"])).drop(columns="time").iloc[:24 * 60, :3]
    return Y, fit_and_forecast(Y, True, LAGS, SETTINGS)


def test_actual_in_own_units_is_the_series_itself(solar):
    Y, fit = solar
    rows = Y.index.get_indexer(fit["times"])
    for j, site in enumerate(fit["sites"]):
        drawn = own_units(fit["actual"][:, j], fit["centres"][j])
        np.testing.assert_allclose(drawn, Y[site].to_numpy()[rows], atol=1e-12)
        assert drawn.min() >= -1e-12  # PV output is never negative in its own units
        # centred (the old chart) it was negative at night: the centre is a positive daytime mean
        assert fit["actual"][:, j].min() < 0 < fit["centres"][j]


def test_night_is_where_the_output_is_zero(solar):
    Y, fit = solar
    rows = Y.index.get_indexer(fit["times"])
    np.testing.assert_array_equal(fit["night"], Y.to_numpy()[rows] <= 0)
    assert fit["night"].any() and not fit["night"].all()


def test_centres_are_the_training_daytime_means(solar):
    Y, fit = solar
    panel = prepare_series(Y, solar=True, lags=LAGS)
    train = Y.to_numpy()[:panel.train_end]
    want = [train[train[:, j] > 0, j].mean() for j in range(Y.shape[1])]
    np.testing.assert_allclose(fit["centres"], want, rtol=1e-12)


def test_defended_forecasts_take_the_same_centre(solar):
    Y, fit = solar
    out = run_defence(Y, True, LAGS, SETTINGS, "laplace", 0.05, "clean", (0.0, 1.2), True, 1e-5, 7, "t", "auto")
    # the defence's forecasts are of the values before centring: adding the centre back gives them in own units,
    # on the scale of the undefended forecasts (same series, small noise)
    for j in range(Y.shape[1]):
        defended = own_units(out["var_pred"][:, j], fit["centres"][j])
        plain = own_units(fit["var_pred"][:, j], fit["centres"][j])
        assert abs(np.median(defended - plain)) < 0.1 * np.ptp(plain)


def test_figure_shades_each_night_and_names_the_units(solar):
    Y, fit = solar
    n = 24 * 7
    night = fit["night"][:n, 0]
    fig = var_forecast_figure(fit["times"][:n], own_units(fit["actual"][:n, 0], fit["centres"][0]),
                              fit["var_pred"][:n, 0], fit["ar_pred"][:n, 0], site="site_01", night=night,
                              y_title="site_01 (the series' own units)")
    shapes = [s for s in fig.layout.shapes if s.type == "rect"]
    assert len(shapes) == len(_runs(night)) >= 6  # one shaded band per night of the week shown
    assert "own units" in fig.layout.yaxis.title.text
    assert any(t.name and "night" in t.name for t in fig.data)
    # no night given: nothing shaded
    assert not var_forecast_figure(fit["times"][:n], fit["actual"][:n, 0], fit["var_pred"][:n, 0],
                                   fit["ar_pred"][:n, 0], site="s").layout.shapes


def test_runs():
    assert _runs([0, 1, 1, 0, 1]) == [(1, 2), (4, 4)]
    assert _runs([]) == [] and _runs([0, 0]) == []


def test_page_forecast_chart_is_in_own_units():
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "pages" / "var_admm.py"), default_timeout=180)
    at.run()
    assert not at.exception, at.exception
    text = " ".join(c.value for c in at.caption)
    assert "series' own units" in text and "owner's view" in text and "Shaded: night" in text
