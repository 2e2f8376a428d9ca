"""The fused strict-release kernel ``moments.scaled_gram`` and the fits that use it (issue #21), and EDPLS's lazy
noise tables.

Oracles: numpy's ``Z.T @ Z`` on the rows of the old path (``scale_rows``), that path's clip reports, the fits
computed from the old path's Gram matrix with the same noise, the eigen formula of the PSD projection, and the
tables EDPLS built eagerly before (``pivot`` / ``set_index`` of the long noise table).
"""
from __future__ import annotations

import math
import pickle

import numpy as np
import pandas as pd
import pytest

from engine.methods.dp_cca import DPCCA
from engine.methods.dp_pcr import DPPCR
from engine.methods.edpls import EDPLS
from engine.methods.edpls.core import QUANTITIES
from engine.methods.edpls.strict import _strict_state
from engine.privacy import noise_generator
from engine.privacy.gram import CentreOverflow, Columns, gram_block_rows, scaled_gram
from engine.privacy.moments import MomentsRelease, psd_project, scale_rows


def _rel(a, b) -> float:
    return float(np.abs(np.asarray(a) - np.asarray(b)).max() / np.abs(np.asarray(b)).max())


def _data(n=700, m=9, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, m)) * rng.uniform(0.2, 3.0, size=(n, 1)) + 0.5
    y = X @ rng.normal(size=m) + rng.normal(size=n)
    return X, y


CONFIGS = [
    ({}, [4.0, 3.0]),
    ({"private_centring": True}, [4.0, 3.0]),
    ({"weights": [1.0, 1.0], "private_centring": True, "const": 1.0}, [4.0, 3.0]),
    ({"weights": [2.0, 0.5]}, [4.0, 3.0]),
]


@pytest.mark.parametrize("kw,bounds", CONFIGS)
@pytest.mark.parametrize("block_rows", [1, 7, 64, None, 10_000])
@pytest.mark.parametrize("concurrent", [False, True])  # scipy's in-place dsyrk / numpy's product, then added
@pytest.mark.parametrize("order", ["C", "F"])  # the buffer follows X's memory order: dsyrk's trans 0 / 1
def test_scaled_gram_is_z_transpose_z_of_the_scaled_rows_with_the_same_clip_reports(kw, bounds, block_rows,
                                                                                   concurrent, order):
    X, y = _data()
    X = np.asarray(X, order=order)
    blocks = [X, y[:, None]]
    g = scaled_gram(blocks, bounds, block_rows=block_rows, concurrent=concurrent, **kw)
    rows = scale_rows(blocks, bounds, **kw)
    assert rows.n_clipped > 0 and rows.n_clipped < X.shape[0]  # the data exercise both branches
    assert _rel(g.G, rows.Z.T @ rows.Z) <= 1e-12
    assert np.array_equal(g.G, g.G.T)
    assert g.G.shape == (rows.d, rows.d) and g.d == rows.d and g.n == X.shape[0]
    assert g.clip_reports == rows.clip_reports and g.n_clipped == rows.n_clipped
    # the largest scaled row norm, against numpy's norms of the rows scale_rows built: a sum of d squares and a
    # square root, so a relative error below (d + 1) eps
    want, tol = np.linalg.norm(rows.Z, axis=1).max(), (rows.d + 1) * np.finfo(float).eps
    assert 0.5 < want <= 1.0 + tol and abs(g.max_z - want) <= tol * want
    assert (g.scale, g.const, g.const_z, g.widths, g.weights) == (rows.scale, rows.const, rows.const_z, rows.widths,
                                                                  rows.weights)


def test_scaled_gram_on_three_blocks_and_rows_at_extreme_scales():
    """Rows whose squares overflow or underflow take the rescaled norms of ``clipping.row_norms`` (each row by its
    own power of two). Oracle: ``scale_rows`` on each block of rows."""
    rng = np.random.default_rng(3)
    A = rng.normal(size=(300, 4))
    A[:5] *= 1e200  # squares overflow
    A[5:10] *= 1e-200  # squares underflow
    A[10] = 0.0  # a zero row
    B, c = rng.normal(size=(300, 2)) * 5, rng.normal(size=(300, 1)) * 2
    for kw in ({}, {"private_centring": True}):
        g = scaled_gram([A, B, c], [1.5, 3.0, 1.0], block_rows=32, **kw)
        parts = [scale_rows([A[i:i + 32], B[i:i + 32], c[i:i + 32]], [1.5, 3.0, 1.0], **kw) for i in range(0, 300, 32)]
        Z = np.vstack([p.Z for p in parts])
        assert np.isfinite(g.G).all()
        assert _rel(g.G, Z.T @ Z) <= 1e-12
        assert g.n_clipped == sum(p.n_clipped for p in parts)
        assert [r.n_clipped for r in g.clip_reports] == [sum(p.clip_reports[b].n_clipped for p in parts)
                                                         for b in range(3)]
        assert g.clip_reports[0].max_norm_before == max(p.clip_reports[0].max_norm_before for p in parts)


