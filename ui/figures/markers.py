"""How many rows a scatter of rows draws: at most ``MARKERS_PER_FIGURE`` markers per figure.

Why a limit: Chromium draws plotly's SVG markers at about 0.09 ms each (the PCA-Gauss scatter of 3,000 markers took
270 of its 334 ms; 22 markers, 58 ms; on the 2-core bench machine), and Streamlit 1.67 draws every chart twice when
it mounts (its theme effect hands plotly a fresh copy of the figure: two ``plotly_afterplot`` events per chart), on
every new tab and every rerun. The edPLS and PCA-Gauss pages drew 3,000 markers each by default; capped at 1,000,
their first chart in a new tab came 0.3-0.5 s sooner (five tabs each way: PCA-Gauss 3.70-4.02 s -> 3.27-3.59 s,
edPLS 3.28-3.41 s -> 2.88-3.12 s).

Which rows: all of them up to the limit; beyond it, the rows that matter most first (``worst``: a prediction's
error, so every large error stays in sight) and evenly spaced rows for the rest, in their original order. The
figure says how many rows it draws (``drawn_note``). Deterministic: a picture of the owner's rows, not a release.
Written by hand: plotly thins no markers itself (its WebGL traces draw all of them; in the bench's software-GL
Chromium they cost nearly as much, 281 against 334 ms, and need one WebGL context per figure).
"""
from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = ["MARKERS_PER_FIGURE", "WORST_SHARE", "drawn_note", "largest_error", "rows_drawn"]

#: Markers one figure draws at most (split between its marker traces by the builder).
MARKERS_PER_FIGURE = 1000
#: Share of the drawn rows given to the largest ``worst`` values when rows are thinned.
WORST_SHARE = 0.25


def rows_drawn(n: int, limit: int, worst: ArrayLike | None = None) -> NDArray[np.intp]:
    """Row numbers (sorted) a marker trace of ``n`` rows draws: ``range(n)`` when ``n <= limit``, else ``limit``
    rows: the ``WORST_SHARE`` of them with the largest ``worst`` (NaN counts as largest) and evenly spaced rows
    among the others.

    Parameters
    ----------
    n : int, rows in the trace.
    limit : int >= 1, rows to draw at most.
    worst : None or array (n,), how much each row matters (e.g. its absolute prediction error).

    Returns
    -------
    array (min(n, limit),) of row numbers, increasing.

    Examples
    --------
    >>> rows_drawn(5, 10).tolist()
    [0, 1, 2, 3, 4]
    >>> rows_drawn(10, 4, worst=[0, 0, 0, 0, 0, 0, 0, 9, 0, 0]).tolist()
    [0, 4, 7, 9]
    """
    n, limit = int(n), int(limit)
    if limit < 1:
        raise ValueError(f"limit must be >= 1, got {limit}")
    if n <= limit:
        return np.arange(n)
    top = np.empty(0, dtype=np.intp)
    if worst is not None:
        w = np.asarray(worst, dtype=float)
        if w.shape != (n,):
            raise ValueError(f"worst must have one value per row ({n}), got shape {w.shape}")
        k = int(limit * WORST_SHARE)
        if k:  # argsort puts NaN last, i.e. among the largest
            top = np.sort(np.argsort(w, kind="stable")[-k:])
    rest = np.setdiff1d(np.arange(n), top, assume_unique=True)
    spaced = rest[np.unique(np.linspace(0, rest.size - 1, limit - top.size).round().astype(np.intp))]
    return np.union1d(top, spaced)


def largest_error(y_true: ArrayLike, predictions: list[ArrayLike]) -> NDArray[np.float64]:
    """Per row, the largest absolute error of the ``predictions`` of ``y_true`` (NaN only where every one is NaN):
    the ``worst`` of a predicted-vs-measured scatter, whose models all draw the same rows."""
    y = np.asarray(y_true, dtype=float)
    with np.errstate(invalid="ignore"):
        errors = [np.abs(np.asarray(p, dtype=float) - y) for p in predictions]
    return np.fmax.reduce(errors) if errors else np.zeros(y.size)


def drawn_note(shown: int, n: int, what: str = "rows") -> str:
    """``""`` when every row is drawn, else e.g. ``"1,000 of 3,000 rows drawn"``, for a title."""
    return "" if shown >= n else f"{shown:,} of {n:,} {what} drawn"
