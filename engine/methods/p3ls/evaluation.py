"""Local vs federated vs centralised PLS on one row split (spec Sec. 5.2-5.3, paper Sec. 6)."""
from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np
import pandas as pd
from sklearn.metrics import mean_squared_error, r2_score
from sklearn.utils.validation import check_is_fitted

from engine.data.split import split_indices
from engine.methods.p3ls.pls import _as_2d_response, mean_squared_distance
from engine.methods.p3ls.protocol import P3LS, _check_blocks
from engine.methods.p3ls.svdpls import SVDPLS
from engine.privacy import as_generator

__all__ = ["ModelComparison", "coefficient_frame", "compare_models", "select_n_components", "split_rows"]


def split_rows(m: int, fractions=(0.6, 0.2, 0.2), random_state=None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Random train/validation/test row indices (the same rows for every party): ``split_indices`` with the
    permutation of ``as_generator(random_state)``, as before, and at least 3/2/2 rows."""
    fractions = tuple(fractions)
    if len(fractions) != 3 or not math.isclose(sum(fractions), 1.0) or min(fractions) <= 0:
        raise ValueError(f"fractions must be positive and sum to 1, got {fractions}")
    tr, va, te = split_indices(m, fractions, random_state=as_generator(random_state))
    if len(tr) < 3 or len(va) < 2 or len(te) < 2:
        raise ValueError(f"{m} rows are too few for a train/validation/test split of {fractions}")
    return tr, va, te


def select_n_components(X_train, Y_train, X_val, Y_val, k_max: int) -> tuple[int, np.ndarray]:
    """Best k in 1..k_max by pooled validation R^2 (nested models from one fit); (k, scores)."""
    model = SVDPLS(k_max).fit(X_train, Y_train)
    Y_val2, _ = _as_2d_response(Y_val)
    scores = np.array([r2_score(Y_val2, model.predict(X_val, n_components=k).reshape(Y_val2.shape),
                                multioutput="variance_weighted") for k in range(1, k_max + 1)])
    return int(np.argmax(scores)) + 1, scores


@dataclass
class ModelComparison:
    """Result of :func:`compare_models`.

    overall: one row per model (local, P3LS, central): k, test R^2 pooled over KPIs
    (1 - SS_res/SS_tot), mean per-KPI R^2, mean RMSE, inference seconds.
    per_kpi: model, kpi, r2, rmse on the test rows. validation: model, k, r2 (pooled).
    equivalence: max |B_P3LS - B_central| (standardised units), relative to max(1, max|B|), max
    |prediction difference| on test rows, MSD per component, |ΔR^2|.
    """

    overall: pd.DataFrame
    per_kpi: pd.DataFrame
    validation: pd.DataFrame
    equivalence: dict
    federated: P3LS
    central: SVDPLS
    local: SVDPLS
    split: tuple
    kpi_names: list


def _metrics(name: str, Y_true: np.ndarray, Y_pred: np.ndarray, kpis: list[str]) -> list[dict]:
    return [{"model": name, "kpi": kpi, "r2": float(r2_score(Y_true[:, j], Y_pred[:, j])),
             "rmse": float(np.sqrt(mean_squared_error(Y_true[:, j], Y_pred[:, j])))} for j, kpi in enumerate(kpis)]


def compare_models(blocks, Y, *, label_holder: int = -1, k_max: int = 100, fractions=(0.6, 0.2, 0.2),
                   party_names=None, kpi_names=None, row_mask_block_size: int | None = None,
                   secure_aggregation: bool = False, random_state=None, mask_random_state=None) -> ModelComparison:
    """LocalPLS (the LC's block only) vs P3LS (all blocks, federated) vs CenPLS (pooled), paper Sec. 6.

    One random 60/20/20 split of the rows; each model's k is chosen on the validation rows by
    pooled R^2 (search 1..min(columns, k_max, train rows - 1)); metrics on the test rows:
    R^2 pooled over KPIs, mean per-KPI R^2, RMSE per KPI, inference wall time.

    random_state fixes the row split only. The federation's masks come from ``mask_random_state``:
    None (default) is fresh OS entropy (see :class:`P3LS`); a fixed value reproduces them (tests only).
    """
    blocks = _check_blocks(blocks)
    Y2, _ = _as_2d_response(Y)
    m, g = blocks[0].shape[0], len(blocks)
    lc = label_holder if label_holder >= 0 else g + label_holder
    kpis = list(kpi_names) if kpi_names is not None else [f"y{j + 1}" for j in range(Y2.shape[1])]
    rng = as_generator(random_state)
    tr, va, te = split_rows(m, fractions, rng)
    part = lambda idx: [b[idx] for b in blocks]  # noqa: E731
    X = np.hstack(blocks)
    cap = lambda n_cols: max(1, min(n_cols, k_max, len(tr) - 1))  # noqa: E731

    k_loc, val_loc = select_n_components(blocks[lc][tr], Y2[tr], blocks[lc][va], Y2[va], cap(blocks[lc].shape[1]))
    k_cen, val_cen = select_n_components(X[tr], Y2[tr], X[va], Y2[va], cap(X.shape[1]))
    local = SVDPLS(k_loc).fit(blocks[lc][tr], Y2[tr])
    central = SVDPLS(k_cen).fit(X[tr], Y2[tr])
    fed = P3LS(cap(X.shape[1]), label_holder=lc, row_mask_block_size=row_mask_block_size,
               secure_aggregation=secure_aggregation, party_names=party_names, random_state=mask_random_state)
    fed.fit(part(tr), Y2[tr], validation=(part(va), Y2[va]))

    def timed(fn):
        start = time.perf_counter()
        out = fn()
        return out, time.perf_counter() - start

    pred_loc, t_loc = timed(lambda: local.predict(blocks[lc][te]))
    pred_fed, t_fed = timed(lambda: fed.predict(part(te)))
    pred_cen, t_cen = timed(lambda: central.predict(X[te]))
    Y_te = Y2[te]
    per_kpi = pd.DataFrame(_metrics("local", Y_te, pred_loc, kpis) + _metrics("P3LS", Y_te, pred_fed, kpis)
                           + _metrics("central", Y_te, pred_cen, kpis))
    overall = []
    for name, k, pred, secs in (("local", k_loc, pred_loc, t_loc), ("P3LS", fed.n_components_, pred_fed, t_fed),
                                ("central", k_cen, pred_cen, t_cen)):
        sub = per_kpi[per_kpi["model"] == name]
        overall.append({"model": name, "k": int(k),
                        "r2_pooled": float(r2_score(Y_te, pred, multioutput="variance_weighted")),
                        "r2_mean": float(sub["r2"].mean()), "rmse_mean": float(sub["rmse"].mean()),
                        "inference_seconds": secs})
    overall = pd.DataFrame(overall)
    validation = pd.concat([
        pd.DataFrame({"model": name, "k": np.arange(1, len(s) + 1), "r2": s})
        for name, s in (("local", val_loc), ("P3LS", fed.validation_scores_), ("central", val_cen))
    ], ignore_index=True)

    equivalence: dict[str, bool | float | dict[str, float]] = {"same_k": bool(fed.n_components_ == k_cen)}
    if fed.n_components_ == k_cen:
        c = central.components_
        b_diff = float(np.max(np.abs(fed.B_ - c.B)))
        equivalence.update({
            "max_abs_coef_difference": b_diff,
            "relative_coef_difference": b_diff / max(1.0, float(np.max(np.abs(c.B)))),
            "max_abs_prediction_difference": float(np.max(np.abs(pred_fed - pred_cen))),
            "r2_difference": float(abs(overall.loc[1, "r2_pooled"] - overall.loc[2, "r2_pooled"])),
            "msd": {"W": mean_squared_distance(fed.x_weights_, c.W), "T": mean_squared_distance(fed.x_scores_, c.T),
                    "P": mean_squared_distance(fed.x_loadings_, c.P), "Q": mean_squared_distance(fed.y_loadings_, c.Q),
                    "R": mean_squared_distance(fed.audit().R, c.R), "B": mean_squared_distance(fed.B_, c.B)},
        })
    return ModelComparison(overall, per_kpi, validation, equivalence, fed, central, local, (tr, va, te), kpis)


def coefficient_frame(model: P3LS, column_names: list[list[str]], kpi_names: list[str]) -> pd.DataFrame:
    """Long table of every party's B_i (standardised units): party, variable, kpi, coefficient."""
    check_is_fitted(model, "block_coefs_")
    rows = []
    for h, B_i, cols in zip(model.holders_, model.block_coefs_, column_names, strict=False):
        for a, var in enumerate(cols):
            for j, kpi in enumerate(kpi_names):
                rows.append({"party": h.name, "variable": var, "kpi": kpi, "coefficient": float(B_i[a, j])})
    return pd.DataFrame(rows)

