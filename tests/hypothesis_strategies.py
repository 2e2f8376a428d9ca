"""Hypothesis strategies and data builders for ``tests/test_properties.py`` (issue #16).

Hypothesis draws a seed and a shape; the data are built with numpy from a planted, well conditioned
structure, in DataFrames with fixed-width column names (none is a substring of another, so a message
that names a column names exactly that one). Hostile inputs are injected into copies of the frames at
a Hypothesis-chosen place (``WHERE``, reduced modulo the frames' shapes by ``locate``, so a failing
case can be pinned with ``@example``).
"""
from __future__ import annotations

import numpy as np
import pandas as pd
from hypothesis import strategies as st

#: The issue's scale factors.
SCALES = (1e-150, 1e-6, 1.0, 1e6, 1e150)


def names(prefix: str, k: int) -> list[str]:
    """Fixed-width names: none is a substring of another, so a message names exactly the one it holds."""
    return [f"{prefix}_q{j:02d}" for j in range(k)]


def scale_strategy():
    """One of the issue's factors, or any 10^e with |e| <= 300."""
    return st.one_of(st.sampled_from(SCALES), st.integers(-300, 300).map(lambda e: 10.0 ** e))


def regression_frame(seed: int, n: int, m: int, noise: float = 1.0, isotropic: bool = False):
    """X (n, m) DataFrame with named columns, offsets and scales; y = X beta + noise, a named Series.

    ``isotropic``: all columns on one scale (X'X has clustered eigenvalues, so PLS reaches the
    least-squares fit in fewer components than the rank: the case of issue #16's false rank)."""
    rng = np.random.default_rng(seed)
    Z = rng.standard_normal((n, m))
    X = Z * (1.0 if isotropic else rng.uniform(0.5, 3.0, m)) + rng.uniform(-5.0, 5.0, m)
    y = X @ rng.standard_normal(m) + noise * rng.standard_normal(n) + 10.0
    return pd.DataFrame(X, columns=names("Xcol", m)), pd.Series(y, name="kpi_yield")


def two_view_frames(seed: int, n: int, dx: int, dy: int):
    """Two views sharing min(dx, dy) latent variables with distinct strengths, plus view noise."""
    rng = np.random.default_rng(seed)
    r = min(dx, dy)
    L = rng.standard_normal((n, r)) * np.linspace(2.0, 0.6, r)
    X = L @ rng.standard_normal((r, dx)) + 0.7 * rng.standard_normal((n, dx)) + rng.uniform(-4, 4, dx)
    Y = L @ rng.standard_normal((r, dy)) + 0.7 * rng.standard_normal((n, dy)) + rng.uniform(-4, 4, dy)
    return pd.DataFrame(X, columns=names("Xcol", dx)), pd.DataFrame(Y, columns=names("Ycol", dy))


def pca_frame(seed: int, n: int, m: int):
    """Rows from a few latent directions with well separated strengths, plus noise."""
    rng = np.random.default_rng(seed)
    r = min(m, 3)
    L = rng.standard_normal((n, r)) * np.array([6.0, 3.0, 1.5])[:r]
    X = L @ np.linalg.qr(rng.standard_normal((m, r)))[0].T + 0.3 * rng.standard_normal((n, m)) + rng.uniform(-3, 3, m)
    return pd.DataFrame(X, columns=names("Xcol", m))


def block_frames(seed: int, n: int, sizes: tuple, l: int):
    """P3LS parties: blocks of named columns (names unique across parties) and a named response frame."""
    rng = np.random.default_rng(seed)
    m = int(sum(sizes))
    r = min(m, 3)
    X = rng.standard_normal((n, r)) @ rng.standard_normal((r, m)) + 0.4 * rng.standard_normal((n, m))
    X = X * rng.uniform(0.5, 5.0, m) + rng.uniform(-5.0, 5.0, m)
    Y = X @ rng.standard_normal((m, l)) / m + 0.2 * rng.standard_normal((n, l)) + 1.0
    cols = names("Xcol", m)
    bounds = np.cumsum([0, *sizes])
    blocks = [pd.DataFrame(X[:, bounds[i]:bounds[i + 1]], columns=cols[bounds[i]:bounds[i + 1]])
              for i in range(len(sizes))]
    return blocks, pd.DataFrame(Y, columns=names("kpi", l))


def var_frame(seed: int, n: int, p: int, T: int):
    """A stationary VAR_n(p) (companion radius 0.7) with intercepts, T rows after a burn-in, named series."""
    rng = np.random.default_rng(seed)
    A = rng.uniform(-1.0, 1.0, (p, n, n))
    comp = np.zeros((n * p, n * p))
    comp[:n] = np.hstack(list(A))
    if p > 1:
        comp[n:, :-n] = np.eye(n * (p - 1))
    radius = float(np.max(np.abs(np.linalg.eigvals(comp))))
    A = A * (0.7 / radius) ** np.arange(1, p + 1)[:, None, None]
    c = rng.uniform(-3.0, 3.0, n)
    burn = 100
    Y = np.zeros((T + burn, n))
    for t in range(p, T + burn):
        Y[t] = c + sum(A[l] @ Y[t - 1 - l] for l in range(p)) + rng.standard_normal(n)
    return pd.DataFrame(Y[burn:], columns=names("site", n))


