"""The recommended strict edPLS (StrictEDPLS) on Dask collections equals the in-memory fit for the same noise draw
(public axes from X_public, the data-free spline basis, PLS and ridge, the constant fallback), names bad cells,
and runs from the CLI chunk by chunk."""
from __future__ import annotations

import json

import dask.array as da
import dask.dataframe as dd
import numpy as np
import pandas as pd
import pytest

from engine.data.sample_generators import make_nir_spectra
from engine.data.validate import DataError
from engine.methods.edpls.recommended import make_strict_edpls
from engine.threads import one_blas_thread

M = 40
COLS = [f"c{j}" for j in range(M)]


@pytest.fixture(scope="module")
def data():
    d = make_nir_spectra(n_samples=900, n_channels=M, random_state=2)
    df = pd.DataFrame(d.X, columns=COLS)
    df["protein"] = d.Y[:, 0]
    pub = make_nir_spectra(n_samples=120, n_channels=M, random_state=5).X
    return df, pub


@pytest.fixture(autouse=True)
def _one_thread():
    with one_blas_thread():
        yield


def _same(lazy, mem):
    np.testing.assert_allclose(lazy.coef_, mem.coef_, rtol=1e-9, atol=1e-12)
    assert lazy.intercept_ == pytest.approx(mem.intercept_, rel=1e-9, abs=1e-12)
    np.testing.assert_allclose(lazy.components_, mem.components_)
    assert lazy.privacy_ledger_.to_dict() == mem.privacy_ledger_.to_dict()
    a, b = dict(lazy.choices_), dict(mem.choices_)
    assert a.pop("n_hat") == pytest.approx(b.pop("n_hat")) and a.keys() == b.keys()
    for k in a:
        if isinstance(a[k], float):
            assert a[k] == pytest.approx(b[k], rel=1e-9), k
        else:
            assert a[k] == b[k], k


@pytest.mark.parametrize("kw", [{"X_public": True}, {"X_public": True, "n_components": 3},
                                {"n_components": "ridge"}, {"epsilon": np.inf, "X_public": True}],
                         ids=["public-axes-auto", "public-axes-pls", "spline-ridge", "no-noise"])
def test_recommended_on_dask_equals_numpy(data, kw):
    df, pub = data
    kw = {**kw, "X_public": pub if kw.get("X_public") else None}
    # the Dask path uses the declared range as is (no private refinement, no TukeyEM path): compare like with like
    params = dict(y_range=(7.0, 14.0), random_state=6, refine_y_range=False, **{"epsilon": 1.0, **kw})
    eps = params.pop("epsilon")
    mem = make_strict_edpls(eps, 1e-5, **params).fit(df[COLS], df["protein"])
    ddf = dd.from_pandas(df, npartitions=5)
    done = []
    lazy = make_strict_edpls(eps, 1e-5, **params).fit(ddf[COLS], ddf["protein"],
                                                      progress=lambda d, t: done.append((d, t)))
    _same(lazy, mem)
    assert mem.choices_["d"] > 0 and done[-1] == (5, 5) and len(done) == 10  # two passes
    assert list(lazy.feature_names_in_) == COLS
    np.testing.assert_allclose(lazy.predict(df[COLS]), mem.predict(df[COLS]), rtol=1e-9, atol=1e-9)


def test_constant_fallback_on_dask_arrays(data):
    """A tiny budget releases no axis: the noisy sum of y~ from the first pass alone (no second pass)."""
    df, pub = data
    X, y = df[COLS].to_numpy()[:60], df["protein"].to_numpy()[:60]
    mem = make_strict_edpls(0.05, 1e-5, y_range=(7.0, 14.0), X_public=pub, random_state=2,
                             refine_y_range=False).fit(X, y)
    done = []
    lazy = make_strict_edpls(0.05, 1e-5, y_range=(7.0, 14.0), X_public=pub, random_state=2,
                             refine_y_range=False).fit(
        da.from_array(X, chunks=(20, M)), da.from_array(y, chunks=20), progress=lambda d, t: done.append(d))
    assert mem.choices_["d"] == 0 and len(done) == 3
    _same(lazy, mem)


