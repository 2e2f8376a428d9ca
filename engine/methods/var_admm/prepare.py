"""Panels of series prepared for the collaborative VAR (spec 6.3): solar series and any other panel.

Solar: clock-time lags with night = 0, each site centred on its own training daytime mean, scored on
the test rows whose target hour is daylight at all sites. Hand-written: the spec's preparation.
No streamlit here.
"""
from __future__ import annotations

from dataclasses import dataclass
from numbers import Integral

import numpy as np
import pandas as pd

from .layout import normalise_lags

__all__ = ["SolarPanel", "neighbourhood", "prepare_series", "prepare_solar"]


@dataclass
class SolarPanel:
    """Solar series prepared as spec 6.3: centred per site, train/test split, score mask."""

    Y: np.ndarray  # centred (night 0 before centring)
    raw: np.ndarray
    means: np.ndarray
    index: pd.Index
    sites: list
    train_end: int
    test_rows: np.ndarray
    score_mask: np.ndarray
    daylight: np.ndarray
    fit_mask: np.ndarray  # (T_total,) rows whose target hour is daylight at all sites


def prepare_solar(y: pd.DataFrame, daylight: pd.DataFrame | np.ndarray | None = None, *, train_end=None,
                  lags=(1, 2, 24), horizon: int = 1) -> SolarPanel:
    """Spec 6.3 for the solar series: clock-time lags with night = 0, each site centred on its
    own training daytime mean, score the test rows whose target hour is daylight at all sites.
    [ours] The fits use the training rows chosen the same way (``fit_mask``); this reproduces
    the spec's checked numbers (fitting night rows too makes the AR baseline weaker).

    y : (T x n) normalised output, time-indexed. daylight : same shape booleans; default
    ``y > 0`` (the sample file holds 0 exactly at night). train_end : a time stamp (rows
    before it train) or a row count; default the spec's 2012-02-01 when inside the data,
    else 2/3 of the rows.
    """
    raw = y.to_numpy(dtype=float)
    day: np.ndarray = (raw > 0) if daylight is None else np.asarray(daylight, dtype=bool)
    if day.shape != raw.shape:
        raise ValueError("daylight must have the shape of y")
    T_total = raw.shape[0]
    if train_end is None:
        cut = pd.Timestamp("2012-02-01")
        if isinstance(y.index, pd.DatetimeIndex) and y.index[0] < cut < y.index[-1]:
            train_end = int(np.searchsorted(y.index, cut))
        else:
            train_end = int(round(T_total * 2 / 3))
    elif not isinstance(train_end, (Integral, np.integer)):
        train_end = int(np.searchsorted(y.index, pd.Timestamp(train_end)))
    L = max(normalise_lags(lags))
    if not (L + 10 < train_end < T_total - 1):
        raise ValueError(f"the training period ({train_end} rows) must leave rows to fit and to test")
    night0 = np.where(day, raw, 0.0)
    means = np.array([night0[:train_end][day[:train_end, j], j].mean() if day[:train_end, j].any()
                      else night0[:train_end, j].mean() for j in range(raw.shape[1])])
    Yc = night0 - means
    test_rows = np.arange(max(train_end, L + horizon - 1), T_total)
    all_day = np.asarray(day.all(axis=1))  # an array (numpy's stubs allow a scalar bool)
    score_mask = all_day[test_rows]
    return SolarPanel(Yc, raw, means, y.index, [str(c) for c in y.columns], train_end, test_rows, score_mask, day,
                      all_day)



def prepare_series(y: pd.DataFrame, *, solar: bool, lags, train_fraction: float = 2 / 3, train_end=None) -> SolarPanel:
    """Spec 6.3 preparation of any panel: solar series go through :func:`prepare_solar` (night = 0,
    daytime centring, daylight rows fitted and scored); other series are centred on their training
    means and every row is fitted and scored."""
    if train_end is None and not (isinstance(y.index, pd.DatetimeIndex) and y.index[0] < pd.Timestamp("2012-02-01")
                                  < y.index[-1] and solar):
        train_end = int(round(len(y) * train_fraction))
    if solar:
        return prepare_solar(y, None, train_end=train_end, lags=lags)
    raw = y.to_numpy(dtype=float)
    L = max(normalise_lags(lags))
    if not (L + 10 < train_end < len(raw) - 1):
        raise ValueError(f"{len(raw)} rows are too few to train and test a model with lag {L}")
    means = raw[:train_end].mean(axis=0)
    test_rows = np.arange(max(train_end, L), len(raw))
    ones = np.ones_like(raw, dtype=bool)
    return SolarPanel(raw - means, raw, means, y.index, [str(c) for c in y.columns], int(train_end), test_rows,
                      np.ones(test_rows.size, dtype=bool), ones, np.ones(len(raw), dtype=bool))


def neighbourhood(Y: pd.DataFrame, centre, k: int, rows: int | None = None) -> list:
    """The ``k`` series most correlated with ``centre`` (itself first) over the first ``rows`` rows:
    for sites, its spatial neighbours, which is where the lead-lag links of a VAR are."""
    part = Y.iloc[:rows] if rows else Y
    corr = part.corr()[centre].fillna(-np.inf).sort_values(ascending=False, kind="stable")
    names = [centre] + [c for c in corr.index if c != centre]
    return names[:int(k)]
