"""Small inputs for the chemometrics staples' figure builders (ui/figures/chemometrics.py); merged into
``figure_cases.CASES``."""
from __future__ import annotations

import numpy as np
import pandas as pd

import ui.figures.chemometrics as F

RNG = np.random.default_rng(19)
AXIS = np.linspace(1100, 2498, 120)
PRIVATE_LABEL = "edPLS (strict, recommended, ε = 1)"


def _t2_q_table():
    n_tr, n_te = 30, 10
    table = pd.DataFrame({"row": np.arange(n_tr + n_te), "set": ["training"] * n_tr + ["test"] * n_te,
                          "T²": RNG.chisquare(3, n_tr + n_te), "Q": RNG.chisquare(5, n_tr + n_te) / 100})
    for stat, lim in (("T²", 9.0), ("Q", 0.11)):
        table[f"{stat} over 95%"] = table[stat] > lim
        table[f"{stat} over 99%"] = table[stat] > 1.4 * lim
    return table


def _prediction():
    y = np.linspace(9, 11, 12)
    private = y + RNG.normal(0, 1.5, 12)
    return F.chemometrics_prediction_figure(
        y, {PRIVATE_LABEL: private, "non-private PLS1 (k = 5)": y + 0.02},
        {PRIVATE_LABEL: (private < 8.5) | (private > 11.5)}, y_range=(8.5, 11.5),
        range_label="[8.5, 11.5]", response="moisture")


CASES = {
    "chemometrics_rmsecv_figure": lambda: F.chemometrics_rmsecv_figure(
        np.arange(1, 16), 0.3 / np.arange(1, 16) + 0.02, np.full(15, 0.004), k_suggested=4,
        rule="one-standard-error rule", marks={"page's k = 5": 5, "private fit's k = 3": 3}),
    "chemometrics_prediction_figure": _prediction,
    "chemometrics_loadings_figure": lambda: F.chemometrics_loadings_figure(
        AXIS, np.column_stack([np.sin(AXIS / (50 + 10 * a)) for a in range(4)]), axis_label="channel (column name)"),
    "chemometrics_vip_figure": lambda: F.chemometrics_vip_figure(AXIS, 1 + 0.5 * np.sin(AXIS / 80),
                                                                 axis_label="channel (column name)"),
    "chemometrics_t2_q_figure": lambda: F.chemometrics_t2_q_figure(_t2_q_table(), {0.95: 9.0, 0.99: 12.6},
                                                                   {0.95: 0.11, 0.99: 0.154}),
    "chemometrics_spectra_figure": lambda: F.chemometrics_spectra_figure(
        AXIS, RNG.normal(size=(5, 120)).cumsum(axis=1),
        {"after 'sg1' (the non-private reference's chain)": RNG.normal(size=(5, 120)),
         "after 'snv+sg1' (the recommended estimator's own, row-wise)": RNG.normal(size=(5, 120))},
        axis_label="channel (column name)", row_labels=[f"row {r}" for r in (0, 20, 40, 60, 80)]),
}