def test_bad_cell_names_partition_row_and_column(data):
    df, pub = data
    df = df.copy()
    df.loc[400, "c7"] = np.inf  # 5 partitions of 180 rows: partition 3, data row 41
    ddf = dd.from_pandas(df, npartitions=5)
    with pytest.raises(DataError, match="partition 3") as err:
        make_strict_edpls(1.0, 1e-5, y_range=(7, 14), X_public=pub).fit(ddf[COLS], ddf["protein"])
    assert err.value.column == "c7" and err.value.row == 41
    with pytest.raises(ValueError, match="sample_weight"):
        make_strict_edpls(1.0, 1e-5, y_range=(7, 14)).fit(ddf[COLS], ddf["protein"], np.ones(900))


def test_cli_fits_the_recommended_estimator_chunk_by_chunk(data, tmp_path, capsys):
    import pyarrow as pa
    import pyarrow.parquet as pq

    from engine.cli.batch import LAZY_METHODS
    from engine.cli.commands import main

    df, pub = data
    folder = tmp_path / "runs"
    folder.mkdir()
    for f in range(3):
        pq.write_table(pa.Table.from_pandas(df.iloc[f * 300:(f + 1) * 300], preserve_index=False),
                       folder / f"run{f}.parquet")
    pd.DataFrame(pub, columns=COLS).to_csv(tmp_path / "public.csv", index=False)
    out = tmp_path / "rec.json"
    code = main(["fit", "edpls", "--data", str(folder), "--response", "protein", "--epsilon", "1", "--delta", "1e-5",
                 "--y-range", "7", "14", "--x-public", str(tmp_path / "public.csv"), "--seed", "3", "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 0, err
    assert "edpls_recommended" in LAZY_METHODS and "3/3 partitions" in err
    ref = make_strict_edpls(1.0, 1e-5, y_range=(7.0, 14.0), X_public=pub, random_state=3, refine_y_range=False).fit(
        df[COLS].to_numpy(), df["protein"].to_numpy())
    fields = json.loads(out.read_text())["fields"]
    np.testing.assert_allclose(np.asarray(fields["coef_"], dtype=float), ref.coef_, rtol=1e-9, atol=1e-12)
    assert float(fields["intercept_"]) == pytest.approx(ref.intercept_, rel=1e-9)


def test_local_cluster_fits_equal_the_local_ones(data):
    """Two worker processes on 127.0.0.1 (the chain, the public axes and PCA-Gauss's box travel to them); always
    closed. Same seed, same fit as on the local scheduler."""
    distributed = pytest.importorskip("distributed")
    from engine.methods.pca_gauss import PCAGauss

    df, pub = data
    ddf = dd.from_pandas(df, npartitions=4)
    rec = dict(y_range=(7.0, 14.0), X_public=pub, random_state=8)
    pg = dict(n_components=2, mode="strict", pca_source="analyze_gauss", bounds=(0.0, 2.5), delta=1e-6, random_state=8)
    local_rec = make_strict_edpls(1.0, 1e-5, **rec).fit(ddf[COLS], ddf["protein"], scheduler="sync")
    local_pg = PCAGauss(**pg).fit(ddf[COLS[:6]], scheduler="sync")
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                       dashboard_address=None, timeout=60)
    try:
        remote_rec = make_strict_edpls(1.0, 1e-5, **rec).fit(ddf[COLS], ddf["protein"],
                                                             scheduler=cluster.scheduler_address)
        remote_pg = PCAGauss(**pg).fit(ddf[COLS[:6]], scheduler=cluster.scheduler_address)
    finally:
        cluster.close(timeout=30)
    np.testing.assert_allclose(remote_rec.coef_, local_rec.coef_, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(remote_pg.covariance_, local_pg.covariance_, rtol=1e-9, atol=1e-12)
    assert remote_pg.clip_report_ == local_pg.clip_report_
