"""Row splits, in one place: ``split_indices`` (any number of parts), ``train_test_indices`` (pages).

Every split in the engine (the pages' train/test split, DP-CCA's and P3LS's row splits, PCA-Gauss's
test/public/train slices) is a call to ``split_indices``, so a split means the same thing everywhere:
a shuffled permutation cut into consecutive parts whose sizes are rounded fractions (the last part
takes the rest), or, for data in time order, the rows in order. A split is not a release: its seed is
a data-split seed, never a noise seed.

Thin wrappers over NumPy and scikit-learn: the permutation is scikit-learn's (``check_random_state``,
as ``train_test_split`` draws it) for an int or None seed, the Generator's own for a NumPy Generator;
stratified splits are scikit-learn's ``train_test_split``.
"""
from __future__ import annotations

import math

import numpy as np
from sklearn.model_selection import train_test_split
from sklearn.utils import check_random_state

__all__ = ["split_indices", "train_test_indices"]


def _permutation(n_rows: int, random_state) -> np.ndarray:
    if isinstance(random_state, np.random.Generator):
        return random_state.permutation(n_rows)
    return check_random_state(random_state).permutation(n_rows)


def split_indices(n_rows: int, fractions, *, how: str = "random", random_state=None, stratify=None,
                  sort: bool = True) -> tuple:
    """Row indices of a split into ``len(fractions)`` disjoint parts that cover every row.

    Parameters
    ----------
    n_rows : int
    fractions : sequence of k >= 2 floats in (0, 1) summing to 1. Part i holds round(f_i n) rows; the last
        part holds the rest.
    how : "random" (a shuffled permutation cut in order) or "last" (rows in their order: the last part is
        the last rows, as for data in time order).
    random_state : int, None, RandomState or numpy Generator (the seed of the permutation).
    stratify : array (n_rows,) or None. Class labels: a stratified split (two parts only; scikit-learn's
        ``train_test_split`` with the second part as its test set).
    sort : bool. Return each part sorted (default) or in permutation order.

    Returns
    -------
    tuple of k int arrays.

    Examples
    --------
    >>> test, train = split_indices(10, (0.3, 0.7), random_state=0)
    >>> len(test), len(train), sorted(np.concatenate([test, train]).tolist()) == list(range(10))
    (3, 7, True)
    >>> split_indices(5, (0.6, 0.4), how="last")
    (array([0, 1, 2]), array([3, 4]))
    """
    n_rows = int(n_rows)
    fractions = tuple(float(f) for f in fractions)
    if len(fractions) < 2 or min(fractions) <= 0 or not math.isclose(sum(fractions), 1.0):
        raise ValueError(f"fractions must be at least two positive numbers summing to 1, got {fractions}")
    if how not in ("random", "last"):
        raise ValueError("how must be 'random' or 'last'")
    counts = [int(round(f * n_rows)) for f in fractions[:-1]]
    counts.append(n_rows - sum(counts))
    if min(counts) < 0:
        raise ValueError(f"{n_rows} rows cannot be split into parts of {fractions}")
    if stratify is not None:
        if len(fractions) != 2 or how != "random":
            raise ValueError("a stratified split has exactly two random parts")
        first, second = train_test_split(np.arange(n_rows), test_size=counts[1], random_state=random_state,
                                         stratify=stratify)
        parts = [first, second]
    else:
        order = np.arange(n_rows) if how == "last" else _permutation(n_rows, random_state)
        cuts = np.cumsum(counts)[:-1]
        parts = np.split(order, cuts)
    return tuple(np.sort(p) if sort else p for p in parts)


def train_test_indices(n_rows: int, test_fraction: float = 0.3, *, how: str = "random", random_state=0):
    """Row indices of a train/test split for the pages.

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
    if how not in ("random", "last"):
        raise ValueError("how must be 'random' or 'last'")
    if how == "last":
        train, test = split_indices(n_rows, (1 - n_test / n_rows, n_test / n_rows), how="last")
        return train, test
    # scikit-learn's train_test_split draws the test rows first: the same permutation, cut test-first.
    test, train = split_indices(n_rows, (n_test / n_rows, 1 - n_test / n_rows), random_state=random_state)
    return train, test
