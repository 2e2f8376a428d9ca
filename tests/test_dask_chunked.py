"""The strict releases on Dask collections equal the in-memory path (same noise draw), check each partition's
values naming partition, row and column, and run on a two-process LocalCluster with the same result."""
from __future__ import annotations

import warnings

import dask.array as da
import dask.dataframe as dd
import numpy as np
import pandas as pd
import pytest

from engine.data.scheduler import SCHEDULER_ENV, dask_scheduler, resolve_scheduler
from engine.data.validate import DataError
from engine.methods.dp_cca import DPCCA
from engine.methods.dp_pcr import DPPCR
from engine.methods.edpls import EDPLS
from engine.privacy.chunked import RowSpec, chunked_moments, is_lazy
from engine.privacy.moments import MomentsRelease, scale_rows

X_COLS = [f"x{j}" for j in range(6)]


@pytest.fixture(scope="module")
def table():
    rng = np.random.default_rng(7)
    X = rng.normal(size=(1500, 6)) * np.array([1.0, 2.0, 0.5, 1.0, 3.0, 1.0]) + 0.3
    y = X @ np.array([1.0, -0.5, 0.0, 2.0, 0.1, 0.0]) + rng.normal(size=1500)
    df = pd.DataFrame(X, columns=X_COLS)
    df["resp"] = y
    df["v0"] = X[:, 0] + 0.5 * rng.normal(size=1500)
    df["v1"] = rng.normal(size=1500)
    return df


@pytest.fixture(scope="module")
def ddf(table):
    return dd.from_pandas(table, npartitions=7)


@pytest.fixture(scope="module")
def cluster():
    """Two worker processes on 127.0.0.1, no dashboard; always closed."""
    distributed = pytest.importorskip("distributed")
    cl = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                  dashboard_address=None, timeout=60)
    try:
        yield cl
    finally:
        cl.close(timeout=30)


def _xy_rows(X, Y):
    return [X, Y]


def test_chunked_gram_equals_scale_rows_gram_for_every_input_kind(table):
    X, y = table[X_COLS].to_numpy(), table[["resp"]].to_numpy()
    ref = scale_rows([X, y], [4.0, 3.0], private_centring=True)
    G_ref = MomentsRelease.gram(ref.Z)
    spec = RowSpec(_xy_rows, (4.0, 3.0), None, True, None)
    inputs = {
        "dask array": (da.from_array(X, chunks=(211, 4)), da.from_array(y[:, 0], chunks=300)),
        "dask frame": (dd.from_pandas(table[X_COLS], npartitions=5), dd.from_pandas(table["resp"], npartitions=5)),
        "iterable": ([(X[i:i + 400], y[i:i + 400]) for i in range(0, 1500, 400)], None),
    }
    for kind, (Xl, yl) in inputs.items():
        mom = chunked_moments(Xl, yl, spec=spec)
        np.testing.assert_allclose(mom.G, G_ref, rtol=1e-12, atol=1e-12, err_msg=kind)
        assert mom.n == 1500 and mom.n_clipped == ref.n_clipped and mom.scale == ref.scale, kind
        assert [r.n_clipped for r in mom.clip_reports] == [r.n_clipped for r in ref.clip_reports], kind
        assert np.allclose([r.max_norm_before for r in mom.clip_reports],
                           [r.max_norm_before for r in ref.clip_reports]), kind
        assert np.array_equal(mom.G, mom.G.T)
        # the largest scaled row norm (the fused kernel's output): numpy's norms of the rows, to (d + 1) eps
        want = np.linalg.norm(ref.Z, axis=1).max()
        assert abs(mom.max_z - want) <= (ref.d + 1) * np.finfo(float).eps * want, kind


@pytest.mark.parametrize("kw", [{}, {"x_center": 0.3, "y_center": 0.0}, {"centering": False}],
                         ids=["private-centre", "public-centre", "no-centring"])
def test_edpls_strict_on_dask_equals_numpy_for_the_same_noise(table, ddf, kw):
    params = dict(n_components=3, mode="strict", x_bound=6.0, y_bound=5.0, epsilon=2.0, delta=1e-5,
                  random_state=11, **kw)
    mem = EDPLS(**params).fit(table[X_COLS], table["resp"])
    done = []
    lazy = EDPLS(**params).fit(ddf[X_COLS], ddf["resp"], progress=lambda d, t: done.append((d, t)))
    np.testing.assert_allclose(lazy.coef_, mem.coef_, rtol=1e-9, atol=1e-12)
    assert lazy.intercept_ == pytest.approx(mem.intercept_, rel=1e-9, abs=1e-12)
    np.testing.assert_allclose(lazy.x_loadings_, mem.x_loadings_, rtol=1e-9, atol=1e-12)
    assert lazy.clip_report_ == mem.clip_report_ and lazy.n_clipped_ > 0
    assert lazy.privacy_ledger_.to_dict() == mem.privacy_ledger_.to_dict()
    pd.testing.assert_frame_equal(lazy.noise_table_, mem.noise_table_)
    assert list(lazy.feature_names_in_) == X_COLS and lazy.n_features_in_ == 6
    assert done[-1] == (7, 7) and len(done) == 7
    np.testing.assert_allclose(lazy.predict(table[X_COLS]), mem.predict(table[X_COLS]), rtol=1e-9, atol=1e-9)


