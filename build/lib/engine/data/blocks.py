"""Frame-to-blocks adapters for vertically split data (P3LS): one table, columns grouped by owner.

Plain pandas code: no kept library groups a table's columns into per-party blocks with named errors.
"""
from __future__ import annotations

import pandas as pd

from engine.data.validate import (
    DataError,
    check_constant_columns,
    check_finite_array,
    check_min_rows,
    quote_list,
    require_numeric,
)

__all__ = ["blocks_from_frame", "group_columns_by_prefix"]


def group_columns_by_prefix(columns, separator: str = "_") -> dict[str, list[str]]:
    """Group column names by the text before the first ``separator`` (``s1_x03`` -> ``s1``), in order.

    Columns without the separator are left out (they name no party).
    """
    groups: dict[str, list[str]] = {}
    for col in columns:
        name = str(col)
        if separator and separator in name:
            prefix = name.split(separator, 1)[0]
            if prefix:
                groups.setdefault(prefix, []).append(col)
    return groups


def _check_assignment(parties: dict, responses: list, file: str) -> None:
    """Every party has columns; no column has two owners or is both a response and a variable."""
    if len(parties) < 2:
        raise DataError(f"{file}: a federation needs at least 2 parties; {len(parties)} given.", file=file)
    empty = [p for p, cols in parties.items() if not cols]
    if empty:
        raise DataError(f"{file}: party {quote_list(empty)} has no columns; give every party at least one.", file=file)
    seen: dict = {}
    for p, cols in parties.items():
        for c in cols:
            if c in responses:
                raise DataError(f"{file}: column '{c}' is a response and a variable of {p}; it can only be one.",
                                file=file, column=str(c))
            if c in seen:
                raise DataError(f"{file}: column '{c}' is given to both {seen[c]} and {p}; each column has one owner.",
                                file=file, column=str(c))
            seen[c] = p


def blocks_from_frame(df: pd.DataFrame, party_columns: dict, response_columns, *, file: str = "the table"):
    """(blocks, Y, party_names, column_names) from a table and a {party: [columns]} assignment.

    Raises :class:`engine.data.DataError` naming the problem: no responses, a party without
    columns, a column given to two parties or used both as a response and as a party's variable,
    text columns, missing values, constant columns, fewer than 2 parties or too few rows.
    """
    responses = list(response_columns)
    if not responses:
        raise DataError(f"{file}: choose at least one response (KPI) column for the label contributor.", file=file)
    parties = {str(p): list(cols) for p, cols in party_columns.items()}
    _check_assignment(parties, responses, file)
    Y_df = require_numeric(df, responses, file)
    check_finite_array(Y_df, file, "the responses")
    check_constant_columns(Y_df, file)
    blocks, names = [], []
    for p, cols in parties.items():
        X_df = require_numeric(df, cols, file)
        check_finite_array(X_df, file, f"{p}'s columns")
        blocks.append(X_df.to_numpy())
        names.append([str(c) for c in cols])
    check_min_rows(len(df), 10, file, "a federated PLS with a train/validation/test split")
    return blocks, Y_df.to_numpy(), list(parties), names
