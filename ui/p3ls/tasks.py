"""The P3LS page's worker task: one protocol run.

Run by ``ui.runtime.jobs`` (moved from ``ui.runtime.page_jobs``, the bodies unchanged).
A job's function must be importable by name in a worker process; a page module draws itself when imported.
"""
from __future__ import annotations

import pandas as pd

__all__ = ["p3ls_federation"]


def p3ls_federation(df: pd.DataFrame, party_columns: tuple, responses: tuple, label_holder: int, k_max: int,
                    split_seed: int, secure_aggregation: bool, block_size: int | None, file: str) -> dict:
    """Everything the P3LS page shows, from one protocol run (``split_seed``: the row split only; the masks come
    from fresh OS entropy)."""
    from engine.methods.p3ls import blocks_from_frame, coefficient_frame, compare_models, leakage_report, owner_sheets

    blocks, Y, names, column_names = blocks_from_frame(df, dict(party_columns), responses, file=file)
    comparison = compare_models(blocks, Y, label_holder=label_holder, k_max=k_max, party_names=names,
                                kpi_names=list(responses), row_mask_block_size=block_size,
                                secure_aggregation=secure_aggregation, random_state=split_seed)
    fed = comparison.federated
    test_rows = comparison.split[2]
    relevance_train = fed.relevance()
    relevance_test = fed.relevance([b[test_rows] for b in blocks], Y[test_rows])
    relevance = {"training rows": relevance_train.table, "test rows": relevance_test.table}
    return {
        "overall": comparison.overall,
        "per_kpi": comparison.per_kpi,
        "validation": comparison.validation,
        "equivalence": comparison.equivalence,
        "messages": fed.log_.to_frame(),
        "volume": fed.log_.volume(),
        "roles": [fed.authority_.name, *[h.name for h in fed.holders_], fed.server_.name],
        "holdings": fed.holdings(),
        "leakage": leakage_report(fed),
        "coefficients": coefficient_frame(fed, column_names, list(responses)),
        "relevance": relevance,
        "r2_y": relevance_train.r2_y,
        "r2_x": relevance_train.r2_x_total,
        "sizes": {"train": len(comparison.split[0]), "validation": len(comparison.split[1]), "test": len(test_rows)},
        "owner_sheets": owner_sheets(comparison, column_names, relevance),
    }