def test_edpls_strict_on_dask_arrays(table):
    params = dict(n_components=2, mode="strict", x_bound=6.0, y_bound=5.0, epsilon=1.0, delta=1e-5, random_state=3)
    X, y = table[X_COLS].to_numpy(), table["resp"].to_numpy()
    mem = EDPLS(**params).fit(X, y)
    lazy = EDPLS(**params).fit(da.from_array(X, chunks=(333, 6)), da.from_array(y, chunks=333))
    np.testing.assert_allclose(lazy.coef_, mem.coef_, rtol=1e-9, atol=1e-12)
    assert not hasattr(lazy, "feature_names_in_")


@pytest.mark.parametrize("centering", [True, False])
def test_edpls_paper_mode_on_dask_runs_in_passes_and_says_so(table, ddf, centering):
    params = dict(n_components=3, epsilon=1.0, random_state=5, centering=centering)
    mem = EDPLS(**params).fit(table[X_COLS], table["resp"])
    done = []
    with pytest.warns(UserWarning, match="passes over the data"):
        lazy = EDPLS(**params).fit(ddf[X_COLS], ddf["resp"], progress=lambda d, t: done.append((d, t)))
    assert done[0] == (7, 8 * 7) and done[-1] == (8 * 7, 8 * 7)
    for name in ("coef_", "x_weights_", "x_loadings_", "y_loadings_", "x_scores_", "x_mean_"):
        np.testing.assert_allclose(getattr(lazy, name), getattr(mem, name), rtol=1e-9, atol=1e-12, err_msg=name)
    assert lazy.intercept_ == pytest.approx(mem.intercept_, rel=1e-9)
    pd.testing.assert_frame_equal(lazy.sigmas_, mem.sigmas_, rtol=1e-9)
    _same_ledger(lazy.privacy_ledger_.to_dict(), mem.privacy_ledger_.to_dict())
    assert "2k + 2 passes" in lazy.notes_[0] and lazy.notes_[1].startswith(f"{2 * 3 + 2} passes")


def _same_ledger(a: dict, b: dict) -> None:
    """Equal ledgers, the data-derived sensitivities and scales of paper mode to 1e-9."""
    assert a.keys() == b.keys() and len(a["entries"]) == len(b["entries"])
    assert {k: v for k, v in a.items() if k != "entries"} == {k: v for k, v in b.items() if k != "entries"}
    for ea, eb in zip(a["entries"], b["entries"]):
        assert ea.keys() == eb.keys()
        for k in ea:
            if isinstance(ea[k], float):
                assert ea[k] == pytest.approx(eb[k], rel=1e-9), k
            else:
                assert ea[k] == eb[k], k


def test_edpls_paper_mode_on_dask_arrays_and_bad_values(table):
    X, y = table[X_COLS].to_numpy(), table["resp"].to_numpy()
    mem = EDPLS(n_components=2, epsilon=1.0, random_state=6).fit(X, y)
    with pytest.warns(UserWarning):
        lazy = EDPLS(n_components=2, epsilon=1.0, random_state=6).fit(da.from_array(X, chunks=(400, 3)),
                                                                        da.from_array(y, chunks=400))
    np.testing.assert_allclose(lazy.coef_, mem.coef_, rtol=1e-9, atol=1e-12)
    X = X.copy()
    X[450, 4] = np.nan
    with pytest.warns(UserWarning), pytest.raises(DataError, match="partition 2") as err:
        EDPLS(n_components=2).fit(da.from_array(X, chunks=(400, 6)), da.from_array(y, chunks=400))
    assert err.value.row == 51


