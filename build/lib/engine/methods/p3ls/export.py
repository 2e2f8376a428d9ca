"""P3LS exports: no shareable release; the owner's workbook sheets and the owner-side model file."""
from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.utils.validation import check_is_fitted

from engine.export import estimator_from_dict, estimator_to_dict
from engine.methods.p3ls.evaluation import ModelComparison, coefficient_frame
from engine.methods.p3ls.leakage import NOT_DP_STATEMENT, leakage_report
from engine.methods.p3ls.protocol import P3LS

__all__ = ["MODEL_FORMAT", "NO_RELEASE_REASON", "model_from_dict", "model_to_dict", "owner_sheets"]


#: Why the P3LS page offers no shareable model (issue #15): nothing here is differentially private.
NO_RELEASE_REASON = ("P3LS releases no differentially private output: the federated model goes in the owner's "
                     "workbook")
MODEL_FORMAT = "privalab.p3ls/1"


def _flat(d: dict, prefix: str = "") -> dict:
    out = {}
    for k, v in d.items():
        if isinstance(v, dict):
            out.update(_flat(v, f"{prefix}{k} "))
        else:
            out[f"{prefix}{k}"] = v
    return out


def owner_sheets(comparison: ModelComparison, column_names: list[list[str]], relevance: dict | None = None) -> dict:
    """The owner's workbook sheets of one federation run (private: exact functions of the data).

    P3LS adds no noise, so its model is neither a DP output nor a public input: it is never a
    shareable release (:data:`NO_RELEASE_REASON`). Everything a party may want to keep goes here.

    Parameters
    ----------
    comparison : :class:`ModelComparison` from :func:`compare_models`.
    column_names : list of g lists, each party's column names (as from :func:`blocks_from_frame`).
    relevance : optional {label: DataFrame} from :meth:`P3LS.relevance` (e.g. training and test rows).

    Returns
    -------
    dict sheet name -> DataFrame or dict: coefficients per party (standardised units, long table),
    coefficients in original units (n + 1 rows: variables and the intercept, l columns, so that
    prediction = X @ coefficients + intercept), results per
    model and per KPI on the test rows, validation scores, equivalence, split sizes, the message log
    and its volume, what each role holds, the leakage view and the per-party relevance tables.
    """
    fed = comparison.federated
    kpis = list(comparison.kpi_names)
    names = [c for cols in column_names for c in cols]
    intercept = fed.intercept_ - fed.x_mean_ @ fed.coef_.T  # affine form: prediction = X @ coef + intercept
    coef = pd.DataFrame(np.vstack([fed.coef_.T, np.atleast_2d(intercept)]), columns=kpis,
                        index=[*names, "(intercept)"])
    coef.index.name = "variable"
    tr, va, te = comparison.split
    sheets = {
        "model coefficients per party": coefficient_frame(fed, column_names, kpis),
        "model coefficients (original units)": coef,
        "results per model (test rows)": comparison.overall,
        "results per KPI (test rows)": comparison.per_kpi,
        "choice of k (validation rows)": comparison.validation,
        "equivalence with pooled PLS": _flat(comparison.equivalence),
        "rows": {"training": len(tr), "validation": len(va), "test": len(te),
                 "masks": "fixed by a known seed (tests only)" if fed.mask_seed_known_ else "fresh OS entropy"},
        "message log": fed.log_.to_frame(),
        "message volume": fed.log_.volume(),
        "what each role holds": fed.holdings(),
        "leakage": leakage_report(fed),
    }
    for label, table in (relevance or {}).items():
        sheets[f"per-party relevance, {label}"] = table
    return sheets


def model_to_dict(model: P3LS) -> dict:
    """A fitted P3LS as plain JSON data, for the data owner only: params, the public fitted attributes.

    Not a shareable release (P3LS releases nothing with differential privacy: the coefficients are
    exact functions of the data); the page puts the model in the owner's workbook instead.
    """
    check_is_fitted(model, "coef_")
    # Per-row scores T, U of the training rows are left out: with the loadings they rebuild the data.
    return estimator_to_dict(model, MODEL_FORMAT, exclude=("x_scores_", "y_scores_"), privacy=NOT_DP_STATEMENT)


def model_from_dict(data) -> P3LS:
    """A P3LS with the exported params and fitted attributes, from ``model_to_dict`` output or its JSON."""
    return estimator_from_dict(data, P3LS, MODEL_FORMAT)