def _rows_one_by_one(blocks, bounds, weights=None, private_centring=False, const=None, centres=None):
    """The scaled rows built row by row in plain Python: norms by ``math.hypot`` (exact to an ulp at any
    scale), x / ||x|| before the bound (B / ||x|| can be subnormal), w / B / S (B S can overflow)."""
    weights = bounds if weights is None else weights
    a = (math.hypot(*weights) if const is None else const) if private_centring else 0.0
    S = math.hypot(*weights, a)
    rows, clipped, tops, n_any = [], [0] * len(blocks), [0.0] * len(blocks), 0
    for i in range(blocks[0].shape[0]):
        z, hit = [], False
        for b, (block, B, w) in enumerate(zip(blocks, bounds, weights)):
            x = block[i] - (0.0 if centres is None else centres[b])
            norm = math.hypot(*x)
            tops[b] = max(tops[b], norm)
            if norm > B:
                clipped[b], hit = clipped[b] + 1, True
                z.append(x / norm * (w / S))
            else:
                z.append(x * (w / B / S))
        n_any += hit
        rows.append(np.concatenate(z + ([[a / S]] if private_centring else [])))
    return np.array(rows), clipped, tops, n_any


@pytest.mark.parametrize("order", ["C", "F", "columns"])
@pytest.mark.parametrize("bound", [1e-5, 1.0, 1e200])
@pytest.mark.parametrize("kw", [{}, {"private_centring": True},
                                {"weights": [1.0, 1.0], "private_centring": True, "const": 1.0}])
def test_scaled_gram_row_by_row_at_any_scale(order, bound, kw):
    """Rows far past the bound (1e300, one entry of -1e308, which overflows once scaled toward a bound of 1e-5),
    rows far inside it (1e-300) and ordinary rows side by side, in one block of rows, given as arrays of either
    memory order or as ``Columns``: every row keeps its own exact norm. Oracle: ``_rows_one_by_one``.
    Tolerances: G and the largest scaled norm are sums of d + 1 products of numbers in [-1, 1] (relative error
    below 8 eps of the largest entry, 1e-13 leaves room for the clipped rows' two extra roundings); a norm before
    clipping is one correctly rounded hypot against a sum of squares and a square root (rtol 4 eps)."""
    rng = np.random.default_rng(7)
    X = np.asarray(rng.normal(size=(60, 4)), order="C" if order == "columns" else order)
    y = rng.normal(size=(60, 1))
    X[3], X[5, 2], X[7], y[4], y[9] = 1e300, -1e308, 1e-300, 1e308, -1e300
    bounds = [bound, 2 * bound]
    centres = [np.full(4, 0.25), np.array([-0.5])]
    blocks = [Columns(list(X.T)), Columns([y[:, 0]])] if order == "columns" else [X, y]
    for cen in (None, centres):
        g = scaled_gram(blocks, bounds, block_rows=16, centres=cen, **kw)
        Z, clipped, tops, n_any = _rows_one_by_one([X, y], bounds, centres=cen, **kw)
        assert _rel(g.G, Z.T @ Z) <= 1e-13 and np.array_equal(g.G, g.G.T)
        assert [r.n_clipped for r in g.clip_reports] == clipped and g.n_clipped == n_any
        assert np.allclose([r.max_norm_before for r in g.clip_reports], tops, rtol=4 * np.finfo(float).eps, atol=0)
        assert abs(g.max_z - np.linalg.norm(Z, axis=1).max()) <= 1e-13


def test_scaled_gram_of_no_rows_and_bad_arguments():
    g = scaled_gram([np.empty((0, 3)), np.empty((0, 1))], [1.0, 1.0], private_centring=True)
    assert g.n == 0 and g.n_clipped == 0 and np.array_equal(g.G, np.zeros((5, 5)))
    with pytest.raises(ValueError, match="one public bound per block"):
        scaled_gram([np.ones((3, 2))], [1.0, 2.0])
    with pytest.raises(ValueError, match="same number of rows"):
        scaled_gram([np.ones((3, 2)), np.ones((4, 1))], [1.0, 2.0])
    with pytest.raises(ValueError, match="block_rows"):
        scaled_gram([np.ones((3, 2))], [1.0], block_rows=0)