@pytest.mark.parametrize("kw", [{}, {"x_center": 0.3, "y_center": 0.0}], ids=["private-centre", "public-centre"])
def test_dp_pcr_on_dask_equals_numpy(table, ddf, kw):
    params = dict(n_components=3, x_bound=6.0, y_bound=5.0, epsilon=1.0, delta=1e-5, random_state=4, **kw)
    mem = DPPCR(**params).fit(table[X_COLS], table["resp"])
    lazy = DPPCR(**params).fit(ddf[X_COLS], ddf["resp"])
    np.testing.assert_allclose(lazy.coef_, mem.coef_, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(lazy.components_, mem.components_, rtol=1e-9, atol=1e-12)
    assert lazy.n_clipped_ == mem.n_clipped_ > 0
    assert lazy.privacy_ledger_.to_dict() == mem.privacy_ledger_.to_dict()


@pytest.mark.parametrize("kw", [{"x_bound": 5.0, "y_bound": 2.0}, {"row_bound": 6.0},
                                {"x_bound": 5.0, "y_bound": 2.0, "x_center": 0.3, "y_center": 0.0}],
                         ids=["per-view", "joint", "public-centre"])
def test_dp_cca_strict_on_dask_equals_numpy(table, ddf, kw):
    params = dict(n_components=2, mode="strict", epsilon=1.0, delta=1e-5, random_state=8, **kw)
    mem = DPCCA(**params).fit(table[X_COLS], table[["v0", "v1"]])
    lazy = DPCCA(**params).fit(ddf[X_COLS], ddf[["v0", "v1"]])
    np.testing.assert_allclose(lazy.x_weights_, mem.x_weights_, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(lazy.canonical_correlations_, mem.canonical_correlations_, rtol=1e-9)
    assert lazy.n_rows_fit_ == 1500 and lazy.clip_report_ == mem.clip_report_
    assert lazy.privacy_ledger_.to_dict() == mem.privacy_ledger_.to_dict()


def test_dp_cca_paper_mode_on_dask_warns(table, ddf):
    mem = DPCCA(n_components=1, random_state=1).fit(table[X_COLS], table["v0"])
    with pytest.warns(UserWarning, match="gathers the rows"):
        lazy = DPCCA(n_components=1, random_state=1).fit(ddf[X_COLS], ddf["v0"])
    np.testing.assert_allclose(lazy.x_weights_, mem.x_weights_, rtol=1e-9)


@pytest.mark.parametrize("bad, match", [(np.nan, "NaN"), (np.inf, "infinite")])
def test_bad_value_names_partition_row_and_column(table, bad, match):
    df = table.copy()
    df.loc[1000, "x2"] = bad  # 7 partitions of 215 rows (the last 210): partition 5, data row 141
    part = dd.from_pandas(df, npartitions=7)
    sizes = part.map_partitions(len).compute().tolist()
    k = int(np.searchsorted(np.cumsum(sizes), 1000, side="right"))
    row = 1000 - sum(sizes[:k]) + 1
    with pytest.raises(DataError, match=match) as err:
        EDPLS(mode="strict", x_bound=5.0, y_bound=5.0).fit(part[X_COLS], part["resp"])
    assert err.value.column == "x2" and err.value.row == row
    assert f"partition {k + 1}" in str(err.value) and f"data row {row}" in str(err.value)


def test_text_cell_names_partition_row_and_column(table):
    df = table.copy()
    df["x1"] = df["x1"].astype(object)
    df.loc[3, "x1"] = "n/a"
    part = dd.from_pandas(df, npartitions=3)
    with pytest.raises(DataError, match="column 'x1' holds text") as err:
        DPPCR(x_bound=5.0, y_bound=5.0).fit(part[X_COLS], part["resp"])
    assert "partition 1" in str(err.value) and err.value.row == 4


def test_lazy_and_in_memory_cannot_be_mixed(table, ddf):
    with pytest.raises(TypeError, match="both"):
        EDPLS(mode="strict", x_bound=5.0, y_bound=5.0).fit(ddf[X_COLS], table["resp"])
    assert is_lazy(ddf) and not is_lazy(table)


def test_scheduler_names(monkeypatch):
    monkeypatch.delenv(SCHEDULER_ENV, raising=False)
    assert resolve_scheduler() is None and resolve_scheduler("sync") == "sync"
    with pytest.raises(ValueError, match="scheduler must be"):
        resolve_scheduler("my-laptop")
    monkeypatch.setenv(SCHEDULER_ENV, "tcp://127.0.0.1:1")
    assert resolve_scheduler() == "tcp://127.0.0.1:1"
    with dask_scheduler("threads") as s:
        assert s == "threads"


def test_local_cluster_fit_equals_local_fit(table, ddf, cluster, monkeypatch):
    params = dict(n_components=3, mode="strict", x_bound=6.0, y_bound=5.0, epsilon=1.0, delta=1e-5, random_state=2)
    local = EDPLS(**params).fit(ddf[X_COLS], ddf["resp"], scheduler="sync")
    done = []
    remote = EDPLS(**params).fit(ddf[X_COLS], ddf["resp"], scheduler=cluster.scheduler_address,
                                 progress=lambda d, t: done.append((d, t)))
    np.testing.assert_allclose(remote.coef_, local.coef_, rtol=1e-9, atol=1e-12)
    assert remote.clip_report_ == local.clip_report_ and done[-1] == (7, 7)
    monkeypatch.setenv(SCHEDULER_ENV, cluster.scheduler_address)  # the address from the environment
    cca = dict(n_components=1, mode="strict", x_bound=5.0, y_bound=2.0, epsilon=1.0, delta=1e-5, random_state=9)
    on_env = DPCCA(**cca).fit(ddf[X_COLS], ddf["v0"])
    monkeypatch.delenv(SCHEDULER_ENV)
    np.testing.assert_allclose(on_env.x_weights_, DPCCA(**cca).fit(table[X_COLS], table["v0"]).x_weights_,
                               rtol=1e-9, atol=1e-12)


def test_unreachable_scheduler_is_a_plain_error():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises((ConnectionError, OSError)):
            with dask_scheduler("tcp://127.0.0.1:9", timeout=2) as _:
                pass


def test_row_blocks_inside_a_partition_give_the_same_sums(table, monkeypatch):
    import engine.privacy.chunked as chunked

    X, y = table[X_COLS].to_numpy(), table[["resp"]].to_numpy()
    spec = RowSpec(_xy_rows, (4.0, 3.0), None, True, None)
    whole = chunked_moments(da.from_array(X, chunks=(800, 6)), da.from_array(y, chunks=(800, 1)), spec=spec)
    monkeypatch.setattr(chunked, "ROW_BLOCK", 97)
    blocked = chunked_moments(da.from_array(X, chunks=(800, 6)), da.from_array(y, chunks=(800, 1)), spec=spec)
    np.testing.assert_allclose(blocked.G, whole.G, rtol=1e-12)
    assert blocked.n == whole.n and blocked.clip_reports == whole.clip_reports
    assert blocked.max_z == pytest.approx(whole.max_z)


@pytest.mark.parametrize("widths, bounds, kw", [((6, 1), (4.0, 3.0), {"private_centring": True}),
                                                ((7,), (5.0,), {}),
                                                ((6, 1), (4.0, 3.0), {"weights": (1.0, 1.0), "const": 1.0,
                                                                      "private_centring": True})])
def test_a_frame_s_columns_give_the_sums_of_its_array(table, widths, bounds, kw):
    """``RowSpec.column_blocks``: a partition's float64 columns go to ``scaled_gram`` as ``Columns`` (no array is
    gathered). Oracle: the same spec through ``prepare`` on the partition's array, and ``scale_rows``. A NaN takes
    the checked path, which names the cell."""
    cols = X_COLS + ["resp"]
    frame = dd.from_pandas(table[cols], npartitions=4)
    split = (lambda X, Y: [X, Y]) if len(widths) == 2 else (lambda X, Y: [np.hstack([X, Y])])
    args = dict(weights=kw.get("weights"), private_centring=kw.get("private_centring", False), const=kw.get("const"))
    by_array = chunked_moments(frame[X_COLS], frame["resp"], spec=RowSpec(split, bounds, **args))
    by_columns = chunked_moments(frame[X_COLS], frame["resp"], spec=RowSpec(split, bounds, **args,
                                                                           column_blocks=widths))
    np.testing.assert_allclose(by_columns.G, by_array.G, rtol=1e-13, atol=0)
    assert by_columns.clip_reports == by_array.clip_reports and by_columns.n_clipped == by_array.n_clipped
    assert by_columns.n == 1500 and by_columns.max_z == pytest.approx(by_array.max_z, rel=1e-15)
    Z = scale_rows(split(table[X_COLS].to_numpy(), table[["resp"]].to_numpy()), bounds, **kw).Z
    np.testing.assert_allclose(by_columns.G, Z.T @ Z, rtol=1e-12, atol=1e-12)
    bad = table[cols].copy()
    bad.loc[20, "resp"] = np.nan
    bad_frame = dd.from_pandas(bad, npartitions=4)
    with pytest.raises(DataError, match="NaN") as err:
        chunked_moments(bad_frame[X_COLS], bad_frame["resp"], spec=RowSpec(split, bounds, **args,
                                                                             column_blocks=widths))
    assert err.value.row == 21 and "partition 1" in str(err.value)


def test_edpls_sample_releases_on_dask_equal_numpy(table, ddf):
    params = dict(n_components=2, mode="strict", x_bound=6.0, y_bound=5.0, epsilon=1.0, delta=1e-5)
    mem = EDPLS(**params).sample_releases(table[X_COLS], table["resp"], 5, random_state=12)
    lazy = EDPLS(**params).sample_releases(ddf[X_COLS], ddf["resp"], 5, random_state=12)
    np.testing.assert_allclose(lazy["coef"], mem["coef"], rtol=1e-9, atol=1e-12)
    assert lazy["coef"].shape == (5, 6)