seeds = st.integers(0, 2**32 - 1)


@st.composite
def regression_cases(draw, max_m: int = 10):
    m = draw(st.integers(2, max_m))
    n = draw(st.integers(m + 3, 60))
    return draw(seeds), n, m


@st.composite
def isotropic_cases(draw):
    """Larger regressions with isotropic columns (``regression_frame(..., isotropic=True)``)."""
    m = draw(st.integers(15, 30))
    return draw(seeds), draw(st.integers(300, 600)), m


@st.composite
def two_view_cases(draw):
    dx, dy = draw(st.integers(2, 5)), draw(st.integers(2, 4))
    n = draw(st.integers(dx + dy + 20, 120))
    return draw(seeds), n, dx, dy


@st.composite
def pca_cases(draw):
    m = draw(st.integers(3, 8))
    n = draw(st.integers(m + 10, 80))
    return draw(seeds), n, m


@st.composite
def block_cases(draw):
    g = draw(st.integers(2, 3))
    sizes = tuple(draw(st.integers(1, 4)) for _ in range(g))
    n = draw(st.integers(sum(sizes) + 5, 60))
    return draw(seeds), n, sizes, draw(st.integers(1, 2))


@st.composite
def var_cases(draw):
    n, p = draw(st.integers(2, 4)), draw(st.integers(1, 2))
    T = draw(st.integers(n * p + 40, 150))
    return draw(seeds), n, p, T


# =============================================================================================
# Hostile input
# =============================================================================================
#: The hostile inputs: NaN, +-inf, 1e300 in a cell, a column at 1e-300, a constant column, a duplicated
#: column, text in a cell, a single row.
KINDS = ("nan", "inf", "huge", "tiny_column", "constant", "duplicate", "text", "one_row")
#: Kinds that need a second column in the frame they hit.
NEEDS_TWO = {"duplicate"}


#: Where a hostile value goes, as raw integers reduced modulo the frame's shape by ``locate`` (no
#: ``st.data()``, so an explicit ``@example`` can pin a failing case): frame, row, column, source column
#: of a duplicate, sign.
WHERE = st.tuples(st.integers(0, 2**16), st.integers(0, 2**16), st.integers(0, 2**16), st.integers(0, 2**16),
                  st.sampled_from([1.0, -1.0]))
#: Row 0, column 0 of the second frame (y or Y): issue #16's text labels as y crashed inside numpy.
IN_Y = (1, 0, 0, 0, 1.0)


def locate(kind: str, frames: dict, where, groups=None):
    """(frame key, row, column, source (frame key, column), sign) inside the frames' shapes.

    ``groups`` maps a frame key to the design it belongs to (default: each frame is its own); the
    source of a duplicate is another column of the same design (for P3LS: any party's block, since
    the parties' columns form one X; never X copied into Y, which is no defect of a two-view fit).
    """
    groups = groups or {k: k for k in frames}
    f_i, r_i, c_i, s_i, sign = where
    cells = {g: [(k, j) for k in frames if groups[k] == g for j in range(frames[k].shape[1])]
             for g in dict.fromkeys(groups.values())}
    keys = [k for k in frames if len(cells[groups[k]]) >= (2 if kind in NEEDS_TWO else 1)]
    key = keys[f_i % len(keys)]
    frame = frames[key]
    row, col = r_i % frame.shape[0], c_i % frame.shape[1]
    others = [c for c in cells[groups[key]] if c != (key, col)]
    src = others[s_i % len(others)] if others else None
    return key, row, col, src, sign


def inject(frames: dict, kind: str, where, groups=None) -> tuple[dict, list]:
    """Copies of the frames with the hostile value in place; returns them and the names to look for."""
    key, row, col, src, sign = locate(kind, frames, where, groups)
    out = {k: f.copy() for k, f in frames.items()}
    if kind == "one_row":
        return {k: f.iloc[:1] for k, f in out.items()}, []
    f = out[key]
    name = f.columns[col]
    if kind == "nan":
        f.iloc[row, col] = np.nan
    elif kind == "inf":
        f.iloc[row, col] = sign * np.inf
    elif kind == "huge":
        f.iloc[row, col] = sign * 1e300
    elif kind == "tiny_column":
        f[name] = f[name] * 1e-300
    elif kind == "constant":
        f[name] = 7.25
    elif kind == "duplicate":
        src_name = out[src[0]].columns[src[1]]
        f[name] = out[src[0]][src_name].to_numpy()
        return out, [name, src_name]
    elif kind == "text":
        f[name] = f[name].astype(object)
        f.iloc[row, col] = "n/a (sensor off)"
    return out, [name]