def test_strict_edpls_fit_equals_the_fit_from_the_old_gram_matrix_with_the_same_noise():
    X, y = _data(n=3 * gram_block_rows(14) + 17, m=12, seed=5)  # d = 12 + 1 + 1: several blocks
    # a public centre without the constant column (private_intercept=False): the old path's rows
    for params in ({}, {"x_center": np.full(12, 0.5), "y_center": 0.0, "private_intercept": False}):
        est = EDPLS(n_components=3, epsilon=2.0, mode="strict", x_bound=6.0, y_bound=8.0, random_state=11, **params)
        fitted = est.fit(X, y)
        prep = est._prepare(X, y, full_checks=True)
        old = MomentsRelease.gram(prep.strict.Z)  # the old path: the n x d rows, then Z'Z
        np.testing.assert_allclose(prep.strict.Z, scale_rows(
            [X - (params.get("x_center", 0.0)), (y - params.get("y_center", 0.0))[:, None]], [6.0, 8.0],
            private_centring=not params).Z, rtol=0, atol=0)
        assert _rel(prep.strict.gram, old) <= 1e-12
        prep.strict.gram = old
        out = prep.draw(3, 2.0, 1, noise_generator(11)[0])
        assert _rel(fitted.coef_, out["coef"][0]) <= 1e-9
        assert fitted.n_clipped_ == prep.strict.n_clipped > 0


def test_dp_pcr_and_dp_cca_grams_equal_the_old_path():
    X, y = _data(n=900, m=6, seed=8)
    pcr = DPPCR(n_components=2, epsilon=1.0, x_bound=5.0, y_bound=6.0)
    prep = pcr._prepare(X, y)
    rows = scale_rows([X, y[:, None]], [5.0, 6.0], private_centring=True)
    assert _rel(prep.gram(), MomentsRelease.gram(rows.Z)) <= 1e-12
    assert prep.rows.n_clipped == rows.n_clipped
    Y = np.column_stack([y, X[:, 0] + np.random.default_rng(1).normal(size=900)])
    for kw in ({"x_bound": 5.0, "y_bound": 6.0}, {"row_bound": 7.0}):
        cca = DPCCA(n_components=1, mode="strict", epsilon=1.0, **kw)
        prep = cca._prepare(X, Y)
        G = prep.gram()
        assert prep._z is None  # the fit's Gram matrix came without the rows
        assert _rel(G, MomentsRelease.gram(prep.Z)) <= 1e-12  # Z built on demand by the old formulas
        assert prep.n == X.shape[0] and np.linalg.norm(prep.Z, axis=1).max() <= 1 + 1e-12


def test_the_two_accumulators_agree_and_only_dask_partitions_use_the_gil_free_one(monkeypatch):
    """Both rank-k updates sum the same products in another order: equal to a few ulps of the largest entry (each
    entry a sum of n products of numbers below 1, so |error| <= n eps max|G| as a bound, far looser than seen).
    The out-of-core sums run on Dask's threads and ask for the update that releases the GIL."""
    import dask.dataframe as dd

    from engine.privacy import chunked

    X, y = _data(n=5_000, m=40, seed=7)
    for blocks in ([X, y[:, None]], [Columns(list(np.asfortranarray(X).T)), Columns([y])]):
        alone = scaled_gram(blocks, [4.0, 3.0], private_centring=True, block_rows=512)
        shared = scaled_gram(blocks, [4.0, 3.0], private_centring=True, block_rows=512, concurrent=True)
        assert np.array_equal(alone.G, alone.G.T) and np.array_equal(shared.G, shared.G.T)
        assert _rel(alone.G, shared.G) <= 5_000 * np.finfo(float).eps
        assert alone.G.flags.c_contiguous and shared.G.flags.c_contiguous
    asked = []
    real = chunked.scaled_gram

    def spy(*args, **kw):
        asked.append(kw.get("concurrent", False))
        return real(*args, **kw)

    monkeypatch.setattr(chunked, "scaled_gram", spy)
    ddf = dd.from_pandas(pd.DataFrame(X, columns=[f"x{j}" for j in range(X.shape[1])]).assign(resp=y),
                         npartitions=3)
    est = EDPLS(n_components=2, mode="strict", x_bound=4.0, y_bound=3.0, epsilon=1.0, delta=1e-6, random_state=0)
    est.fit(ddf[[f"x{j}" for j in range(X.shape[1])]], ddf["resp"], scheduler="sync")
    assert asked and all(asked), asked


