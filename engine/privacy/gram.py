"""The strict release's Gram matrix without the rows: ``scaled_gram`` clips, scales and sums Z'Z in one pass.

``scaled_gram(blocks, bounds, ...)`` equals ``MomentsRelease.gram(scale_rows(blocks, bounds, ...).Z)``
(``engine.privacy.moments``) without ever forming Z: blocks of rows are copied into one small buffer, clipped
there and added by a symmetric rank-k update. A block may be a 2-D array or ``Columns`` (its columns as 1-D
arrays: a Parquet partition's columns as pyarrow decoded them, never gathered into one array).

Written by hand: no kept library fuses row clipping into a rank-k update (scikit-learn, scipy and dask compute
X'X of rows that already exist).
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.linalg.blas import dsyrk

from engine.numerics import SAFE_EXPONENT

from .clipping import ClipReport, row_norms
from .moments import RowScaling, row_scaling

__all__ = ["CentreOverflow", "Columns", "ScaledGram", "gram_block_rows", "scaled_gram"]

#: Rows per block of ``scaled_gram``: a block of clipped, scaled rows is built in one preallocated buffer and
#: added to Z'Z by one symmetric rank-k update. Measured on 100,000 x 1,000 (one BLAS thread, noisy shared
#: machine): 256-1024 rows 1.05-1.15x a bare dsyrk of X, 4096-8192 rows 1.2x (the buffer leaves the cache).
GRAM_BLOCK_ROWS = 512
#: Numbers per buffer of ``scaled_gram`` (``gram_block_rows``): about GRAM_BLOCK_ROWS rows of 1,000 columns. At
#: d = 30 (250,000 rows, one BLAS thread) blocks of 4,096-16,384 rows took 30-31 ms, 512 rows 51 ms, 32,768 35 ms.
GRAM_BLOCK_ENTRIES = 512_000
#: The most rows per block of ``scaled_gram`` (narrow rows): on Parquet partitions of 29 columns, blocks of 16,384 rows
#: cost 6 % less CPU than 8,192 (the Python work per block), 32,768 and 65,536 no less.
GRAM_MAX_BLOCK_ROWS = 16_384
#: ``scaled_gram`` rescales the clipped rows of a block one by one while they are fewer than 1 / DENSE_CLIP_SHARE
#: of its rows, else the whole block by min(1, B / ||x||): at 29 columns, rows gathered one by one cost as much as a
#: pass over the block from about one row in eight clipped.
DENSE_CLIP_SHARE = 8


class CentreOverflow(ValueError):
    """A block minus its public centre overflows float64 (``scaled_gram(..., centres=...)``): block, row, column."""

    def __init__(self, block: int, row: int, column: int):
        super().__init__(f"block {block} minus its public centre overflows float64 at row {row}, column {column}")
        self.block, self.row, self.column = block, row, column


@dataclass
class ScaledGram(RowScaling):
    """Z'Z of rows clipped and scaled into the unit ball (``scaled_gram``): ``ScaledRows`` without Z.

    Attributes
    ----------
    G : array (d, d), exactly symmetric, Z'Z (private until released with noise).
    n : int, number of rows (private under add/remove neighbours).
    bounds, weights, const, scale, widths, clip_reports, n_clipped : see ``RowScaling``.
    max_z : float, the largest norm ||z_i|| of the scaled rows, from each block's norm and the factor it was scaled
        by (<= 1 by construction; 0 for no rows): DP-CCA's unit-ball check and the out-of-core sums
        (``engine.privacy.chunked``) read it.
    """

    G: np.ndarray
    n: int
    max_z: float = 0.0

    @property
    def d(self) -> int:
        """The dimension d of the Gram matrix."""
        d: int = self.G.shape[0]
        return d


def _block_norms(part: np.ndarray) -> np.ndarray:
    """Row norms of a block of rows: sqrt of the row sums of squares when no square can overflow or
    underflow (the same numbers as ``clipping.row_norms``), else ``row_norms`` (exact power-of-two rescaling)."""
    sq: NDArray[np.float64] = np.einsum("ij,ij->i", part, part)  # einsum is typed Any
    if sq.size and np.isfinite(sq).all() and 2.0**-SAFE_EXPONENT < sq.min() and sq.max() < 2.0**SAFE_EXPONENT:
        return np.sqrt(sq, out=sq)
    return row_norms(part)


class Columns:
    """A block of rows given by its columns: d_b float64 arrays (n,), read where they lie.

    A Parquet partition's columns, as pyarrow decoded them, reach ``scaled_gram`` without being gathered into one
    (n, d_b) array: the block pass copies them straight into its buffer. Gathering them first (pyarrow's
    ``to_pandas``, or one column-major array filled column by column) cost 0.02-0.04 CPU s per million rows of 29
    columns, a third of the rank-k update, plus the page faults of a fresh array per partition.

    Attributes
    ----------
    columns : list of arrays (n,). shape : (n, d_b). ndim : 2.
    """

    ndim = 2

    def __init__(self, columns: Sequence[ArrayLike]):
        self.columns = [np.asarray(c, dtype=float) for c in columns]
        if not self.columns or any(c.ndim != 1 or c.shape != self.columns[0].shape for c in self.columns):
            raise ValueError("Columns takes one or more 1-D columns of one length")
        self.shape = (self.columns[0].shape[0], len(self.columns))

    def rows(self, index: slice | NDArray[np.intp]) -> np.ndarray:
        """Rows ``index`` (a slice or row numbers) as one (k, d_b) array, a copy."""
        return np.column_stack([c[index] for c in self.columns])


def scaled_gram(blocks: Sequence[np.ndarray | Columns], bounds: Sequence[float], *,
                weights: Sequence[float] | None = None, private_centring: bool = False, const: float | None = None,
                block_rows: int | None = None, centres: Sequence[ArrayLike | None] | None = None,
                concurrent: bool = False) -> ScaledGram:
    """Z'Z of ``scale_rows(blocks, bounds, ...).Z`` in one pass over blocks of rows, without forming Z.

    Each block of ``block_rows`` rows is copied into one preallocated (block_rows, d) buffer times a power of two
    per block of columns, its clipped rows rescaled there (``_BlockPass``), and added to one (d, d) accumulator by
    a symmetric rank-k update (BLAS ``dsyrk``: half the flops of a general product; ``_GramAccumulator``),
    brought to z units once at the end. Memory beyond the inputs: the buffer and two (d, d) matrices.
    Equal to ``MomentsRelease.gram(scale_rows(...).Z)`` up to the order of the floating-point operations
    (about 1e-15 relative); where ``scale_rows`` loses digits (a clipped row whose B / ||x|| is subnormal), this
    keeps them (x / ||x|| first). Written by hand: no kept library fuses row clipping into a rank-k update
    (scikit-learn, scipy and dask compute X'X of rows that already exist).

    Parameters
    ----------
    blocks : sequence of arrays (n, d_b) or ``Columns`` (d_b columns of n rows), already minus any public centre.
    bounds, weights, private_centring, const : as ``scale_rows``.
    block_rows : int or None. Rows per block; None: ``gram_block_rows(d)``.
    centres : None or one public centre per block (array (d_b,), a float, or None): subtracted inside the block
        pass (no n x d_b copy of the centred block); a value that overflows raises ``CentreOverflow`` naming the
        block, row and column.
    concurrent : bool. True when other threads of this process compute sums at the same time (Dask's threaded
        partitions): the rank-k update then goes through numpy, which releases the GIL (``_GramAccumulator``).

    Returns
    -------
    ScaledGram : G (d, d) with d = sum_b d_b (+ 1 with private centring), the clip reports per block and the
    number of rows clipped in at least one block (private: for the owner's workbook).

    Examples
    --------
    >>> from engine.privacy.moments import scale_rows
    >>> rng = np.random.default_rng(0)
    >>> X, y = rng.normal(size=(50, 3)), rng.normal(size=(50, 1))
    >>> g = scaled_gram([X, y], [2.0, 1.0], private_centring=True, block_rows=16)
    >>> rows = scale_rows([X, y], [2.0, 1.0], private_centring=True)
    >>> bool(np.allclose(g.G, rows.Z.T @ rows.Z, rtol=1e-12, atol=0)), g.n, g.n_clipped == rows.n_clipped
    (True, 50, True)
    """
    blocks = [b if isinstance(b, Columns) else np.asarray(b, dtype=float) for b in blocks]
    bounds, weights, a, S = row_scaling(blocks, bounds, weights, private_centring, const)
    n = blocks[0].shape[0]
    widths = tuple(b.shape[1] for b in blocks)
    d = sum(widths) + int(private_centring)
    br = gram_block_rows(d) if block_rows is None else int(block_rows)
    if br < 1:
        raise ValueError(f"block_rows must be >= 1, got {block_rows}")
    # The buffer follows the first block's memory order: a column-major input (a pandas frame's values, a Parquet
    # partition) is then copied column by column into contiguous columns (measured 1.2x faster at d = 30 than into
    # a row-major buffer).
    first = blocks[0]
    order: Literal["C", "F"] = "F" if isinstance(first, Columns) or first.strides[0] < first.strides[1] else "C"
    pass_ = _BlockPass(bounds, weights, S, centres, widths, a / S if private_centring else 0.0)
    acc = _GramAccumulator(d, max(1, min(br, n)), order, a / S if private_centring else None, concurrent)
    for start in range(0, n, br):
        stop = min(start + br, n)
        zb = acc.rows(stop - start)
        pass_.scale_into(blocks, start, stop, zb)
        acc.add(zb)
    reports = tuple(ClipReport(B, n, k, t) for B, k, t in zip(bounds, pass_.n_over, pass_.top, strict=False))
    return ScaledGram(pass_.unscale(acc.result()), n, math.sqrt(pass_.max_sq) if n else 0.0, bounds=bounds,
                      weights=weights, const=a, scale=S, widths=widths, clip_reports=reports,
                      n_clipped=pass_.n_clipped)


def gram_block_rows(d: int) -> int:
    """Rows per block of ``scaled_gram`` for rows of width d: a buffer of about ``GRAM_BLOCK_ENTRIES`` numbers
    (``GRAM_BLOCK_ROWS`` rows at d = 1,000), never fewer than ``GRAM_BLOCK_ROWS`` rows nor more than
    ``GRAM_MAX_BLOCK_ROWS``. Narrow rows (an out-of-core table of 30 columns) thus go in blocks of thousands of
    rows: the per-block work in Python stays a small share and the rank-k update has a long k."""
    return int(min(GRAM_MAX_BLOCK_ROWS, max(GRAM_BLOCK_ROWS, GRAM_BLOCK_ENTRIES // max(int(d), 1))))


class _GramAccumulator:
    """Z'Z summed over blocks of rows built in one buffer by symmetric rank-k updates (BLAS ``dsyrk``: half the
    flops of a general product), returned exactly symmetric.

    Two ways, measured on one BLAS thread (100,000 x 1,001 in blocks of 512 rows; Sapphire Rapids, OpenBLAS 0.3.31):

    - alone (``concurrent=False``): scipy's ``dsyrk`` adds each block into the upper triangle of one
      column-major accumulator in place (beta = 1), mirrored once at the end: 1.34 CPU s, as much as one bare dsyrk
      of the whole matrix (1.35 s), buffer copies included. scipy's wrapper holds the GIL while it runs (two
      threads ran it one at a time: 1.09 s against 0.54 s alone), so another thread of the process waits at most
      one block's update (about 7 ms at d = 1,001; well under 1 ms for the app's data sets).
    - beside other threads (``concurrent=True``, Dask's threaded partitions): numpy's ``zb.T @ zb`` (a dsyrk inside,
      mirrored) into a product matrix, then added: the GIL released, two threads side by side (0.57 s against
      0.55 s alone), but the mirror and the addition pass over d x d per block: 1.70 s at d = 1,001. At d = 30
      (blocks of 4,096-16,384 rows) the two ways cost the same.
    """

    def __init__(self, d: int, rows: int, order: Literal["C", "F"], const_z: float | None, concurrent: bool):
        self.concurrent = concurrent
        self.C = np.zeros((d, d), order="C" if concurrent else "F")
        self.product = np.empty((d, d) if concurrent else (0, 0))  # numpy's way only
        self.buf = np.empty((rows, d), order=order)
        # dsyrk's A without a copy: a row-major buffer's transpose is column-major (C += A A', trans 0); a
        # column-major buffer is A itself (C += A' A, trans 1)
        self.trans = int(order == "F")
        if const_z is not None:
            self.buf[:, -1] = const_z

    def rows(self, k: int) -> np.ndarray:
        return self.buf[:k]

    def add(self, zb: np.ndarray) -> None:
        if self.concurrent:
            np.matmul(zb.T, zb, out=self.product)
            self.C += self.product
        else:  # in place: the wrapper returns self.C itself (overwrite_c on a column-major C)
            self.C = dsyrk(1.0, zb if self.trans else zb.T, beta=1.0, c=self.C, trans=self.trans, lower=0,
                           overwrite_c=1)

    def result(self) -> np.ndarray:
        if self.concurrent:
            return self.C
        upper = np.triu(self.C)  # dsyrk wrote the upper triangle only
        return np.ascontiguousarray(upper + np.triu(upper, 1).T)


class _BlockPass:
    """The clipping and scaling of ``scale_rows``, one block of rows at a time, into a buffer; the clip counts, the
    largest norms before clipping and the largest norm of the scaled rows, as it goes.

    The buffer holds each block's rows times a power of two p_b near 1 / B_b (exact: the row norms, the clip
    decisions and the reported norms are those of the raw rows, bit for bit), and only the clipped rows (few) are
    scaled again, by min(1, B_b / ||x||). The block's multiplier w_b / (B_b S) / p_b, the same for every row, is
    applied once to the summed (d, d) matrix (``unscale``). Measured on Parquet partitions of 29 float64 columns
    (one BLAS thread): scaling every row by its own factor in the buffer, and a second pass for the largest norm,
    cost 0.15 CPU s per million rows; this pass 0.09 (the rank-k update alone 0.06).
    """

    def __init__(self, bounds: tuple[float, ...], weights: tuple[float, ...], S: float,
                 centres: Sequence[ArrayLike | None] | None, widths: tuple[int, ...], const_z: float):
        self.bounds, self.widths, self.const_z = bounds, widths, const_z
        n_blocks = len(widths)
        self.p = [math.ldexp(1.0, -math.frexp(B)[1]) for B in bounds]  # B * p in [0.5, 1)
        multipliers = [1.0 / S if w == B else w / (B * S) for B, w in zip(bounds, weights, strict=False)]
        self.unit = [m / p for m, p in zip(multipliers, self.p, strict=False)]  # buffer units -> z units
        self.centres = [None] * n_blocks if centres is None else [
            None if c is None else np.asarray(c, dtype=float) for c in centres]
        self.n_over, self.top, self.n_clipped = [0] * n_blocks, [0.0] * n_blocks, 0
        self.max_sq = 0.0

    def scale_into(self, blocks: Sequence[np.ndarray | Columns], start: int, stop: int, zb: np.ndarray) -> None:
        over_any = np.zeros(stop - start, dtype=bool)
        zsq = np.full(stop - start, self.const_z**2)
        col = 0
        for i, (block, B, width) in enumerate(zip(blocks, self.bounds, self.widths, strict=False)):
            out, p, centre = zb[:, col:col + width], self.p[i], self.centres[i]
            col += width
            if centre is not None:  # minus the public centre, into the buffer, then scaled there in place
                with np.errstate(over="ignore", invalid="ignore"):
                    _apply(np.subtract, block, start, stop, centre, out)
                if not np.isfinite(out).all():
                    r, j = np.argwhere(~np.isfinite(out))[0]
                    raise CentreOverflow(i, start + int(r), int(j))
            with np.errstate(over="ignore"):  # a row too large for the power of two is clipped from the raw row
                if centre is None:
                    _apply(np.multiply, block, start, stop, p, out)
                else:
                    np.multiply(out, p, out=out)
            norms = np.abs(out[:, 0]) if width == 1 else _block_norms(out)  # p * ||x||, exactly
            peak = float(norms.max()) if norms.size else 0.0  # NaN when a row holds NaN (then NaN reaches G too)
            over = norms > B * p
            idx = np.flatnonzero(over)
            top = peak / p
            if idx.size:  # clipped rows
                raw_norms = norms[idx] / p
                past = np.isinf(raw_norms)  # p * x overflowed: those rows' norms from the raw rows
                if width > 1 and not past.any() and idx.size * DENSE_CLIP_SHARE < norms.size:  # few: one by one
                    raw = _raw_rows(block, start + idx, centre)
                    out[idx] = raw / raw_norms[:, None] * (B * p)  # x / norm first: B / norm can be subnormal
                else:
                    if past.any():
                        raw = _raw_rows(block, start + idx[past], centre)
                        raw_norms[past] = np.abs(raw[:, 0]) if width == 1 else row_norms(raw)
                        top = top if math.isnan(peak) else float(raw_norms.max())
                    if width == 1:  # clipping is np.clip, exact at the bound (an overflowed p * x too)
                        np.clip(out, -B * p, B * p, out=out)
                    else:  # many clipped rows: one pass over the block beats gathering them
                        with np.errstate(divide="ignore"):  # a zero row: factor 1
                            f = np.minimum(1.0, (B * p) / norms)
                        if past.any():
                            f[idx[past]] = 1.0
                            with np.errstate(invalid="ignore"):  # an inf entry: inf / inf is NaN, and G says so
                                out[idx[past]] = raw / raw_norms[past, None] * (B * p)
                        out *= f[:, None]
            over_any |= over
            self.n_over[i] += int(idx.size)
            self.top[i] = float(np.maximum(self.top[i], top))  # a NaN norm stays NaN
            zsq += (np.minimum(norms, B * p) * self.unit[i]) ** 2
        self.n_clipped += int(np.count_nonzero(over_any))
        if zsq.size:
            self.max_sq = float(np.maximum(self.max_sq, zsq.max()))

    def unscale(self, G: np.ndarray) -> np.ndarray:
        """The summed buffer rows' Z'Z in z units: G * u u' with u the per-column multipliers (1 for the constant);
        u_i u_j = u_j u_i exactly, so G stays exactly symmetric."""
        u = np.ones(G.shape[0])
        col = 0
        for width, unit in zip(self.widths, self.unit, strict=False):
            u[col:col + width] = unit
            col += width
        G *= np.outer(u, u)
        return G


def _apply(op: np.ufunc, block: np.ndarray | Columns, start: int, stop: int, value: float | np.ndarray,
           out: np.ndarray) -> None:
    """out = op(block[start:stop], value): an array at once, ``Columns`` column by column (value: a number, or
    one per column)."""
    if not isinstance(block, Columns):
        op(block[start:stop], value, out=out)
        return
    values = np.broadcast_to(value, (len(block.columns),))
    for j, column in enumerate(block.columns):
        op(column[start:stop], values[j], out=out[:, j])


def _raw_rows(block: np.ndarray | Columns, rows: NDArray[np.intp], centre: np.ndarray | None) -> np.ndarray:
    """Rows ``rows`` of a block as they came (minus its public centre), a (k, d_b) copy."""
    raw = block.rows(rows) if isinstance(block, Columns) else block[rows]
    return raw if centre is None else raw - centre
