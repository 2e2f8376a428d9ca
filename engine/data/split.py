"""Train/test splits for the pages and notebooks (thin wrappers over scikit-learn)."""
from __future__ import annotations

import numpy as np
from sklearn.model_selection import train_test_split

__all__ = ["train_test_indices"]


def train_test_indices(n_rows: int, test_fraction: float = 0.3, *, how: str = "random", random_state=0):
    """Row indices of a train/test split.

    how: "random" (scikit-learn's shuffled split, seeded) or "last" (the last rows are the test
    set, e.g. for data in time order). Returns (train_idx, test_idx), each a sorted int array;
    both have at least 2 rows or a ValueError says why not.
    """
    if not 0 < test_fraction < 1:
        raise ValueError(f"test fraction must be between 0 and 1, got {test_fraction}")
    n_test = int(round(n_rows * test_fraction))
    if n_test < 2 or n_rows - n_test < 2:
        raise ValueError(
            f"{n_rows} rows cannot be split into train and test sets of at least 2 rows each "
            f"with a test fraction of {test_fraction:g}"
        )
    idx = np.arange(n_rows)
    if how == "last":
        return idx[: n_rows - n_test], idx[n_rows - n_test:]
    if how != "random":
        raise ValueError("how must be 'random' or 'last'")
    tr, te = train_test_split(idx, test_size=n_test, random_state=random_state)
    return np.sort(tr), np.sort(te)