def test_psd_project_by_syrk_equals_the_eigen_formula():
    rng = np.random.default_rng(2)
    for shape in [(200, 200), (2, 150, 150), (4, 4), (3, 6, 6)]:
        A = rng.normal(size=shape)
        A = A + np.swapaxes(A, -1, -2)
        vals, vecs = np.linalg.eigh(A)
        want = np.matmul(vecs * np.clip(vals, 0, None)[..., None, :], np.swapaxes(vecs, -1, -2))
        got = psd_project(A)
        assert got.shape == A.shape and _rel(got, want) <= 1e-12
        assert np.linalg.eigvalsh(got).min() >= -1e-10 * np.abs(want).max()
    assert np.array_equal(psd_project(-np.eye(130)), np.zeros((130, 130)))


@pytest.mark.parametrize("params", [{}, {"noise_std": "sigma_squared", "budget": "split"},
                                    {"mode": "strict", "x_bound": 6.0, "y_bound": 8.0}])
def test_edpls_noise_tables_are_built_on_first_access_and_equal_the_eager_tables(params):
    X, y = _data(n=60, m=8, seed=4)
    assert not hasattr(EDPLS(**params), "sigmas_")  # not fitted: no attribute
    model = EDPLS(n_components=3, random_state=0, **params).fit(X, y)
    assert not any(isinstance(v, pd.DataFrame) for v in vars(model).values())  # fit built no table
    tab = model.noise_table_
    if model.mode == "paper":
        def wide(col):
            return tab.pivot(index="component", columns="quantity", values=col)[list(QUANTITIES)]

        want = {"sigmas_": wide("sigma"), "noise_std_": wide("std_applied"), "sensitivities_": wide("sensitivity")}
        assert len(tab) == 4 * 3
    else:
        by = tab.set_index("quantity")
        want = {"sigmas_": by[["sigma"]], "noise_std_": by[["std_applied", "std_data_units"]],
                "sensitivities_": by[["sensitivity"]]}
    for name, frame in want.items():
        pd.testing.assert_frame_equal(getattr(model, name), frame)
        assert getattr(model, name) is getattr(model, name)  # built once
    again = pickle.loads(pickle.dumps(model))
    pd.testing.assert_frame_equal(again.sigmas_, model.sigmas_)
    assert [r.scale for r in model.privacy_ledger_.entries] == pytest.approx(list(tab["std_applied"]), rel=0)
    if model.mode == "paper":  # the ledger, built from the arrays, names the releases in the table's order
        assert [r.name for r in model.privacy_ledger_.entries] == [f"{q}[{c}]" for c, q in zip(tab.component,
                                                                                                tab.quantity)]


def test_public_centre_inside_the_block_pass_equals_the_centred_copy_and_names_an_overflowing_column():
    X, y = _data(n=400, m=5, seed=9)
    xc, yc = np.linspace(-1, 1, 5), 0.3
    g = scaled_gram([X, y[:, None]], [4.0, 3.0], centres=[xc, np.array([yc])], block_rows=64)
    rows = scale_rows([X - xc, (y - yc)[:, None]], [4.0, 3.0])
    assert _rel(g.G, rows.Z.T @ rows.Z) <= 1e-12 and g.clip_reports == rows.clip_reports
    Xbig = X.copy()
    Xbig[300, 2] = 1.79e308
    with pytest.raises(CentreOverflow) as err:
        scaled_gram([Xbig, y[:, None]], [4.0, 3.0], centres=[np.full(5, -1e307), None], block_rows=64)
    assert (err.value.block, err.value.row, err.value.column) == (0, 300, 2)
    with pytest.raises(ValueError, match="X column 'c2' minus the public centre x_center overflows float64"):
        _strict_state(Xbig, y, x_bound=4.0, y_bound=3.0, centering=True, x_center=np.full(5, -1e307), y_center=0.0,
                      x_names=[f"c{j}" for j in range(5)])


def test_edpls_noise_tables_can_be_set_on_a_rebuilt_model():
    model = EDPLS()
    table = pd.DataFrame({"sigma": [1.0]})
    model.sigmas_ = table
    assert model.sigmas_ is table and not hasattr(model, "noise_std_")


def test_scaled_gram_of_column_major_and_strided_blocks():
    X, y = _data(n=300, m=6, seed=12)
    want = scaled_gram([X, y[:, None]], [4.0, 3.0], private_centring=True, block_rows=50).G
    for Xv in (np.asfortranarray(X), np.repeat(X, 2, axis=1)[:, ::2], np.hstack([X, X])[:, :6]):
        got = scaled_gram([Xv, y[:, None]], [4.0, 3.0], private_centring=True, block_rows=50).G
        assert _rel(got, want) <= 1e-12
